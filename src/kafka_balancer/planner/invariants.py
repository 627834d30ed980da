"""One checker of what every plan must respect, shared by the tests and the planner comparison.

``hard_violations(before, after)`` lists broken hard constraints between two assignments of the same
partitions: replication factor changed, a broker twice in a partition, a replica left on (or moved to) a
dead broker, fewer distinct racks or hosts than before. ``mode_violations(before, after, constraints)`` lists
broken promises of the operator's modes (nothing on a removed broker, nothing excluded moved, only added
brokers receive, no leader on a demoted broker, the budget kept, and a heal copying only what dead brokers
force).
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.model.snapshot import DISK, Snapshot, on_live
from kafka_balancer.planner.constraints import Constraints, resolve


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


def mode_violations(
    before: Snapshot, after: Snapshot, constraints: Constraints, limit: int = 20, *, heal: bool = False
) -> list[str]:
    """Broken promises of the operator's modes between two assignments of the same partitions:

    * with ``heal`` (the plan's mode was ``heal``): a partition given more new copies than it had replicas
      on dead brokers;

    * a replica left on a removed broker;
    * a partition of an excluded topic changed (other than a replica leaving a dead or removed broker);
    * a new replica on a broker outside ``add_brokers`` (when set), or any new replica in leadership-only mode;
    * a leader on a demoted broker, unless the partition is excluded or no other replica of it may lead (each
      is on a demoted, removed or dead broker);
    * more replica copies than ``max_moves``, or more bytes than ``max_bytes``.
    """
    out: list[str] = []
    res = resolve(constraints, before)
    old, new = before.replicas, after.replicas
    label = before.partition_label
    slot = new >= 0
    on_removed = np.any(slot & res.removed[np.maximum(new, 0)], axis=1)
    for p in np.nonzero(on_removed)[0][:limit]:
        out.append(f"{label(p)}: a replica is still on a removed broker")
    added = slot & ~np.any(new[:, :, None] == old[:, None, :], axis=2)  # new copies
    gone_ok = (old >= 0) & (~before.alive[np.maximum(old, 0)] | res.removed[np.maximum(old, 0)])
    forced = gone_ok.sum(axis=1)  # copies a partition may need because replicas had to leave
    for p in np.nonzero(res.frozen & (added.sum(axis=1) > forced))[0][:limit]:
        out.append(f"{label(p)}: excluded topic, but a replica moved that did not have to")
    if heal:
        for p in np.nonzero(added.sum(axis=1) > forced)[0][:limit]:
            out.append(f"{label(p)}: a healing plan copied a replica that no dead broker forced")
    lead_forced = (before.leader < 0) | ~before.alive[np.maximum(before.leader, 0)] | res.removed[
        np.maximum(before.leader, 0)
    ]
    for p in np.nonzero(res.frozen & (after.leader != before.leader) & ~lead_forced)[0][:limit]:
        out.append(f"{label(p)}: excluded topic, but its leadership moved")
    if constraints.add_brokers or constraints.leadership_only:
        wrong = added & ~res.receive[np.maximum(new, 0)]
        for p in np.nonzero(wrong.any(axis=1) & ~res.frozen)[0][:limit]:
            out.append(f"{label(p)}: a replica went to a broker that may not receive one")
    if res.demoted.any():
        lead = after.leader
        on_dem = (lead >= 0) & res.demoted[np.maximum(lead, 0)]
        other = slot & (new != lead[:, None]) & res.lead[np.maximum(new, 0)]  # lead: live, not removed or demoted
        for p in np.nonzero(on_dem & other.any(axis=1) & ~res.frozen)[0][:limit]:
            out.append(f"{label(p)}: led by demoted broker {int(before.broker_ids[lead[p]])}")
    n_copies = int(added.sum())
    if n_copies > res.max_moves:
        out.append(f"{n_copies} replica copies, above --max-moves {int(res.max_moves)}")
    disk = np.maximum(before.leader_load[:, DISK], before.follower_load[:, DISK])
    nbytes = float((added.sum(axis=1) * disk).sum())
    if nbytes > res.max_bytes * (1 + 1e-9):
        out.append(f"{nbytes:.0f} bytes copied, above --max-bytes {res.max_bytes:.0f}")
    return out[:limit]
