"""Which partition and broker windows count, on Spark SQL (the rules: :mod:`kafka_balancer.pipeline.completeness`)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F


def window_min_samples(pw: DataFrame, bw: DataFrame, min_sample_ratio: float) -> DataFrame:
    """Per cluster and window: ``rounds`` seen and ``min_samples`` required."""
    r1 = bw.groupBy("cluster", "window").agg(F.max("n").alias("r1"))
    r2 = pw.groupBy("cluster", "window").agg(F.max("n").alias("r2"))
    r = r1.join(r2, ["cluster", "window"], "full").select(
        "cluster", "window", F.greatest(F.coalesce("r1", F.lit(0)), F.coalesce("r2", F.lit(0))).alias("rounds")
    )
    return r.withColumn("min_samples", F.greatest(F.lit(1), F.ceil(F.col("rounds") * F.lit(min_sample_ratio))))


def mark_valid(pw: DataFrame, bw: DataFrame, min_sample_ratio: float) -> tuple[DataFrame, DataFrame]:
    """Adds ``pw_valid`` to partition windows and ``cpu_valid`` to broker windows."""
    # one row per window: sent to every task, so the partition rows are not shuffled for it
    ms = F.broadcast(window_min_samples(pw, bw, min_sample_ratio))
    pw = pw.join(ms, ["cluster", "window"], "left").withColumn(
        "pw_valid",
        (F.col("n") >= F.col("min_samples")) & F.col("nw_in").isNotNull() & F.col("disk").isNotNull(),
    )
    bw = bw.join(ms, ["cluster", "window"], "left").withColumn(
        "cpu_valid",
        F.col("cpu").isNotNull() & (F.col("cpu_intervals") >= F.greatest(F.lit(1), F.col("min_samples") - 1)),
    )
    return pw, bw


def missing_reason(pw: DataFrame) -> DataFrame:
    """Why a partition window does not count (null when it does)."""
    return pw.withColumn(
        "reason",
        F.when(F.col("pw_valid"), F.lit(None))
        .when(F.col("n") < F.col("min_samples"), F.lit("too few samples"))
        .when(F.col("nw_in").isNull(), F.lit("no rate (counter reset or no offsets)"))
        .otherwise(F.lit("no replica size")),
    )

