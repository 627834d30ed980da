"""Honest lower bounds: bytes any balanced plan must move, and brokers the cluster must add.

**Bytes.** Moving a replica copies its whole log, so bytes moved = Σ disk of added replicas. Any plan
that ends with every live broker inside the ε band must move at least:

* every byte of every replica on a dead broker (it must be copied to a live one);
* from each live broker above the band: the disk excess over the band's top, and the fewest bytes that
  can carry its network-in excess (network-in moves only with replicas; a fractional knapsack over its
  replicas, densest in network-in per byte first, is a valid bound). CPU and network-out can move by
  leadership, which moves no bytes, so they add nothing;
* into the live brokers below the band: their disk deficit.

Sources are disjoint, so the first two add up; the third bounds the same total from the other side; the
bound is the larger of the two. The band's centre is the mean utilisation the final state will have: with
equal capacities it is total ÷ capacity exactly; with unequal ones the widest possible range of that mean
is used, so the bound stays a bound.
"""

from __future__ import annotations

import math

import numpy as np

from kafka_balancer.model.snapshot import DISK, NR, NW_IN, Snapshot, broker_loads


def mean_util_range(total: float, caps: np.ndarray, eps: float) -> tuple[float, float]:
    """Smallest and largest possible mean utilisation of a state with every broker within ±ε of it."""
    if total <= 0 or caps.size == 0:
        return 0.0, 0.0
    c = np.sort(caps)
    half = c.size // 2
    # mean m with B(j) = m (1 + ε s_j), Σ s_j = 0: Σ c_j B(j) = total  ->  m = total / (C + ε Σ c_j s_j)
    low_sum = -c[:half].sum() + c[c.size - half :].sum()  # s = -1 on small, +1 on large: Σ c s max
    high_sum = c[:half].sum() - c[c.size - half :].sum()  # s = +1 on small: Σ c s min
    big_c = float(c.sum())
    return total / (big_c + eps * low_sum), total / (big_c + eps * high_sum)


def moved_bytes_lower_bound(snap: Snapshot, eps: float) -> float:
    alive = snap.alive
    if not alive.any():
        return 0.0
    disk = np.maximum(snap.leader_load[:, DISK], snap.follower_load[:, DISK])
    rep = snap.replicas
    on_dead = (rep >= 0) & ~alive[np.maximum(rep, 0)]
    has_live = np.any((rep >= 0) & alive[np.maximum(rep, 0)], axis=1)
    dead_bytes = float((on_dead.sum(axis=1) * disk * has_live).sum())

    loads = broker_loads(snap)
    caps = snap.capacity[alive]
    totals = (snap.leader_load + snap.follower_load * (snap.rf - 1)[:, None]).sum(axis=0)
    live_ids = np.nonzero(alive)[0]
    src_bytes = np.zeros(live_ids.size)
    deficit = 0.0
    for r in (DISK, NW_IN):
        m_lo, m_hi = mean_util_range(float(totals[r]), caps[:, r], eps)
        top = (1 + eps) * m_hi * caps[:, r]
        excess = np.maximum(0.0, loads[alive, r] - top)
        if r == DISK:
            src_bytes = np.maximum(src_bytes, excess)
            bottom = (1 - eps) * m_lo * caps[:, r]
            deficit = float(np.maximum(0.0, bottom - loads[alive, r]).sum())
            continue
        for k in np.nonzero(excess > 0)[0]:
            src_bytes[k] = max(src_bytes[k], _min_bytes_carrying(snap, int(live_ids[k]), excess[k], disk))
    return max(dead_bytes + float(src_bytes.sum()), deficit)


def _min_bytes_carrying(snap: Snapshot, b: int, amount: float, disk: np.ndarray) -> float:
    rows = np.nonzero(np.any(snap.replicas == b, axis=1))[0]
    nw = snap.follower_load[rows, NW_IN]  # network-in is the same for both roles
    size = disk[rows]
    keep = nw > 0
    nw, size = nw[keep], size[keep]
    order = np.argsort(size / nw, kind="stable")
    cum_nw = np.cumsum(nw[order])
    cum_size = np.cumsum(size[order])
    k = int(np.searchsorted(cum_nw, amount))
    if k >= nw.size:
        return float(cum_size[-1]) if nw.size else 0.0
    prev_nw = cum_nw[k - 1] if k else 0.0
    prev_size = cum_size[k - 1] if k else 0.0
    return float(prev_size + (amount - prev_nw) * size[order][k] / nw[order][k])


def brokers_to_add(snap: Snapshot, theta: float) -> int:
    """Brokers of the present (mean) size the cluster needs so that the mean utilisation is ≤ θ."""
    alive = snap.alive
    n = int(alive.sum())
    if n == 0:
        return 0
    totals = (snap.leader_load + snap.follower_load * (snap.rf - 1)[:, None]).sum(axis=0)
    mean_cap = snap.capacity[alive].mean(axis=0)
    need = 0
    for r in range(NR):
        if totals[r] > 0:
            need = max(need, math.ceil(totals[r] / (theta * mean_cap[r]) - 1e-9) - n)
    return max(0, need)
