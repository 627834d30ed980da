"""Read and write snapshots in the format of ``snapshot-format.md`` (version 1).

Validation is :mod:`kafka_balancer.validate.snapshot`'s: every problem is one :class:`InputError` naming
the broker, partition and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson

from kafka_balancer.model.fileio import read_input_bytes, write_atomic
from kafka_balancer.model.snapshot import RESOURCES, Snapshot
from kafka_balancer.validate.snapshot import FORMAT_VERSION, parse_snapshot, snapshot_from_dict

__all__ = ["FORMAT_VERSION", "read_snapshot", "snapshot_from_dict", "snapshot_to_dict", "write_snapshot"]


def read_snapshot(path: str | Path) -> Snapshot:
    """Read and validate a snapshot file (:mod:`kafka_balancer.validate.snapshot` says what is checked)."""
    p = Path(path)
    return parse_snapshot(read_input_bytes(p, "a snapshot JSON file"), str(p))


def _loads_dict(row: np.ndarray) -> dict[str, float]:
    return {res: float(row[r]) for r, res in enumerate(RESOURCES)}


def snapshot_to_dict(snap: Snapshot) -> dict[str, Any]:
    ids = snap.broker_ids.tolist()
    brokers = []
    for i in range(snap.n_brokers):
        ri, hi = int(snap.rack_idx[i]), int(snap.host_idx[i])
        brokers.append(
            {
                "id": ids[i],
                "rack": snap.rack_names[ri] if ri >= 0 else None,
                "host": snap.host_names[hi] if hi >= 0 else None,
                "alive": bool(snap.alive[i]),
                "capacity": _loads_dict(snap.capacity[i]),
            }
        )
    id_arr = snap.broker_ids
    rep_ids = np.where(snap.replicas >= 0, id_arr[np.maximum(snap.replicas, 0)], -1).tolist()
    leaders = np.where(snap.leader >= 0, id_arr[np.maximum(snap.leader, 0)], -1).tolist()
    tnames = [snap.topics[t] for t in snap.topic_idx.tolist()]
    pnums = snap.partition.tolist()
    rfs = snap.rf.tolist()
    ll, fl = snap.leader_load.tolist(), snap.follower_load.tolist()
    parts = []
    for j in range(snap.n_partitions):
        parts.append(
            {
                "topic": tnames[j],
                "partition": pnums[j],
                "replicas": rep_ids[j][: rfs[j]],
                "leader": leaders[j],
                "load": {
                    "leader": dict(zip(RESOURCES, ll[j], strict=True)),
                    "follower": dict(zip(RESOURCES, fl[j], strict=True)),
                },
            }
        )
    doc: dict[str, Any] = {"version": FORMAT_VERSION}
    if snap.name is not None:
        doc["name"] = snap.name
    doc["brokers"] = brokers
    doc["partitions"] = parts
    return doc


def write_snapshot(snap: Snapshot, path: str | Path) -> None:
    """Write as JSON (indented when small, compact when large). Written to a temp file, then renamed."""
    opts = orjson.OPT_INDENT_2 if snap.n_partitions <= 5000 else 0
    data = orjson.dumps(snapshot_to_dict(snap), option=opts)
    write_atomic(path, data + b"\n")
