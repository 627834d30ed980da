"""Replica-count distribution: replicas per live broker within ``mean ± max(1, 5 %)``."""

from __future__ import annotations

import time

import numpy as np

from kafka_balancer.planner.count_goals.base import (
    D_DESTS,
    K_CANDIDATES,
    X_CANDIDATES,
    X_DESTS,
    _band_delta,
    _BrokerCountGoal,
    _dev_cost,
)
from kafka_balancer.planner.state import State


class ReplicaCountGoal(_BrokerCountGoal):
    name = "replica_count"
    share = 0.05  # replicas cost bytes: a wider band than leaders (still a CV of at most about 0.03)

    def counts(self, st: State) -> np.ndarray:
        return st.rcount

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        lo, hi = self.band(st)
        d = _band_delta(st.rcount[dests], lo, hi, +1) + int(_band_delta(st.rcount[src : src + 1], lo, hi, -1)[0])
        return np.broadcast_to((d <= 0)[None, :], (parts.size, dests.size))

    def improve(self, st: State, deadline: float, resource_guard: bool) -> int:
        moves = 0
        stuck: set[int] = set()
        while time.process_time() < deadline:
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
                or (st.receive[src] and not st.budgeted and _exchange(st, src, dests[:X_DESTS], resource_guard))
            ):
                stuck.add(src)
                continue
            moves += 1
            stuck.clear()
        return moves


def _move_one_replica(st: State, src: int, dests: np.ndarray, resource_guard: bool) -> bool:
    """Move one replica off ``src`` to one of ``dests``, the pair disturbing resource balance least."""
    m = st.members_arr(src)
    if st.alive[src]:
        m = m[~st.frozen[m]]
    if m.size == 0:
        return False
    is_lead = st.ldr[m] == src
    role = np.where(is_lead[:, None], st.L[m], st.F[m])
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
    a_all = a_all[~st.frozen[a_all]]
    if a_all.size < 2:
        return False
    la_all = np.where((st.ldr[a_all] == src)[:, None], st.L[a_all], st.F[a_all])
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
            if not (st.spread_ok(p1, src, dst) and st.spread_ok(pq, dst, src)):
                continue
            st.move_replica(p1, src, dst)
            if not st.spread_ok(p2, src, dst):
                st.move_replica(p1, dst, src)  # undo: the pair does not fit after all
                continue
            st.move_replica(p2, src, dst)
            st.move_replica(pq, dst, src)
            return True
    return False
