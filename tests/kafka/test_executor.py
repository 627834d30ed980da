"""The executor on a real 3-broker cluster: moves, faults, resume, data safety, refusals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from kafka import KafkaProducer
from kafka_balancer.errors import ClusterError, InputError
from kafka_balancer.executor.journal import Journal
from kafka_balancer.executor.kafka_adapter import KafkaAdapter
from kafka_balancer.executor.runner import ExecOptions, Executor
from kafka_balancer.localcluster.processes import free_ports
from kafka_balancer.model.plan_io import Plan, PlanEntry, write_plan
from kafka_balancer.sim.workload import GroupLoad, TopicLoad, WorkloadSpec
from kafka_balancer.sim.workload_run import WorkloadRunner

pytestmark = pytest.mark.kafka
FAST = ExecOptions(throttle=0, poll_s=0.3, progress=False, verify_timeout_s=60)


def make_topic(cluster, name: str, partitions: int, rf: int, mb: float = 0.0) -> dict[int, list[int]]:
    admin = cluster.admin()
    admin.create_topics([NewTopic(name, partitions, rf)])
    admin.wait_for_topics([name], timeout_ms=30000)
    if mb > 0:
        p = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", linger_ms=20)
        value = os.urandom(20_000)
        for i in range(int(mb * 1e6 / len(value))):
            p.send(name, value=value, partition=i % partitions)
        p.flush(timeout=60)
        p.close()
    return assignment(cluster, name)


def assignment(cluster, name: str) -> dict[int, list[int]]:
    (t,) = cluster.admin().describe_topics([name])
    return {p["partition_index"]: list(p["replica_nodes"]) for p in t["partitions"]}


def leaders(cluster, name: str) -> dict[int, int]:
    (t,) = cluster.admin().describe_topics([name])
    return {p["partition_index"]: p["leader_id"] for p in t["partitions"]}


def rotate_plan(name: str, current: dict[int, list[int]], brokers: list[int]) -> Plan:
    """Every partition: replace its last replica by a broker it lacks, and put it first (replica move +
    leadership move)."""
    entries = []
    for p, reps in sorted(current.items()):
        newcomer = next(b for b in brokers if b not in reps)
        entries.append(PlanEntry(name, p, (newcomer, *reps[:-1])))
    return Plan(tuple(entries))


def executor(cluster, journal: Path, opts: ExecOptions = FAST) -> Executor:
    return Executor(
        KafkaAdapter(cluster.admin(), reconnect=cluster.admin), Journal(journal), opts,
        say=lambda m: print("executor:", m),
    )


def throttle_left(cluster, topics: list[str]) -> dict:
    res = cluster.admin().describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in cluster.broker_ids]
        + [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics])
    found = {}
    for kind, by_name in res.items():
        for name, kv in by_name.items():
            for k in kv:
                if "throttled" in k:
                    found[f"{kind}/{name}/{k}"] = kv[k]["value"]
    return found


def test_plan_with_replica_and_leader_moves_executes_and_verifies(kafka_cluster, tmp_path):
    cur = make_topic(kafka_cluster, "ex-basic", 4, 2, mb=2)
    plan = rotate_plan("ex-basic", cur, kafka_cluster.broker_ids)
    report = executor(kafka_cluster, tmp_path / "j.jsonl", ExecOptions(
        throttle=10_000_000, poll_s=0.3, progress=False)).run(plan)
    assert report.verified, report.problems
    assert report.replica_moves == 4 and report.leader_moves == 4
    assert report.bytes_moved > 1_000_000
    after = assignment(kafka_cluster, "ex-basic")
    assert after == {e.partition: list(e.replicas) for e in plan.entries}
    assert leaders(kafka_cluster, "ex-basic") == {e.partition: e.replicas[0] for e in plan.entries}
    assert throttle_left(kafka_cluster, ["ex-basic"]) == {}
    kinds = [e["e"] for e in Journal(tmp_path / "j.jsonl").read()]
    assert kinds[0] == "start" and "throttle_set" in kinds and kinds[-1] == "finished"


def test_broker_killed_mid_execution_is_reported_and_execution_resumes(kafka_cluster, tmp_path):
    # Kafka's replication quota measures its rate over at least (samples - 1) one-second windows, so a
    # fresh throttle lets about 10 s worth of quota through at once. At 1 MB/s that burst (10 MB) held
    # more than broker 3 had to fetch, and on a slow CI machine the move finished before the kill
    # landed. At 100 KB/s the burst is 1 MB against 3 MB per partition: the move outlasts the kill.
    cur = make_topic(kafka_cluster, "ex-fault", 3, 2, mb=9)
    # Every partition gets broker 3 (the victim) as a new replica.
    entries = []
    for p, reps in sorted(cur.items()):
        target = reps if 3 in reps else [reps[0], 3]
        if 3 in reps:
            other = next(b for b in kafka_cluster.broker_ids if b not in reps)
            target = [other if b != 3 else 3 for b in reps][::-1]
        entries.append(PlanEntry("ex-fault", p, tuple(target)))
    plan = Plan(tuple(entries))
    ex = executor(kafka_cluster, tmp_path / "j.jsonl",
                  ExecOptions(throttle=100_000, poll_s=0.3, progress=False, verify_timeout_s=90))
    out: dict = {}

    def work() -> None:
        try:
            out["report"] = ex.run(plan)
        except Exception as exc:
            out["error"] = exc

    th = threading.Thread(target=work)
    th.start()
    journal = Journal(tmp_path / "j.jsonl")
    deadline = time.monotonic() + 60
    while "submit" not in [e["e"] for e in journal.read()] and time.monotonic() < deadline:
        time.sleep(0.2)
    kafka_cluster.kill_broker(3)
    deadline = time.monotonic() + 60
    while "broker_down" not in [e["e"] for e in journal.read()] and time.monotonic() < deadline:
        time.sleep(0.2)
    kafka_cluster.start_broker(3)
    th.join(timeout=240)
    assert not th.is_alive()
    assert "error" not in out, out.get("error")
    report = out["report"]
    assert any("broker 3 is down" in n for n in report.notes)
    assert any("broker 3 is back" in n for n in report.notes)
    assert report.verified, report.problems
    assert assignment(kafka_cluster, "ex-fault") == {e.partition: list(e.replicas) for e in plan.entries}


def test_executor_killed_mid_plan_then_resume_finishes(kafka_cluster, tmp_path):
    cur = make_topic(kafka_cluster, "ex-resume", 3, 2, mb=6)
    plan = rotate_plan("ex-resume", cur, kafka_cluster.broker_ids)
    plan_file = tmp_path / "plan.json"
    write_plan(plan, plan_file)
    journal = tmp_path / "j.jsonl"
    cli = [sys.executable, "-m", "kafka_balancer.cli.main", "execute", "--bootstrap", kafka_cluster.bootstrap,
           "--journal", str(journal), "--yes", "--no-progress", "--poll", "0.3"]
    # 100 KB/s: Kafka's quota lets about 1 MB through at once, half a partition, so the plan cannot
    # finish before the kill (the resume then runs at 20 MB/s).
    proc = subprocess.Popen([*cli, "--plan", str(plan_file), "--throttle", "100K"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "submit" not in [e["e"] for e in Journal(journal).read()]:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    st = Journal(journal).state()
    assert st.open and st.submitted and st.throttle is not None  # killed mid-flight, throttle still set
    assert throttle_left(kafka_cluster, ["ex-resume"]) != {}
    done = subprocess.run([*cli, "--resume", "--throttle", "20M"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified" in done.stdout
    assert assignment(kafka_cluster, "ex-resume") == {e.partition: list(e.replicas) for e in plan.entries}
    assert throttle_left(kafka_cluster, ["ex-resume"]) == {}
    assert Journal(journal).state().finished


def test_messages_produced_during_rebalance_all_remain_consumable(kafka_cluster, tmp_path):
    spec = WorkloadSpec(
        topics=(TopicLoad("ex-live", partitions=4, replication=2, rate=150, size=500, hot_keys=1,
                          hot_fraction=0.5, prefill_mb=3),),
        groups=(GroupLoad("ex-live-readers", ("ex-live",), members=1),),
    )
    runner = WorkloadRunner(kafka_cluster.bootstrap, spec, seed=3, duration_s=600, progress=False)
    runner.create_topics()
    runner.start()
    time.sleep(3)
    plan = rotate_plan("ex-live", assignment(kafka_cluster, "ex-live"), kafka_cluster.broker_ids)
    report = executor(kafka_cluster, tmp_path / "j.jsonl",
                      ExecOptions(throttle=2_000_000, poll_s=0.3, progress=False)).run(plan)
    time.sleep(2)
    result = runner.stop()
    assert report.verified, report.problems
    produced = result.produced["ex-live"]
    assert produced > 300 and result.failed == 0
    assert result.drained
    assert result.consumed["ex-live-readers"]["ex-live"] == produced
    # and the log holds exactly that many records (idempotent producer, nothing lost or duplicated)
    from kafka.admin import OffsetSpec

    from kafka import TopicPartition
    admin = kafka_cluster.admin()
    tps = [TopicPartition("ex-live", p) for p in range(4)]
    end = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in tps})
    start = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in tps})
    assert sum(end[tp].offset - start[tp].offset for tp in tps) == produced


def test_bad_plans_are_refused_before_anything_is_submitted(kafka_cluster, tmp_path):
    cur = make_topic(kafka_cluster, "ex-bad", 2, 2)
    b_missing = next(b for b in kafka_cluster.broker_ids if b not in cur[0])
    good = PlanEntry("ex-bad", 0, (b_missing, cur[0][0]))
    bad_plans = {
        "does not exist": Plan((good, PlanEntry("no-such-topic", 0, (1, 2)))),
        "no partition 7": Plan((good, PlanEntry("ex-bad", 7, (1, 2)))),
        "replication factor would change": Plan((good, PlanEntry("ex-bad", 1, (1, 2, 3)))),
        "broker 42 does not exist": Plan((good, PlanEntry("ex-bad", 1, (42, cur[1][0])))),
    }
    for expected, plan in bad_plans.items():
        journal = tmp_path / f"{expected[:8]}.jsonl"
        with pytest.raises(InputError, match=expected):
            executor(kafka_cluster, journal).run(plan)
        assert Journal(journal).read() == []
    # a dead destination
    kafka_cluster.kill_broker(b_missing)
    wait_until_fenced(kafka_cluster, b_missing)
    with pytest.raises(InputError, match=f"destination broker {b_missing} is not alive"):
        executor(kafka_cluster, tmp_path / "dead.jsonl").run(Plan((good,)))
    kafka_cluster.start_broker(b_missing)
    assert assignment(kafka_cluster, "ex-bad") == cur
    assert cluster_reassignments(kafka_cluster) == {}


def wait_until_fenced(cluster, broker: int, timeout_s: float = 60.0) -> None:
    """The controller notices a SIGKILLed broker only after its session times out."""
    deadline = time.monotonic() + timeout_s
    admin = KafkaAdapter(cluster.admin())
    while time.monotonic() < deadline:
        if broker not in admin.alive_brokers():
            return
        time.sleep(0.5)
    raise AssertionError(f"broker {broker} still registered {timeout_s} s after SIGKILL")


def cluster_reassignments(cluster) -> dict:
    return cluster.admin().list_partition_reassignments()


@pytest.mark.timeout(60)
def test_unreachable_bootstrap_gives_a_clear_error(tmp_path):
    (port,) = free_ports(1)
    with pytest.raises(ClusterError, match=f"cannot reach Kafka at 127.0.0.1:{port} within 3 s"):
        from kafka_balancer.collect.admin import connect_admin
        connect_admin(f"127.0.0.1:{port}", timeout_s=3)
    plan_file = tmp_path / "p.json"
    write_plan(Plan((PlanEntry("t", 0, (1, 2)),)), plan_file)
    res = subprocess.run([sys.executable, "-m", "kafka_balancer.cli.main", "execute", "--plan", str(plan_file),
                          "--bootstrap", f"127.0.0.1:{port}", "--timeout", "3", "--yes"],
                         capture_output=True, text=True, timeout=50)
    assert res.returncode == 1
    assert f"error: cannot reach Kafka at 127.0.0.1:{port}" in res.stderr
    assert "Traceback" not in res.stderr
