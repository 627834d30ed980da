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
of 1 CPU second per second, 25 %)::

    >>> broker_cpu_rates(aggs["broker"], 300_000).select("cpu").first()   # doctest: +SKIP
    Row(cpu=25.0)
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F


def _adjacent_prev(keys: list[str], window_ms: int, cols: list[str]) -> tuple[Column, Column]:
    """(previous window's struct of ``cols``, whether it is the adjacent window)."""
    w = Window.partitionBy("cluster", *keys).orderBy("window")
    prev = F.lag(F.struct("window", *cols)).over(w)
    return prev, prev.getField("window") == F.col("window") - F.lit(window_ms)


def _intervals(pts: str, fields: list[str]) -> Column:
    """array<struct<end_ts, dt, d_<field>...>> from a sorted array of points (ts, fields...)."""
    deltas = ", ".join(
        f"'d_{f}', try_element_at({pts}, i + 1).{f} - try_element_at({pts}, i).{f}" for f in fields
    )
    return F.expr(
        f"filter(transform(sequence(1, greatest(size({pts}) - 1, 1)), i -> named_struct("
        f"'end_ts', try_element_at({pts}, i + 1).ts, "
        f"'dt', try_element_at({pts}, i + 1).ts - try_element_at({pts}, i).ts, {deltas})), "
        f"x -> x.dt IS NOT NULL AND x.dt > 0)"
    )


def _sum(arr: str, expr: str, zero: str = "0D") -> Column:
    return F.expr(f"aggregate({arr}, {zero}, (acc, x) -> acc + {expr})")


def _rate_stats(arr: str, field: str, prefix: str, scale: str = "1000D") -> list[Column]:
    """mean (Σd/Σdt), max and p95 of the interval rates of ``field`` (per second when scale is 1000)."""
    rates = f"array_sort(transform({arr}, x -> x.{field} / x.dt * {scale}))"
    total_dt = _sum(arr, "x.dt", "CAST(0 AS BIGINT)")
    return [
        (F.try_divide(_sum(arr, f"x.{field}"), total_dt) * F.expr(scale)).alias(prefix),
        F.expr(f"array_max({rates})").alias(f"{prefix}_max"),
        F.expr(f"try_element_at({rates}, CAST(greatest(1, ceil(0.95 * size({arr}))) AS INT))").alias(
            f"{prefix}_p95"
        ),
    ]


def _with_points(agg: DataFrame, keys: list[str], window_ms: int) -> DataFrame:
    """Sorts ``pts`` and prepends the adjacent previous window's last point."""
    df = agg.withColumn("pts", F.array_sort("pts"))
    df = df.withColumn("last_pt", F.expr("try_element_at(pts, -1)"))
    prev, adjacent = _adjacent_prev(keys, window_ms, ["last_pt"])
    return df.withColumn(
        "pts",
        F.when(adjacent & prev.getField("last_pt").isNotNull(),
               F.concat(F.array(prev.getField("last_pt")), F.col("pts"))).otherwise(F.col("pts")),
    )


def broker_cpu_rates(broker_agg: DataFrame, window_ms: int) -> DataFrame:
    """Per broker and window: ``cpu`` (% of the broker, mean), ``cpu_max``, ``cpu_p95``, ``cpu_intervals``,
    and ``restarts`` (end times of intervals whose CPU counter went down)."""
    df = _with_points(broker_agg, ["broker"], window_ms)
    df = df.withColumn("iv", _intervals("pts", ["v"]))
    df = df.withColumn("restarts", F.expr("transform(filter(iv, x -> x.d_v < 0), x -> x.end_ts)"))
    df = df.withColumn("ok", F.expr("filter(iv, x -> x.d_v >= 0)"))
    scale = "(100000D / greatest(cores, 1))"  # cpu-seconds per second -> percent of the broker
    return df.select(
        "cluster", "broker", "window", "n", "last_ts", "rack", "host", "alive", "cores",
        *_rate_stats("ok", "d_v", "cpu", scale),
        F.size("ok").alias("cpu_intervals"),
        "restarts",
    )


def topic_broker_rates(tb_agg: DataFrame, broker_rates: DataFrame, window_ms: int) -> DataFrame:
    """Per broker, topic and window: ``in_rate`` and ``out_rate`` (bytes/s, mean; with _max/_p95)."""
    df = _with_points(tb_agg, ["broker", "topic"], window_ms)
    df = df.withColumn("iv", _intervals("pts", ["bytes_in", "bytes_out"]))
    restarts = broker_rates.select("cluster", "broker", "window", "restarts")
    df = df.join(restarts, ["cluster", "broker", "window"], "left")
    df = df.withColumn(
        "ok",
        F.expr(
            "filter(iv, x -> coalesce(x.d_bytes_in, 0D) >= 0 AND coalesce(x.d_bytes_out, 0D) >= 0 "
            "AND NOT coalesce(array_contains(restarts, x.end_ts), false))"
        ),
    )
    return df.select(
        "cluster", "broker", "topic", "window",
        *_rate_stats("ok", "d_bytes_in", "in_rate"),
        *_rate_stats("ok", "d_bytes_out", "out_rate"),
        F.size("ok").alias("tb_intervals"),
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
    ≥ 0) and ``span_ms``."""
    df = _span(part_agg, ["topic", "partition"], window_ms,
               [("first_leo", "last_leo"), ("first_lso", "last_lso")])
    d_leo = F.col("last_leo") - F.col("base_leo")
    return df.withColumn("d_leo", F.when(d_leo >= 0, d_leo)).withColumn(
        "d_lso", F.greatest(F.col("last_lso") - F.col("base_lso"), F.lit(0))
    ).drop("base_leo", "base_lso", "first_leo", "first_lso")


def replica_deltas(replica_agg: DataFrame, window_ms: int) -> DataFrame:
    """Adds ``d_size`` (bytes, may be negative after retention) and ``span_ms`` per replica and window."""
    df = _span(replica_agg, ["topic", "partition", "broker"], window_ms, [("first_size", "last_size")])
    return df.withColumn("d_size", F.col("last_size") - F.col("base_size")).drop("base_size", "first_size")


def group_deltas(group_agg: DataFrame, window_ms: int) -> DataFrame:
    """Per partition and window: ``d_committed``, the sum over groups of committed-offset deltas (each
    clipped at zero: a rewound group consumed nothing new)."""
    df = _span(group_agg, ["group", "topic", "partition"], window_ms, [("first_c", "last_c")])
    d = F.greatest(F.col("last_c") - F.col("base_c"), F.lit(0))
    return df.groupBy("cluster", "topic", "partition", "window").agg(
        F.sum(d).alias("d_committed"), F.count(F.lit(1)).alias("groups")
    )
