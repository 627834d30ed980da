"""Offline replicas: every replica on a dead broker moves to a live one, whatever the balance.

The destination is the allowed live broker where the replica adds the least violation (ties: the
least loaded). A partition with no live replica left cannot be copied from anywhere: it is reported,
not moved.
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.state import State


def evacuate(st: State) -> tuple[int, list[int]]:
    """Move replicas off dead brokers. Returns (replicas moved, partitions with no live replica)."""
    dead = np.nonzero(~st.alive)[0]
    if dead.size == 0:
        return 0, []
    on_dead = np.any(np.isin(st.rep, dead), axis=1)
    stranded: list[int] = []
    moved = 0
    for p in np.nonzero(on_dead)[0].tolist():
        row = st.rep[p]
        live = [int(b) for b in row if b >= 0 and st.alive[b]]
        if not live:
            stranded.append(p)
            continue
        if st.ldr[p] < 0 or not st.alive[st.ldr[p]]:
            # offline partition with a live replica: it gets a leader among the live ones
            best = min(live, key=lambda b: float((st.load[b] / st.cap[b]).max()))
            st.move_leadership(p, best)
        for src in [int(b) for b in row if b >= 0 and not st.alive[b]]:
            delta = st.F[p]
            mask = st.dest_mask(p, src)
            if not mask.any():  # spread cannot be kept: any live broker not holding the partition
                mask = st.alive.copy()
                mask[st.rep[p][st.rep[p] >= 0]] = False
            if not mask.any():
                stranded.append(p)
                break
            v0 = st.violations().sum(axis=1)
            v1 = st.violation_of((st.load + delta) / st.cap).sum(axis=1)
            cost = np.where(mask, v1 - v0, np.inf)
            tie = (st.load / st.cap).max(axis=1)
            cand = np.nonzero(cost <= cost.min() + 1e-12)[0]
            dst = int(cand[np.argmin(tie[cand])])
            st.move_replica(p, src, dst)
            moved += 1
    return moved, stranded
