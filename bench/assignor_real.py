"""Seed 000's experiment on a real cluster with the broker-side assignor: kafka-balancer vs uniform.

A 3-broker local cluster runs the plugin (``local-cluster up --assignor``'s settings, 10 s sessions).
Per cell (assignor x killed): a 12-partition topic with Zipf(1.0) produce rates (``--rate`` msg/s in
total), its rates published to the loads topic, six members alternating Java (kafka-clients) and
Python (confluent-kafka) in ONE consumer-protocol group, each capped by ``--per-record-ms`` of
processing per record. ``--kill-at`` s after the group settled, ``k`` members (the same seeded choice
for every assignor) are SIGKILLed; the producer runs ``--measure`` s more, then stops, and the
survivors drain. Recorded: max member load / bound of the settled assignment before and after the
kill (load = known produce rate; measured once the coordinator reports every member holding its target
assignment, and also computed from those targets), messages lost (produced minus consumed, by partition and offset),
p50/p99 end-to-end latency, recovery (kill -> survivors hold every partition).

    .venv/bin/python bench/assignor_real.py --kills 0,1,2,3,4,5 --assignors kafka-balancer,uniform --out DIR
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from kafka.admin import NewTopic

from kafka import KafkaProducer
from kafka_balancer.collect.admin import quiet_kafka_logs
from kafka_balancer.consumer.load_topic import publish_loads
from kafka_balancer.consumer.server_group import (
    kill_member,
    max_over_bound,
    read_worker,
    start_member,
    stop_members,
    wait_until,
)
from kafka_balancer.consumer.workloads import zipf_loads
from kafka_balancer.localcluster.assignor import ASSIGNOR_OVERRIDES, FAST_CONSUMER_GROUP_OVERRIDES
from kafka_balancer.localcluster.cluster import LocalCluster
from kafka_balancer.localcluster.spec import ClusterSpec

P = 12
MEMBERS = 6


class Producer:
    """Sends each partition's rate (msg/s) in 100 ms ticks; remembers every acknowledged (partition, offset)."""

    def __init__(self, bootstrap: str, topic: str, rates: list[float]) -> None:
        self.topic, self.rates = topic, rates
        with quiet_kafka_logs():
            self.p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=10, retries=20)
        self.acked: set[tuple[int, int]] = set()
        self.failed = 0
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)

    def _ok(self, md: Any) -> None:
        self.acked.add((md.partition, md.offset))

    def _err(self, _exc: Any) -> None:
        self.failed += 1

    def _run(self) -> None:
        owed = [0.0] * P
        nxt = time.monotonic()
        while not self.stop.is_set():
            for p in range(P):
                owed[p] += self.rates[p] * 0.1
                while owed[p] >= 1:
                    owed[p] -= 1
                    self.p.send(self.topic, value=b"x" * 64, partition=p).add_callback(self._ok).add_errback(self._err)
            nxt += 0.1
            time.sleep(max(0.0, nxt - time.monotonic()))

    def close(self) -> None:
        self.stop.set()
        self.t.join()
        self.p.flush(timeout=60)
        self.p.close(timeout=10)


def group_targets(bootstrap: str, group: str) -> tuple[list[set[int]], bool] | None:
    """The coordinator's view of the group (confluent-kafka's admin client speaks KIP-848's describe):
    each member's TARGET assignment (what the assignor computed), and whether every member's current
    assignment equals its target (reconciliation finished). None when the group cannot be described."""
    from confluent_kafka.admin import AdminClient

    try:
        admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
        desc = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
    except Exception:  # a transient failure means "not known yet"
        return None
    targets, done = [], True
    for m in desc.members:
        cur = {tp.partition for tp in m.assignment.topic_partitions}
        tgt = cur if m.target_assignment is None else {tp.partition for tp in m.target_assignment.topic_partitions}
        targets.append(tgt)
        done &= cur == tgt
    return targets, done


def settled(outs: list[Path], alive: list[int]) -> bool:
    got = [read_worker(outs[i]).assigned for i in alive]
    return sum(len(a) for a in got) == P and set().union(*got) == set(range(P))


def cell(cluster: LocalCluster, assignor: str, k: int, a: argparse.Namespace, out: Path) -> dict[str, Any]:
    topic = f"skew-{assignor}-{k}-{int(time.time())}"
    rates = (zipf_loads(P, 1.0, seed=0) * a.rate / P).tolist()
    with quiet_kafka_logs():
        admin = cluster.admin()
        admin.create_topics([NewTopic(topic, P, 2)])
        admin.close()
    publish_loads(cluster.bootstrap, {(topic, p): r for p, r in enumerate(rates)}, unit="msg/s", source="bench")
    time.sleep(2)
    d = out / topic
    d.mkdir(parents=True)
    kinds = ["java" if i % 2 == 0 else "confluent" for i in range(MEMBERS)]
    outs = [d / f"m{i}-{kind}.txt" for i, kind in enumerate(kinds)]
    prod = Producer(cluster.bootstrap, topic, rates)
    prod.t.start()
    procs = [start_member(kind, cluster.bootstrap, topic, topic, o, assignor=assignor, per_record_ms=a.per_record_ms)
             for kind, o in zip(kinds, outs, strict=True)]
    row: dict[str, Any] = {"assignor": assignor, "killed": k, "loadavg": [round(x, 1) for x in os.getloadavg()]}
    try:
        # every member reported an assignment (ours may leave a member idle when one partition dominates
        # the bound), the partitions are split exactly, nothing changed for 3 s, and the coordinator says
        # every member holds its target (reconciliation finished: a member still revoking partitions it
        # is about to lose would otherwise be measured with too much)
        def reconciled(n: int) -> bool:
            g = group_targets(cluster.bootstrap, topic)
            return g is not None and g[1] and len(g[0]) == n

        def stable() -> bool:
            before = [(read_worker(o).assignments, frozenset(read_worker(o).assigned)) for o in outs]
            if not (settled(outs, list(range(MEMBERS))) and all(n for n, _ in before) and reconciled(MEMBERS)):
                return False
            time.sleep(3)
            return before == [(read_worker(o).assignments, frozenset(read_worker(o).assigned)) for o in outs]

        wait_until(stable, 120, "all six members in the group")
        t_settled_ms = time.time() * 1000
        row["ratio_before"] = round(max_over_bound([read_worker(o).assigned for o in outs], rates), 4)
        g = group_targets(cluster.bootstrap, topic)
        row["ratio_target_before"] = round(max_over_bound(g[0], rates), 4) if g else None
        time.sleep(a.kill_at)
        victims = sorted(random.Random(1000 + k).sample(range(MEMBERS), k))
        alive = [i for i in range(MEMBERS) if i not in victims]
        t_kill = time.monotonic()
        t_kill_ms = time.time() * 1000
        for v in victims:
            kill_member(procs[v])
        row["victims"] = [kinds[v] for v in victims]
        if alive:
            took = wait_until(lambda: settled(outs, alive), 90, "survivors holding every partition")
            time.sleep(3)  # a second assignment may follow the first (members revoke, then receive)
            wait_until(lambda: settled(outs, alive) and reconciled(len(alive)), 60,
                       "survivors holding their target partitions")
            row["recovery_s"] = round(took, 1)
            row["ratio_after"] = round(max_over_bound([read_worker(outs[i]).assigned for i in alive], rates), 4)
            g = group_targets(cluster.bootstrap, topic)
            row["ratio_target_after"] = round(max_over_bound(g[0], rates), 4) if g else None
        time.sleep(max(0.0, a.measure - (time.monotonic() - t_kill)))
        prod.close()
        def consumed() -> set[tuple[int, int]]:
            out: set[tuple[int, int]] = set()
            for o in outs:
                out |= read_worker(o).records
            return out

        if alive:
            with contextlib.suppress(AssertionError):  # what is left is reported as lost
                wait_until(lambda: prod.acked <= consumed(), a.drain, "the survivors draining")
        got = consumed()
        views = [read_worker(o) for o in outs]
        lat = np.array([x for v in views for x in v.latencies_ms], dtype=float) / 1000.0
        ts = np.array([x for v in views for x in v.record_ts_ms], dtype=float)

        def pct(q: float, since_ms: float) -> float | None:
            sel = lat[ts >= since_ms]
            return round(float(np.percentile(sel, q)), 2) if sel.size else None

        # p99 over everything includes the start-up backlog (producer running while members join);
        # "settled" counts records produced after the group settled, "after_kill" after the kill
        row.update(produced=len(prod.acked), produce_errors=prod.failed, consumed=len(got & prod.acked),
                   lost=len(prod.acked - got), p50_s=pct(50, 0), p99_s=pct(99, 0),
                   p50_settled_s=pct(50, t_settled_ms), p99_settled_s=pct(99, t_settled_ms),
                   p99_after_kill_s=pct(99, t_kill_ms))
    finally:
        stop_members(procs)
        if not prod.stop.is_set():
            prod.close()
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", default="0,1,2,3,4,5")
    ap.add_argument("--assignors", default="kafka-balancer,uniform")
    ap.add_argument("--rate", type=float, default=300.0, help="total produce rate, msg/s")
    ap.add_argument("--per-record-ms", type=float, default=4.0)
    ap.add_argument("--kill-at", type=float, default=10.0)
    ap.add_argument("--measure", type=float, default=30.0)
    ap.add_argument("--drain", type=float, default=120.0)
    ap.add_argument("--out", type=Path, default=Path("out/bench-assignor-real"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    spec = ClusterSpec(brokers=3, controllers=3, brokers_per_host=1, heap_mb=256,
                       overrides=(*ASSIGNOR_OVERRIDES, *FAST_CONSUMER_GROUP_OVERRIDES))
    cluster = LocalCluster(a.out / "cluster", spec, base_port=None, log=print)
    cluster.up(fresh=True)
    rows = []
    try:
        for k in [int(x) for x in a.kills.split(",")]:
            for assignor in a.assignors.split(","):
                row = cell(cluster, assignor, k, a, a.out)
                print(json.dumps(row), flush=True)
                rows.append(row)
                (a.out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    finally:
        cluster.down(wipe=True)


if __name__ == "__main__":
    main()
