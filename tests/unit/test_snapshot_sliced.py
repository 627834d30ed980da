"""The sliced snapshot reader (large files, a slice of the partition list at a time) accepts exactly what the
whole-document reader accepts, gives the same Snapshot, and every error is the same line."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.model.snapshot_io import snapshot_to_dict
from kafka_balancer.sim.cluster import PRESETS, generate
from kafka_balancer.validate import snapshot as vs
from kafka_balancer.validate.jsondoc import parse_json

FIELDS = ("broker_ids", "rack_idx", "host_idx", "alive", "capacity", "topic_idx", "partition", "replicas", "rf",
          "leader", "leader_load", "follower_load")


@pytest.fixture(autouse=True)
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vs, "SLICED_MIN_BYTES", 0)
    monkeypatch.setattr(vs, "SLICE_BYTES", 3000)  # a dozen partitions per slice


def whole(data: bytes) -> Snapshot | str:
    try:
        return vs.snapshot_from_dict(parse_json(data, "s.json", vs.WHAT), "s.json")
    except InputError as exc:
        return f"{exc} | {exc.hint}"


def sliced(data: bytes) -> Snapshot | str:
    try:
        return vs.parse_snapshot(data, "s.json")
    except InputError as exc:
        return f"{exc} | {exc.hint}"


def same(a: Snapshot | str, b: Snapshot | str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f
    assert (a.topics, a.rack_names, a.host_names, a.name) == (b.topics, b.rack_names, b.host_names, b.name)


def doc() -> dict:  # type: ignore[type-arg]
    return snapshot_to_dict(generate(PRESETS["racks48"], seed=0))


@pytest.mark.parametrize("indent", [False, True])
def test_sliced_equals_whole(indent: bool) -> None:
    d = doc()
    d["partitions"][3]["topic"] = 'odd},{"name'  # the split pattern inside a string
    d["partitions"][40]["topic"] = "}, {"
    data = orjson.dumps(d, option=orjson.OPT_INDENT_2 if indent else 0)
    got = vs._parse_sliced(data, "s.json")
    assert got is not None  # the sliced path itself decided, not the fallback
    same(got, whole(data))


def test_partitions_not_last_and_nested_key_fall_back() -> None:
    d = doc()
    reordered = {"partitions": d["partitions"], "version": 1, "brokers": d["brokers"]}
    data = orjson.dumps(reordered)
    assert vs._parse_sliced(data, "s.json") is None
    same(sliced(data), whole(data))
    d["brokers"][0]["extra"] = {"partitions": [{"a": 1}, {"b": 2}]}  # a nested key of the same name
    data = orjson.dumps(d)
    same(sliced(data), whole(data))


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d["partitions"][500].__setitem__("replicas", [9999]),
        lambda d: d["partitions"][900].__setitem__("topic", d["partitions"][10]["topic"])
        or d["partitions"][900].__setitem__("partition", d["partitions"][10]["partition"]),
        lambda d: d["partitions"][1200]["load"]["leader"].__setitem__("cpu", "1"),
        lambda d: d["partitions"][1999]["load"]["follower"].__setitem__("disk", -1.0),
        lambda d: d["partitions"][700].pop("leader"),
        lambda d: d["brokers"][2]["capacity"].__setitem__("cpu", 0),
        lambda d: d.__setitem__("version", 2),
    ],
)
def test_errors_are_the_same_line(corrupt) -> None:  # type: ignore[no-untyped-def]
    d = doc()
    corrupt(d)
    data = orjson.dumps(d)
    a, b = sliced(data), whole(data)
    assert isinstance(b, str) and a == b


def test_syntax_error_late_in_the_file_wins_over_an_early_semantic_error() -> None:
    d = doc()
    d["partitions"][1]["replicas"] = [9999]  # a semantic error early
    data = orjson.dumps(d)[:-3] + b"]]}"  # and broken JSON at the end
    a, b = sliced(data), whole(data)
    assert isinstance(b, str) and "not valid JSON" in b and a == b


def test_plain_and_checked_partitions_store_the_same() -> None:
    """Plainly valid partitions are kept aside and written at once; the others are checked and written one
    by one. Loads given as whole numbers (ints: checked) or as the same floats (plain) read the same."""
    d = doc()
    for pr in d["partitions"]:
        for role in ("leader", "follower"):
            pr["load"][role] = {k: float(round(v)) for k, v in pr["load"][role].items()}
    mixed = orjson.loads(orjson.dumps(d))
    for pr in mixed["partitions"][::3]:
        pr["load"]["follower"] = {k: int(v) for k, v in pr["load"]["follower"].items()}
    for data in (orjson.dumps(d), orjson.dumps(mixed)):
        got = vs._parse_sliced(data, "s.json")
        assert got is not None
        same(got, whole(orjson.dumps(d)))
