"""The pipeline against the real local cluster: a known number of bytes produced to known partitions while
the collector samples; the snapshot's per-partition bytes-in must match the produce rate within 10 %.

The same samples written as Parquet take the columnar route and must give the same snapshot. The same
samples, produced by the collector to a Kafka topic, are then read by the streaming pipeline (Spark's Kafka
source, the ``spark_kafka`` jars) and must give the same per-partition rates as the batch run on the files.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kafka_balancer.collect.collector import CollectOptions, collect
from kafka_balancer.pipeline import streaming
from kafka_balancer.pipeline.batch import run_batch
from kafka_balancer.pipeline.columnar.tables import ColumnarTables
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.read import read_samples_by_type

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

TOPIC = "pipeline-live"
SAMPLES_TOPIC = "__kb_samples_pipeline_live"
RATES = {0: 40_000.0, 1: 20_000.0, 2: 8_000.0}  # bytes of values per second per partition
VALUE = 1000


def _produce(bootstrap: str, stop: threading.Event, sent: dict[int, int], started: list[float]) -> None:
    from kafka import KafkaProducer

    prod = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
    payload = b"x" * VALUE
    t0 = time.monotonic()
    started.append(t0)
    while not stop.is_set():
        elapsed = time.monotonic() - t0
        for p, rate in RATES.items():
            want = int(elapsed * rate / VALUE)
            while sent[p] < want:
                prod.send(TOPIC, payload, partition=p)
                sent[p] += 1
        time.sleep(0.02)
    prod.flush()
    prod.close()
    started.append(time.monotonic())


def test_snapshot_bytes_in_matches_what_was_produced(kafka_cluster: Any, spark: Any, tmp_path: Path) -> None:
    from kafka.admin import NewTopic

    from kafka_balancer.pipeline.session import connector_jars

    admin = kafka_cluster.admin()
    admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=2)])
    time.sleep(2)
    stop, sent, span = threading.Event(), dict.fromkeys(RATES, 0), []
    producer = threading.Thread(target=_produce, args=(kafka_cluster.bootstrap, stop, sent, span), daemon=True)
    producer.start()
    time.sleep(3)  # steady state before the first sample
    samples = tmp_path / "samples"
    collect(CollectOptions(bootstrap=kafka_cluster.bootstrap, out_dir=samples, interval_s=1.0, rounds=22,
                           metrics_urls=kafka_cluster.cluster.metrics_urls(), hosts=kafka_cluster.cluster.hosts(),
                           topic=SAMPLES_TOPIC), say=lambda m: None)
    stop.set()
    producer.join(30)
    produced_rate = {p: sent[p] * VALUE / (span[1] - span[0]) for p in RATES}
    for p, rate in RATES.items():
        assert produced_rate[p] == pytest.approx(rate, rel=0.05), "the producer did not keep its rate"

    cfg = PipelineConfig(window_ms=4_000, windows=3, min_valid_ratio=0.5)
    res = run_batch(spark, samples, cfg)
    got = {p["partition"]: p["load"]["leader"]["nw_in"] for p in res.snapshot["partitions"] if p["topic"] == TOPIC}
    assert set(got) == set(RATES)
    for p in RATES:
        # BytesInPerSec counts record batches (value + record and batch overhead, a few % at 1 kB values).
        assert got[p] == pytest.approx(produced_rate[p], rel=0.10), (p, got[p], produced_rate[p])

    # The same samples as Parquet take the columnar route (Arrow tasks, numpy window step): same snapshot.
    pq_dir = tmp_path / "samples-parquet"
    for rtype, df in read_samples_by_type(spark, samples).items():
        df.drop("event_time").coalesce(1).write.parquet(str(pq_dir / "parquet" / rtype))
    columnar = run_batch(spark, pq_dir, cfg)
    assert isinstance(columnar.tables, ColumnarTables) and columnar.windows == res.windows
    assert [(p["topic"], p["partition"], p["replicas"], p["leader"]) for p in columnar.snapshot["partitions"]] == [
        (p["topic"], p["partition"], p["replicas"], p["leader"]) for p in res.snapshot["partitions"]]
    for a, b in zip(columnar.snapshot["partitions"], res.snapshot["partitions"], strict=True):
        for role in ("leader", "follower"):
            assert a["load"][role] == pytest.approx(b["load"][role], rel=1e-9, abs=1e-9), (a["topic"], a["partition"])
    assert columnar.report["valid_ratio"] == res.report["valid_ratio"]

    # The same samples through Structured Streaming from the samples topic (Kafka source).
    if not connector_jars():
        pytest.skip("the spark_kafka jars are not in the cache (run `kafka-balancer setup-jvm`)")
    source = streaming.kafka_source(spark, kafka_cluster.bootstrap, SAMPLES_TOPIC)
    job = streaming.start(spark, source, cfg, tmp_path / "state", lateness_ms=0, trigger={"availableNow": True})
    job.await_all(300)
    emitted = streaming.emit_ready_windows(spark, tmp_path / "state", tmp_path / "out", cfg)
    assert emitted and emitted[-1] == res.windows[-1]
    pw = spark.read.parquet(str(tmp_path / "out" / "tables" / "partition_windows"))
    streamed = {(r["partition"], r["window"]): r["nw_in"] for r in pw.where(f"topic = '{TOPIC}'").collect()}
    batch = {(r["partition"], r["window"]): r["nw_in"]
             for r in res.tables.partition_windows.where(f"topic = '{TOPIC}'").collect()}
    for key, value in batch.items():
        assert streamed[key] == pytest.approx(value, rel=1e-9)
