"""Offline replicas: every replica on a dead broker moves to a live one, whatever the balance.

The destination is the allowed live broker where the replica adds the least violation (ties: the
least loaded). A partition with no live replica left cannot be copied from anywhere: it is reported,
not moved.
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.errors import InputError
from kafka_balancer.planner.state import State


def evacuate(st: State, removed: np.ndarray | None = None) -> tuple[int, list[int]]:
    """Move replicas off dead brokers, and off brokers being removed (``removed``, a mask; they arrive
    here as not alive). Returns (replicas moved, partitions with no live replica or nowhere to go).

    A replica that must leave a removed broker but has nowhere to go (too few brokers left for its
    replication factor, no broker in a rack it needs, no broker with room for it, or a budget too small)
    is refused with :class:`InputError` naming the partition and why."""
    dead = np.nonzero(~st.alive)[0]
    if dead.size == 0:
        return 0, []
    on_dead = np.any(np.isin(st.rep, dead), axis=1)
    stranded: list[int] = []
    moved = 0
    for p in np.nonzero(on_dead)[0].tolist():
        row = st.rep[p]
        live = [int(b) for b in row if b >= 0 and st.alive[b]]
        # a broker being removed is still up: its replicas can be copied even if no other replica is live
        source = live or [int(b) for b in row if b >= 0 and removed is not None and removed[b]]
        if not source:
            stranded.append(p)
            continue
        if live and (st.ldr[p] < 0 or not st.alive[st.ldr[p]]):
            # offline partition with a live replica: it gets a leader among the live ones (not a demoted
            # one if another can lead)
            leaders = [b for b in live if st.may_lead[b]] or live
            best = min(leaders, key=lambda b: float((st.load[b] / st.cap[b]).max()))
            st.move_leadership(p, best)
        for src in [int(b) for b in row if b >= 0 and not st.alive[b]]:
            delta = st.F[p]
            forced = removed is not None and bool(removed[src])
            mask = st.dest_mask(p, src)
            if forced:
                mask &= st.load[:, 1] + delta[1] <= st.cap[:, 1]  # never beyond a disk's size
                if not mask.any():
                    raise InputError(_why_not(st, p, src, delta), hint=_HINT)
            if not mask.any():  # spread cannot be kept: any live broker not holding the partition
                mask = st.receive.copy()
                mask[st.rep[p][st.rep[p] >= 0]] = False
                if st.budgeted:
                    mask &= st.budget_mask(np.array([p]), src, np.arange(mask.size))[0]
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


_HINT = "remove fewer brokers at once, or add brokers (--add-brokers) that can take the partition"


def _why_not(st: State, p: int, src: int, delta: np.ndarray) -> str:
    """One line: why a replica of ``p`` cannot leave the removed broker ``src``."""
    snap = st.snap
    label = snap.partition_label(p)
    bid = int(snap.broker_ids[src])
    row = [int(b) for b in st.rep[p] if b >= 0]
    free = st.receive.copy()
    free[row] = False
    rf = len(row)
    if not free.any():
        return (
            f"cannot remove broker {bid}: partition {label} has replication factor {rf} and no other broker "
            f"left that may receive it"
        )
    spread_ok = np.array([st.spread_ok(p, src, int(d)) or not st.budgeted for d in np.nonzero(free)[0]])
    racks = snap.rack_idx
    if st.budgeted and not st.budget_mask(np.array([p]), src, np.nonzero(free)[0]).any():
        return (
            f"cannot remove broker {bid} within the budget: partition {label} ({st.disk_bytes[p] / 1e9:,.1f} GB) "
            "would exceed --max-moves or --max-bytes"
        )
    if (racks >= 0).any() and not any(
        st.rack_goal.ok(st.rep[p], src, int(d)) and st.host_goal.ok(st.rep[p], src, int(d)) for d in np.nonzero(free)[0]
    ):
        return (
            f"cannot remove broker {bid}: partition {label} spans racks "
            f"{sorted({snap.rack_names[racks[b]] for b in row if racks[b] >= 0})} and no remaining broker outside "
            f"the racks of its other replicas can take it without lowering its rack spread"
        )
    del spread_ok
    return (
        f"cannot remove broker {bid}: partition {label} needs {delta[1] / 1e9:,.1f} GB of disk and no remaining "
        "broker that may hold it has that much free"
    )
