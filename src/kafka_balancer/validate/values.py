"""Command-line values: pure parsers that return a typed value or raise :class:`InputError` naming the flag
and the value, with a hint. ``cli/options.py`` only wires them into argparse.

Numbers are ASCII only (``int('١٢')`` is 12 in Python; a port or a seed written so is refused), finite,
and bounded: a duration or a timeout of ``1e306`` seconds is a typo, not a wish.

>>> parse_duration_s("2m", "--interval")
120.0
>>> parse_size("1.5G", "--size")
1500000000
>>> parse_broker_ids("7,8", "--brokers")
(7, 8)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from kafka_balancer.errors import InputError

__all__ = [
    "INT32_MAX", "MAX_DURATION_S", "MAX_SIZE", "MAX_TIMEOUT_S", "SEED_MAX", "InputError", "check_text", "http_url",
    "parse_bootstrap", "parse_broker_ids", "parse_duration_s", "parse_float", "parse_float_list", "parse_fraction",
    "parse_host_port", "parse_http_url", "parse_id_map", "parse_int", "parse_int_list", "parse_regex", "parse_seed",
    "parse_size", "parse_timeout_s",
]

INT32_MAX = 2**31 - 1
SEED_MAX = 2**32 - 1
MAX_DURATION_S = 30 * 86_400.0  # 30 days
MAX_TIMEOUT_S = 86_400.0  # a day
MAX_SIZE = 2**63 - 1  # bytes: what Kafka's long holds

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_UNIT_NUMBER = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z/]*)")


def _shown(text: str) -> str:
    """The value as the user typed it, quoted, on one line: bytes that are not UTF-8 (surrogate escapes in
    ``sys.argv``) shown as ``\\xff``, control characters as Python escapes."""
    decoded = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    body = "".join(repr(c)[1:-1] if ord(c) < 32 or ord(c) == 127 or c == "'" else c for c in decoded)
    return f"'{body}'"


def _clean(text: str, flag: str, hint: str) -> str:
    t = text.strip()
    if not t:
        raise InputError(f"{flag} is empty", hint=hint)
    if not t.isascii():
        raise InputError(f"{flag} {_shown(text)}: only ASCII digits and letters are understood", hint=hint)
    return t


def _fmt(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:g}"


def parse_int(text: str, flag: str, *, minimum: int | None = None, maximum: int | None = None,
              hint: str | None = None) -> int:
    """A decimal integer within ``[minimum, maximum]``."""
    rng = _range_words(minimum, maximum)
    hint = hint or f"give {flag} a whole number{rng}"
    t = _clean(text, flag, hint)
    if not _INT.fullmatch(t):
        raise InputError(f"{flag} must be a whole number, got {_shown(text)}", hint=hint)
    v = int(t)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        raise InputError(f"{flag} must be{rng}, got {v}", hint=hint)
    return v


def _range_words(minimum: float | None, maximum: float | None, inclusive: bool = True) -> str:
    lo = (">=" if inclusive else ">") if minimum is not None else ""
    if minimum is not None and maximum is not None:
        return f" between {_fmt(minimum)} and {_fmt(maximum)}" if inclusive else \
            f" above {_fmt(minimum)} and at most {_fmt(maximum)}"
    if minimum is not None:
        return f" {lo} {_fmt(minimum)}"
    if maximum is not None:
        return f" <= {_fmt(maximum)}"
    return ""


def parse_float(text: str, flag: str, *, minimum: float | None = None, maximum: float | None = None,
                inclusive: bool = True, hint: str | None = None) -> float:
    """A finite decimal number (``nan`` and ``inf`` refused) within the bounds; ``inclusive=False`` makes
    ``minimum`` exclusive (``> minimum``)."""
    rng = _range_words(minimum, maximum, inclusive)
    hint = hint or f"give {flag} a number{rng}"
    t = _clean(text, flag, hint)
    if not _FLOAT.fullmatch(t):
        raise InputError(f"{flag} must be a finite number, got {_shown(text)}", hint=hint)
    v = float(t)
    if not math.isfinite(v):
        raise InputError(f"{flag} {t} is out of range", hint=hint)
    low_bad = minimum is not None and (v < minimum if inclusive else v <= minimum)
    if low_bad or (maximum is not None and v > maximum):
        raise InputError(f"{flag} must be{rng}, got {t}", hint=hint)
    return v


MIN_SHARE = 1e-6  # a non-zero share below it means nothing, and dividing by it overflows (1e-320: to inf)


def parse_fraction(text: str, flag: str, *, allow_zero: bool = False, allow_one: bool = True) -> float:
    """A share in (0, 1], or [0, 1] / (0, 1) as asked; a share that is not zero is at least 1e-6."""
    lo, hi = ("[" if allow_zero else "("), ("]" if allow_one else ")")
    hint = f"give {flag} a number in {lo}0, 1{hi}, e.g. 0.8"
    v = parse_float(text, flag, hint=hint)
    if v < 0 or v > 1 or (v == 0 and not allow_zero) or (v == 1 and not allow_one):
        raise InputError(f"{flag} must be in {lo}0, 1{hi}, got {text.strip()}", hint=hint)
    if 0 < v < MIN_SHARE:
        raise InputError(f"{flag} {text.strip()} is too small: a share is {'0 or ' if allow_zero else ''}at least "
                         f"{MIN_SHARE:g}", hint=hint)
    return v


_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86_400.0}


def parse_duration_s(text: str, flag: str, *, minimum: float = 0.0, maximum: float = MAX_DURATION_S,
                     allow_zero: bool = False) -> float:
    """``30s``, ``500ms``, ``2m``, ``6h``, ``1d`` or plain seconds; finite, positive (or zero with
    ``allow_zero``) and at most ``maximum`` seconds (30 days by default)."""
    hint = f"give {flag} a duration such as 500ms, 30s, 2m or 6h (at most {_duration_words(maximum)})"
    t = _clean(text, flag, hint)
    m = _UNIT_NUMBER.fullmatch(t)
    unit = (m.group(2).lower() if m else "") or "s"
    if not m or unit not in _DURATION_UNITS:
        raise InputError(f"{flag} {_shown(text)} is not a duration", hint=hint)
    v = float(m.group(1)) * _DURATION_UNITS[unit]
    if not math.isfinite(v) or v > maximum:
        raise InputError(f"{flag} {t} is longer than {_duration_words(maximum)}", hint=hint)
    if v < 0 or (v == 0 and not allow_zero) or v < minimum:
        least = f"at least {_duration_words(minimum)}" if minimum > 0 else "positive"
        raise InputError(f"{flag} {t} must be {least}", hint=hint)
    return v


def _duration_words(s: float) -> str:
    for unit, size in (("day", 86_400.0), ("h", 3600.0), ("min", 60.0)):
        if s >= size and s % size == 0:
            n = s / size
            return f"{n:g} {unit}{'s' if unit == 'day' and n != 1 else ''}"
    return f"{s:g} s"


def parse_timeout_s(text: str, flag: str = "--timeout", *, maximum: float = MAX_TIMEOUT_S,
                    allow_zero: bool = False) -> float:
    """Seconds to wait: a positive duration of at most a day (``15``, ``30s``, ``2m``)."""
    return parse_duration_s(text, flag, maximum=maximum, allow_zero=allow_zero)


def parse_seed(text: str, flag: str = "--seed") -> int:
    """A random seed in 0..2^32-1 (what numpy's generators take)."""
    return parse_int(text, flag, minimum=0, maximum=SEED_MAX, hint=f"give {flag} a whole number in 0..{SEED_MAX}")


_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
    "p": 10**15, "pb": 10**15,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50,
}


def parse_size(text: str, flag: str, *, maximum: int = MAX_SIZE, per_second: bool = False) -> int:
    """Bytes: ``500G``, ``1.5T``, ``10MiB``, ``4096`` (K/M/G/T are powers of 1000, KiB/MiB/... of 1024);
    non-negative and finite. ``per_second`` also accepts a trailing ``/s`` (a rate)."""
    eg = "50M, 1.5G or 10MiB" + (" (per second)" if per_second else "")
    hint = f"give {flag} a size in bytes such as {eg}"
    t = _clean(text, flag, hint)
    if per_second and t.lower().endswith("/s"):
        t = t[:-2].rstrip()
    m = _UNIT_NUMBER.fullmatch(t)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _SIZE_UNITS:
        raise InputError(f"{flag} {_shown(text)} is not a size", hint=hint)
    v = float(m.group(1)) * _SIZE_UNITS[unit]
    if not math.isfinite(v) or v > maximum:
        raise InputError(f"{flag} {text.strip()} is too large (at most {maximum} bytes)", hint=hint)
    if v < 0:
        raise InputError(f"{flag} {text.strip()} is negative", hint=hint)
    return int(v)


Polish = tuple[float | None, float | None]  # (share of the byte bound, bytes): exactly one is set


def parse_polish(text: str, flag: str) -> Polish:
    """A polishing allowance: a share of the planner's byte bound (``1.5``; 0: none) or, with a unit, a size
    (``300G``, ``1.5T``). Returns (share, None) or (None, bytes)."""
    hint = f"give {flag} a share of the byte bound such as 1.5 (0: no polishing) or a size such as 300G"
    t = text.strip()
    if t[-1:].isalpha():
        return None, float(parse_size(t, flag))
    return parse_float(t, flag, minimum=0.0, maximum=1e6, hint=hint), None


def list_items(text: str, flag: str, hint: str) -> list[str]:
    """The stripped items of a comma-separated list; an empty list, or an empty item (``1,,2``, ``1,``), is
    refused: a doubled or trailing comma is usually a value that went missing."""
    items = [p.strip() for p in text.split(",")]
    if not any(items):
        raise InputError(f"{flag} is empty", hint=hint)
    if not all(items):
        raise InputError(f"bad {flag} {_shown(text)}: an empty entry between commas", hint=hint)
    return items


def parse_int_list(text: str, flag: str, *, minimum: int | None = None, maximum: int | None = None,
                   unique: bool = True, hint: str | None = None) -> tuple[int, ...]:
    """Comma-separated whole numbers (``0,1,2``); an empty list or an empty item is refused."""
    hint = hint or f"give {flag} comma-separated whole numbers, e.g. 1,2,3"
    items = list_items(text, flag, hint)
    vals = tuple(parse_int(s, flag, minimum=minimum, maximum=maximum, hint=hint) for s in items)
    if unique and len(set(vals)) != len(vals):
        dup = next(v for v in vals if vals.count(v) > 1)
        raise InputError(f"{flag} names {dup} twice", hint=hint)
    return vals


def parse_broker_ids(text: str, flag: str) -> tuple[int, ...]:
    """Kafka broker ids: ``7,8``; each a non-negative int32, no repeats."""
    return parse_int_list(text, flag, minimum=0, maximum=INT32_MAX,
                          hint=f"give {flag} broker ids 0..{INT32_MAX}, comma-separated, e.g. 7,8")


def parse_float_list(text: str, flag: str, *, minimum: float | None = None, maximum: float | None = None,
                     inclusive: bool = True, hint: str | None = None) -> tuple[float, ...]:
    """Comma-separated finite numbers within the bounds; an empty list or an empty item is refused."""
    hint = hint or f"give {flag} comma-separated numbers, e.g. 0.1,0.2"
    items = list_items(text, flag, hint)
    return tuple(parse_float(s, flag, minimum=minimum, maximum=maximum, inclusive=inclusive, hint=hint)
                 for s in items)


def parse_regex(text: str, flag: str) -> re.Pattern[str]:
    """A Python regular expression; a compile error names the flag and the position."""
    check_text(text, flag, allow_empty=True)
    try:
        return re.compile(text)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise InputError(f"{flag} {_shown(text)} is not a valid regular expression: {exc.msg}{where}",
                         hint=r"escape special characters with \, e.g. 'orders\.v1'") from None


def check_text(text: str, flag: str, *, allow_empty: bool = False, max_len: int = 4096) -> str:
    """A text value (a group, topic or cluster name): valid UTF-8 (arguments that were not arrive as
    surrogate escapes), no control characters, not empty unless allowed, not absurdly long."""
    hint = f"give {flag} a UTF-8 name without control characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{flag} {_shown(text)} is not valid UTF-8", hint=hint) from None
    if not allow_empty and not text.strip():
        raise InputError(f"{flag} is empty", hint=hint)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InputError(f"{flag} {_shown(text)} holds a control character", hint=hint)
    if len(text) > max_len:
        raise InputError(f"{flag} is {len(text)} characters long (at most {max_len})", hint=hint)
    return text


def parse_host_port(part: str, flag: str, *, whole: str | None = None) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too); the port ASCII digits in 1..65535."""
    hint = f"e.g. {flag} 127.0.0.1:19092 (several: comma-separated)"
    shown = _shown(whole if whole is not None else part)
    host, sep, port = part.strip().rpartition(":")
    if not sep or not host or not port:
        raise InputError(f"bad {flag} {shown}: {_shown(part.strip())} is not host:port", hint=hint)
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise InputError(f"bad {flag} {shown}: port {_shown(port)} is not a number in 1..65535", hint=hint)
    bracketed = host.startswith("[") and host.endswith("]")
    bare = host[1:-1] if bracketed else host
    bad_chars = ",/@[]" + ("" if bracketed else ":")
    if not bare or not host.isascii() or any(c.isspace() or c in bad_chars or ord(c) < 32 for c in bare):
        raise InputError(f"bad {flag} {shown}: host {_shown(host)} is not a host name or address", hint=hint)
    return host, int(port)


def parse_bootstrap(text: str, flag: str = "--bootstrap") -> str:
    """``host:port[,host:port...]``: returned normalised (stripped, no spaces around commas)."""
    t = text.strip()
    if not t:
        raise InputError(f"{flag} is empty", hint=f"e.g. {flag} 127.0.0.1:19092")
    parts = [p.strip() for p in t.split(",")]
    if any(not p for p in parts):
        raise InputError(f"bad {flag} {_shown(text)}: an empty entry between commas",
                         hint=f"e.g. {flag} 127.0.0.1:19092,127.0.0.1:19093")
    for p in parts:
        parse_host_port(p, flag, whole=text)
    return ",".join(parts)


def parse_id_map(text: str, flag: str, *, value: Callable[[int, str], str] | None = None) -> dict[int, str]:
    """``1=a,2=b``: broker id to a text value; ``value(id, v)`` may check or rewrite each value."""
    hint = f"e.g. {flag} 1=hostA,2=hostB"
    out: dict[int, str] = {}
    for part in list_items(text, flag, hint) if text.strip() else []:
        k, sep, v = part.partition("=")
        if not sep or not v.strip():
            raise InputError(f"{flag}: expected ID=VALUE pairs, got {_shown(part)}", hint=hint)
        bid = parse_int(k, flag, minimum=0, maximum=INT32_MAX, hint=hint)
        if bid in out:
            raise InputError(f"{flag}: broker {bid} is given twice", hint=hint)
        v = check_text(v.strip(), flag)
        out[bid] = value(bid, v) if value else v
    return out


def parse_http_url(text: str, flag: str) -> str:
    """An ``http(s)://host[:port][/path]`` URL (the host and an optional port checked like a bootstrap)."""
    hint = f"e.g. {flag} http://127.0.0.1:9090"
    t = check_text(text.strip(), flag)
    scheme, sep, rest = t.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        raise InputError(f"{flag} {_shown(text)} is not an http(s) URL", hint=hint)
    netloc = rest.split("/", 1)[0]
    if "@" in netloc:  # not echoed: the part before @ may be a password
        raise InputError(f"{flag}: the URL holds credentials (user:password@...); they are not accepted there",
                         hint=f"{hint}, without credentials")
    if not netloc:
        raise InputError(f"{flag} {_shown(text)} has no host", hint=hint)
    if ":" in netloc and not (netloc.startswith("[") and netloc.endswith("]")):  # a port given
        parse_host_port(netloc, flag, whole=text)
    return t


def http_url(flag: str) -> Callable[[int, str], str]:
    def check(bid: int, v: str) -> str:
        if not v.startswith(("http://", "https://")) or len(v.split("//", 1)[1]) == 0:
            raise InputError(f"{flag}: broker {bid}: {_shown(v)} is not an http(s) URL",
                             hint=f"e.g. {flag} {bid}=http://127.0.0.1:19192/metrics")
        return v

    return check
