"""The collector and the workload on the real test cluster."""

from __future__ import annotations

import orjson
import pytest

from kafka_balancer.collect.collector import CollectOptions, collect
from kafka_balancer.sim.workload import GroupLoad, TopicLoad, WorkloadSpec
from kafka_balancer.sim.workload_run import WorkloadRunner

pytestmark = pytest.mark.kafka


def test_workload_then_collect_writes_every_record_type(kafka_cluster, tmp_path):
    spec = WorkloadSpec(
        topics=(TopicLoad("col-hot", partitions=3, replication=2, rate=100, size=400, hot_keys=1,
                          hot_fraction=0.9, prefill_mb=1),),
        groups=(GroupLoad("col-readers", ("col-hot",)),),
    )
    wl = WorkloadRunner(kafka_cluster.bootstrap, spec, seed=2, duration_s=3, progress=False).run()
    produced = wl.produced["col-hot"]
    assert produced > 100 and wl.consumed["col-readers"]["col-hot"] == produced
    res = collect(CollectOptions(bootstrap=kafka_cluster.bootstrap, out_dir=tmp_path, interval_s=1, rounds=2,
                                 metrics_urls=kafka_cluster.cluster.metrics_urls(),
                                 hosts=kafka_cluster.cluster.hosts(), topic="__kb_samples_test"),
                  say=lambda m: None)
    assert res.rounds == 2 and len(res.files) == 1
    recs = [orjson.loads(line) for line in res.files[0].read_bytes().splitlines()]
    by_type: dict[str, list[dict]] = {}
    for r in recs:
        by_type.setdefault(r["type"], []).append(r)
    assert set(by_type) == {"broker", "topic_broker", "partition", "replica", "group_offset"}
    assert len({r["ts"] for r in recs}) == 2
    brokers = [r for r in by_type["broker"] if r["ts"] == recs[-1]["ts"]]
    assert sorted(b["broker"] for b in brokers) == kafka_cluster.broker_ids
    assert all(b["alive"] and b["cpu_seconds"] > 0 and b["cpu_cores"] >= 1 for b in brokers)
    assert {b["host"] for b in brokers} == {"host-0", "host-1", "host-2"}
    parts = [p for p in by_type["partition"] if p["topic"] == "col-hot" and p["ts"] == recs[-1]["ts"]]
    assert sum(p["log_end_offset"] - p["log_start_offset"] for p in parts) == produced
    hot_bytes = sum(t["bytes_in"] for t in by_type["topic_broker"]
                    if t["topic"] == "col-hot" and t["ts"] == recs[-1]["ts"])
    assert hot_bytes > 1_000_000 * 0.9  # the backlog alone is ~1 MB
    sizes = [r for r in by_type["replica"] if r["topic"] == "col-hot" and r["ts"] == recs[-1]["ts"]]
    assert len(sizes) == 6 and all(r["size"] > 0 for r in sizes)
    committed = {(g["partition"]): g["committed"] for g in by_type["group_offset"] if g["group"] == "col-readers"}
    assert sum(committed.values()) == produced
    # the same records were produced to the samples topic
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=kafka_cluster.bootstrap, consumer_timeout_ms=5000)
    c.assign([TopicPartition("__kb_samples_test", 0)])
    c.seek_to_beginning()
    got = [m for m in c]
    c.close()
    assert len(got) == len(recs)
    assert got[0].key.decode().startswith("local|")


def test_collect_goes_on_while_a_broker_dies(kafka_cluster, tmp_path):
    # a broker killed just before collecting stays in the metadata until it is fenced (about 10 s): a request
    # kafka-python sends it is refused, and the round is tried again instead of ending the collection
    kafka_cluster.kill_broker(3)
    dead = kafka_cluster.cluster.node(3).bootstrap
    boot = ",".join([dead] + [b for b in kafka_cluster.bootstrap.split(",") if b != dead])  # the dead one first
    res = collect(CollectOptions(bootstrap=boot, out_dir=tmp_path, interval_s=1, rounds=4,
                                 metrics_urls=kafka_cluster.cluster.metrics_urls(),
                                 hosts=kafka_cluster.cluster.hosts()),
                  say=lambda m: None)
    assert res.rounds == 4
    recs = [orjson.loads(line) for f in res.files for line in f.read_bytes().splitlines()]
    assert len({r["ts"] for r in recs}) == 4
    assert {r["broker"] for r in recs if r["type"] == "broker" and r["alive"]} >= {1, 2}
    # the disk capacities of the brokers that answer are still written (the joint request fails)
    caps = orjson.loads((tmp_path / "broker-capacity.json").read_bytes())["brokers"]
    assert {"1", "2"} <= set(caps) and all(c["disk"] > 0 for c in caps.values())


def _lead_on(kafka_cluster, topic: str, partition: int, broker: int) -> None:
    """Move ``topic-partition`` to ``broker`` (first in its replica list) and make that broker its leader."""
    import time

    from kafka_balancer.executor.kafka_adapter import KafkaAdapter

    ka = KafkaAdapter.connect(kafka_cluster.bootstrap)
    try:
        admin = kafka_cluster.admin()
        other = next(b for b in kafka_cluster.broker_ids if b != broker)
        assert ka.submit({(topic, partition): [broker, other]}) == {}
        deadline = time.monotonic() + 90
        while True:
            ka.elect_preferred([(topic, partition)])
            p = next(p for t in admin.describe_topics([topic]) for p in t["partitions"]
                     if p["partition_index"] == partition)
            if list(p["replica_nodes"]) == [broker, other] and p["leader_id"] == broker:
                return
            assert time.monotonic() < deadline, p
            time.sleep(1)
    finally:
        ka.close()


def test_sampling_reaches_a_broker_that_joined_after_the_client(kafka_cluster, tmp_path):
    # a kafka-python client does not learn of a broker that joins after it read the metadata: every request
    # to it fails (UnknownBrokerIdError), and before the fix every later round had no offsets and no replica
    # sizes at all, and the consumer side's live loads kept their last measurement. A round with a failed part
    # is read again with a fresh client; every RenewingAdmin call gets one at once on UnknownBrokerIdError
    from kafka.admin import NewTopic

    from kafka import KafkaProducer
    from kafka_balancer.consumer.loads import LiveLoads
    from kafka_balancer.serve.sampling import Sampler

    kafka_cluster.kill_broker(3)
    kafka_cluster.cluster.wait_fenced([3])
    admin = kafka_cluster.admin()
    admin.create_topics([NewTopic("col-join", -1, -1, replica_assignments={0: [1, 2], 1: [2, 1]})])
    admin.wait_for_topics(["col-join"], timeout_ms=30000)
    spec = WorkloadSpec(topics=(TopicLoad("col-join", partitions=2, replication=2, rate=50, size=200),),
                        groups=())
    WorkloadRunner(kafka_cluster.bootstrap, spec, seed=3, duration_s=2, progress=False).run()
    sampler = Sampler(kafka_cluster.bootstrap, tmp_path / "serve-samples")
    sampler.round()  # its client now knows brokers 1 and 2 only
    loads = LiveLoads(kafka_cluster.bootstrap, "col-join-readers", ["col-join"], start=False)  # the consumer side
    before = loads.refresh()
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        if len(lines) == 1:  # the collector's client, too, was made before broker 3 came back
            kafka_cluster.start_broker(3)
            _lead_on(kafka_cluster, "col-join", 0, 3)

    res = collect(CollectOptions(bootstrap=kafka_cluster.bootstrap, out_dir=tmp_path / "collect", interval_s=1,
                                 rounds=3), say=say)
    assert res.rounds == 3
    recs = [orjson.loads(line) for f in res.files for line in f.read_bytes().splitlines()]
    last = max(r["ts"] for r in recs)
    parts = [r for r in recs if r["ts"] == last and r["type"] == "partition" and r["topic"] == "col-join"]
    assert {(r["partition"], r["leader"]) for r in parts} == {(0, 3), (1, 2)}
    assert all(r["log_end_offset"] is not None and r["log_end_offset"] > 0 for r in parts), parts
    assert {r["broker"] for r in recs if r["ts"] == last and r["type"] == "replica" and r["topic"] == "col-join"} \
        == {1, 2, 3}
    _, sizes = sampler.round()
    assert sampler.failed == [] and sizes[("col-join", 0)] > 0 and sizes[("col-join", 1)] > 0
    sampler.close()
    # the load-aware assignor's loads (nothing committed: a partition's load is its log over the horizon)
    # follow new messages on the partition broker 3 now leads, instead of keeping the last measurement
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap)
    for _ in range(300):
        producer.send("col-join", b"x", partition=0)
    producer.flush()
    producer.close()
    after = loads.refresh()
    loads.close()
    assert after[("col-join", 0)] - before[("col-join", 0)] >= 300 / loads.horizon_s, (before, after)
