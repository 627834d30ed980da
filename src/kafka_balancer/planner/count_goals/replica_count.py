"""Replica-count distribution: replicas per live broker within ``mean ± max(1, 5 %)``, by single moves,
two-for-one and many-for-one replica exchanges that keep every resource band."""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.count_goals.base import (
    EXCHANGE_STEPS,
    MANY_IN,
    MANY_OUT,
    X_CANDIDATES,
    _band_delta,
    _BrokerCountGoal,
    _dev_cost,
    _step_delta,
)
from kafka_balancer.planner.state import State

K_CANDIDATES = 24
D_DESTS = 48
X_DESTS = 4
MANY_GIVE_UP = 8  # consecutive failures after which the replica count goal stops trying its many-for-one exchange


class ReplicaCountGoal(_BrokerCountGoal):
    name = "replica_count"
    share = 0.05  # replicas cost bytes: a wider band than leaders (still a CV of at most about 0.03)

    def counts(self, st: State) -> np.ndarray:
        return st.rcount

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        lo, hi = self.band(st)
        d = _band_delta(st.rcount[dests], lo, hi, +1) + int(_band_delta(st.rcount[src : src + 1], lo, hi, -1)[0])
        return np.broadcast_to((d <= 0)[None, :], (parts.size, dests.size))

    def replica_ok_one(self, st: State, p: int, src: int, dst: int) -> bool:
        lo, hi = self.band(st)
        return _step_delta(int(st.rcount[dst]), lo, hi, +1) + _step_delta(int(st.rcount[src]), lo, hi, -1) <= 0

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        moves = 0
        stuck: set[int] = set()
        # the many-for-one exchange serves brokers of different sizes (where equal counts need the small ones
        # to hold light replicas); with equal brokers it finds little and scans a lot, so it is left out
        live_cap = st.cap[st.alive]
        unequal = bool(live_cap.size and np.any(live_cap.max(axis=0) > live_cap.min(axis=0) * (1 + 1e-9)))
        many_failed = 0  # consecutive failures of the many-for-one exchange: after MANY_GIVE_UP it is left out

        def _many(st: State, dst: int, resource_guard: bool) -> bool:
            nonlocal many_failed
            ok = _replica_exchange_many(st, dst, resource_guard)
            many_failed = 0 if ok else many_failed + 1
            return ok

        while budget.take():
            c = np.where(st.alive, st.rcount, -1)
            if stuck:
                c[list(stuck)] = -1
            src = int(np.argmax(c))
            if c[src] < 0:
                break
            cmin = int(st.rcount[st.receive].min()) if st.receive.any() else int(c[src])
            lo, hi = self.band(st)
            # replicas cost bytes: stop once every broker is inside the band
            if c[src] - cmin < 2 or (c[src] <= hi and cmin >= lo):
                break
            dests = np.nonzero(st.receive & (st.rcount <= c[src] - 2))[0]
            dests = dests[np.argsort(st.rcount[dests], kind="stable")[:D_DESTS]]
            if dests.size == 0 or not (
                _move_one_replica(st, src, dests, resource_guard)
                or (st.receive[src] and not st.budgeted and budget.charge(EXCHANGE_STEPS)
                    and _exchange(st, src, dests[:X_DESTS], resource_guard))
                or (unequal and many_failed < MANY_GIVE_UP and not st.budgeted and budget.charge(EXCHANGE_STEPS)
                    and _many(st, int(dests[0]), resource_guard))
            ):
                stuck.add(src)
                continue
            moves += 1
            stuck.clear()
        return moves


def _move_one_replica(st: State, src: int, dests: np.ndarray, resource_guard: bool) -> bool:
    """Move one replica off ``src`` to one of ``dests``, the pair disturbing resource balance least."""
    m, role = st.members_arr(src), st.member_roles(src)
    if st.alive[src]:
        movable = ~st.frozen[m]
        m, role = m[movable], role[movable]
    if m.size == 0:
        return False
    t = np.where(st.target > 0, st.target, 1.0)
    impact = (role / st.cap[src] / t).sum(axis=1) + (st.disk_bytes[m] / (st.byte_floor * 8.0))
    order = np.argsort(impact, kind="stable")[:K_CANDIDATES]
    parts, deltas = m[order], role[order]
    ok = st.dest_masks(parts, src, dests)
    if not ok.any():
        return False
    load_s, cap_s = st.load[src], st.cap[src]
    load_d, cap_d = st.load[dests], st.cap[dests]
    new_s = load_s[None, :] - deltas  # [K, R]
    new_d = load_d[None, :, :] + deltas[:, None, :]  # [K, D, R]
    if resource_guard:
        ok &= ~st.violation_grows(load_s / cap_s, new_s / cap_s)[:, None]
        ok &= ~st.violation_grows((load_d / cap_d)[None, :, :], new_d / cap_d[None, :, :])
    if not ok.any():
        return False
    cost = (_dev_cost(st, new_s, cap_s) - _dev_cost(st, load_s, cap_s))[:, None] + (
        _dev_cost(st, new_d, cap_d[None, :, :]) - _dev_cost(st, load_d, cap_d)[None, :]
    )
    cost = cost + st.disk_bytes[parts][:, None] / (st.byte_floor * 1e3)
    cost = np.where(ok, cost, np.inf)
    k, j = divmod(int(np.argmin(cost)), dests.size)
    p, dst = int(parts[k]), int(dests[j])
    if not st.spread_ok(p, src, dst):  # the scalar check (guards, budget) agrees with the mask; a safety net
        return False
    st.move_replica(p, src, dst)
    return True


def _exchange(st: State, src: int, dests: np.ndarray, resource_guard: bool) -> bool:
    """Two replicas of ``src`` for one of a destination's: ``src`` ends with one replica fewer, the
    destination with one more, and their loads change by the difference only, so counts even out where a
    single move would push a resource out of its band (a new broker full of large replicas takes two
    small ones for one of them)."""
    a_all = st.members_arr(src)
    movable = ~st.frozen[a_all]
    a_all, la_all = a_all[movable], st.member_roles(src)[movable]
    if a_all.size < 2:
        return False
    t = np.where(st.target > 0, st.target, 1.0)
    small = np.argsort((la_all / st.cap[src] / t).sum(axis=1), kind="stable")[:X_CANDIDATES]
    a_all, la_all = a_all[small], la_all[small]
    iu, ju = np.triu_indices(a_all.size, k=1)  # unordered pairs of src's smallest replicas
    for dst in dests.tolist():
        ok_a = st.dest_masks(a_all, src, np.array([dst]))[:, 0] & ~(st.ldr[a_all] == src)
        q_all = st.members_arr(dst)
        q_all = q_all[~st.frozen[q_all] & ~np.any(st.rep[q_all] == src, axis=1) & (st.ldr[q_all] != dst)]
        if q_all.size == 0 or ok_a.sum() < 2:
            continue
        lq_all = st.F[q_all]
        q_sel = np.argsort(-(lq_all / st.cap[dst] / t).sum(axis=1), kind="stable")[:X_CANDIDATES]
        q, lq = q_all[q_sel], lq_all[q_sel]
        pair_ok = ok_a[iu] & ok_a[ju]
        i1, i2 = iu[pair_ok], ju[pair_ok]
        if i1.size == 0:
            continue
        net = la_all[i1][None, :, :] + la_all[i2][None, :, :] - lq[:, None, :]  # [Q, P, R]: src -> dst
        new_s = st.load[src] - net
        new_d = st.load[dst] + net
        ok = np.ones(net.shape[:2], dtype=bool)
        if resource_guard:
            ok &= ~st.violation_grows(st.load[src] / st.cap[src], new_s / st.cap[src])
            ok &= ~st.violation_grows(st.load[dst] / st.cap[dst], new_d / st.cap[dst])
        if not ok.any():
            continue
        cost = (_dev_cost(st, new_s, st.cap[src]) - _dev_cost(st, st.load[src], st.cap[src])) + (
            _dev_cost(st, new_d, st.cap[dst]) - _dev_cost(st, st.load[dst], st.cap[dst])
        )
        cost = np.where(ok, cost, np.inf)
        for k in np.argsort(cost, axis=None, kind="stable")[:8].tolist():
            qi, pi = divmod(k, cost.shape[1])
            if not np.isfinite(cost[qi, pi]):
                break
            p1, p2, pq = int(a_all[i1[pi]]), int(a_all[i2[pi]]), int(q[qi])
            if st.move_replicas([(p1, src, dst), (p2, src, dst), (pq, dst, src)]):
                return True
    return False


def _replica_step_ok(
    st: State, p: int, src: int, dst: int, resource_guard: bool, check_src: bool = True, check_dst: bool = True
) -> bool:
    """May a follower replica of ``p`` move from ``src`` to ``dst`` (hard constraints, guards, and the
    resource bands of the brokers checked)?"""
    if not st.spread_ok(p, src, dst):
        return False
    if not resource_guard:
        return True
    d = st.F[p]
    return not (
        (check_src and st.grows_at(src, -d))
        or (check_dst and st.grows_at(dst, d))
    )


def _replica_exchange_many(st: State, dst: int, resource_guard: bool) -> bool:
    """``dst`` (fewest replicas, full on some resource) hands one heavy follower replica to the broker with
    fewest replicas that has room for it, then takes as many light follower replicas as its bands allow
    (lightest first, "light" meaning light on every resource; at most one from each broker, each from a
    broker with two replicas more than ``dst``). The heavy replica is the heaviest on the resource where
    ``dst`` is fullest; ``dst``'s band is checked on the whole exchange, not on each step. Kept only if
    ``dst`` gains at least one replica net and the sum of squared replica counts falls; otherwise undone.
    Where capacities differ, equal counts need the small brokers to hold light replicas: one heavy replica
    of a small broker weighs as much as several light ones.

    Example: ``dst`` holds 78 replicas and is at the top of its disk band; brokers with 130 hold light
    replicas it does not. It hands a 40 GB follower to a broker with room and takes up to five 5 GB followers:
    78 -> 82 replicas, disk about the same."""
    m = st.members_arr(dst)
    m = m[~st.frozen[m] & (st.ldr[m] != dst)]
    if m.size == 0:
        return False
    t = np.where(st.target > 0, st.target, 1.0)
    rel = st.F / st.cap[dst] / t  # [P, R] each replica's share of dst's ideal load, per resource
    u0 = st.load[dst] / st.cap[dst]
    tight = int(np.argmax(u0 / t))  # the resource where dst is fullest
    weight = rel.max(axis=1)  # light = light on every resource
    out = m[np.argsort(-rel[m, tight], kind="stable")[:MANY_OUT]]
    full = np.nonzero(st.alive & (st.rcount >= st.rcount[dst] + 2))[0]
    full = full[np.argsort(-st.rcount[full], kind="stable")[:D_DESTS]]
    if full.size < 2:
        return False
    # light followers on the fullest brokers that dst does not hold: the incoming candidates
    cand: list[tuple[float, int, int]] = []
    for b in full.tolist():
        qs = st.members_arr(b)
        qs = qs[~st.frozen[qs] & (st.ldr[qs] != b) & ~np.any(st.rep[qs] == dst, axis=1)]
        if qs.size:
            k = int(np.argmin(weight[qs]))
            cand.append((float(weight[qs[k]]), int(qs[k]), b))
    cand.sort()
    order = np.argsort(st.rcount, kind="stable")
    for p_out in out.tolist():
        # dst's own band is checked once, on the whole exchange: the heavy replica alone may take it below
        h = next((int(b) for b in order.tolist() if b != dst and st.alive[b]
                  and _replica_step_ok(st, p_out, dst, int(b), resource_guard, check_src=False)), -1)
        if h < 0:
            continue
        touched = {dst, h}
        sq = -int((st.rcount[list(touched)].astype(np.int64) ** 2).sum())
        done: list[tuple[int, int, int]] = [(p_out, dst, h)]
        st.move_replica(p_out, dst, h)
        for w, q, b in cand:
            if len(done) > MANY_IN:
                break
            if w > rel[p_out].max() or b in touched or q == p_out:
                continue
            over = resource_guard and bool(  # dst may climb back into its band, never past where it was
                st.violation_grows(np.maximum(u0, st.load[dst] / st.cap[dst]), (st.load[dst] + st.F[q]) / st.cap[dst])
            )
            if not over and _replica_step_ok(st, q, b, dst, resource_guard, check_dst=False):
                sq -= int(st.rcount[b]) ** 2
                touched.add(b)
                done.append((q, b, dst))
                st.move_replica(q, b, dst)
        sq += int((st.rcount[list(touched)].astype(np.int64) ** 2).sum())
        fits = not resource_guard or not bool(st.violation_grows(u0, st.load[dst] / st.cap[dst]))
        if len(done) >= 3 and sq < 0 and fits:
            return True
        for p, a, b in reversed(done):  # undo: dst would not gain a replica
            st.move_replica(p, b, a)
    return False
