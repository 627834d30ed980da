"""A kafka-kit-style, storage-only greedy rebalancer (the baseline of issue 6, §3).

It looks at disk only, like DataDog kafka-kit's ``topicmappr rebalance`` with storage placement:

1. **Rebuild.** Every replica on a dead broker is replaced, largest partition first, by the live broker
   with the most free disk (capacity − used bytes) that keeps the hard constraints.
2. **Rebalance.** With ``u`` the mean disk utilisation of the live brokers, every broker above
   ``u·(1+tolerance)`` is a source, most utilised first. Its replicas are taken largest first and each
   goes to the broker with the most free disk that keeps the hard constraints, provided the destination
   stays at or under ``u·(1+tolerance)`` and under ``θ``. A source stops once it is inside the band.

Hard constraints, checked on every move: replication factor unchanged (a move replaces one broker in
place), distinct brokers, live destinations only, and the number of distinct racks and of distinct hosts
of the partition never lowered. A moved replica keeps its slot in the replica list, so moving slot 0
moves leadership too (as kafka-kit does). CPU and network are ignored: that is the point of the
baseline.

Example: two brokers of 100 bytes, one holding a 30-byte and a 20-byte partition, the other empty. The
mean is 25 %, the band's top 27.5 bytes: the 30-byte replica would overshoot it, so the 20-byte one moves::

    >>> import numpy as np
    >>> from kafka_balancer.model.snapshot import Snapshot
    >>> snap = Snapshot.build(
    ...     broker_ids=[0, 1], capacity=[[100, 100, 100, 100]] * 2, topics=["t"],
    ...     topic_idx=[0, 0], partition=[0, 1], replicas=[[0], [0]], leader=[0, 0],
    ...     leader_load=[[0, 30, 0, 0], [0, 20, 0, 0]], follower_load=[[0, 30, 0, 0], [0, 20, 0, 0]])
    >>> [(e.partition, e.replicas) for e in storage_greedy(snap).plan.entries]
    [(1, (1,))]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_balancer.model.plan_io import Plan, PlanEntry
from kafka_balancer.model.snapshot import DISK, FloatArr, IntArr, Snapshot


@dataclass(frozen=True)
class GreedyResult:
    plan: Plan
    replicas: IntArr  # the after-state assignment, broker positions
    rebuilt: int  # replicas moved off dead brokers
    moved: int  # replicas moved by the rebalance step
    unplaced: int  # replicas on dead brokers that no live broker could take


def _groups_ok(group_of: IntArr, row: IntArr, slot: int, dst: int) -> bool:
    """True when putting ``dst`` in ``slot`` keeps the number of distinct groups of the row."""
    members = row[row >= 0]
    before = len({int(group_of[b]) for b in members})
    after_set = {int(group_of[b]) for k, b in enumerate(row.tolist()) if b >= 0 and k != slot}
    after_set.add(int(group_of[dst]))
    return len(after_set) >= before


def _feasible(snap: Snapshot, row: IntArr, slot: int, dst: int) -> bool:
    if not snap.alive[dst] or dst in row.tolist():
        return False
    return _groups_ok(snap.rack_idx, row, slot, dst) and _groups_ok(snap.host_idx, row, slot, dst)


def _disk_used(snap: Snapshot, replicas: IntArr) -> FloatArr:
    rows, cols = np.nonzero(replicas >= 0)
    size = snap.follower_load[:, DISK]  # disk is the same for leader and follower (table 1)
    used = np.bincount(replicas[rows, cols], weights=size[rows], minlength=snap.n_brokers)
    return np.asarray(used, dtype=np.float64)


def storage_greedy(snap: Snapshot, tolerance: float = 0.1, theta: float = 0.8) -> GreedyResult:
    """Plan a storage-only rebalance of ``snap`` (see the module docstring)."""
    replicas = snap.replicas.copy()
    size = snap.follower_load[:, DISK]
    cap = snap.capacity[:, DISK]
    used = _disk_used(snap, replicas)
    live = snap.alive
    changed: set[int] = set()

    def best_destination(p: int, slot: int, limit: FloatArr | None) -> int:
        free = np.where(live, cap - used, -np.inf)
        for dst in np.argsort(-free, kind="stable").tolist():
            if not live[dst]:
                break
            if limit is not None and used[dst] + size[p] > limit[dst]:
                continue
            if _feasible(snap, replicas[p], slot, dst):
                return int(dst)
        return -1

    # 1. rebuild: replicas on dead brokers, largest partition first
    rebuilt = unplaced = 0
    dead_rows, dead_slots = np.nonzero((replicas >= 0) & ~live[np.maximum(replicas, 0)])
    for k in np.argsort(-size[dead_rows], kind="stable").tolist():
        p, slot = int(dead_rows[k]), int(dead_slots[k])
        dst = best_destination(p, slot, None)
        if dst < 0:
            unplaced += 1
            continue
        used[replicas[p, slot]] -= size[p]
        used[dst] += size[p]
        replicas[p, slot] = dst
        changed.add(p)
        rebuilt += 1

    # 2. rebalance: brokers above the band give their largest replicas to the brokers with most free disk
    moved = 0
    n_live = int(live.sum())
    if n_live:
        mean_util = float((used[live] / cap[live]).mean())
        upper = np.minimum(mean_util * (1.0 + tolerance), theta) * cap
        util = used / cap
        sources = [int(b) for b in np.argsort(-util, kind="stable") if live[b] and used[b] > upper[b]]
        for src in sources:
            rows, slots = np.nonzero(replicas == src)
            for k in np.argsort(-size[rows], kind="stable").tolist():
                if used[src] <= upper[src]:
                    break
                p, slot = int(rows[k]), int(slots[k])
                if size[p] <= 0:
                    continue
                dst = best_destination(p, slot, upper)
                if dst < 0:
                    continue
                used[src] -= size[p]
                used[dst] += size[p]
                replicas[p, slot] = dst
                changed.add(p)
                moved += 1

    ids = snap.broker_ids
    entries = []
    for p in sorted(changed):
        row = replicas[p]
        if np.array_equal(row, snap.replicas[p]):
            continue
        entries.append(
            PlanEntry(
                snap.topics[int(snap.topic_idx[p])],
                int(snap.partition[p]),
                tuple(int(ids[b]) for b in row if b >= 0),
            )
        )
    return GreedyResult(Plan(tuple(entries)), replicas, rebuilt, moved, unplaced)
