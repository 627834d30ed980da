"""The classic-protocol fallback: members without our assignor join by ``range`` and are named in one line."""

from __future__ import annotations

import logging
from types import SimpleNamespace as NS

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from kafka_balancer.consumer.kafka_adapter import LoadAwareAssignor, RangeFallback, speaks_ours, with_range_fallback


def test_fallback_runs_range_and_names_foreign_members(caplog: pytest.LogCaptureFixture) -> None:
    ours = LoadAwareAssignor("balanced")
    fb = RangeFallback(ours)
    mine = ConsumerProtocolSubscription.decode(fb.metadata({"t"}).encode())
    java = ConsumerProtocolSubscription(version=0, topics=["t"], user_data=b"", owned_partitions=[])
    assert speaks_ours(mine.user_data) and not speaks_ours(java.user_data) and not speaks_ours(b"\x00junk")
    cluster = NS(partitions_for_topic=lambda t: {0, 1, 2, 3})
    members = [NS(member_id="console-consumer-1", group_instance_id=None, metadata=java),
               NS(member_id="py-1", group_instance_id=None, metadata=mine)]
    with caplog.at_level(logging.WARNING, logger="kafka_balancer.consumer.kafka_adapter"):
        out = fb.assign(cluster, members)
    got = sorted(p for a in out.values() for _t, ps in a.assigned_partitions for p in ps)
    assert got == [0, 1, 2, 3]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "console-consumer-1" in lines[0] and "py-1" not in lines[0]
    assert fb.last_foreign == ["console-consumer-1"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kafka_balancer.consumer.kafka_adapter"):
        fb.assign(cluster, [members[1]])
    assert caplog.records == []  # only our members: nothing to report


def test_fallback_is_eager_only() -> None:
    assert [a.name for a in with_range_fallback(LoadAwareAssignor("balanced"))] == ["kb-balanced", "range"]
    with pytest.raises(ValueError, match="eager"):
        with_range_fallback(LoadAwareAssignor("balanced", protocol="cooperative"))
