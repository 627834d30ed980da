"""Per-window aggregates of raw samples, one DataFrame per record type (the pipeline's first stage).

Windows are tumbling, aligned to the epoch (``window`` = start in ms), as in Cruise Control's sample
aggregator. Only aggregations are used here, so the same functions run on a batch DataFrame and on a
streaming one (with a watermark on ``event_time``; Spark keeps the open windows as state and emits each
window once, when the watermark passes its end).

* counters (broker CPU seconds; per topic and broker bytes) keep every point of the window,
  ``pts = [(ts, value, ...)]`` (a few per window), so that resets inside a window can be seen;
* offsets and sizes (the big tables) keep only the first and the last value of the window.

Example (a broker with two CPU samples in window 0 and one in window 1, 60 s windows)::

    >>> aggs = window_aggregates(samples, 60_000)                          # doctest: +SKIP
    >>> aggs["broker"].select("window", "n").orderBy("window").collect()   # doctest: +SKIP
    [Row(window=0, n=2), Row(window=60000, n=1)]
"""

from __future__ import annotations

from typing import Protocol

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from kafka_balancer.pipeline.schemas import OFFSETS, RECORD_TYPES


class Aggregator(Protocol):
    def __call__(self, samples: DataFrame, window_ms: int, event_time: bool = True) -> DataFrame: ...


def window_start(window_ms: int) -> Column:
    """The start (ms) of the epoch-aligned window holding a sample's ``ts``: ``ts - ts mod window``."""
    return F.col("ts") - F.pmod(F.col("ts"), F.lit(window_ms))


def _window(window_ms: int, event_time: bool) -> Column:
    """The window key. ``event_time``: Spark's time window on ``event_time`` (what a streaming aggregation
    with a watermark needs); else the same start from :func:`window_start`, which is cheaper in a batch
    job."""
    if event_time:
        return F.window("event_time", f"{window_ms} milliseconds").alias("w")
    return window_start(window_ms).alias("window")


def _grouped(samples: DataFrame, rtype: str, keys: list[str]) -> tuple[DataFrame, list[str]]:
    df = samples.where(F.col("type") == rtype)
    return df, ["cluster", *keys]


def _finish(df: DataFrame) -> DataFrame:
    """``window`` (start, ms) as the last column, whichever key was used."""
    if "w" in df.columns:
        return df.withColumn("window", F.unix_millis(F.col("w.start"))).drop("w")
    return df.select(*[c for c in df.columns if c != "window"], "window")


def _first_last(fields: dict[str, str], count: bool = True) -> list[Column]:
    """``n`` (when ``count``), ``first_ts``, ``last_ts``, and ``first_<name>``/``last_<name>`` of each
    ``{name: column}`` by sample time: the aggregates of the offset and size records."""
    cols = [F.count(F.lit(1)).alias("n")] if count else []
    cols += [F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts")]
    for name, column in fields.items():
        cols += [F.min_by(column, "ts").alias(f"first_{name}"), F.max_by(column, "ts").alias(f"last_{name}")]
    return cols


def broker_window_agg(samples: DataFrame, window_ms: int, event_time: bool = True) -> DataFrame:
    """cluster, broker, window, n, last_ts, rack, host, alive (last), cores, pts[(ts, cpu_seconds)]."""
    df, keys = _grouped(samples, "broker", ["broker"])
    return _finish(
        df.groupBy(*keys, _window(window_ms, event_time)).agg(
            F.count(F.lit(1)).alias("n"),
            F.max("ts").alias("last_ts"),
            F.max_by("rack", "ts").alias("rack"),
            F.max_by("host", "ts").alias("host"),
            F.max_by("alive", "ts").alias("alive"),
            F.max("cpu_cores").alias("cores"),
            F.collect_list(
                F.when(F.col("cpu_seconds").isNotNull() & ~F.isnan("cpu_seconds"),
                       F.struct("ts", F.col("cpu_seconds").alias("v")))
            ).alias("pts"),
        )
    )


def topic_broker_window_agg(samples: DataFrame, window_ms: int, event_time: bool = True) -> DataFrame:
    """cluster, broker, topic, window, n, pts[(ts, bytes_in, bytes_out)]."""
    df, keys = _grouped(samples, "topic_broker", ["broker", "topic"])
    return _finish(
        df.groupBy(*keys, _window(window_ms, event_time)).agg(
            F.count(F.lit(1)).alias("n"),
            F.collect_list(F.struct("ts", "bytes_in", "bytes_out")).alias("pts"),
        )
    )


def partition_window_agg(samples: DataFrame, window_ms: int, event_time: bool = True) -> DataFrame:
    """cluster, topic, partition, window, n, first/last ts and offsets, replicas, leader, isr (last).

    In a batch job the replica and ISR lists are grouping keys of a first aggregation, so that the
    per-sample work is a hash aggregation (an array in an aggregate's buffer would force Spark to sort
    every sample); a second aggregation over the few rows per window picks the latest lists. A streaming
    job keeps the single aggregation (its state store holds one row per window either way)."""
    df, keys = _grouped(samples, "partition", ["topic", "partition"])
    if event_time:
        return _finish(
            df.groupBy(*keys, _window(window_ms, event_time)).agg(
                *_first_last(OFFSETS),
                F.max_by("replicas", "ts").alias("replicas"),
                F.max_by("leader", "ts").alias("leader"),
                F.max_by("isr", "ts").alias("isr"),
                (F.min("leader") != F.max("leader")).alias("leader_moved"),
            )
        )
    by_lists = df.groupBy(*keys, _window(window_ms, event_time), "replicas", "isr").agg(
        *_first_last(OFFSETS),
        F.max_by("leader", "ts").alias("leader"),
        F.min("leader").alias("leader_min"),
        F.max("leader").alias("leader_max"),
    )
    return _finish(
        by_lists.groupBy(*keys, "window").agg(
            F.sum("n").alias("n"),
            F.min("first_ts").alias("first_ts"),
            F.max("last_ts").alias("last_ts"),
            F.min_by("first_leo", "first_ts").alias("first_leo"),
            F.max_by("last_leo", "last_ts").alias("last_leo"),
            F.min_by("first_lso", "first_ts").alias("first_lso"),
            F.max_by("last_lso", "last_ts").alias("last_lso"),
            F.max_by("replicas", "last_ts").alias("replicas"),
            F.max_by("leader", "last_ts").alias("leader"),
            F.max_by("isr", "last_ts").alias("isr"),
            (F.min("leader_min") != F.max("leader_max")).alias("leader_moved"),
        )
    )


def replica_window_agg(samples: DataFrame, window_ms: int, event_time: bool = True) -> DataFrame:
    """cluster, topic, partition, broker, window, n, first/last ts and size."""
    df, keys = _grouped(samples, "replica", ["topic", "partition", "broker"])
    return _finish(
        df.groupBy(*keys, _window(window_ms, event_time)).agg(
            *_first_last({"size": "size"}),
        )
    )


def group_window_agg(samples: DataFrame, window_ms: int, event_time: bool = True) -> DataFrame:
    """cluster, group, topic, partition, window, first/last ts and committed offset."""
    df, keys = _grouped(samples, "group_offset", ["group", "topic", "partition"])
    return _finish(
        df.groupBy(*keys, _window(window_ms, event_time)).agg(
            *_first_last({"c": "committed"}, count=False),
        )
    )


AGGREGATORS: dict[str, Aggregator] = {
    "broker": broker_window_agg,
    "topic_broker": topic_broker_window_agg,
    "partition": partition_window_agg,
    "replica": replica_window_agg,
    "group_offset": group_window_agg,
}
assert tuple(AGGREGATORS) == RECORD_TYPES


def window_aggregates(samples: DataFrame, window_ms: int, event_time: bool = True) -> dict[str, DataFrame]:
    """Every record type's window aggregate."""
    return {rtype: fn(samples, window_ms, event_time) for rtype, fn in AGGREGATORS.items()}
