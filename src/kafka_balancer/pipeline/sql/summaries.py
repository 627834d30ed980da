"""Per-partition and per-broker summaries over the windows on Spark SQL (the rules:
:mod:`kafka_balancer.pipeline.assemble`)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_balancer.pipeline.assemble import LOADS


def partition_summary(pw: DataFrame) -> DataFrame:
    """One row per partition: mean loads over valid windows, latest valid disk, metadata, validity."""
    v = F.col("pw_valid")
    aggs = [
        F.sum(F.when(v, 1).otherwise(0)).alias("valid_windows"),
        F.max_by("replicas", "window").alias("replicas"),
        F.max_by("leader", "window").alias("leader"),
        F.coalesce(F.max_by(F.when(v, F.col("disk")), F.when(v, F.col("window"))),
                   F.max_by("disk", F.when(F.col("disk").isNotNull(), F.col("window")))).alias("disk"),
        F.collect_set("reason").alias("reasons"),
    ]
    for c in LOADS:
        aggs.append(F.coalesce(F.avg(F.when(v, F.col(c))), F.avg(c), F.lit(0.0)).alias(c))
    return pw.groupBy("cluster", "topic", "partition").agg(*aggs)


def broker_summary(bw: DataFrame) -> DataFrame:
    """One row per broker: rack, host, alive at its latest sample, windows with valid CPU."""
    return bw.groupBy("cluster", "broker").agg(
        F.max_by("rack", "last_ts").alias("rack"),
        F.max_by("host", "last_ts").alias("host"),
        F.max_by("alive", "last_ts").alias("alive"),
        F.max("last_ts").alias("last_ts"),
        F.sum(F.when(F.col("cpu_valid"), 1).otherwise(0)).alias("cpu_valid_windows"),
        F.count(F.lit(1)).alias("cpu_windows"),
        F.avg(F.when(F.col("cpu_valid"), F.col("cpu"))).alias("cpu_mean"),
    )

