"""JSON input documents: bytes to a parsed document, and typed access to its fields.

Every function is pure and raises :class:`InputError` naming the file (``source``), the field (``where``,
e.g. ``partition orders-3: load.leader.cpu``) and the value, with a hint. The input-kind modules
(:mod:`.snapshot`, :mod:`.plan`, :mod:`.journal`, :mod:`.consumer_input`, :mod:`.local_state`) build on them.

    >>> number(2.5, "f: capacity.cpu", positive=True)
    2.5
    >>> integer(True, "f: partition", 0, 10)
    Traceback (most recent call last):
    ...
    kafka_balancer.errors.InputError: f: partition is True, not an integer
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from kafka_balancer.errors import InputError

INT32_MAX = 2**31 - 1
SMALLEST_NORMAL = sys.float_info.min  # 2.2e-308: below it a float is denormal and 1/x overflows

_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"),
)
UTF8_BOM = b"\xef\xbb\xbf"


@contextmanager
def default_hint(hint: str) -> Iterator[None]:
    """InputErrors raised inside get ``hint`` when they carry none."""
    try:
        yield
    except InputError as exc:
        if exc.hint is None:
            exc.hint = hint
        raise


def shown(value: Any, limit: int = 60) -> str:
    """``repr`` of a value cut to ``limit`` characters (one line: repr escapes line breaks)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def text_of(data: bytes, source: str, what: str) -> str:
    """The bytes of a UTF-8 text file as text. A UTF-8 byte-order mark is skipped; UTF-16 or UTF-32 text,
    a NUL byte or a byte that is not UTF-8 is an InputError naming its offset."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise InputError(f"{source} is {name} text, not UTF-8", hint=f"save {what} as UTF-8")
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    nul = data.find(b"\x00")
    if nul >= 0:
        looks16 = len(data) > 1 and (data[1:2] == b"\x00" or data[:1] == b"\x00")
        if looks16:
            raise InputError(f"{source} holds NUL bytes (UTF-16 text?), not UTF-8", hint=f"save {what} as UTF-8")
        raise InputError(f"{source}: NUL byte at offset {nul}", hint=f"the file is damaged; give {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source} is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})",
                         hint=f"save {what} as UTF-8") from None


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while a large document is parsed and converted.

    Parsing builds millions of dicts and lists, none of them in a cycle; the collector, triggered by those
    allocations, walks them again and again (a 31 MB snapshot: 1.07 s to parse with it, 0.82 s without).
    Reference counting still frees everything; the collector is restored as it was, even on an error. The
    pause is process-wide: with parses in several threads, the one that found it on turns it back on when it
    ends, even if another is still parsing (that one then runs with the collector, only slower)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_json(data: bytes, source: str, what: str) -> Any:
    """One JSON document (numbers out of the double range are refused)."""
    text = text_of(data, source, what)
    if not text.strip():
        raise InputError(f"{source} is empty", hint=f"give {what}")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{source}: not valid JSON: {exc}", hint=f"check that the file is {what}, whole") from None


def obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where} must be a JSON object, found {_kind(value)}")
    return value


def field(d: dict[str, Any], key: str, where: str, hint: str | None = None) -> Any:
    """``d[key]``; a missing key is an InputError naming it."""
    if key not in d:
        raise InputError(f"{where}: field {key!r} is missing", hint=hint)
    return d[key]


def array(value: Any, where: str, *, nonempty: bool = False) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(f"{where} must be a JSON list, found {_kind(value)}")
    if nonempty and not value:
        raise InputError(f"{where} must not be empty")
    return value


def string(value: Any, where: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        need = "a string" if allow_empty else "a non-empty string"
        raise InputError(f"{where} is {shown(value)}; it must be {need}")
    return value


def boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{where} is {shown(value)}; it must be true or false")
    return value


def integer(value: Any, where: str, lo: int, hi: int, hint: str | None = None) -> int:
    """A JSON integer (not a boolean, not a float, not a string) in ``lo..hi``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where} is {shown(value)}, not an integer", hint=hint)
    if not lo <= value <= hi:
        raise InputError(f"{where} is {shown(value)}; it must be an integer from {lo} to {hi}", hint=hint)
    return value


def broker_id(value: Any, where: str) -> int:
    """A Kafka broker id: a 32-bit integer >= 0."""
    return integer(value, where, 0, INT32_MAX, hint="Kafka broker ids are integers from 0 to 2147483647")


def partition_number(value: Any, where: str) -> int:
    """A Kafka partition number: a 32-bit integer >= 0."""
    return integer(value, where, 0, INT32_MAX, hint="Kafka partition numbers are integers from 0 to 2147483647")


def number(value: Any, where: str, *, positive: bool = False, hint: str | None = None) -> float:
    """A finite JSON number >= 0 (> 0 and not denormal when ``positive``: it is divided by)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{where} is {shown(value)}, not a number", hint=hint or "write the number without quotes")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the double range
        v = float("inf")
    if v != v or v in (float("inf"), float("-inf")) or v < 0:
        need = "a positive number" if positive else "a number >= 0"
        raise InputError(f"{where} is {shown(value)}; it must be {need}", hint=hint)
    if positive and v < SMALLEST_NORMAL:
        raise InputError(f"{where} is {shown(value)}; it must be a positive number of at least "
                         f"{SMALLEST_NORMAL:.3g} (smaller ones cannot be divided by)",
                         hint=hint or "check the unit")
    return v


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
