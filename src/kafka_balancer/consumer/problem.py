"""The input of every consumer assignor: members, partitions with loads, and who owns what now.

Everything is plain data held in numpy arrays so that the same problem object serves a 10-partition
unit test and a 1M-partition benchmark. Members are addressed by position ``0..M-1`` and partitions
by position ``0..P-1``.

Example:
    >>> p = make_problem(
    ...     [Member("c1", ("t1",)), Member("c2", ("t1",), owned=(("t1", 0),))],
    ...     [("t1", 0, 5.0), ("t1", 1, 1.0)],
    ... )
    >>> p.n_members, p.n_partitions, p.prev_owner.tolist()
    (2, 2, [1, -1])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kafka_balancer.errors import InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Member:
    """One group member as the assignor sees it.

    ``start_ms`` is when the member started receiving normally (seed 000 orders consumers by it,
    longest-running first); ``capacity`` is its relative processing speed (1.0 = reference);
    ``owned`` lists the (topic, partition) pairs it holds before this rebalance.
    """

    id: str
    topics: tuple[str, ...]
    start_ms: int | None = None
    capacity: float = 1.0
    owned: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, eq=False)
class AssignmentProblem:
    """Members, partitions and the previous assignment, as arrays.

    ``subscribed[m, t]`` says member ``m`` subscribes to ``topics[t]``; ``prev_owner[p]`` is the
    position of the member that owned partition ``p`` before (``-1``: nobody, or the owner does not
    subscribe to the partition's topic any more).
    """

    member_ids: tuple[str, ...]
    capacity: FloatArray
    start_ms: FloatArray  # +inf when unknown (treated as "just started")
    topics: tuple[str, ...]
    subscribed: BoolArray  # [M, T]
    topic_idx: IntArray  # [P]
    partition: IntArray  # [P]
    load: FloatArray  # [P]
    prev_owner: IntArray  # [P]
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_members(self) -> int:
        return len(self.member_ids)

    @property
    def n_partitions(self) -> int:
        return int(self.load.shape[0])

    def homogeneous(self) -> bool:
        """True when every member subscribes to every topic."""
        return bool(self.subscribed.all())

    def subscription_classes(self) -> tuple[IntArray, list[IntArray]]:
        """Group topics by identical subscriber sets.

        Returns ``(class_of_partition[P], members_of_class[k])``: partitions whose topics have the
        same subscribers share a class, and may go to exactly the members of that class.
        """
        cached = self._cache.get("classes")
        if cached is None:
            keys: dict[bytes, int] = {}
            members_of: list[IntArray] = []
            class_of_topic = np.empty(len(self.topics), dtype=np.int64)
            for t in range(len(self.topics)):
                col = self.subscribed[:, t]
                key = np.packbits(col).tobytes()
                if key not in keys:
                    keys[key] = len(members_of)
                    members_of.append(np.flatnonzero(col).astype(np.int64))
                class_of_topic[t] = keys[key]
            cached = (class_of_topic[self.topic_idx], members_of)
            self._cache["classes"] = cached
        return cached  # type: ignore[no-any-return]

    def tp(self, p: int) -> tuple[str, int]:
        return self.topics[int(self.topic_idx[p])], int(self.partition[p])


_INT32_MAX = 2**31 - 1


def _fail(message: str, hint: str) -> InputError:
    return InputError(message, hint=hint)


def make_problem(
    members: Sequence[Member],
    partitions: Sequence[tuple[str, int, float]],
    *,
    on_conflict: str = "error",
) -> AssignmentProblem:
    """Validate members and partitions and build an :class:`AssignmentProblem`.

    ``on_conflict`` says what to do when two members claim the same owned partition: ``"error"``
    (offline input) or ``"drop"`` (live groups, where a stale member may still list it).
    """
    if not members:
        raise _fail("no members in the input", "add at least one entry to 'members'")
    ids = [m.id for m in members]
    seen: set[str] = set()
    for mid in ids:
        if not isinstance(mid, str) or not mid:
            raise _fail(f"member id {mid!r} is not a non-empty string", "give every member a string 'id'")
        if mid in seen:
            raise _fail(f"duplicate member id {mid!r}", "member ids must be unique within a group")
        seen.add(mid)
    topics: list[str] = []
    topic_pos: dict[str, int] = {}
    P = len(partitions)
    topic_idx = np.empty(P, dtype=np.int64)
    part = np.empty(P, dtype=np.int64)
    load = np.empty(P, dtype=np.float64)
    pos_of: dict[tuple[str, int], int] = {}
    for i, (topic, pnum, pload) in enumerate(partitions):
        if not isinstance(topic, str) or not topic:
            raise _fail(f"partition #{i} has topic {topic!r}", "every partition needs a non-empty 'topic'")
        if isinstance(pnum, bool) or not isinstance(pnum, int) or not 0 <= pnum <= _INT32_MAX:
            raise _fail(f"partition {topic}-{pnum!r} has an invalid partition number",
                        "'partition' must be an integer from 0 to 2147483647")
        if isinstance(pload, bool) or not isinstance(pload, int | float | np.floating | np.integer):
            raise _fail(f"partition {topic}-{pnum} has a non-numeric load {pload!r}",
                        "'load' must be a number >= 0")
        lv = float(pload)
        if not math.isfinite(lv) or lv < 0:
            raise _fail(f"partition {topic}-{pnum} has load {pload!r}", "'load' must be a finite number >= 0")
        if (topic, pnum) in pos_of:
            raise _fail(f"partition {topic}-{pnum} is listed twice", "list each (topic, partition) once")
        pos_of[(topic, pnum)] = i
        if topic not in topic_pos:
            topic_pos[topic] = len(topics)
            topics.append(topic)
        topic_idx[i] = topic_pos[topic]
        part[i] = pnum
        load[i] = lv
    M = len(members)
    subscribed = np.zeros((M, len(topics)), dtype=bool)
    capacity = np.empty(M, dtype=np.float64)
    start = np.full(M, np.inf, dtype=np.float64)
    prev = np.full(P, -1, dtype=np.int64)
    for mi, m in enumerate(members):
        if not m.topics:
            raise _fail(f"member {m.id!r} subscribes to no topics",
                        "give every member a non-empty 'topics' list")
        for t in m.topics:
            if t not in topic_pos:
                raise _fail(f"member {m.id!r} subscribes to unknown topic {t!r}",
                            f"add partitions of {t!r} to 'partitions' or remove it from the member's topics")
            subscribed[mi, topic_pos[t]] = True
        cap = float(m.capacity)
        if not math.isfinite(cap) or cap <= 0:
            raise _fail(f"member {m.id!r} has capacity {m.capacity!r}", "'capacity' must be a number > 0")
        capacity[mi] = cap
        if m.start_ms is not None:
            start[mi] = float(m.start_ms)
        for tp in m.owned:
            key = (tp[0], int(tp[1]))
            if key not in pos_of:
                if on_conflict == "drop":
                    continue
                raise _fail(f"member {m.id!r} owns unknown partition {key[0]}-{key[1]}",
                            "owned partitions must appear in 'partitions'")
            pi = pos_of[key]
            if prev[pi] >= 0 and prev[pi] != mi:
                if on_conflict == "drop":
                    continue
                raise _fail(f"partition {key[0]}-{key[1]} is owned by both {ids[prev[pi]]!r} and {m.id!r}",
                            "each partition may be owned by at most one member")
            if subscribed[mi, topic_pos[key[0]]]:
                prev[pi] = mi
    orphan_topics = [topics[t] for t in range(len(topics)) if not subscribed[:, t].any()]
    if orphan_topics:
        raise _fail(f"no member subscribes to topic {orphan_topics[0]!r}",
                    "remove its partitions from 'partitions' or subscribe a member to it")
    return AssignmentProblem(
        tuple(ids), capacity, start, tuple(topics), subscribed, topic_idx, part, load, prev
    )


def problem_from_arrays(
    n_members: int,
    load: npt.ArrayLike,
    *,
    prev_owner: npt.ArrayLike | None = None,
    capacity: npt.ArrayLike | None = None,
    start_ms: npt.ArrayLike | None = None,
    topic: str = "t",
) -> AssignmentProblem:
    """A homogeneous single-topic problem built straight from arrays (benchmarks, simulator).

    Example:
        >>> problem_from_arrays(3, [3.0, 1.0]).member_ids
        ('c0', 'c1', 'c2')
    """
    loads = np.asarray(load, dtype=np.float64).copy()
    P = loads.shape[0]
    if n_members <= 0:
        raise _fail("no members", "n_members must be >= 1")
    if (loads < 0).any() or not np.isfinite(loads).all():
        raise _fail("negative or non-finite load", "loads must be finite and >= 0")
    prev = (np.full(P, -1, dtype=np.int64) if prev_owner is None
            else np.asarray(prev_owner, dtype=np.int64).copy())
    cap = (np.ones(n_members) if capacity is None else np.asarray(capacity, dtype=np.float64).copy())
    start = (np.full(n_members, np.inf) if start_ms is None
             else np.asarray(start_ms, dtype=np.float64).copy())
    width = len(str(max(n_members - 1, 0)))
    ids = tuple(f"c{i:0{width}d}" if n_members > 10 else f"c{i}" for i in range(n_members))
    return AssignmentProblem(
        ids, cap, start, (topic,), np.ones((n_members, 1), dtype=bool),
        np.zeros(P, dtype=np.int64), np.arange(P, dtype=np.int64), loads, prev,
    )


def problem_from_dict(doc: Mapping[str, Any], source: str = "input") -> AssignmentProblem:
    """Parse the ``assign --input`` JSON document (see docs/consumer.md); the checks are
    :mod:`kafka_balancer.validate.consumer_input`'s."""
    from kafka_balancer.validate.consumer_input import consumer_input_from_dict

    return consumer_input_from_dict(doc, source)
