"""The last stage: per-partition loads over the windows, and the snapshot document.

Over the windows that count: the mean for CPU and network, the latest for disk (Cruise Control's
aggregation). A partition with no window that counts keeps the mean of whatever its windows had (and is
listed in the completeness report); the replica list and the leader are those of the latest sample.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.model.snapshot_io import FORMAT_VERSION

LOADS = ("nw_in", "nw_out", "cpu_leader", "cpu_follower")


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
