"""Hand-made sample DataFrames for the pipeline's transformation tests."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession

from kafka_balancer.pipeline.read import with_event_time
from kafka_balancer.pipeline.schemas import RAW, RAW_COLUMNS

T0 = 1_700_000_100_000 // 300_000 * 300_000  # a window boundary
MIN = 60_000


def samples(spark: SparkSession, records: list[dict[str, Any]]) -> DataFrame:
    """Records as a typed sample DataFrame (missing fields are null; v=1, cluster 'c')."""
    rows = []
    for r in records:
        full = {"v": 1, "cluster": "c", **r}
        rows.append(tuple(full.get(c) for c in RAW_COLUMNS))
    return with_event_time(spark.createDataFrame(rows, RAW))


def broker(ts: int, b: int, cpu: float | None, cores: int = 4, alive: bool = True) -> dict[str, Any]:
    return {"type": "broker", "ts": ts, "broker": b, "alive": alive, "cpu_seconds": cpu, "cpu_cores": cores,
            "rack": "r0", "host": "h0"}


def tb(ts: int, b: int, topic: str, bytes_in: float, bytes_out: float = 0.0) -> dict[str, Any]:
    return {"type": "topic_broker", "ts": ts, "broker": b, "topic": topic, "bytes_in": bytes_in,
            "bytes_out": bytes_out, "messages_in": 0.0}


def part(ts: int, topic: str, p: int, leo: int, lso: int = 0, leader: int = 0,
         replicas: list[int] | None = None) -> dict[str, Any]:
    reps = replicas or [leader]
    return {"type": "partition", "ts": ts, "topic": topic, "partition": p, "replicas": reps, "leader": leader,
            "isr": reps, "log_end_offset": leo, "log_start_offset": lso}


def replica(ts: int, topic: str, p: int, b: int, size: int) -> dict[str, Any]:
    return {"type": "replica", "ts": ts, "topic": topic, "partition": p, "broker": b, "size": size,
            "log_dir": "/d"}


def group(ts: int, g: str, topic: str, p: int, committed: int) -> dict[str, Any]:
    return {"type": "group_offset", "ts": ts, "group": g, "topic": topic, "partition": p, "committed": committed}
