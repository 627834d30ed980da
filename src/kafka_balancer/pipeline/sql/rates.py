"""Rates per window from the window aggregates (the second stage).

A window's rate covers the intervals that *end* in it. The first interval starts at the last sample of
the previous window when that window is adjacent (and present), else at the window's own first sample.

Counters (CPU seconds, bytes): consecutive points give intervals; an interval whose counter went down is
a reset (broker restart) and is dropped, as is every byte-counter interval of a broker whose CPU counter
reset in that same interval. The window's rate is the sum of the kept deltas over the sum of their
durations (a time-weighted mean, equal to the mean of the interval rates when rounds are regular); the
max and the p95 of the interval rates are kept too.

Offsets and sizes: one delta from the previous window's last sample (or this window's first) to this
window's last. A negative log-end-offset delta (a recreated or truncated log) is dropped; a negative
committed-offset delta (a group rewound) is clipped to zero; the log-start-offset delta is how far
retention deleted.

Example (CPU seconds 100 → 160 → 10 → 70 over 60 s rounds on 4 cores: one reset, two 60 s intervals
of 1 CPU second per second, 25 %; ``tests/spark/test_pipeline_transforms.py`` runs exactly this)::

    >>> broker_cpu_rates(aggs["broker"], 300_000).select("cpu").first()   # doctest: +SKIP
    Row(cpu=25.0)
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from kafka_balancer.pipeline.sql.aggregate import window_start


def _adjacent_prev(keys: list[str], window_ms: int, cols: list[str]) -> tuple[Column, Column]:
    """(previous window's struct of ``cols``, whether it is the adjacent window)."""
    w = Window.partitionBy("cluster", *keys).orderBy("window")
    prev = F.lag(F.struct("window", *cols)).over(w)
    return prev, prev.getField("window") == F.col("window") - F.lit(window_ms)


def counter_points(agg: DataFrame, keys: list[str], fields: list[str]) -> DataFrame:
    """The points of a counter aggregate (its ``pts``) as rows: cluster, keys, ts and ``fields``."""
    return agg.select("cluster", *keys, F.explode("pts").alias("p")).select(
        "cluster", *keys, F.col("p.ts").alias("ts"), *[F.col(f"p.{f}").alias(f) for f in fields]
    )


def counter_intervals(points: DataFrame, keys: list[str], window_ms: int, fields: list[str]) -> DataFrame:
    """One row per interval between consecutive points of a counter series: cluster, keys, window (of
    the interval's end), end_ts, dt (ms) and d_<field>. An interval counts only when its start lies in the
    same window or the one just before. ``points``: cluster, keys, ts and ``fields`` (raw samples, or
    :func:`counter_points` of a window aggregate)."""
    pts = points.select("cluster", *keys, window_start(window_ms).alias("window"), "ts", *fields)
    w = Window.partitionBy("cluster", *keys).orderBy("ts")
    iv = pts.select(
        "cluster", *keys, "window", F.col("ts").alias("end_ts"),
        (F.col("ts") - F.lag("ts").over(w)).alias("dt"),
        F.lag("window").over(w).alias("prev_window"),
        *[(F.col(f) - F.lag(f).over(w)).alias(f"d_{f}") for f in fields],
    )
    return iv.where((F.col("dt") > 0) & (F.col("prev_window") >= F.col("window") - F.lit(window_ms))).drop(
        "prev_window"
    )


def rate_stats(field: str, prefix: str, scale: Column | float = 1000.0) -> list[Column]:
    """Aggregates over kept intervals: mean (sum of deltas over sum of dt), max and p95 of interval rates."""
    sc = scale if isinstance(scale, Column) else F.lit(scale)
    rate = F.col(field) / F.col("dt") * sc
    return [
        (F.try_divide(F.sum(field), F.sum("dt")) * sc).alias(prefix),
        F.max(rate).alias(f"{prefix}_max"),
        F.percentile(rate, F.lit(0.95)).alias(f"{prefix}_p95"),
    ]


def broker_cpu_rates(broker_agg: DataFrame, window_ms: int) -> DataFrame:
    """Per broker and window: ``cpu`` (% of the broker, mean), ``cpu_max``, ``cpu_p95``, ``cpu_intervals``,
    and ``restarts`` (intervals whose CPU counter went down)."""
    keys = ["cluster", "broker", "window"]
    iv = counter_intervals(counter_points(broker_agg, ["broker"], ["v"]), ["broker"], window_ms, ["v"])
    iv = iv.join(broker_agg.select(*keys, "cores"), keys, "left")
    # cpu-seconds per ms -> percent of the broker per ms, so that the rate below is in percent
    iv = iv.withColumn("d_pct", F.col("d_v") * F.lit(100_000.0) / F.greatest(F.col("cores"), F.lit(1)))
    ok = iv.where(F.col("d_v") >= 0)
    stats = ok.groupBy(*keys).agg(*rate_stats("d_pct", "cpu", 1.0), F.count(F.lit(1)).alias("cpu_intervals"))
    restarts = iv.where(F.col("d_v") < 0).groupBy(*keys).agg(F.count(F.lit(1)).alias("restarts"))
    return (
        broker_agg.drop("pts")
        .join(stats, keys, "left")
        .join(restarts, keys, "left")
        .fillna({"cpu_intervals": 0, "restarts": 0})
    )


def restart_intervals(broker_agg: DataFrame, window_ms: int) -> DataFrame:
    """cluster, broker, end_ts of every interval in which the broker's CPU counter went down."""
    iv = counter_intervals(counter_points(broker_agg, ["broker"], ["v"]), ["broker"], window_ms, ["v"])
    return iv.where(F.col("d_v") < 0).select("cluster", "broker", "end_ts", F.lit(True).alias("restart"))


TB_FIELDS = ["bytes_in", "bytes_out"]


def topic_broker_rates(tb: DataFrame, broker_agg: DataFrame, window_ms: int) -> DataFrame:
    """Per broker, topic and window: ``in_rate`` and ``out_rate`` (bytes/s, mean; with _max/_p95).
    Intervals with a negative delta, or in which the broker's CPU counter reset, are dropped.

    ``tb``: the topic-broker window aggregate (with ``pts``), or the raw topic_broker samples, which a
    batch job hands over directly: the intervals need the points in time order per series, one shuffle
    and sort of the samples, so aggregating them into lists first would only add work."""
    keys = ["broker", "topic"]
    points = counter_points(tb, keys, TB_FIELDS) if "pts" in tb.columns else tb
    iv = counter_intervals(points, keys, window_ms, TB_FIELDS)
    # CPU counter resets are rare: the small table goes to every task instead of a shuffle
    iv = iv.join(F.broadcast(restart_intervals(broker_agg, window_ms)), ["cluster", "broker", "end_ts"], "left")
    ok = iv.where(
        (F.coalesce(F.col("d_bytes_in"), F.lit(0.0)) >= 0)
        & (F.coalesce(F.col("d_bytes_out"), F.lit(0.0)) >= 0)
        & F.col("restart").isNull()
    )
    return ok.groupBy("cluster", "broker", "topic", "window").agg(
        *rate_stats("d_bytes_in", "in_rate"),
        *rate_stats("d_bytes_out", "out_rate"),
        F.count(F.lit(1)).alias("tb_intervals"),
    )


def _span(agg: DataFrame, keys: list[str], window_ms: int, pairs: list[tuple[str, str]]) -> DataFrame:
    """Adds base_ts and base_<name> (the previous adjacent window's last, else this window's first)."""
    cols = ["last_ts", *[last for _, last in pairs]]
    prev, adjacent = _adjacent_prev(keys, window_ms, cols)
    df = agg.withColumn("_prev", prev).withColumn("_adj", F.coalesce(adjacent, F.lit(False)))
    df = df.withColumn("base_ts", F.when(F.col("_adj"), F.col("_prev.last_ts")).otherwise(F.col("first_ts")))
    for first, last in pairs:
        df = df.withColumn(
            f"base_{last[5:]}", F.when(F.col("_adj"), F.col(f"_prev.{last}")).otherwise(F.col(first))
        )
    return df.withColumn("span_ms", F.col("last_ts") - F.col("base_ts")).drop("_prev", "_adj")


def partition_deltas(part_agg: DataFrame, window_ms: int) -> DataFrame:
    """Adds ``d_leo`` (messages appended; null when negative), ``d_lso`` (messages deleted by retention,
    ≥ 0), ``span_ms`` and ``leo_rate`` (messages per second)."""
    df = _span(part_agg, ["topic", "partition"], window_ms,
               [("first_leo", "last_leo"), ("first_lso", "last_lso")])
    d_leo = F.col("last_leo") - F.col("base_leo")
    df = df.withColumn("d_leo", F.when(d_leo >= 0, d_leo)).withColumn(
        "d_lso", F.greatest(F.col("last_lso") - F.col("base_lso"), F.lit(0))
    )
    # Messages per second: partitions of one topic and leader may have spans of different lengths when
    # samples are missing, so shares are taken on rates, not on raw deltas.
    return df.withColumn("leo_rate", F.col("d_leo") / F.when(F.col("span_ms") > 0, F.col("span_ms")) * 1000.0).drop(
        "base_leo", "base_lso", "first_leo", "first_lso")


def replica_deltas(replica_agg: DataFrame, window_ms: int) -> DataFrame:
    """Adds ``d_size`` (bytes, may be negative after retention) and ``span_ms`` per replica and window."""
    df = _span(replica_agg, ["topic", "partition", "broker"], window_ms, [("first_size", "last_size")])
    return df.withColumn("d_size", F.col("last_size") - F.col("base_size")).drop("base_size", "first_size")


def group_deltas(group_agg: DataFrame, window_ms: int) -> DataFrame:
    """Per partition and window: ``d_committed``, the sum over groups of committed-offset deltas (each
    clipped at zero: a rewound group consumed nothing new), and ``committed_rate`` (messages per second)."""
    df = _span(group_agg, ["group", "topic", "partition"], window_ms, [("first_c", "last_c")])
    d = F.greatest(F.col("last_c") - F.col("base_c"), F.lit(0))
    rate = d / F.when(F.col("span_ms") > 0, F.col("span_ms")) * 1000.0
    return df.groupBy("cluster", "topic", "partition", "window").agg(
        F.sum(d).alias("d_committed"), F.sum(rate).alias("committed_rate"), F.count(F.lit(1)).alias("groups")
    )
