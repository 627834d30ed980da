"""The broker-side assignor ``kafka-balancer`` with real consumers on the new group protocol (KIP-848).

The session cluster runs the plugin (``local-cluster up --assignor``'s settings, 10 s consumer-group
sessions). Members: Java (kafka-clients ``GroupConsumer``) and Python on confluent-kafka (librdkafka).
Every test counts produced against consumed (partition, offset) pairs: nothing may be lost.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import NewTopic

from kafka_balancer.consumer.load_topic import publish_loads, read_loads
from kafka_balancer.consumer.server_group import (
    coordinator_of,
    kill_member,
    max_over_bound,
    produce,
    read_worker,
    start_member,
    stop_members,
    wait_until,
)
from kafka_balancer.consumer.workloads import zipf_loads

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

P = 12
LOADS = (zipf_loads(P, 1.0, seed=0) * 100).tolist()


def _topic(kafka_cluster: Any, name: str) -> None:
    kafka_cluster.admin().create_topics([NewTopic(name, P, 3)])
    publish_loads(kafka_cluster.bootstrap, {(name, p): v for p, v in enumerate(LOADS)})


def _settled(outs: list[Path], alive: list[int]) -> bool:
    views = [read_worker(outs[i]) for i in alive]
    got = [v.assigned for v in views]
    return sum(len(a) for a in got) == P and set().union(*got) == set(range(P))


def _consumed(outs: list[Path]) -> set[tuple[int, int]]:
    return set().union(*(read_worker(o).records for o in outs))


def test_loads_topic_round_trip(kafka_cluster: Any) -> None:
    publish_loads(kafka_cluster.bootstrap, {("rt-topic", 0): 2.5, ("rt-topic", 1): 0.0}, generation=5, ts_ms=99)
    got = read_loads(kafka_cluster.bootstrap)
    assert (got[("rt-topic", 0)].load, got[("rt-topic", 0)].generation, got[("rt-topic", 1)].load) == (2.5, 5, 0.0)


def test_mixed_group_balances_load_and_survives_a_member_kill(kafka_cluster: Any, tmp_path: Path) -> None:
    """Java + confluent-kafka members in ONE group: assignment by load (≤ 1.05 × bound), then a member
    is SIGKILLed and the survivors take its partitions; every record is consumed."""
    topic, group = "kb-mixed", "kb-mixed-g"
    _topic(kafka_cluster, topic)
    time.sleep(5)  # the plugin's reader picks the loads up within a few seconds (1 s polls, 1 s batching)
    produced = produce(kafka_cluster.bootstrap, topic, [50] * P)
    kinds = ["java", "confluent", "confluent"]
    outs = [tmp_path / f"m{i}-{k}.txt" for i, k in enumerate(kinds)]
    procs = [start_member(k, kafka_cluster.bootstrap, group, topic, o) for k, o in zip(kinds, outs, strict=True)]
    try:
        wait_until(lambda: _settled(outs, [0, 1, 2]) and all(read_worker(o).assigned for o in outs), 90,
                   "three members sharing all partitions")
        ratio = max_over_bound([read_worker(o).assigned for o in outs], LOADS)
        assert ratio <= 1.05, f"max member load / bound = {ratio:.3f}: {[read_worker(o).assigned for o in outs]}"
        wait_until(lambda: produced <= _consumed(outs), 60, "the first batch consumed")
        kill_member(procs[1])
        more = produce(kafka_cluster.bootstrap, topic, [20] * P)
        wait_until(lambda: _settled(outs, [0, 2]), 60, "the survivors taking the killed member's partitions")
        wait_until(lambda: (produced | more) <= _consumed(outs), 60, "every record consumed after the kill")
    finally:
        stop_members(procs)


@pytest.mark.parametrize("kind", ["java", "confluent"])
def test_coordinator_failover_loses_nothing(kafka_cluster: Any, tmp_path: Path, kind: str) -> None:
    """Two members of one kind; the broker leading the group's ``__consumer_offsets`` partition is
    SIGKILLed while records keep coming; the group moves to a new coordinator and consumes everything."""
    topic, group = f"kb-failover-{kind}", f"kb-failover-{kind}-g"
    _topic(kafka_cluster, topic)
    outs = [tmp_path / f"{kind}{i}.txt" for i in range(2)]
    procs = [start_member(kind, kafka_cluster.bootstrap, group, topic, o) for o in outs]
    try:
        first = produce(kafka_cluster.bootstrap, topic, [20] * P)
        wait_until(lambda: _settled(outs, [0, 1]) and first <= _consumed(outs), 90, "the group consuming")
        victim = coordinator_of(kafka_cluster.admin(), group)
        kafka_cluster.kill_broker(victim)
        during = produce(kafka_cluster.bootstrap, topic, [20] * P)
        wait_until(lambda: (first | during) <= _consumed(outs), 90,
                   f"every record consumed after coordinator {victim} was killed")
        assert coordinator_of(kafka_cluster.admin(), group) != victim
    finally:
        stop_members(procs)


def test_classic_group_refuses_a_java_member_unless_range_is_offered(
        kafka_cluster: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The observed case: Kafka's console consumer (protocols range, cooperative-sticky) joining a classic
    group whose kafka-python members advertise only kb-balanced is refused (INCONSISTENT_GROUP_PROTOCOL),
    consumes nothing and exits 0. With ``with_range_fallback`` it joins, and our leader logs one line."""
    from kafka import KafkaConsumer
    from kafka_balancer.consumer.kafka_adapter import LoadAwareAssignor, keep_join_pending, with_range_fallback
    from kafka_balancer.localcluster.tools import kafka_tool

    topic = "kb-classic-mix"
    kafka_cluster.admin().create_topics([NewTopic(topic, 4, 3)])
    produce(kafka_cluster.bootstrap, topic, [25] * 4)

    def run_python_member(group: str, strategies: list[Any], stop: threading.Event) -> None:
        c = KafkaConsumer(topic, bootstrap_servers=kafka_cluster.bootstrap, group_id=group,
                          partition_assignment_strategy=strategies, session_timeout_ms=6000,
                          heartbeat_interval_ms=1000, auto_offset_reset="earliest", enable_auto_commit=False)
        keep_join_pending(c)
        try:
            while not stop.is_set():
                c.poll(timeout_ms=300)
        finally:
            c.close(autocommit=False)

    results = {}
    for label, strategies in (("ours only", [LoadAwareAssignor("balanced")]),
                              ("with fallback", with_range_fallback(LoadAwareAssignor("balanced")))):
        group = f"kb-classic-{label.replace(' ', '-')}"
        stop = threading.Event()
        t = threading.Thread(target=run_python_member, args=(group, strategies, stop), daemon=True)
        t.start()
        try:
            time.sleep(8)  # the Python member owns every partition
            with caplog.at_level(logging.WARNING, logger="kafka_balancer.consumer.kafka_adapter"):
                caplog.clear()
                r = kafka_tool("console-consumer", "--topic", topic, "--group", group, "--from-beginning",
                               "--timeout-ms", "20000", "--max-messages", "10", bootstrap=kafka_cluster.bootstrap)
                lines = [m for m in caplog.messages if "fell back to Kafka's 'range'" in m]
        finally:
            stop.set()
            t.join(30)
        consumed = [ln for ln in r.stdout.splitlines() if ln.startswith("x")]
        results[label] = (r.returncode, len(consumed), "InconsistentGroupProtocol" in r.stdout + r.stderr, lines)
    assert results["ours only"][:3] == (0, 0, True), results
    _rc, n, refused, lines = results["with fallback"]
    assert n > 0 and not refused, results
    assert len(lines) >= 1 and "console-consumer" in lines[0], results
