"""The streaming pipeline says what it skipped, as the batch readers do: records on the samples topic that
are not JSON, have a field of the wrong type, are of another format version, of an unknown type or have no
``ts`` are counted by reason in one warning line per micro-batch, and a bounded run that could use none of
them fails (exit 2's InputError) instead of exiting quietly. Real cluster, real Spark (session-scoped)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline import streaming
from kafka_balancer.pipeline.config import PipelineConfig

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

GOOD = {"v": 1, "type": "partition", "cluster": "c", "ts": 1_700_000_000_000, "topic": "t", "partition": 0,
        "replicas": [1], "leader": 1, "isr": [1], "log_end_offset": 5, "log_start_offset": 0}
BAD: list[tuple[str, bytes]] = [
    ("not_json", b"garbage"),
    ("not_json", b'{"v": 1, "type": "partition", "ts": 1'),  # truncated
    ("not_json", orjson.dumps({**GOOD, "partition": "zero"})),  # a field of the wrong type
    ("unknown_version", orjson.dumps({**GOOD, "v": 2})),
    ("unknown_version", orjson.dumps({**GOOD, "v": 7})),
    ("unknown_type", orjson.dumps({**GOOD, "type": "partitions"})),
    ("no_time", orjson.dumps({k: v for k, v in GOOD.items() if k != "ts"})),
]


def _topic(kafka_cluster: Any, name: str, values: list[bytes]) -> None:
    from kafka.admin import NewTopic

    from kafka import KafkaProducer

    kafka_cluster.admin().create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])
    time.sleep(1)
    prod = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap, acks="all")
    for v in values:
        prod.send(name, v)
    prod.flush()
    prod.close()


def test_streaming_counts_skipped_records_and_fails_when_none_is_usable(
        kafka_cluster: Any, spark: Any, tmp_path: Path) -> None:
    from kafka_balancer.pipeline.session import connector_jars

    if not connector_jars():
        pytest.skip("the spark_kafka jars are not in the cache (run `kafka-balancer setup-jvm`)")
    cfg = PipelineConfig(window_ms=4_000, windows=3, min_valid_ratio=0.5)

    # Mixed: every reason once or more, and good records, in one availableNow run.
    _topic(kafka_cluster, "kb-skip-mixed", [orjson.dumps(GOOD)] * 3 + [v for _, v in BAD])
    said: list[str] = []
    source = streaming.kafka_source(spark, kafka_cluster.bootstrap, "kb-skip-mixed")
    job = streaming.start(spark, source, cfg, tmp_path / "state", lateness_ms=0, trigger={"availableNow": True},
                          say=said.append)
    job.await_all(300)
    got = job.skipped.total
    want = {r: sum(1 for reason, _ in BAD if reason == r) for r, _ in BAD}
    assert (got.total, got.not_json, got.unknown_version, got.unknown_type, got.no_time) == (
        10, want["not_json"], want["unknown_version"], want["unknown_type"], want["no_time"])
    assert got.first_file is not None and got.first_file.startswith("kb-skip-mixed-0@")
    assert len(said) == 1 and said[0].startswith("warning: micro-batch 0: skipped 7 of 10 sample records: ")
    assert "2 of a format version other than 1" in said[0] and "1 without ts" in said[0]
    # The parser the streaming queries aggregate keeps the good records only (another version was used before).
    from kafka_balancer.pipeline.read import parse_json_values

    values = spark.createDataFrame([(orjson.dumps(GOOD).decode(),)] + [(v.decode(),) for _, v in BAD], "value string")
    assert parse_json_values(values).count() == 1

    # Nothing usable at all: a bounded run fails naming the counts, rather than exiting 0 or 1 quietly.
    _topic(kafka_cluster, "kb-skip-garbage", [v for _, v in BAD])
    source = streaming.kafka_source(spark, kafka_cluster.bootstrap, "kb-skip-garbage")
    with pytest.raises(InputError) as err:
        streaming.run_forever(spark, source, cfg, tmp_path / "state2", tmp_path / "out2", lateness_ms=0,
                              poll_s=2.0, max_polls=3, say=said.append)
    assert "none of the 7 records in the samples topic" in err.value.message
    assert "3 not JSON or with a field of the wrong type" in err.value.message
    assert not (tmp_path / "out2" / "snapshot.json").exists()
