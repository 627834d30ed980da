"""An operator's week on the real 3-broker cluster, through the commands they would type: sample the
cluster, build a snapshot (a real SparkSession), then one ``plan`` that decommissions broker 3, keeps
leadership off broker 1 while it is patched and never touches the ``ops-keep`` topic; ``execute`` without
``--yes`` changes nothing, and with it the cluster ends as the plan promised.

The snapshot keeps only this test's two topics: the session's cluster is shared, and the other tests'
topics are theirs (a removal moves every replica off the removed broker, excluded or not).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from kafka.admin import NewTopic

from kafka import KafkaProducer
from kafka_balancer.collect.collector import CollectOptions, collect
from kafka_balancer.pipeline.batch import run_batch
from kafka_balancer.pipeline.config import PipelineConfig

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]
CLI = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "kafka-balancer"
MOVE, KEEP = "ops-move", "ops-keep"
# every ops-move partition touches broker 3 or is led by broker 1; ops-keep lives on 1 and 2, led by 1 twice
MOVE_AT = {0: [3, 1], 1: [1, 3], 2: [3, 2], 3: [2, 3], 4: [1, 2], 5: [1, 3]}
KEEP_AT = {0: [1, 2], 1: [2, 1], 2: [1, 2]}


def describe(cluster: Any, topic: str) -> dict[int, tuple[list[int], int]]:
    (t,) = cluster.admin().describe_topics([topic])
    return {p["partition_index"]: (list(p["replica_nodes"]), p["leader_id"]) for p in t["partitions"]}


def kb(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *argv], capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONWARNINGS": "default"})


def test_decommission_demote_and_exclude_in_one_plan(kafka_cluster: Any, spark: Any, tmp_path: Path) -> None:
    admin = kafka_cluster.admin()
    admin.create_topics([NewTopic(MOVE, -1, -1, replica_assignments=MOVE_AT),
                         NewTopic(KEEP, -1, -1, replica_assignments=KEEP_AT)])
    admin.wait_for_topics([MOVE, KEEP], timeout_ms=30000)
    prod = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap, acks="all", linger_ms=20)
    value = os.urandom(10_000)
    for i in range(120):
        prod.send(MOVE, value=value, partition=i % 6)
        prod.send(KEEP, value=value, partition=i % 3)
    prod.flush(timeout=60)
    prod.close()
    deadline = time.monotonic() + 60
    while any(ld != reps[0] for reps, ld in describe(kafka_cluster, MOVE).values()):
        assert time.monotonic() < deadline, "the preferred leaders did not take over"
        time.sleep(0.5)
    keep_before = describe(kafka_cluster, KEEP)

    # sample and build the snapshot, as `collect` and `snapshot` do
    samples = tmp_path / "samples"
    collect(CollectOptions(bootstrap=kafka_cluster.bootstrap, out_dir=samples, interval_s=1.0, rounds=8,
                           metrics_urls=kafka_cluster.cluster.metrics_urls(), hosts=kafka_cluster.cluster.hosts()),
            say=lambda m: None)
    doc = run_batch(spark, samples, PipelineConfig(window_ms=3_000, windows=2, min_valid_ratio=0.5)).snapshot
    doc["partitions"] = [p for p in doc["partitions"] if p["topic"] in (MOVE, KEEP)]
    assert len(doc["partitions"]) == 9
    snap = tmp_path / "snapshot.json"
    snap.write_bytes(orjson.dumps(doc))

    # one plan: empty broker 3, no leadership on broker 1, ops-keep untouched
    plan = tmp_path / "plan.json"
    run = kb("plan", "--snapshot", str(snap), "--out", str(plan), "--remove-brokers", "3",
             "--demote-brokers", "1", "--exclude-topics", KEEP, "--json")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "Warning" not in run.stderr, run.stderr
    summary = json.loads(run.stdout)
    kept = summary["constraints"]
    assert kept["remove_brokers"] == [3] and kept["demote_brokers"] == [1] and kept["exclude_topics"] == KEEP
    assert summary["warnings"] == ["2 partition(s) keep their leader on a demoted broker: their topics are "
                                   f"excluded ({KEEP}-0, {KEEP}-2)"]
    entries = json.loads(plan.read_text())["partitions"]
    assert entries and {e["topic"] for e in entries} == {MOVE}
    for e in entries:
        assert 3 not in e["replicas"] and e["replicas"][0] != 1, e

    # a budget below what the removal must move is refused in one line (and a hint), no plan file written
    refused = tmp_path / "refused.json"
    run = kb("plan", "--snapshot", str(snap), "--out", str(refused), "--remove-brokers", "3", "--max-moves", "2")
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 2, run.stderr  # the error and its hint
    assert lines[0].startswith("error: --max-moves 2 is below the 5 replica moves"), run.stderr
    assert lines[1].startswith("  hint: raise --max-moves"), run.stderr
    assert not refused.exists()
    # a rebalance within a byte budget keeps to it, and says what it left
    budgeted = tmp_path / "budgeted.json"
    run = kb("plan", "--snapshot", str(snap), "--out", str(budgeted), "--max-bytes", "300K", "--json")
    assert run.returncode == 0, run.stderr
    small = json.loads(run.stdout)
    assert 0 < small["moved_bytes"] <= 300_000 and small["constraints"]["max_bytes"] == 300_000
    assert any("budget is spent" in line for line in small["remaining"]), small["remaining"]

    # without --yes: the plan is checked against the cluster and nothing changes
    journal = tmp_path / "journal.jsonl"
    before = describe(kafka_cluster, MOVE)
    run = kb("execute", "--plan", str(plan), "--bootstrap", kafka_cluster.bootstrap, "--journal", str(journal),
             "--no-progress")
    assert run.returncode == 0, run.stderr
    assert describe(kafka_cluster, MOVE) == before

    # with --yes: broker 3 holds nothing of ops-move, broker 1 leads none of it, ops-keep is as it was
    run = kb("execute", "--plan", str(plan), "--bootstrap", kafka_cluster.bootstrap, "--journal", str(journal),
             "--yes", "--throttle", "0", "--poll", "0.3", "--no-progress", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    after = describe(kafka_cluster, MOVE)
    for p, (reps, leader) in after.items():
        assert 3 not in reps and sorted(reps) == [1, 2] and leader == 2, (p, reps, leader)
    assert describe(kafka_cluster, KEEP) == keep_before
    assert sum(ld == 1 for _, ld in keep_before.values()) == 2  # the exclusion held where demotion would act
