"""The swap loop shared by the goals that must not change counts (potential network-out, topic spread): two
replicas of different partitions trade brokers, within a byte allowance."""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.count_goals.base import _dev_cost
from kafka_balancer.planner.count_goals.replica_count import ReplicaCountGoal
from kafka_balancer.planner.state import State

SWAP_CANDIDATES = 512  # per side of a count-goal swap (see _swap_for)


def _swap_loop(st: State, budget: Budget, resource_guard: bool, pick, gain_of) -> int:  # type: ignore[no-untyped-def]
    """Swaps (or single moves) between the goal's worst broker and partners, keeping replica counts when
    a swap is used, the move with the best goal gain per resource disturbance first."""
    moves = 0
    stuck: set[int] = set()
    limit = st.copied + st.swap_allowance  # swaps copy two replicas for a soft goal: bytes are capped
    while budget.left() and st.copied < limit:
        # one round: the goal's worst brokers, ranked once (ranking is a pass over every topic and broker)
        ranked = pick(st, stuck)
        if not ranked:
            break
        progress = False
        for hi in ranked:
            if not budget.take() or st.copied >= limit:
                break
            if _swap_for(st, hi, resource_guard, gain_of):
                moves += 1
                progress = True
            else:
                stuck.add(hi)
        if not progress:
            break
    return moves


def _swap_for(st: State, hi: int, resource_guard: bool, gain_of) -> bool:  # type: ignore[no-untyped-def]
    a_all = st.members_arr(hi)
    a_all = a_all[~st.frozen[a_all]]
    if a_all.size == 0:
        return False
    partners = np.nonzero(st.receive & (np.arange(st.snap.n_brokers) != hi))[0]
    if partners.size == 0:
        return False
    u = (st.load[partners] / st.cap[partners]).max(axis=1)
    partners = partners[np.argsort(u, kind="stable")[:8]]
    for lo in partners.tolist():
        b = st.members_arr(lo)
        b = b[~st.frozen[b]]
        g_all = None
        if a_all.size <= SWAP_CANDIDATES and b.size <= SWAP_CANDIDATES:
            # gain and guard are element-wise per pair, and the masks below only drop pairs: where no pair
            # can pass without them, none will with them, and they are most of this function's time
            g_all = gain_of(st, hi, lo, a_all, b)
            maybe = g_all > 1e-12
            if resource_guard and maybe.any():
                maybe &= ~_guard_refuses(st, hi, lo, a_all, b)
            if not maybe.any():
                continue
        # hard constraints and the guards, vectorised; a swap keeps replica counts, so the replica-count
        # guard applies only to a single move (b = nothing)
        guards = st.guards
        st.guards = [gd for gd in guards if not isinstance(gd, ReplicaCountGoal)]
        try:
            ok_a = st.dest_masks(a_all, hi, np.array([lo]))[:, 0]
            ok_b = st.dest_masks(b, lo, np.array([hi]))[:, 0] if b.size else np.zeros(0, dtype=bool)
        finally:
            st.guards = guards
        a, b = a_all[ok_a], b[ok_b]
        if a.size == 0:
            continue
        # on brokers with thousands of replicas the [A, B] pair matrices would take gigabytes: keep the
        # SWAP_CANDIDATES replicas of each side whose single move gains most (never binds below that size)
        if a.size > SWAP_CANDIDATES:
            a = a[np.argsort(-gain_of(st, hi, lo, a, b[:0])[:, -1], kind="stable")[:SWAP_CANDIDATES]]
        if b.size > SWAP_CANDIDATES:
            b = b[np.argsort(-gain_of(st, lo, hi, b, b[:0])[:, -1], kind="stable")[:SWAP_CANDIDATES]]
        g = gain_of(st, hi, lo, a, b) if g_all is None else g_all[ok_a][:, np.append(ok_b, True)]  # [A, B+1]
        single_ok = all(bool(gd.replica_ok(st, a, hi, np.array([lo]))[:, 0].all()) for gd in guards
                        if isinstance(gd, ReplicaCountGoal))
        if not single_ok:
            g[:, -1] = -np.inf
        if not (g > 1e-12).any():
            continue
        ii, jj, new_h, new_l = _pairs(st, hi, lo, a, b, g, resource_guard)
        if ii.size == 0:
            continue
        cost = (_dev_cost(st, new_h, st.cap[hi]) - _dev_cost(st, st.load[hi], st.cap[hi])) + (
            _dev_cost(st, new_l, st.cap[lo]) - _dev_cost(st, st.load[lo], st.cap[lo])
        )
        score = np.full(g.shape, -np.inf)
        score[ii, jj] = g[ii, jj] - 10.0 * np.maximum(cost, 0.0)
        for k in np.argsort(-score, axis=None, kind="stable")[:8].tolist():
            i, j = divmod(k, score.shape[1])
            if not np.isfinite(score[i, j]):
                break
            pa = int(a[i])
            pb = int(b[j]) if j < b.size else -1
            if not st.pair_within_budget(pa, hi, lo, pb):
                continue
            if (pb >= 0 and np.any(st.rep[pb] == hi)) or np.any(st.rep[pa] == lo):
                continue
            st.move_replica(pa, hi, lo)
            if pb >= 0:
                st.move_replica(pb, lo, hi)
            return True
    return False


def _role_rows(st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The loads ``a``'s replicas put on ``hi`` [A, R], and ``b``'s on ``lo`` with a zero row last (a single
    move: nothing comes back) [B+1, R]: the two sides of every pair a count-goal swap weighs."""
    la = st.role_loads(a, hi)
    return la, np.vstack([st.role_loads(b, lo), np.zeros((1, la.shape[1]))])


def _pairs(
    st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray, g: np.ndarray, resource_guard: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (a[i], b[j], or a single move where j = len(b)) that gain and, under the resource guard,
    make no violation of ``hi`` or ``lo`` grow: ``(i, j, hi's loads after, lo's loads after)``. Only the
    pairs that gain are judged: the same element-wise arithmetic on fewer rows."""
    la, lb = _role_rows(st, hi, lo, a, b)
    ii, jj = np.nonzero(g > 1e-12)
    net = la[ii] - lb[jj]  # [M, R]
    new_h = st.load[hi] - net
    new_l = st.load[lo] + net
    if resource_guard:
        ok = ~st.violation_grows(st.load[hi] / st.cap[hi], new_h / st.cap[hi])
        ok &= ~st.violation_grows(st.load[lo] / st.cap[lo], new_l / st.cap[lo])
        ii, jj, new_h, new_l = ii[ok], jj[ok], new_h[ok], new_l[ok]
    return ii, jj, new_h, new_l


def _guard_refuses(st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[A, B+1]: pairs the resource guard certainly refuses, without judging them: those that add more
    than 1e-9 of utilisation to ``lo`` or ``hi`` on a resource where that broker is rising
    (:meth:`State.rising`: its violation then grows by more than the guard's tolerance of 2e-12). On a
    cluster above θ on disk as a whole, every broker is rising on disk, and only replicas of equal size
    could trade."""
    up_lo, up_hi = st.rising(lo), st.rising(hi)
    refused = np.zeros((a.size, b.size + 1), dtype=bool)
    rs = np.nonzero(up_lo | up_hi)[0]
    if rs.size == 0:
        return refused
    la, lb = _role_rows(st, hi, lo, a, b)
    for r in rs.tolist():
        net = la[:, r][:, None] - lb[:, r][None, :]  # what lo gains on r, and hi loses
        if up_lo[r]:
            refused |= net > 1e-9 * st.cap[lo, r]
        if up_hi[r]:
            refused |= net < -1e-9 * st.cap[hi, r]
    return refused
