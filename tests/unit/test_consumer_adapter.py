"""LoadAwareAssignor without a broker: topics with unknown partitions, and the kafka-python rejoin workaround."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

from kafka.consumer.subscription_state import SubscriptionState
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from kafka_balancer.consumer.kafka_adapter import LoadAwareAssignor, keep_join_pending


def _members(a: LoadAwareAssignor, topics_per_member: list[set[str]]) -> list[Any]:
    return [NS(member_id=f"m{i}", metadata=ConsumerProtocolSubscription.decode(a.metadata(ts).encode()))
            for i, ts in enumerate(topics_per_member)]


def _parts(out: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    return {m: sorted((tp.topic, tp.partition) for tp in x.partitions()) for m, x in out.items()}


def test_unknown_topic_gives_every_member_an_empty_assignment() -> None:
    # the leader joined before its metadata knew the just-created topic: partitions_for_topic -> None
    for strategy in ("balanced", "range", "roundrobin", "paper", "sticky"):
        for unknown in (None, set()):
            a = LoadAwareAssignor(strategy)
            out = a.assign(NS(partitions_for_topic=lambda t, u=unknown: u), _members(a, [{"t"}] * 3))
            assert _parts(out) == {"m0": [], "m1": [], "m2": []}, strategy
            a.on_assignment(out["m0"], 1)  # and the empty assignment is usable by the member itself
            assert a.member_assignment == []
            assert ConsumerProtocolSubscription.decode(a.metadata({"t"}).encode()).topics == ["t"]


def test_partly_known_topics_assign_the_known_ones_only() -> None:
    a = LoadAwareAssignor("roundrobin")
    known = {"a": {0, 1, 2, 3}}
    out = a.assign(NS(partitions_for_topic=known.get), _members(a, [{"a", "b"}, {"b"}, {"a"}]))
    got = _parts(out)
    assert got["m1"] == []  # subscribed only to the unknown topic
    assert sorted(got["m0"] + got["m2"]) == [("a", p) for p in range(4)]
    assert got["m0"] and got["m2"]


def _leader_mid_rejoin() -> ConsumerCoordinator:
    """kafka-python 3.0.x's coordinator as the leader is after ``_perform_assignment`` of a rebalance that a
    metadata change started: snapshots equal again, ``rejoin_needed`` false, the join task still running."""
    sub = SubscriptionState()
    sub.subscribe(topics=["t"])
    coord = ConsumerCoordinator.__new__(ConsumerCoordinator)
    coord._subscription = sub
    coord.config = {"api_version": (4, 1), "group_id": "g"}
    coord._assignment_snapshot = {"t": set(range(12))}
    coord._metadata_snapshot = {"t": set(range(12))}
    coord._joined_subscription = {"t"}
    coord.rejoin_needed = False
    coord.rejoining = True  # set before JoinGroup, cleared only when join_group_async consumed the result
    return coord


def test_keep_join_pending_keeps_the_join_going_until_it_completed() -> None:
    coord = _leader_mid_rejoin()
    # the kafka-python 3.0.12 bug: poll() skips the group from here on, the SyncGroup answer is never read
    assert coord.need_rejoin() is False
    consumer = NS(_coordinator=coord)
    assert keep_join_pending(consumer) is True
    assert coord.need_rejoin() is True
    coord.rejoining = False  # join completed
    assert coord.need_rejoin() is False
    coord.rejoin_needed = True  # heartbeat saw REBALANCE_IN_PROGRESS
    assert coord.need_rejoin() is True
    # idempotent: a second call does not stack wrappers
    coord.rejoin_needed = False
    assert keep_join_pending(consumer) is True and coord.need_rejoin() is False


def test_keep_join_pending_leaves_unknown_coordinators_alone() -> None:
    assert keep_join_pending(NS()) is False
    odd = NS(need_rejoin=lambda: False)
    assert keep_join_pending(NS(_coordinator=odd)) is False
    assert odd.need_rejoin() is False
