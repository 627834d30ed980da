"""Our assignors inside real consumer groups, via kafka-python 3.x's assignor interface.

``KafkaConsumer(partition_assignment_strategy=[LoadAwareAssignor("balanced", ...)])`` makes the
member advertise the strategy in JoinGroup; when it is elected leader, kafka-python calls
:meth:`LoadAwareAssignor.assign` with every member's decoded subscription and sends the result in
SyncGroup (the client-side assignment protocol of seed 002).

* Each member's subscription carries ``user_data`` (start time, capacity, owned partitions, see
  :mod:`.userdata`) and, from protocol version 1, the standard ``owned_partitions`` field.
* The leader asks its load source (:mod:`.loads`) for partition loads at assignment time.
* kafka-python 3.x implements KIP-429: an assignor whose ``supported_protocols()`` is
  ``[COOPERATIVE]`` makes the consumer keep its partitions across JoinGroup, revoke only the ones
  missing from its new assignment, and rejoin at once when it revoked any. So ``protocol="cooperative"``
  returns round one (moving partitions withheld) and the follow-up rebalance delivers them.
* Classic groups pick ONE protocol (assignor name) that every member supports. A member that lists
  none of the group's (a Java or librdkafka consumer with its defaults, ``range`` and
  ``cooperative-sticky``, joining members that list only ``kb-balanced``) is refused by the broker
  (INCONSISTENT_GROUP_PROTOCOL) before the leader ever sees it. :func:`with_range_fallback` adds Kafka's
  ``range`` after ours, so such a member joins; the group then runs ``range`` and the leader logs one
  line naming the members that cannot run ours (:class:`RangeFallback`).
* :func:`keep_join_pending` works around a kafka-python 3.0.x bug that can leave the group leader
  out of the group for good; call it on every ``KafkaConsumer`` that uses these assignors.

Example (no broker needed; ``members`` as kafka-python hands them to the leader):
    >>> from types import SimpleNamespace as NS
    >>> from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
    >>> a = LoadAwareAssignor("balanced", loads=StaticLoads({("t", 0): 5.0, ("t", 1): 1.0, ("t", 2): 4.0}))
    >>> sub = ConsumerProtocolSubscription.decode(a.metadata({"t"}).encode())
    >>> cluster = NS(partitions_for_topic=lambda t: {0, 1, 2})
    >>> out = a.assign(cluster, [NS(member_id="m1", metadata=sub), NS(member_id="m2", metadata=sub)])
    >>> sorted((m, x.partitions()) for m, x in out.items())
    [('m1', [TopicPartition(topic='t', partition=0)]), ('m2', [TopicPartition(topic='t', partition=1), TopicPartition(topic='t', partition=2)])]
"""  # noqa: E501

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import orjson
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from kafka_balancer.consumer.assignors import STRATEGIES
from kafka_balancer.consumer.assignors import run as run_strategy
from kafka_balancer.consumer.loads import LoadSource, StaticLoads
from kafka_balancer.consumer.problem import Member, make_problem
from kafka_balancer.consumer.result import COOPERATIVE, EAGER, stats
from kafka_balancer.consumer.userdata import decode_user_data, encode_user_data

log = logging.getLogger(__name__)
SUBSCRIPTION_VERSION = 1  # carries owned_partitions


def keep_join_pending(consumer: Any) -> bool:
    """Make ``consumer`` finish a rebalance it started (workaround for kafka-python 3.0.x).

    kafka-python 3.0.12 drives JoinGroup/SyncGroup as a task on its IO thread; ``consumer.poll()``
    waits for it only while ``coordinator.need_rejoin()`` is true, and leaves it in flight when the
    poll times out. When the rebalance was started by a metadata change the leader saw
    (``assignment_snapshot != metadata_snapshot``, e.g. a topic whose partitions were not known at
    the first assignment, or partitions added), nothing else keeps ``need_rejoin()`` true:
    ``_perform_assignment`` sets ``assignment_snapshot = metadata_snapshot`` while the task runs. If
    the poll timed out before the SyncGroup answer was consumed, every later poll skips the group
    and the finished task is never read: the member never applies its assignment, its heartbeat
    stays disabled (it is off during a join), and the broker drops it after the session timeout. It
    stays subscribed, consuming nothing, forever. Java's client loops on ``rejoinNeededOrPending()``
    (rejoin needed *or a join in flight*); this restores that: ``need_rejoin()`` is also true while
    ``coordinator.rejoining`` (set before JoinGroup, cleared when the join completed).

    Returns False (and changes nothing) when the consumer's coordinator does not look like 3.0.x's.
    """
    coord = getattr(consumer, "_coordinator", None)
    if coord is None or not hasattr(coord, "rejoining") or not callable(getattr(coord, "need_rejoin", None)):
        log.warning("keep_join_pending: unknown kafka-python coordinator %r; not patched", type(coord))
        return False
    if getattr(coord, "_kb_keep_join_pending", False):
        return True
    plain = coord.need_rejoin

    def need_rejoin() -> bool:
        return bool(plain()) or bool(coord.rejoining)

    coord.need_rejoin = need_rejoin
    coord._kb_keep_join_pending = True
    return True


class LoadAwareAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """One of our strategies as a kafka-python assignor (name ``kb-<strategy>``)."""

    def __init__(self, strategy: str = "balanced", *, protocol: str | None = None,
                 loads: LoadSource | None = None, capacity: float = 1.0, start_ms: int | None = None,
                 max_moves: int | None = None) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        self.strategy = strategy
        self.protocol = protocol or (COOPERATIVE if strategy == "cooperative-sticky" else EAGER)
        self.loads = loads or StaticLoads({})
        self.capacity = capacity
        self.start_ms = int(time.time() * 1000) if start_ms is None else start_ms
        self.max_moves = max_moves
        self.member_assignment: list[tuple[str, int]] = []
        self.last_stats: dict[str, Any] | None = None
        self.assign_calls = 0

    @property
    def name(self) -> str:
        return f"kb-{self.strategy}"

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.COOPERATIVE if self.protocol == COOPERATIVE else RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> Any:
        by_topic: dict[str, list[int]] = defaultdict(list)
        for t, p in self.member_assignment:
            by_topic[t].append(p)
        owned = [ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=sorted(ps))
                 for t, ps in sorted(by_topic.items())]
        return ConsumerProtocolSubscription(
            version=SUBSCRIPTION_VERSION, topics=sorted(topics),
            user_data=encode_user_data(self.start_ms, self.capacity, self.member_assignment),
            owned_partitions=owned,
        )

    def assign(self, cluster: Any, members: list[Any]) -> dict[str, Any]:
        self.assign_calls += 1
        group: list[Member] = []
        topics: set[str] = set()
        for m in sorted(members, key=lambda x: x.member_id):
            meta = m.metadata
            info = decode_user_data(getattr(meta, "user_data", None))
            owned = {(tp.topic, p) for tp in (getattr(meta, "owned_partitions", None) or ()) for p in tp.partitions}
            owned |= set(info.owned)
            group.append(Member(m.member_id, tuple(sorted(meta.topics)), info.start_ms, info.capacity,
                                tuple(sorted(owned))))
            topics.update(meta.topics)
        tps: list[tuple[str, int]] = []
        for t in sorted(topics):
            parts = cluster.partitions_for_topic(t)
            if not parts:
                log.warning("no partition metadata for topic %s; skipping it", t)
                continue
            tps.extend((t, p) for p in sorted(parts))
        known = {t for t, _ in tps}
        # members whose topics have no metadata yet get nothing this round (the next metadata
        # refresh triggers another rebalance)
        group = [Member(m.id, tuple(t for t in m.topics if t in known), m.start_ms, m.capacity,
                        tuple(tp for tp in m.owned if tp[0] in known)) for m in group]
        group = [m for m in group if m.topics]
        if not group or not tps:
            return {m.member_id: ConsumerProtocolAssignment(0, [], b"") for m in members}
        loads = self.loads(tps)
        problem = make_problem(group, [(t, p, loads.get((t, p), 1.0)) for t, p in tps], on_conflict="drop")
        options: dict[str, Any] = {"max_moves": self.max_moves} if self.strategy == "balanced" else {}
        result = run_strategy(self.strategy, problem, protocol=self.protocol, **options)
        give = result.round1 if self.protocol == COOPERATIVE else result.owner
        self.last_stats = {**stats(problem, result.owner).as_dict(), "withheld": int((give < 0).sum())}
        log.info("%s assigned %d partitions to %d members: %s", self.name, len(tps), len(group), self.last_stats)
        per: dict[str, dict[str, list[int]]] = {m.member_id: defaultdict(list) for m in members}
        for p, o in enumerate(give.tolist()):
            if o >= 0:
                t, n = problem.tp(p)
                per[problem.member_ids[o]][t].append(n)
        return {mid: ConsumerProtocolAssignment(0, sorted((t, sorted(ps)) for t, ps in d.items()), b"")
                for mid, d in per.items()}

    def on_assignment(self, assignment: Any, generation: int) -> None:
        self.member_assignment = sorted((tp.topic, tp.partition) for tp in assignment.partitions())


def speaks_ours(user_data: bytes | None) -> bool:
    """True when a member's subscription ``user_data`` was written by one of our assignors."""
    if not user_data:
        return False
    try:
        doc = orjson.loads(user_data)
    except orjson.JSONDecodeError:
        return False
    return isinstance(doc, dict) and "kb" in doc


class RangeFallback(AbstractPartitionAssignor):  # type: ignore[misc]
    """Kafka's ``range``, advertised after one of our assignors so a member without ours can join.

    With only ``kb-<strategy>`` advertised, a Java or librdkafka member (defaults ``range``,
    ``cooperative-sticky``) is refused at JoinGroup (no protocol every member supports) and Kafka's
    console consumer then exits 0 having consumed nothing, while ours keep every partition. With this
    second choice the broker picks ``range`` for the whole group while such a member is in, our leader
    runs it and logs ONE warning naming the members that cannot run ours; when they leave the group
    goes back to ours. It carries our ``user_data`` so the leader can tell our members from others.
    Eager only (kafka-python refuses to mix eager and cooperative assignors in one consumer).
    """

    name = "range"
    version = 1

    def __init__(self, preferred: LoadAwareAssignor) -> None:
        self.preferred = preferred
        self.last_foreign: list[str] = []

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.EAGER]

    def metadata(self, topics: Iterable[str]) -> Any:
        return self.preferred.metadata(topics)

    def assign(self, cluster: Any, members: list[Any]) -> dict[str, Any]:
        foreign = sorted(m.member_id for m in members if not speaks_ours(getattr(m.metadata, "user_data", None)))
        self.last_foreign = foreign
        if foreign:
            log.warning("group fell back to Kafka's 'range': %d of %d member(s) cannot run %s (%s); "
                        "partition loads are ignored until they leave or use it",
                        len(foreign), len(members), self.preferred.name, ", ".join(foreign))
        return dict(RangePartitionAssignor.assign(cluster, members))

    def on_assignment(self, assignment: Any, generation: int) -> None:
        self.preferred.on_assignment(assignment, generation)


def with_range_fallback(assignor: LoadAwareAssignor) -> list[AbstractPartitionAssignor]:
    """``partition_assignment_strategy`` for a consumer that prefers ``assignor`` but lets members
    without it (Java, librdkafka) join, by ``range`` (see :class:`RangeFallback`).

    Example:
        >>> [a.name for a in with_range_fallback(LoadAwareAssignor("balanced"))]
        ['kb-balanced', 'range']
    """
    if assignor.protocol == COOPERATIVE:
        raise ValueError("the range fallback is eager; use it with an eager assignor")
    return [assignor, RangeFallback(assignor)]
