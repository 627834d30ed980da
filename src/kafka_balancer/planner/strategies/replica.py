"""Replica movement (seed 001, definition 2): a replica is copied to a broker that holds none of its
partition, then dropped from its source. Moves disk and network-in, and whatever its role carries.

Candidate replicas: those that alone close the gap, smallest on disk first (least data moved); then
the rest, largest contribution first (the paper's descending order). Destinations: ascending order of
load on the resource, the first one every goal accepts (§3.1 (4)).
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.state import TOL, State

MAX_CANDIDATES = 24
MAX_SOURCES = 6
MAX_DESTINATIONS = 64


def _candidate_order(contrib: np.ndarray, need: float, cost: np.ndarray) -> np.ndarray:
    closers = np.nonzero(contrib >= need)[0]
    others = np.nonzero(contrib < need)[0]
    closers = closers[np.lexsort((contrib[closers], cost[closers]))]
    others = others[np.argsort(-contrib[others], kind="stable")]
    return np.concatenate([closers, others])


def shed(st: State, src: int, r: int) -> bool:
    """Move one replica off ``src``, which is above its band (or above θ) on resource ``r``."""
    m = st.members_arr(src)
    if m.size == 0:
        return False
    is_leader = st.ldr[m] == src
    contrib = np.where(is_leader, st.L[m, r], st.F[m, r])
    keep = contrib > 0
    m, contrib = m[keep], contrib[keep]
    if m.size == 0:
        return False
    u = st.load[src, r] / st.cap[src, r]
    ceiling = min(float(st.distribution_goal.hi[r]), st.theta) if u > st.theta else float(st.distribution_goal.hi[r])
    need = max((u - ceiling) * st.cap[src, r], 0.0)
    order = _candidate_order(contrib, need, st.disk_bytes[m])[:MAX_CANDIDATES]
    util_r = st.load[:, r] / st.cap[:, r]
    # destinations in ascending order of load on r; only the least loaded are worth evaluating
    dests = np.argsort(util_r, kind="stable")
    dests = dests[st.alive[dests]][:MAX_DESTINATIONS]
    load_d, cap_d = st.load[dests], st.cap[dests]
    v0 = st.violation_of(load_d / cap_d)
    v0_sum = v0.sum(axis=1)
    sat0 = v0 <= TOL
    for p in m[order].tolist():
        delta = st.role_load(p, src)
        v0s = st.violation_of(st.load[src] / st.cap[src])
        v1s = st.violation_of((st.load[src] - delta) / st.cap[src])
        if np.any((v0s <= TOL) & (v1s > TOL)):
            continue
        gain_src = float(v0s.sum() - v1s.sum())
        mask = st.dest_mask(p, src)[dests]
        if not mask.any():
            continue
        v1 = st.violation_of((load_d + delta) / cap_d)
        ok = mask & ~np.any(sat0 & (v1 > TOL), axis=1) & ((v0_sum - v1.sum(axis=1)) + gain_src > 1e-9)
        if not ok.any():
            continue
        dst = int(dests[np.nonzero(ok)[0][0]])  # the first acceptable in ascending order of load
        st.move_replica(p, src, dst)
        return True
    return False


def attract(st: State, dst: int, r: int) -> bool:
    """Move one replica onto ``dst``, which is below its band on ``r`` (e.g. a new, empty broker)."""
    util_r = st.load[:, r] / st.cap[:, r]
    ranked = np.argsort(-util_r, kind="stable")
    sources = [int(s) for s in ranked if st.alive[s] and s != dst and util_r[s] > st.target[r]]
    # replicas on dead brokers are handled by evacuation; dead brokers are never sources here
    u = util_r[dst]
    need = max((float(st.distribution_goal.lo[r]) - u) * st.cap[dst, r], 0.0)
    for src in sources[:MAX_SOURCES]:
        m = st.members_arr(src)
        if m.size == 0:
            continue
        m = m[~np.any(st.rep[m] == dst, axis=1)]
        is_leader = st.ldr[m] == src
        contrib = np.where(is_leader, st.L[m, r], st.F[m, r])
        keep = contrib > 0
        m, contrib = m[keep], contrib[keep]
        if m.size == 0:
            continue
        order = _candidate_order(contrib, need, st.disk_bytes[m])[:MAX_CANDIDATES]
        for p in m[order].tolist():
            if not st.spread_ok(p, src, dst):
                continue
            delta = st.role_load(p, src)
            if st.accept([(src, -delta), (dst, delta)]) is not None:
                st.move_replica(p, src, dst)
                return True
    return False
