"""Our assignors in real consumer groups on the local cluster (kafka-python JoinGroup/SyncGroup).

Every test counts produced vs consumed (unique partition/offset pairs): nothing may be lost.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kafka.admin import NewTopic

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer
from kafka_balancer.consumer import group_worker
from kafka_balancer.consumer.assignors import run as run_strategy
from kafka_balancer.consumer.kafka_adapter import LoadAwareAssignor, keep_join_pending
from kafka_balancer.consumer.loads import LiveLoads
from kafka_balancer.consumer.problem import problem_from_arrays
from kafka_balancer.consumer.result import lower_bound

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(240)]
FAST = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000}


def _topic(admin: Any, name: str, partitions: int) -> None:
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=2)])
    admin.wait_for_topics([name], timeout_ms=30000) if hasattr(admin, "wait_for_topics") else time.sleep(2)


def _produce(bootstrap: str, topic: str, counts: list[int]) -> dict[int, int]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    for p, n in enumerate(counts):
        for i in range(n):
            producer.send(topic, value=f"{p}-{i}".encode(), partition=p)
    producer.flush()
    producer.close()
    return {p: n for p, n in enumerate(counts)}


class _Member(threading.Thread):
    """A consumer in a thread: records (partition, offset) and rebalance events."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, assignor: LoadAwareAssignor,
                 commit: bool = True, **configs: Any) -> None:
        super().__init__(name=name, daemon=True)
        self.assignor = assignor
        self.seen: set[tuple[int, int]] = set()
        self.events: list[tuple[str, float, frozenset[int]]] = []
        self.stop = threading.Event()
        self.commit = commit
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                                      auto_offset_reset="earliest", partition_assignment_strategy=[assignor],
                                      client_id=name, **{**FAST, **configs})
        keep_join_pending(self.consumer)
        member = self

        class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
            def on_partitions_revoked(self, revoked: Any) -> None:
                member.events.append(("revoked", time.time(), frozenset(tp.partition for tp in revoked)))

            def on_partitions_assigned(self, assigned: Any) -> None:
                member.events.append(("assigned", time.time(), frozenset(tp.partition for tp in assigned)))

        self.consumer.subscribe([topic], listener=Listener())

    def run(self) -> None:
        while not self.stop.is_set():
            batch = self.consumer.poll(timeout_ms=100)
            for tp, records in batch.items():
                self.seen.update((tp.partition, r.offset) for r in records)
            if batch and self.commit:
                self.consumer.commit()
        self.consumer.close()

    def owned(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}


def _wait(pred: Any, timeout: float, what: str) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def members() -> Iterator[list[_Member]]:
    created: list[_Member] = []
    yield created
    for m in created:
        m.stop.set()
    for m in created:
        m.join(timeout=15)


def test_group_of_four_gets_the_balanced_assignment(kafka_cluster: Any, members: list[_Member]) -> None:
    admin = kafka_cluster.admin()
    topic, group = "kb-consumer-skew", "kb-skew-group"
    counts = [600, 300, 200, 150, 120, 100, 80, 60]
    _topic(admin, topic, len(counts))
    produced = _produce(kafka_cluster.bootstrap, topic, counts)
    # loads = lag (nothing committed: the members do not commit here, so loads stay put)
    loads = LiveLoads(kafka_cluster.bootstrap, group, [topic], start=False)
    try:
        measured = loads([(topic, p) for p in range(len(counts))])
        assert [round(measured[(topic, p)] * 30) for p in range(len(counts))] == counts
        for i in range(4):
            m = _Member(f"skew-{i}", kafka_cluster.bootstrap, group, topic, LoadAwareAssignor("balanced", loads=loads),
                        commit=False)
            members.append(m)
            m.start()
        _wait(lambda: sum(len(m.seen) for m in members) >= sum(counts) and
              sorted(p for m in members for p in m.owned()) == list(range(len(counts))), 90, "all consumed")
        time.sleep(3)  # no further rebalance
        owners = {p: i for i, m in enumerate(members) for p in m.owned()}
        assert sorted(owners) == list(range(len(counts)))
        per_member = np.zeros(4)
        for p, i in owners.items():
            per_member[i] += counts[p]
        problem = problem_from_arrays(4, np.asarray(counts, dtype=float))
        lb = lower_bound(problem)
        assert per_member.max() <= 1.05 * lb  # 600 alone; the rest split about evenly
        range_max = np.bincount(run_strategy("range", problem).owner, weights=counts, minlength=4).max()
        assert per_member.max() < range_max
        seen = set().union(*(m.seen for m in members))
        assert len(seen) == sum(produced.values())
    finally:
        loads.close()


def _read_worker(path: Path) -> tuple[set[tuple[int, int]], list[str]]:
    seen: set[tuple[int, int]] = set()
    events: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            events.append(line)
        elif line.strip():
            p, o = line.split()[:2]
            seen.add((int(p), int(o)))
    return seen, events


def test_killed_consumer_partitions_taken_over_nothing_lost(kafka_cluster: Any, tmp_path: Path) -> None:
    admin = kafka_cluster.admin()
    topic, group = "kb-consumer-kill", "kb-kill-group"
    parts = 6
    _topic(admin, topic, parts)
    procs = []
    outs = [tmp_path / f"w{i}.log" for i in range(3)]
    for out in outs:
        procs.append(group_worker.spawn(kafka_cluster.bootstrap, group, topic, out, "balanced"))
    try:
        try:
            _wait(lambda: all(o.exists() and "# assigned" in o.read_text() for o in outs), 120, "3 workers assigned")
        except AssertionError:
            for o in outs:
                print(o, group_worker.err_path(o).read_text()[-3000:])
            raise
        producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap, acks="all", linger_ms=5)
        total = 0
        killed_at = None
        for i in range(60):  # ~12 s of traffic; kill worker 0 after 3 s
            for p in range(parts):
                for _ in range(p + 1):
                    producer.send(topic, value=b"x", partition=p)
                    total += 1
            producer.flush()
            if i == 15:
                os.kill(procs[0].pid, signal.SIGKILL)
                procs[0].wait(timeout=10)
                killed_at = time.time()
            time.sleep(0.2)
        producer.close()

        def all_consumed() -> bool:
            return len(set().union(*(_read_worker(o)[0] for o in outs))) >= total

        _wait(all_consumed, 90, "survivors to consume everything")
        seen = set().union(*(_read_worker(o)[0] for o in outs))
        assert len(seen) == total  # produced = consumed, nothing lost
        owned_by_dead = set()
        for line in _read_worker(outs[0])[1]:
            if line.startswith("# assigned"):
                items = line.split()[3] if len(line.split()) > 3 else ""
                owned_by_dead = {int(x.rsplit("-", 1)[1]) for x in items.split(",") if x}
        assert owned_by_dead, "the killed worker owned partitions"
        taken: set[int] = set()
        for out in outs[1:]:
            for line in _read_worker(out)[1]:
                fields = line.split()
                if fields[1] == "assigned" and float(fields[2]) > (killed_at or 0) and len(fields) > 3:
                    taken |= {int(x.rsplit("-", 1)[1]) for x in fields[3].split(",") if x}
        assert owned_by_dead <= taken
    finally:
        group_worker.stop(procs)


def test_cooperative_join_pauses_only_moved_partitions(kafka_cluster: Any, members: list[_Member]) -> None:
    admin = kafka_cluster.admin()
    topic, group = "kb-consumer-coop", "kb-coop-group"
    parts = 6
    _topic(admin, topic, parts)
    for i in range(3):
        m = _Member(f"coop-{i}", kafka_cluster.bootstrap, group, topic,
                    LoadAwareAssignor("balanced", protocol="cooperative"))
        members.append(m)
        m.start()
    _wait(lambda: sorted(p for m in members for p in m.owned()) == list(range(parts)), 60, "3 members stable")
    time.sleep(2)
    before = {m.name: m.owned() for m in members}
    marks = {m.name: len(m.events) for m in members}
    stop = threading.Event()
    sent = {"n": 0}

    def produce() -> None:
        producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap, acks="all", linger_ms=5)
        while not stop.is_set():
            for p in range(parts):
                producer.send(topic, value=b"y", partition=p)
                sent["n"] += 1
            time.sleep(0.02)
        producer.flush()
        producer.close()

    prod = threading.Thread(target=produce, daemon=True)
    prod.start()
    newcomer = _Member("coop-new", kafka_cluster.bootstrap, group, topic,
                       LoadAwareAssignor("balanced", protocol="cooperative"))
    members.append(newcomer)
    newcomer.start()
    _wait(lambda: len(newcomer.owned()) > 0 and
          sorted(p for m in members for p in m.owned()) == list(range(parts)), 60, "newcomer assigned")
    time.sleep(2)
    stop.set()
    prod.join(timeout=10)
    moved = newcomer.owned()
    for m in members[:3]:
        revoked = set().union(*[e[2] for e in m.events[marks[m.name]:] if e[0] == "revoked"])
        assert revoked <= moved, (m.name, revoked, moved)  # only partitions that moved were paused
        assert before[m.name] - moved <= m.owned()  # everything else stayed
    assert any(before[m.name] - moved for m in members[:3])  # somebody kept consuming throughout
    _wait(lambda: len(set().union(*(m.seen for m in members))) >= sent["n"], 60, "all consumed")
    assert len(set().union(*(m.seen for m in members))) == sent["n"]


def _consumed_group(kafka_cluster: Any, members: list[_Member], topic: str, group: str, per_partition: int) -> None:
    """A 6-partition topic with ``per_partition`` records each, read whole by one member of ``group`` (still
    running, its last commit made)."""
    _topic(kafka_cluster.admin(), topic, 6)
    produced = _produce(kafka_cluster.bootstrap, topic, [per_partition] * 6)
    m = _Member(f"{group}-0", kafka_cluster.bootstrap, group, topic, LoadAwareAssignor("balanced"))
    members.append(m)
    m.start()
    _wait(lambda: len(m.seen) >= sum(produced.values()), 60, "consumed")
    time.sleep(1)  # the last commit


def test_locate_and_advise_on_a_live_group(kafka_cluster: Any, members: list[_Member],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from kafka_balancer.cli.main import main
    from kafka_balancer.consumer.group_locate import offsets_partition_for

    topic, group = "kb-consumer-advise", "kb-advise-group"
    _consumed_group(kafka_cluster, members, topic, group, 50)
    assert main(["group", "locate", "--group", group, "--bootstrap", kafka_cluster.bootstrap, "--json"]) == 0
    loc = json.loads(capsys.readouterr().out)
    assert loc["offsets_partition"] == offsets_partition_for(group, loc["partitions"])
    assert loc["coordinator"] == loc["find_coordinator"]  # our formula agrees with the broker's answer
    assert main(["consumers", "advise", "--group", group, "--bootstrap", kafka_cluster.bootstrap,
                 "--samples", "2", "--interval-s", "1", "--per-consumer", "100", "--json"]) == 0
    adv = json.loads(capsys.readouterr().out)
    assert adv["members"] == 1 and adv["partitions"] == 6 and adv["lag"] == 0
    assert adv["divisor_counts"] == {"m_minus_z": 1, "m_plus_z": 2}
    assert adv["throughput_count"] == 1  # nothing is arriving


class _SlowAssignor(LoadAwareAssignor):
    """Takes longer than one ``poll(timeout_ms=100)`` to assign (as ``balanced`` can on a big group)."""

    def assign(self, cluster: Any, members: list[Any]) -> dict[str, Any]:
        time.sleep(0.6)
        return super().assign(cluster, members)


def test_leader_completes_a_rebalance_started_by_new_partitions(kafka_cluster: Any, members: list[_Member]) -> None:
    # kafka-python 3.0.12: a rebalance the leader starts because its metadata changed is dropped when
    # poll() times out mid-assignment (see keep_join_pending); the member then never gets the new
    # partitions and is expelled after the session timeout. Partitions added to the topic trigger it.
    from kafka.admin import NewPartitions

    admin = kafka_cluster.admin()
    topic, group = "kb-consumer-grow", "kb-grow-group"
    _topic(admin, topic, 2)
    produced = _produce(kafka_cluster.bootstrap, topic, [20, 20])
    m = _Member("grow-0", kafka_cluster.bootstrap, group, topic, _SlowAssignor("roundrobin"), metadata_max_age_ms=500)
    members.append(m)
    m.start()
    _wait(lambda: m.owned() == {0, 1} and len(m.seen) >= 40, 60, "2 partitions consumed")
    admin.create_partitions({topic: NewPartitions(total_count=4)})
    time.sleep(1)
    produced = _produce(kafka_cluster.bootstrap, topic, [20, 20, 20, 20])
    try:
        _wait(lambda: m.owned() == {0, 1, 2, 3}, 30, "the leader to assign itself the new partitions")
    finally:
        print("events:", [(e[0], sorted(e[2])) for e in m.events])
    _wait(lambda: len(m.seen) >= 40 + sum(produced.values()), 30, "all consumed")
    assert len(m.seen) == 40 + sum(produced.values())


def test_workers_on_a_just_created_topic_all_get_partitions(kafka_cluster: Any, tmp_path: Path) -> None:
    # bench/consumer_real.py's start: 6 group_worker processes 0.3 s apart on a topic created just now;
    # the first one (leader) may not know the topic's partitions at its first assignment
    admin = kafka_cluster.admin()
    topic, group = "kb-consumer-fresh", "kb-fresh-group"
    admin.create_topics([NewTopic(topic, num_partitions=12, replication_factor=2)])
    outs = [tmp_path / f"w{i}.log" for i in range(6)]
    procs = []
    for out in outs:
        procs.append(group_worker.spawn(kafka_cluster.bootstrap, group, topic, out, "roundrobin",
                                        ["--log-level", "INFO"]))
        time.sleep(0.3)

    def has_partitions(out: Path) -> bool:
        return out.exists() and any(e.startswith("# assigned") and len(e.split()) > 3 for e in _read_worker(out)[1])

    try:
        try:
            _wait(lambda: all(has_partitions(o) for o in outs), 60, "every worker to get partitions")
        except AssertionError:
            for o in outs:
                if not has_partitions(o):
                    print(o, _read_worker(o)[1] if o.exists() else "no output",
                          group_worker.err_path(o).read_text()[-3000:])
            raise
    finally:
        group_worker.stop(procs)


def test_group_tools_go_on_while_a_broker_dies(kafka_cluster: Any, members: list[_Member],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # a broker killed a moment ago stays in the metadata until it is fenced (about 10 s): a request that
    # kafka-python sends it is refused, and the group tools ask again instead of failing (or, for the
    # committed offsets, instead of reading "no offsets")
    import json

    from kafka_balancer.cli.main import main

    topic, group = "kb-dead-bootstrap", "kb-dead-bootstrap-group"
    _consumed_group(kafka_cluster, members, topic, group, 20)
    kafka_cluster.kill_broker(3)
    dead = kafka_cluster.cluster.node(3).bootstrap
    boot = ",".join([dead] + [b for b in kafka_cluster.bootstrap.split(",") if b != dead])  # the dead one first
    for _ in range(3):  # each run a fresh client, whose first requests may go to the dead broker
        assert main(["group", "locate", "--group", group, "--bootstrap", boot, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["offsets_partition"] >= 0
    assert main(["consumers", "advise", "--group", group, "--topic", topic, "--bootstrap", boot,
                 "--samples", "2", "--interval-s", "1", "--per-consumer", "100", "--json"]) == 0
    adv = json.loads(capsys.readouterr().out)
    assert adv["partitions"] == 6 and adv["lag"] == 0  # every record committed: the offsets were read
    loads = LiveLoads(boot, group, [topic], start=False)
    try:
        assert sorted(loads.refresh()) == [(topic, p) for p in range(6)]
    finally:
        loads.close()
