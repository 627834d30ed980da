"""Offline replicas: every replica on a dead broker moves to a live one, whatever the balance.

The destination is the allowed live broker, not pushed above θ where another can take the replica, where
it adds the least squared relative deviation from the ideal, over the four resources and the replica
count, so that a heal alone already spreads the load it places. Largest replicas are placed first, while
the most room is left. In a heal (a plan that copies only what the failure forces), :func:`reseat` then
moves the new copies between live brokers while that lowers the same deviation: a copy placed elsewhere
copies the same bytes. A partition with no live replica left cannot be copied from anywhere: it is
reported, not moved.

Example: a dead broker held a 40 GB and a 5 GB replica; two live brokers sit at disk utilisation 0.50 and
0.40 with equal capacity and replica counts. The 40 GB replica goes to the 0.40 broker first; the 5 GB
one then goes wherever it adds the least squared deviation.
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.errors import InputError
from kafka_balancer.planner.state import State

NO_SOURCE, BUDGET, NOWHERE = "no live replica", "budget", "nowhere"  # why a partition stays stranded


def evacuate(st: State, removed: np.ndarray | None = None) -> tuple[int, list[tuple[int, str]]]:
    """Move replicas off dead brokers, and off brokers being removed (``removed``, a mask; they arrive
    here as not alive). Returns (replicas moved, stranded partitions with why: :data:`NO_SOURCE`, no live
    replica to copy from; :data:`BUDGET`, the move or byte budget is spent; :data:`NOWHERE`, the operator's
    modes leave no broker that may take it). Under a budget the smallest replicas go first, so that it
    heals as many partitions as it can; otherwise the largest, while the most room is left.

    A replica that must leave a removed broker but has nowhere to go (too few brokers left for its
    replication factor, no broker in a rack it needs, no broker with room for it, or a budget too small)
    is refused with :class:`InputError` naming the partition and why."""
    dead = np.nonzero(~st.alive)[0]
    if dead.size == 0:
        return 0, []
    on_dead = np.any(np.isin(st.rep, dead), axis=1)
    stranded: list[tuple[int, str]] = []
    moved = 0
    parts = np.nonzero(on_dead)[0]
    parts = parts[np.argsort(st.disk_bytes[parts] if st.budgeted else -st.disk_bytes[parts], kind="stable")]
    for p in parts.tolist():
        row = st.rep[p]
        live = [int(b) for b in row if b >= 0 and st.alive[b]]
        # a broker being removed is still up: its replicas can be copied even if no other replica is live
        source = live or [int(b) for b in row if b >= 0 and removed is not None and removed[b]]
        if not source:
            stranded.append((p, NO_SOURCE))
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
                free = st.receive.copy()
                free[st.rep[p][st.rep[p] >= 0]] = False
                mask = free & st.budget_mask(np.array([p]), src, np.arange(free.size))[0] if st.budgeted else free
                if not mask.any():  # with free brokers, only the budget can have kept them all out
                    stranded.append((p, BUDGET if st.budgeted and free.any() else NOWHERE))
                    break
            v0 = st.violations().sum(axis=1)
            v1 = st.violation_of((st.load + delta) / st.cap).sum(axis=1)
            cost = np.where(mask, v1 - v0, np.inf)
            # never above θ where another broker can take it; then the least added squared deviation
            cand = np.nonzero(np.isfinite(cost))[0]
            within = cand[((st.load[cand] + delta) <= st.theta * st.cap[cand] + 1e-9).all(axis=1)]
            cand = within if within.size else cand
            dst = int(cand[np.argmin(_deviation_change(st, cand, delta, 1))])
            st.move_replica(p, src, dst)
            moved += 1
    return moved, stranded


def _deviation(st: State, b: np.ndarray, load: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Squared relative deviation from the ideal of brokers ``b`` at ``load`` [len(b), 4] and replica
    ``count``: over the four resources, plus the replica count's from the mean every live broker ends at."""
    d = st.relative_deviation(load / st.cap[b])
    mean = float(st.rcount.sum()) / max(1, int(st.alive.sum()))  # every replica ends on a live broker
    out = (d**2).sum(axis=1)
    if mean > 0:
        out = out + ((count - mean) / mean) ** 2
    return np.asarray(out)


def _deviation_change(st: State, b: np.ndarray, delta: np.ndarray, count: int) -> np.ndarray:
    """[len(b)]: change of :func:`_deviation` if brokers ``b`` gain load ``delta`` and ``count`` replicas
    (a replica leaving: ``-delta``, ``-1``)."""
    load, now = st.load[b], st.rcount[b].astype(np.float64)
    return _deviation(st, b, load + delta, now + count) - _deviation(st, b, load, now)


def reseat(st: State, max_passes: int = 8) -> int:
    """Move new copies (replicas not in their partition's original set) to other live brokers that may hold
    them while that lowers the squared deviation of the two brokers (:func:`_deviation`); a copy placed
    elsewhere copies the same bytes. Returns the number of copies moved. Deterministic: copies in
    partition order, the best destination each time (ties: the lowest position)."""
    moved = 0
    for _ in range(max_passes):
        before = moved
        slots = np.nonzero(st.new_replicas())
        for p, k in zip(slots[0].tolist(), slots[1].tolist(), strict=True):
            src = int(st.rep[p, k])
            delta = st.role_load(p, src)
            mask = st.dest_mask(p, src) & ((st.load + delta) <= st.theta * st.cap + 1e-9).all(axis=1)
            dests = np.nonzero(mask)[0]
            if dests.size == 0:
                continue
            lose = _deviation_change(st, np.array([src]), -delta, -1)[0]
            total = lose + _deviation_change(st, dests, delta, 1)
            j = int(np.argmin(total))
            if total[j] < -1e-12:
                st.move_replica(p, src, int(dests[j]))
                moved += 1
        if moved == before:
            break
    return moved


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
