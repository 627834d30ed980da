"""One checker of what every plan must respect, shared by the tests and the planner comparison.

``hard_violations(before, after)`` lists broken hard constraints between two assignments of the same
partitions: replication factor changed, a broker twice in a partition, a replica left on (or moved to) a
dead broker, fewer distinct racks or hosts than before.
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.model.snapshot import Snapshot, on_live


def _spread(group: np.ndarray, rows: np.ndarray) -> np.ndarray:
    g = np.where(rows >= 0, group[np.maximum(rows, 0)], -2)
    g_sorted = np.sort(g, axis=1)
    distinct = (g_sorted[:, 1:] != g_sorted[:, :-1]) & (g_sorted[:, 1:] != -2)
    return distinct.sum(axis=1) + (g_sorted[:, 0] != -2)


def hard_violations(before: Snapshot, after: Snapshot, limit: int = 20) -> list[str]:
    out: list[str] = []
    old, new = before.replicas, after.replicas
    label = before.partition_label
    rf_old = (old >= 0).sum(axis=1)
    rf_new = (new >= 0).sum(axis=1)
    for p in np.nonzero(rf_old != rf_new)[0][:limit]:
        out.append(f"{label(p)}: replication factor {rf_old[p]} -> {rf_new[p]}")
    srt = np.sort(np.where(new >= 0, new, -1 - np.arange(new.shape[1])), axis=1)
    dup = np.any(srt[:, 1:] == srt[:, :-1], axis=1)
    for p in np.nonzero(dup)[0][:limit]:
        out.append(f"{label(p)}: a broker appears twice in {new[p].tolist()}")
    has_live_old = on_live(before).any(axis=1)
    on_dead = np.any((new >= 0) & ~on_live(before, new), axis=1) & has_live_old
    for p in np.nonzero(on_dead)[0][:limit]:
        out.append(f"{label(p)}: a replica is on a dead broker after the plan")
    for name, group in (("racks", before.rack_idx), ("hosts", before.host_idx)):
        if (group >= 0).any():
            worse = _spread(group, new) < _spread(group, old)
            for p in np.nonzero(worse)[0][:limit]:
                out.append(f"{label(p)}: spans fewer {name} after the plan")
    leaders = after.leader
    bad_leader = (leaders >= 0) & ~np.any(new == leaders[:, None], axis=1)
    for p in np.nonzero(bad_leader)[0][:limit]:
        out.append(f"{label(p)}: leader is not one of its replicas")
    return out[:limit]
