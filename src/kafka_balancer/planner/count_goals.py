"""Count goals (Cruise Control's, as soft goals below seed 001's), one class per invariant.

Each goal measures a violation (0 = met), can act as a *guard* (a move made for a lower goal may not make
its violation grow) and has a strategy that lowers its violation with moves that keep every higher goal:

* :class:`ReplicaCountGoal` — replicas per live broker within ``mean ± max(1, 5 %)``; the strategy keeps
  going past the band while a move from the fullest broker to one at least two replicas emptier is
  acceptable, so counts end as even as the higher goals allow;
* :class:`LeaderCountGoal` — leaders per broker that may lead within ``mean ± max(1, 2 %)``, by
  leadership moves (no data moves), from the broker with most leaders or onto the one with fewest;
* :class:`RackRepairGoal` — a partition with two replicas in one rack while a rack it misses has a broker
  that may receive it;
* :class:`PotentialNwOutGoal` — the network-out a broker would serve if every replica it holds led stays
  ≤ θ (failover headroom); swaps keep counts unchanged;
* :class:`TopicSpreadGoal` — each topic's replicas per broker within ±1 of the topic's mean; swaps of
  replicas of similar size keep loads and counts unchanged.

The moves are chosen to disturb resource balance least: among acceptable (replica, destination) pairs, the
one that raises the squared relative deviation from the ideal utilisation least, and small replicas are
preferred (few bytes). Example: brokers with 20, 16 and 12 replicas (mean 16, band 15..17) get two of the
first broker's smallest replicas moved to the third, if no resource band breaks: counts 18, 16, 14 ... 16, 16, 16.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from kafka_balancer.model.snapshot import NW_OUT
from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.state import TOL, State

K_CANDIDATES = 24
SWAP_CANDIDATES = 512  # per side of a count-goal swap (see _swap_for)
EXCHANGE_STEPS = 4  # an exchange tries up to X_DESTS brokers with pair matrices: charged as 4 more steps
D_DESTS = 48
ROUND = 32  # brokers worked on per ranking in the swap goals
X_CANDIDATES = 24  # replicas per side considered for a two-for-one exchange
X_DESTS = 4
MANY_OUT = 8  # many-for-one exchanges: the broker's heaviest replicas or leaderships tried as the one handed away
MANY_IN = 6  # ... and at most this many light ones taken for it
MANY_GIVE_UP = 8  # consecutive failures after which the replica count goal stops trying its many-for-one exchange


def _dev_cost(st: State, load: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Squared relative deviation from the ideal utilisation, summed over resources (last axis)."""
    t = st.target
    safe = np.where(t > 0, t, 1.0)
    return (np.where(t > 0, (load / cap - t) / safe, 0.0) ** 2).sum(axis=-1)


def _band_delta(count: np.ndarray, lo: float, hi: float, step: int) -> np.ndarray:
    """Change of ``max(0, c - hi) + max(0, lo - c)`` when ``c`` changes by ``step`` (±1)."""
    if step > 0:
        return np.where(count < lo, -1, np.where(count >= hi, 1, 0))
    return np.where(count > hi, -1, np.where(count <= lo, 1, 0))


class CountGoal:
    name: ClassVar[str] = ""

    def violation(self, st: State) -> float:
        raise NotImplementedError

    def detail(self, st: State) -> str:
        return ""

    def proof(self, st: State) -> str | None:
        """Why the goal cannot be met whatever the plan, or None."""
        return None

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        return np.ones((parts.size, dests.size), dtype=bool)

    def leader_ok(self, st: State, p: int, src: int, dst: int) -> bool:
        return True

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        return 0


def _cv(values: np.ndarray) -> float:
    m = float(values.mean()) if values.size else 0.0
    return float(values.std() / m) if m > 0 else 0.0


class _BrokerCountGoal(CountGoal):
    """Shared by the replica and leader count goals: a band around the mean count of the brokers that
    take part (live brokers; for leaders, those that may lead)."""

    share: ClassVar[float] = 0.02

    def counts(self, st: State) -> np.ndarray:
        raise NotImplementedError

    def members(self, st: State) -> np.ndarray:
        return st.alive

    def band(self, st: State) -> tuple[float, float]:
        c = self.counts(st)[self.members(st)]
        m = float(c.mean()) if c.size else 0.0
        tol = max(1.0, self.share * m)
        return math.floor(m - tol), math.ceil(m + tol)

    def violation(self, st: State) -> float:
        lo, hi = self.band(st)
        c = self.counts(st)[self.members(st)]
        return float(np.maximum(0, c - hi).sum() + np.maximum(0, lo - c).sum())

    def detail(self, st: State) -> str:
        c = self.counts(st)[self.members(st)]
        lo, hi = self.band(st)
        lo_c, hi_c = (int(c.min()), int(c.max())) if c.size else (0, 0)
        return f"CV {_cv(c):.3f}, min {lo_c}, max {hi_c}, band {lo}..{hi}"


class ReplicaCountGoal(_BrokerCountGoal):
    name = "replica_count"
    share = 0.05  # replicas cost bytes: a wider band than leaders (still a CV of at most about 0.03)

    def counts(self, st: State) -> np.ndarray:
        return st.rcount

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        lo, hi = self.band(st)
        d = _band_delta(st.rcount[dests], lo, hi, +1) + int(_band_delta(st.rcount[src : src + 1], lo, hi, -1)[0])
        return np.broadcast_to((d <= 0)[None, :], (parts.size, dests.size))

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
        (check_src and bool(st.violation_grows(st.load[src] / st.cap[src], (st.load[src] - d) / st.cap[src])))
        or (check_dst and bool(st.violation_grows(st.load[dst] / st.cap[dst], (st.load[dst] + d) / st.cap[dst])))
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


class LeaderCountGoal(_BrokerCountGoal):
    name = "leader_count"

    def counts(self, st: State) -> np.ndarray:
        return st.lcount

    def members(self, st: State) -> np.ndarray:
        return st.may_lead if st.may_lead.any() else st.alive

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        lead = st.ldr[parts] == src
        if not lead.any():
            return np.ones((parts.size, dests.size), dtype=bool)
        lo, hi = self.band(st)
        d = _band_delta(st.lcount[dests], lo, hi, +1) + int(_band_delta(st.lcount[src : src + 1], lo, hi, -1)[0])
        return ~lead[:, None] | (d <= 0)[None, :]

    def leader_ok(self, st: State, p: int, src: int, dst: int) -> bool:
        lo, hi = self.band(st)
        d = int(_band_delta(st.lcount[dst : dst + 1], lo, hi, +1)[0])
        if src >= 0:
            d += int(_band_delta(st.lcount[src : src + 1], lo, hi, -1)[0])
        return d <= 0

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        moves = 0
        stuck: set[int] = set()
        stuck_low: set[int] = set()
        while budget.take():
            c = np.where(self.members(st), st.lcount, -1)
            if stuck:
                c[list(stuck)] = -1
            src = int(np.argmax(c))
            if c[src] < 0:
                break
            cmin = int(st.lcount[st.may_lead].min()) if st.may_lead.any() else int(c[src])
            if c[src] - cmin < 2:
                break
            if not _move_one_leader(st, src, resource_guard):
                members = self.members(st)
                low = np.where(members, st.lcount, np.iinfo(np.int64).max)
                if stuck_low:
                    low[list(stuck_low)] = np.iinfo(np.int64).max
                dst = int(np.argmin(low))
                if members[dst] and dst not in stuck_low and (
                    _attract_one_leader(st, dst, resource_guard)
                    or _leader_exchange(st, dst, resource_guard)
                    or (budget.charge(EXCHANGE_STEPS) and _leader_exchange_many(st, dst, resource_guard))
                ):
                    moves += 1
                    continue
                stuck_low.add(dst)
                stuck.add(src)
                continue
            moves += 1
            stuck.clear()
        return moves


def _attract_one_leader(st: State, dst: int, resource_guard: bool) -> bool:
    """Leadership onto ``dst`` (fewest leaders) from a partition it follows whose leader has at least
    two leaders more."""
    m = st.members_arr(dst)
    m = m[~st.frozen[m]]
    lead = st.ldr[m]
    m = m[(lead >= 0) & (lead != dst)]
    m = m[st.lcount[st.ldr[m]] >= st.lcount[dst] + 2]
    if m.size == 0:
        return False
    return _best_leader_move(st, m, st.ldr[m].astype(np.int64), np.full(m.size, dst), resource_guard)


def _leader_exchange(st: State, dst: int, resource_guard: bool) -> bool:
    """``dst`` (fewest leaders, but full on CPU or network-out) takes two light leaderships and hands one
    heavy leadership to a follower with no more leaders than the mean: one leader more, about the same load."""
    m = st.members_arr(dst)
    m = m[~st.frozen[m]]
    lead = st.ldr[m]
    inc = m[(lead >= 0) & (lead != dst)]
    inc = inc[st.lcount[st.ldr[inc]] >= st.lcount[dst] + 2]
    out = m[lead == dst]
    if inc.size < 2 or out.size == 0:
        return False
    t = np.where(st.target > 0, st.target, 1.0)
    weight = (st.LF / st.cap[dst] / t).sum(axis=1)
    inc = inc[np.argsort(weight[inc], kind="stable")[:X_CANDIDATES]]
    out = out[np.argsort(-weight[out], kind="stable")[:X_CANDIDATES]]
    iu, ju = np.triu_indices(inc.size, k=1)
    pair_load = st.LF[inc[iu]] + st.LF[inc[ju]]  # [PAIRS, R]
    net = pair_load[None, :, :] - st.LF[out][:, None, :]  # dst's change, [OUT, PAIRS, R]
    new_d = st.load[dst] + net
    ok = np.ones(net.shape[:2], dtype=bool)
    if resource_guard:
        ok &= ~st.violation_grows(st.load[dst] / st.cap[dst], new_d / st.cap[dst])
    if not ok.any():
        return False
    cost = np.where(ok, _dev_cost(st, new_d, st.cap[dst]) - _dev_cost(st, st.load[dst], st.cap[dst]), np.inf)
    mean = float(st.lcount[st.may_lead].mean()) if st.may_lead.any() else 0.0
    for k in np.argsort(cost, axis=None, kind="stable")[:16].tolist():
        oi, pi = divmod(k, cost.shape[1])
        if not np.isfinite(cost[oi, pi]):
            break
        p_out, q1, q2 = int(out[oi]), int(inc[iu[pi]]), int(inc[ju[pi]])
        if st.ldr[q1] == st.ldr[q2]:
            continue  # one source losing both: its check below would see only half
        followers = [int(b) for b in st.rep[p_out] if b >= 0 and b != dst and st.may_lead[b] and st.lcount[b] <= mean]
        steps: list[tuple[int, int]] = []
        for f in sorted(followers, key=lambda b: float((st.load[b] / st.cap[b]).max())):
            if _leader_step_ok(st, p_out, f, resource_guard):
                steps.append((p_out, f))
                break
        if not steps:
            continue
        done: list[tuple[int, int]] = []
        fine = True
        for p, f in [*steps, (q1, dst), (q2, dst)]:
            if (p, f) != steps[0] and not _leader_step_ok(st, p, f, resource_guard):
                fine = False
                break
            done.append((p, int(st.ldr[p])))
            st.move_leadership(p, f)
        if fine:
            return True
        for p, back in reversed(done):  # undo a chain that did not fit
            st.move_leadership(p, back)
        st.leader_moves -= 2 * len(done)
    return False


def _leader_exchange_many(st: State, dst: int, resource_guard: bool) -> bool:
    """``dst`` (fewest leaders, full on CPU or network-out) hands one heavy leadership to a follower (the one
    with fewest leaders that has room), then takes as many light leaderships as its band allows (lightest first, at
    most one from each broker, each from a broker with two leaders more than ``dst``). Kept only if ``dst``
    gains at least one leader net and the sum of squared leader counts falls; otherwise undone. Under skewed
    loads one heavy leadership weighs as much as several light ones, where the two-for-one exchange finds no
    fit.

    Example: ``dst`` leads one partition of weight 5 and is at the top of its CPU band; it follows light
    partitions of weight 1 led by fuller brokers. It gives the heavy one away and takes up to five light ones:
    leaders 1 -> 5 (minus what the band refuses), CPU about the same."""
    m = st.members_arr(dst)
    m = m[~st.frozen[m]]
    lead = st.ldr[m]
    inc = m[(lead >= 0) & (lead != dst)]
    inc = inc[st.lcount[st.ldr[inc]] >= st.lcount[dst] + 2]
    out = m[lead == dst]
    if inc.size < 2 or out.size == 0:
        return False
    t = np.where(st.target > 0, st.target, 1.0)
    weight = (st.LF / st.cap[dst] / t).sum(axis=1)
    inc = inc[np.argsort(weight[inc], kind="stable")[: 2 * X_CANDIDATES]]  # the lightest: each try is a check
    out = out[np.argsort(-weight[out], kind="stable")[:MANY_OUT]]
    for p_out in out.tolist():
        followers = [int(b) for b in st.rep[p_out] if b >= 0 and b != dst and st.may_lead[b]]
        f_ok = [f for f in sorted(followers, key=lambda b: int(st.lcount[b]))
                if _leader_step_ok(st, p_out, f, resource_guard)]
        if not f_ok:
            continue
        done: list[tuple[int, int]] = [(p_out, dst)]
        touched = {dst, f_ok[0]}
        sq0 = 0  # change of the sum of squared leader counts over the brokers touched
        sq0 -= int((st.lcount[list(touched)].astype(np.int64) ** 2).sum())
        st.move_leadership(p_out, f_ok[0])
        sources: set[int] = {f_ok[0]}
        for q in inc.tolist():
            if len(done) > MANY_IN:
                break
            s = int(st.ldr[q])
            if s in sources or st.lcount[s] < st.lcount[dst] + 2 or weight[q] > weight[p_out]:
                continue
            if _leader_step_ok(st, q, dst, resource_guard):
                sq0 -= int(st.lcount[s]) ** 2
                touched.add(s)
                done.append((q, s))
                sources.add(s)
                st.move_leadership(q, dst)
        sq0 += int((st.lcount[list(touched)].astype(np.int64) ** 2).sum())
        if len(done) >= 3 and sq0 < 0:  # one given, at least two taken, counts more even
            return True
        for p, back in reversed(done):  # undo: dst would not gain a leader
            st.move_leadership(p, back)
        st.leader_moves -= 2 * len(done)
    return False


def _leader_step_ok(st: State, p: int, f: int, resource_guard: bool) -> bool:
    if not st.leader_ok(p, f):
        return False
    if not resource_guard:
        return True
    s, d = int(st.ldr[p]), st.LF[p]
    return not (
        bool(st.violation_grows(st.load[s] / st.cap[s], (st.load[s] - d) / st.cap[s]))
        or bool(st.violation_grows(st.load[f] / st.cap[f], (st.load[f] + d) / st.cap[f]))
    )


def _move_one_leader(st: State, src: int, resource_guard: bool) -> bool:
    leaders = st.leaders_of(src)
    leaders = leaders[~st.frozen[leaders]]
    if leaders.size == 0:
        return False
    rows = st.rep[leaders]
    pp = np.repeat(leaders, rows.shape[1])
    ff = rows.reshape(-1)
    keep = (ff >= 0) & (ff != src)
    pp, ff = pp[keep], ff[keep]
    keep = st.may_lead[ff] & (st.lcount[ff] <= st.lcount[src] - 2)
    pp, ff = pp[keep], ff[keep]
    if pp.size == 0:
        return False
    return _best_leader_move(st, pp, np.full(pp.size, src), ff, resource_guard)


def _best_leader_move(st: State, pp: np.ndarray, ss: np.ndarray, ff: np.ndarray, resource_guard: bool) -> bool:
    """Among leadership moves (partition pp from ss to ff), make the one disturbing resources least."""
    delta = st.LF[pp]
    load_s, cap_s = st.load[ss], st.cap[ss]
    load_f, cap_f = st.load[ff], st.cap[ff]
    ok = np.ones(pp.size, dtype=bool)
    if resource_guard:
        ok &= ~st.violation_grows(load_s / cap_s, (load_s - delta) / cap_s)
        ok &= ~st.violation_grows(load_f / cap_f, (load_f + delta) / cap_f)
    if not ok.any():
        return False
    cost = _dev_cost(st, load_s - delta, cap_s) - _dev_cost(st, load_s, cap_s)
    cost = cost + _dev_cost(st, load_f + delta, cap_f) - _dev_cost(st, load_f, cap_f)
    cost = cost - 1e-3 * (st.lcount[ss] - st.lcount[ff])  # prefer the widest count gap on ties
    for k in np.argsort(np.where(ok, cost, np.inf), kind="stable")[:16].tolist():
        if not ok[k]:
            break
        p, f = int(pp[k]), int(ff[k])
        if st.leader_ok(p, f):
            st.move_leadership(p, f)
            return True
    return False


class RackRepairGoal(CountGoal):
    name = "rack_repair"

    def _repairable(self, st: State) -> list[tuple[int, list[int]]]:
        """(partition, racks it misses that have a receiving broker) for partitions with two replicas in
        one rack."""
        racks = st.snap.rack_idx
        if not (racks >= 0).any():
            return []
        rep = st.rep
        g = np.where(rep >= 0, racks[np.maximum(rep, 0)], -1)
        srt = np.sort(g, axis=1)
        dup = ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)).any(axis=1)
        recv_racks = set(np.unique(racks[st.receive & (racks >= 0)]).tolist())
        out: list[tuple[int, list[int]]] = []
        for p in np.nonzero(dup)[0].tolist():
            have = {int(x) for x in g[p] if x >= 0}
            missing = sorted(recv_racks - have)
            if missing:
                out.append((p, missing))
        return out

    def violation(self, st: State) -> float:
        return float(len(self._repairable(st)))

    def detail(self, st: State) -> str:
        return f"{len(self._repairable(st))} partition(s) with two replicas in one rack that can be spread"

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        racks = st.snap.rack_idx
        moves = 0
        for p, missing in self._repairable(st):
            if not budget.take():
                break
            if st.frozen[p]:
                continue
            row = [int(b) for b in st.rep[p] if b >= 0]
            seen: dict[int, list[int]] = {}
            for b in row:
                seen.setdefault(int(racks[b]), []).append(b)
            srcs = [b for bs in seen.values() if len(bs) > 1 for b in bs]
            srcs.sort(key=lambda b: (st.ldr[p] == b, -float((st.load[b] / st.cap[b]).max())))
            dests = np.nonzero(st.receive & np.isin(racks, missing))[0]
            for src in srcs:
                if _move_one_of(st, p, src, dests, resource_guard):
                    moves += 1
                    break
        return moves


def _move_one_of(st: State, p: int, src: int, dests: np.ndarray, resource_guard: bool) -> bool:
    if dests.size == 0:
        return False
    delta = st.role_load(p, src)
    load_d, cap_d = st.load[dests], st.cap[dests]
    ok = st.dest_masks(np.array([p]), src, dests)[0]
    if resource_guard:
        # the source's violation may not grow either: then no destination will do
        if bool(st.violation_grows(st.load[src] / st.cap[src], (st.load[src] - delta) / st.cap[src])):
            return False
        ok &= ~st.violation_grows(load_d / cap_d, (load_d + delta) / cap_d)
    if not ok.any():
        return False
    cost = np.where(ok, _dev_cost(st, load_d + delta, cap_d) - _dev_cost(st, load_d, cap_d), np.inf)
    dst = int(dests[int(np.argmin(cost))])
    st.move_replica(p, src, dst)
    return True


class PotentialNwOutGoal(CountGoal):
    """Failover headroom: what a broker would serve on network-out if all its replicas led, ≤ θ."""

    name = "potential_nw_out"

    def __init__(self, theta: float) -> None:
        self.theta = theta

    def util(self, st: State) -> np.ndarray:
        return st.potential / st.cap[:, NW_OUT]

    def violation(self, st: State) -> float:
        return float(np.maximum(0.0, self.util(st)[st.alive] - self.theta).sum())

    def detail(self, st: State) -> str:
        u = self.util(st)[st.alive]
        n_over = int((u > self.theta + TOL).sum())
        return f"max {float(u.max()) if u.size else 0.0:.3f}, {n_over} broker(s) above θ"

    def proof(self, st: State) -> str | None:
        live = st.alive
        mean = float(st.potential[live].sum() / st.cap[live, NW_OUT].sum()) if live.any() else 0.0
        if mean > self.theta:
            return (
                f"potential network-out averages {mean:.3f} of capacity over the live brokers, above θ={self.theta}: "
                "no placement keeps every broker under θ"
            )
        return None

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        cap = st.cap[dests, NW_OUT]
        u0 = st.potential[dests] / cap
        u1 = (st.potential[dests][None, :] + st.L[parts, NW_OUT][:, None]) / cap[None, :]
        grow = np.maximum(0.0, u1 - self.theta) - np.maximum(0.0, u0 - self.theta)[None, :]
        s0 = st.potential[src] / st.cap[src, NW_OUT]
        s1 = (st.potential[src] - st.L[parts, NW_OUT]) / st.cap[src, NW_OUT]
        shrink = np.maximum(0.0, s0 - self.theta) - np.maximum(0.0, s1 - self.theta)
        return grow <= shrink[:, None] + 1e-12

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        return _swap_loop(st, budget, resource_guard, self._pick, self._gain)

    def _pick(self, st: State, stuck: set[int]) -> list[int]:
        u = np.where(st.alive, self.util(st), -np.inf)
        if stuck:
            u[list(stuck)] = -np.inf
        order = np.argsort(-u, kind="stable")[:ROUND]
        return [int(b) for b in order if u[b] > self.theta + TOL]

    def _gain(self, st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        cap_h, cap_l = st.cap[hi, NW_OUT], st.cap[lo, NW_OUT]
        net = st.L[a, NW_OUT][:, None] - np.concatenate([st.L[b, NW_OUT], [0.0]])[None, :]
        before = max(0.0, st.potential[hi] / cap_h - self.theta) + max(0.0, st.potential[lo] / cap_l - self.theta)
        after = np.maximum(0.0, (st.potential[hi] - net) / cap_h - self.theta) + np.maximum(
            0.0, (st.potential[lo] + net) / cap_l - self.theta
        )
        return np.asarray(before - after)


class TopicSpreadGoal(CountGoal):
    """Each topic's replicas spread evenly: per broker within ±1 of the topic's mean (replicas ÷ live brokers)."""

    name = "topic_spread"

    def __init__(self) -> None:
        self._cache: tuple[int, np.ndarray, np.ndarray] | None = None

    def _bands(self, st: State) -> tuple[np.ndarray, np.ndarray]:
        """Per topic (lo, hi); a topic's replica total never changes, so they are computed once per state."""
        if self._cache is None or self._cache[0] != id(st):
            n = max(1, int(st.alive.sum()))
            tc = st.topic_count if st.alive.all() else st.topic_count[:, st.alive]
            avg = tc.sum(axis=1) / n
            self._cache = (id(st), np.maximum(0, np.ceil(avg - 1.0)), np.floor(avg + 1.0))
        return self._cache[1], self._cache[2]

    def _excess(self, st: State) -> np.ndarray:
        lo, hi = self._bands(st)
        c = st.topic_count if st.alive.all() else st.topic_count[:, st.alive]
        return np.asarray(np.maximum(0, c - hi[:, None]) + np.maximum(0, lo[:, None] - c))

    def violation(self, st: State) -> float:
        return float(self._excess(st).sum())

    def detail(self, st: State) -> str:
        ex = self._excess(st)
        uneven = int((ex.sum(axis=1) > 0).sum())
        return f"{uneven} topic(s) unevenly spread, {int(ex.sum())} replica(s) outside their band"

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        lo, hi = self._bands(st)
        t = st.snap.topic_idx[parts]
        cd = st.topic_count[t[:, None], dests[None, :]]
        cs = st.topic_count[t, src]
        up = np.where(cd < lo[t][:, None], -1, np.where(cd >= hi[t][:, None], 1, 0))
        down = np.where(cs > hi[t], -1, np.where(cs <= lo[t], 1, 0))
        return np.asarray(up + down[:, None] <= 0)

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        return _swap_loop(st, budget, resource_guard, self._pick, self._gain)

    def _pick(self, st: State, stuck: set[int]) -> list[int]:
        ex = self._excess(st).sum(axis=0)
        full = np.zeros(st.snap.n_brokers)
        full[np.nonzero(st.alive)[0]] = ex
        if stuck:
            full[list(stuck)] = 0
        order = np.argsort(-full, kind="stable")[:ROUND]
        return [int(b) for b in order if full[b] > 0]

    def _gain(self, st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        lo_b, hi_b = self._bands(st)

        def viol(c: np.ndarray, t: np.ndarray) -> np.ndarray:
            return np.asarray(np.maximum(0, c - hi_b[t]) + np.maximum(0, lo_b[t] - c))

        ta = st.snap.topic_idx[a]
        tb = np.concatenate([st.snap.topic_idx[b], [-1]])
        gain = np.zeros((a.size, tb.size))
        # a leaves hi for lo
        ga = (
            viol(st.topic_count[ta, hi], ta)
            - viol(st.topic_count[ta, hi] - 1, ta)
            + viol(st.topic_count[ta, lo], ta)
            - viol(st.topic_count[ta, lo] + 1, ta)
        )
        gain += ga[:, None]
        tbv = tb[:-1]
        gb = (
            viol(st.topic_count[tbv, lo], tbv)
            - viol(st.topic_count[tbv, lo] - 1, tbv)
            + viol(st.topic_count[tbv, hi], tbv)
            - viol(st.topic_count[tbv, hi] + 1, tbv)
        )
        gain[:, :-1] += gb[None, :]
        same = ta[:, None] == tb[None, :]
        return np.where(same, 0.0, gain)


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
        g = gain_of(st, hi, lo, a, b)  # [A, B+1]
        single_ok = all(bool(gd.replica_ok(st, a, hi, np.array([lo]))[:, 0].all()) for gd in guards
                        if isinstance(gd, ReplicaCountGoal))
        if not single_ok:
            g[:, -1] = -np.inf
        if not (g > 1e-12).any():
            continue
        la = np.where((st.ldr[a] == hi)[:, None], st.L[a], st.F[a])
        lb = np.vstack([np.where((st.ldr[b] == lo)[:, None], st.L[b], st.F[b]), np.zeros((1, 4))])
        net = la[:, None, :] - lb[None, :, :]
        new_h = st.load[hi] - net
        new_l = st.load[lo] + net
        ok = g > 1e-12
        if resource_guard:
            ok &= ~st.violation_grows(st.load[hi] / st.cap[hi], new_h / st.cap[hi])
            ok &= ~st.violation_grows(st.load[lo] / st.cap[lo], new_l / st.cap[lo])
        if not ok.any():
            continue
        cost = (_dev_cost(st, new_h, st.cap[hi]) - _dev_cost(st, st.load[hi], st.cap[hi])) + (
            _dev_cost(st, new_l, st.cap[lo]) - _dev_cost(st, st.load[lo], st.cap[lo])
        )
        score = np.where(ok, g - 10.0 * np.maximum(cost, 0.0), -np.inf)
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


def make_goal(name: str, theta: float) -> CountGoal:
    classes: dict[str, CountGoal] = {
        "replica_count": ReplicaCountGoal(),
        "leader_count": LeaderCountGoal(),
        "rack_repair": RackRepairGoal(),
        "potential_nw_out": PotentialNwOutGoal(theta),
        "topic_spread": TopicSpreadGoal(),
    }
    return classes[name]
