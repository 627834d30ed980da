"""The last stage: per-partition loads over the windows, and the snapshot document.

Over the windows that count: the mean for CPU and network, the latest for disk (Cruise Control's
aggregation). A partition with no window that counts keeps the mean of whatever its windows had (and is
listed in the completeness report); the replica list and the leader are those of the latest sample.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.model.snapshot_io import FORMAT_VERSION

LOADS = ("nw_in", "nw_out", "cpu_leader", "cpu_follower")


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


def snapshot_dict(
    parts: pd.DataFrame,
    brokers: pd.DataFrame,
    capacity: dict[str, float],
    broker_capacity: dict[int, dict[str, float]] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """The snapshot document (``snapshot-format.md``, version 1) from the two summaries (pandas)."""
    broker_capacity = broker_capacity or {}
    latest = int(brokers["last_ts"].max()) if len(brokers) else 0
    seen: dict[int, dict[str, Any]] = {}
    for r in brokers.sort_values("broker").to_dict(orient="records"):
        bid = int(r["broker"])
        # A broker whose last record is older than the cluster's last round has left the metadata.
        alive = bool(r["alive"]) if r["alive"] is not None and r["last_ts"] == latest else False
        seen[bid] = {
            "id": bid,
            "rack": r["rack"] if isinstance(r["rack"], str) else None,
            "host": r["host"] if isinstance(r["host"], str) else None,
            "alive": alive,
        }
    for reps in parts["replicas"]:
        for b in reps:
            if int(b) not in seen:
                seen[int(b)] = {"id": int(b), "rack": None, "host": None, "alive": False}
    out_brokers = []
    for bid in sorted(seen):
        cap = {**capacity, **broker_capacity.get(bid, {})}
        out_brokers.append({**seen[bid], "capacity": {k: float(cap[k]) for k in RESOURCES}})
    out_parts = []
    for r in parts.sort_values(["topic", "partition"]).to_dict(orient="records"):
        reps = [int(b) for b in r["replicas"]]
        leader = int(r["leader"]) if r["leader"] is not None and int(r["leader"]) in reps else -1
        nw_in, disk = float(r["nw_in"]), float(r["disk"] or 0.0)
        out_parts.append(
            {
                "topic": r["topic"],
                "partition": int(r["partition"]),
                "replicas": reps,
                "leader": leader,
                "load": {
                    "leader": {"cpu": float(r["cpu_leader"]), "disk": disk, "nw_in": nw_in,
                               "nw_out": float(r["nw_out"])},
                    "follower": {"cpu": float(r["cpu_follower"]), "disk": disk, "nw_in": nw_in, "nw_out": 0.0},
                },
            }
        )
    doc: dict[str, Any] = {"version": FORMAT_VERSION}
    if name is not None:
        doc["name"] = name
    doc["brokers"] = out_brokers
    doc["partitions"] = out_parts
    return doc
