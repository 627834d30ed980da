"""The CPU model on Spark SQL: broker traffic, the fit's normal equations, and the split of broker CPU over
replicas (the model itself and its solve: :mod:`kafka_balancer.pipeline.cpu_model`)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_balancer.pipeline.cpu_model import FEATURES, CpuModel, solve


def broker_traffic(pw: DataFrame) -> DataFrame:
    """Per broker and window: Lin, Lout, Fin, replicas, and how many of its partition windows are valid."""
    reps = pw.select(
        "cluster", "window", "leader", "nw_in", "nw_out", "pw_valid", F.explode("replicas").alias("broker")
    )
    lead = F.col("broker") == F.col("leader")
    return reps.groupBy("cluster", "broker", "window").agg(
        F.sum(F.when(lead, F.col("nw_in")).otherwise(0.0)).alias("lin"),
        F.sum(F.when(lead, F.col("nw_out")).otherwise(0.0)).alias("lout"),
        F.sum(F.when(~lead, F.col("nw_in")).otherwise(0.0)).alias("fin"),
        F.count(F.lit(1)).alias("replica_count"),
        F.sum(F.when(~F.col("pw_valid"), 1).otherwise(0)).alias("invalid_partitions"),
    )


def fit_observations(bw: DataFrame, traffic: DataFrame) -> DataFrame:
    """(broker, window) rows usable for the fit: valid CPU and all partitions valid."""
    return bw.where(F.col("cpu_valid")).join(traffic, ["cluster", "broker", "window"], "inner").where(
        F.col("invalid_partitions") == 0
    ).select("cluster", "broker", "window", F.col("cpu").alias("y"), *FEATURES)


def gram(obs: DataFrame) -> dict[str, float]:
    """Sums needed by the normal equations: n, Σy, Σy², Σx_i x_j, Σx_i y, and distinct windows."""
    aggs = [F.count(F.lit(1)).alias("n"), F.sum("y").alias("sy"), F.sum(F.col("y") * F.col("y")).alias("syy"),
            F.countDistinct("window").alias("windows")]
    for i, a in enumerate(FEATURES):
        aggs.append(F.sum(F.col(a) * F.col("y")).alias(f"xy_{i}"))
        for j, b in enumerate(FEATURES):
            if j >= i:
                aggs.append(F.sum(F.col(a) * F.col(b)).alias(f"xx_{i}{j}"))
    row = obs.agg(*aggs).first()
    assert row is not None
    return {k: float(v or 0.0) for k, v in row.asDict().items()}


def fit_cpu_model(bw: DataFrame, traffic: DataFrame, min_obs: int = 10, min_windows: int = 3) -> CpuModel:
    return solve(gram(fit_observations(bw, traffic)), min_obs, min_windows)


def split_cpu(pw: DataFrame, bw: DataFrame, traffic: DataFrame, model: CpuModel) -> DataFrame:
    """Adds ``cpu_leader`` and ``cpu_follower`` (CPU percent of the broker) to the partition windows.

    Each broker's measured CPU in a window is spread over its replicas by weighted traffic; a broker with
    no CPU measurement in that window uses the cluster's CPU per weighted byte in that window instead.
    The follower value of a partition is the mean over its followers.
    """
    a, b, c = model.weights
    tw = traffic.withColumn("wt", F.lit(a) * F.col("lin") + F.lit(b) * F.col("lout") + F.lit(c) * F.col("fin"))
    k = tw.join(bw.where(F.col("cpu").isNotNull()).select("cluster", "broker", "window", "cpu"),
                ["cluster", "broker", "window"], "left")
    cluster_k = k.where(F.col("cpu").isNotNull() & (F.col("wt") > 0)).groupBy("cluster", "window").agg(
        (F.sum("cpu") / F.sum("wt")).alias("k_cluster")
    )
    k = k.join(cluster_k, ["cluster", "window"], "left").select(
        "cluster", "broker", "window",
        F.coalesce(F.when(F.col("wt") > 0, F.col("cpu") / F.col("wt")), F.col("k_cluster")).alias("k"),
    )
    reps = pw.select("cluster", "topic", "partition", "window", "leader", "nw_in", "nw_out",
                     F.explode("replicas").alias("broker"))
    reps = reps.join(k, ["cluster", "broker", "window"], "left")
    lead = F.col("broker") == F.col("leader")
    cost = F.when(lead, F.lit(a) * F.col("nw_in") + F.lit(b) * F.col("nw_out")).otherwise(F.lit(c) * F.col("nw_in"))
    reps = reps.withColumn("rcpu", F.col("k") * cost)
    per_p = reps.groupBy("cluster", "topic", "partition", "window").agg(
        F.max(F.when(lead, F.col("rcpu"))).alias("cpu_leader"),
        F.avg(F.when(~lead, F.col("rcpu"))).alias("cpu_follower"),
    )
    return pw.join(per_p, ["cluster", "topic", "partition", "window"], "left").withColumn(
        "cpu_follower", F.coalesce(F.col("cpu_follower"), F.lit(0.0))
    )

