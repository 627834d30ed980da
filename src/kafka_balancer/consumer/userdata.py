"""What each member puts in its JoinGroup subscription ``user_data``: start time, capacity, owned.

Encoded as compact JSON with a version, so members of different versions can still read each other.
Undecodable or foreign user_data (another assignor's bytes) is treated as "nothing known".

Example:
    >>> raw = encode_user_data(1700000000000, 2.0, [("t", 1), ("t", 0)])
    >>> decode_user_data(raw)
    MemberInfo(start_ms=1700000000000, capacity=2.0, owned=(('t', 0), ('t', 1)))
    >>> decode_user_data(b"garbage")
    MemberInfo(start_ms=None, capacity=1.0, owned=())
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import orjson

VERSION = 1


@dataclass(frozen=True)
class MemberInfo:
    start_ms: int | None
    capacity: float
    owned: tuple[tuple[str, int], ...]


def encode_user_data(start_ms: int | None, capacity: float, owned: Iterable[tuple[str, int]]) -> bytes:
    return orjson.dumps({"kb": VERSION, "start_ms": start_ms, "capacity": capacity,
                         "owned": sorted([str(t), int(p)] for t, p in owned)})


def decode_user_data(raw: bytes | None) -> MemberInfo:
    if not raw:
        return MemberInfo(None, 1.0, ())
    try:
        doc = orjson.loads(raw)
        if not isinstance(doc, dict) or doc.get("kb") != VERSION:
            return MemberInfo(None, 1.0, ())
        start = doc.get("start_ms")
        cap = float(doc.get("capacity", 1.0))
        owned = tuple(sorted((str(t), int(p)) for t, p in doc.get("owned", [])))
        return MemberInfo(None if start is None else int(start), cap if cap > 0 else 1.0, owned)
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return MemberInfo(None, 1.0, ())
