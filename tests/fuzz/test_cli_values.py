"""Property tests of the command-line value parsers (validate/values.py): valid values round-trip; corrupted
ones (wrong characters, out of range, non-ASCII digits, NaN/inf, surrogate escapes) raise InputError naming the
flag, in one line, and nothing else ever escapes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.validate import values as v

FLAG = "--flag"
# derandomize: the same examples every run (no unseeded randomness in the suite); no example database on disk
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def refused(fn: Callable[[], Any]) -> InputError:
    with pytest.raises(InputError) as info:
        fn()
    err = info.value
    assert FLAG in err.message, err.message
    assert "\n" not in err.message and "\n" not in (err.hint or ""), err.render()
    return err


def only_input_errors(fn: Callable[[], Any]) -> None:
    """Whatever the text, the parser returns or raises InputError naming the flag: nothing else escapes."""
    try:
        fn()
    except InputError as err:
        assert FLAG in err.message, err.message
        assert "\n" not in err.render().split("\n  hint:")[0]


# Corruptions of a valid text: a stray letter or symbol, a non-ASCII digit, a surrogate escape, truncation.
CORRUPT = st.sampled_from(["x", "!", "\u0661", "\udcff", " 1", "--", "e", "0x", "\x00", ",", "\u00a0"])


@SETTINGS
@given(st.integers(min_value=-(2**70), max_value=2**70), st.integers(-100, 100), st.integers(0, 2**40))
def test_int_round_trip_and_bounds(x: int, lo: int, span: int) -> None:
    hi = lo + span
    if lo <= x <= hi:
        assert v.parse_int(str(x), FLAG, minimum=lo, maximum=hi) == x
    else:
        assert f"got {x}" in refused(lambda: v.parse_int(str(x), FLAG, minimum=lo, maximum=hi)).message


@SETTINGS
@given(st.integers(0, 10**9), CORRUPT, st.integers(0, 12))
def test_int_corrupted(x: int, junk: str, at: int) -> None:
    text = str(x)
    bad = text[:at] + junk + text[at:]
    assume(not bad.strip().lstrip("+-").isdigit() or not bad.strip().isascii())
    refused(lambda: v.parse_int(bad, FLAG))


@SETTINGS
@given(st.text(max_size=30))
def test_any_text_is_an_int_or_a_named_error(text: str) -> None:
    only_input_errors(lambda: v.parse_int(text, FLAG, minimum=0))
    only_input_errors(lambda: v.parse_float(text, FLAG))
    only_input_errors(lambda: v.parse_duration_s(text, FLAG))
    only_input_errors(lambda: v.parse_size(text, FLAG))
    only_input_errors(lambda: v.parse_bootstrap(text, FLAG))
    only_input_errors(lambda: v.parse_broker_ids(text, FLAG))
    only_input_errors(lambda: v.parse_regex(text, FLAG))
    only_input_errors(lambda: v.check_text(text, FLAG))
    only_input_errors(lambda: v.parse_fraction(text, FLAG))
    only_input_errors(lambda: v.parse_seed(text, FLAG))


@SETTINGS
@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(-1e6, 1e6), st.floats(0, 1e6))
def test_float_finite_and_bounded(x: float, lo: float, span: float) -> None:
    hi = lo + span
    text = repr(x)
    if math.isfinite(x) and lo <= x <= hi:
        assert v.parse_float(text, FLAG, minimum=lo, maximum=hi) == x
    else:
        refused(lambda: v.parse_float(text, FLAG, minimum=lo, maximum=hi))


@SETTINGS
@given(st.floats(min_value=0.001, max_value=30 * 86_400, allow_nan=False),
       st.sampled_from([("ms", 0.001), ("s", 1.0), ("", 1.0), ("m", 60.0), ("h", 3600.0), ("d", 86_400.0)]))
def test_duration_units(seconds: float, unit: tuple[str, float]) -> None:
    suffix, size = unit
    amount = seconds / size
    text = f"{amount!r}{suffix}"
    got_or_err: Any
    try:
        got_or_err = v.parse_duration_s(text, FLAG)
    except InputError as err:
        got_or_err = err
    value = amount * size
    if 0 < value <= v.MAX_DURATION_S:
        assert not isinstance(got_or_err, InputError), got_or_err.render()
        assert got_or_err == pytest.approx(value)
    else:
        assert isinstance(got_or_err, InputError)


@pytest.mark.parametrize("text", ["1e306", "1e400", "inf", "nan", "-1", "0", "31d", "1y", "5 parsecs", "", "\u0665s"])
def test_duration_refused(text: str) -> None:
    refused(lambda: v.parse_duration_s(text, FLAG))


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_seed_range(seed: int) -> None:
    assert v.parse_seed(str(seed), FLAG) == seed
    refused(lambda: v.parse_seed(str(-seed - 1), FLAG))
    refused(lambda: v.parse_seed(str(seed + 2**32), FLAG))


@SETTINGS
@given(st.integers(0, 10**6), st.sampled_from(["", "B", "K", "KB", "M", "G", "T", "KiB", "MiB", "GiB", "TiB"]))
def test_size_units(n: int, unit: str) -> None:
    mult = {"": 1, "B": 1, "K": 10**3, "KB": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
            "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]
    assert v.parse_size(f"{n}{unit}", FLAG) == n * mult
    refused(lambda: v.parse_size(f"-{n + 1}{unit}", FLAG))


@pytest.mark.parametrize("text", ["1e30G", "nan", "inf", "-5M", "5X", "M", "1.5.5G", "\u0661G"])
def test_size_refused(text: str) -> None:
    refused(lambda: v.parse_size(text, FLAG))


HOSTS = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){0,3}", fullmatch=True),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
)


@SETTINGS
@given(st.lists(st.tuples(HOSTS, st.integers(1, 65535)), min_size=1, max_size=4))
def test_bootstrap_valid(pairs: list[tuple[str, int]]) -> None:
    text = ", ".join(f"{h}:{p}" for h, p in pairs)
    assert v.parse_bootstrap(text, FLAG) == ",".join(f"{h}:{p}" for h, p in pairs)


@SETTINGS
@given(HOSTS, st.one_of(st.integers(-5, 0), st.integers(65536, 10**9)))
def test_bootstrap_port_out_of_range(host: str, port: int) -> None:
    refused(lambda: v.parse_bootstrap(f"{host}:{port}", FLAG))


@SETTINGS
@given(HOSTS, st.integers(1, 65535), CORRUPT)
def test_bootstrap_corrupted_port(host: str, port: int, junk: str) -> None:
    assume(junk.strip() not in ("", ",") and junk != " 1")
    refused(lambda: v.parse_bootstrap(f"{host}:{port}{junk}", FLAG))


@pytest.mark.parametrize("text", ["127.0.0.1:\u0661\u0662", "host", ":9092", "host:", "[::1", "::1:9092", "a b:1",
                                  "h:1,,h:2", "h:1,", "h:+5", "h:9092/x", "\udcffh:1"])
def test_bootstrap_refused(text: str) -> None:
    refused(lambda: v.parse_bootstrap(text, FLAG))


@SETTINGS
@given(st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=10, unique=True))
def test_broker_ids(ids: list[int]) -> None:
    assert v.parse_broker_ids(",".join(map(str, ids)), FLAG) == tuple(ids)
    refused(lambda: v.parse_broker_ids(",".join(map(str, [*ids, ids[0]])), FLAG))  # a repeat
    refused(lambda: v.parse_broker_ids(",".join(map(str, [*ids, -3])), FLAG))
    refused(lambda: v.parse_broker_ids(",".join(map(str, [*ids, 2**31])), FLAG))


@SETTINGS
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=50))
def test_names_valid(name: str) -> None:
    assume(name.strip())
    assert v.check_text(name, FLAG) == name


@SETTINGS
@given(st.text(max_size=20), st.sampled_from(["\udcff", "\n", "\x00", "\x1b", "\x7f"]), st.text(max_size=20))
def test_names_corrupted(before: str, bad: str, after: str) -> None:
    refused(lambda: v.check_text(before + bad + after, FLAG))


@pytest.mark.parametrize("text", ["(", "[a-", "*x", "a{2,1}"])
def test_regex_refused(text: str) -> None:
    assert "not a valid regular expression" in refused(lambda: v.parse_regex(text, FLAG)).message


@SETTINGS
@given(st.from_regex(r"[A-Za-z0-9]{3,12}", fullmatch=True))
def test_a_url_with_credentials_is_refused_without_echoing_them(secret: str) -> None:
    password = f"Pw{secret}"  # a prefix no message uses, so a hit is the password itself
    err = refused(lambda: v.parse_http_url(f"http://admin:{password}@prom:9090", FLAG))
    assert password not in err.render()
