"""Leader-count distribution: leaders per broker that may lead within ``mean ± max(1, 2 %)``, by leadership
moves only (no data moves)."""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.count_goals.base import (
    EXCHANGE_STEPS,
    MANY_IN,
    MANY_OUT,
    ROOM_TRIES,
    X_CANDIDATES,
    _band_delta,
    _BrokerCountGoal,
    _dev_cost,
    _step_delta,
)
from kafka_balancer.planner.state import State


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

    def replica_ok_one(self, st: State, p: int, src: int, dst: int) -> bool:
        if st.ldr[p] != src:
            return True
        return self.leader_ok(st, p, src, dst)

    def leader_ok(self, st: State, p: int, src: int, dst: int) -> bool:
        lo, hi = self.band(st)
        d = _step_delta(int(st.lcount[dst]), lo, hi, +1)
        if src >= 0:
            d += _step_delta(int(st.lcount[src]), lo, hi, -1)
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
                    or _pair_exchange(st, dst, resource_guard)
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


def _exchange_candidates(
    st: State, dst: int, n_in: int, n_out: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """For a leadership exchange onto ``dst``: the ``n_in`` lightest leaderships it follows whose leaders have two
    leaders more than it, and the ``n_out`` heaviest it leads (weight: load over ``dst``'s capacity, relative to
    the ideal utilisation; returned third, per partition). None when there are fewer than two to take or none to
    hand away."""
    m = st.members_arr(dst)
    m = m[~st.frozen[m]]
    lead = st.ldr[m]
    inc = m[(lead >= 0) & (lead != dst)]
    inc = inc[st.lcount[st.ldr[inc]] >= st.lcount[dst] + 2]
    out = m[lead == dst]
    if inc.size < 2 or out.size == 0:
        return None
    t = np.where(st.target > 0, st.target, 1.0)
    weight = np.zeros(st.LF.shape[0])  # read only at dst's partitions: computed there alone
    weight[m] = (st.LF[m] / st.cap[dst] / t).sum(axis=1)
    inc = inc[np.argsort(weight[inc], kind="stable")[:n_in]]
    return inc, out[np.argsort(-weight[out], kind="stable")[:n_out]], weight


def _two_for_one(st: State, inc: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair ``inc[iu], inc[ju]`` of leaderships taken against every one of ``out`` handed away: (iu, ju,
    the taker's load change [OUT, PAIRS, R])."""
    iu, ju = np.triu_indices(inc.size, k=1)
    net = (st.LF[inc[iu]] + st.LF[inc[ju]])[None, :, :] - st.LF[out][:, None, :]
    return iu, ju, net


def _undo(st: State, done: list[tuple[int, int]]) -> None:
    """Hand back the leaderships of an exchange that is not kept (``done``: partition, its leader before), last
    first; the moves and their reversal are not counted."""
    for p, back in reversed(done):
        st.move_leadership(p, back)
    st.leader_moves -= 2 * len(done)


def _leader_exchange(st: State, dst: int, resource_guard: bool) -> bool:
    """``dst`` (fewest leaders, but full on CPU or network-out) takes two light leaderships and hands one
    heavy leadership to a follower with no more leaders than the mean: one leader more, about the same load."""
    cand = _exchange_candidates(st, dst, X_CANDIDATES, X_CANDIDATES)
    if cand is None:
        return False
    inc, out, _ = cand
    iu, ju, net = _two_for_one(st, inc, out)
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
        _undo(st, done)  # a chain that did not fit
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
    cand = _exchange_candidates(st, dst, 2 * X_CANDIDATES, MANY_OUT)  # the lightest in: each try is a check
    if cand is None:
        return False
    inc, out, weight = cand
    for p_out in out.tolist():
        followers = [int(b) for b in st.rep[p_out] if b >= 0 and b != dst and st.may_lead[b]]
        followers.sort(key=lambda b: int(st.lcount[b]))
        f_ok = [f for f in followers if _leader_step_ok(st, p_out, f, resource_guard)]
        sq_before = _square_sum(st)
        done: list[tuple[int, int]] = []
        if f_ok:
            f = f_ok[0]
        else:  # no follower has room for it: one makes room by handing a leadership of its own on
            room = _make_room(st, p_out, followers, dst, resource_guard)
            if room is None:
                continue
            f, done = room
        done.append((p_out, dst))
        st.move_leadership(p_out, f)
        sources: set[int] = {f}
        taken = 0
        for q in inc.tolist():
            if taken >= MANY_IN:
                break
            s = int(st.ldr[q])
            if s in sources or st.lcount[s] < st.lcount[dst] + 2 or weight[q] > weight[p_out]:
                continue
            if _leader_step_ok(st, q, dst, resource_guard):
                done.append((q, s))
                sources.add(s)
                taken += 1
                st.move_leadership(q, dst)
        if taken >= 2 and _square_sum(st) < sq_before:  # one given, at least two taken, counts more even
            return True
        _undo(st, done)  # dst would not gain a leader
    return False


def _square_sum(st: State) -> int:
    """Sum of squared leader counts: it falls exactly when a set of leadership moves makes counts more even."""
    return int((st.lcount.astype(np.int64) ** 2).sum())


def _make_room(
    st: State, p_out: int, followers: list[int], dst: int, resource_guard: bool
) -> tuple[int, list[tuple[int, int]]] | None:
    """A follower ``f`` of ``p_out`` too full to lead it hands one of its own leaderships ``q`` to a follower
    ``g`` of ``q`` (not ``dst``) that has room, so that ``f`` can take ``p_out``: ``f``'s load changes by
    ``p_out``'s leader load less ``q``'s, judged as one change. Followers are tried fewest leaders first, and
    each one's leaderships lightest first among those that leave it no worse. Returns ``f`` and the move
    made (partition, its leader before), or None, having moved nothing.

    Example (``new-brokers``, seed 2): broker 52 leads 18 partitions against a band of 36-39 and is at the
    top of its network-out band. It leads topic-0004-16 (network-out 0.011 of a broker), whose only follower,
    broker 49, is at 0.434 against a band top of 0.439. Broker 49 hands one of its own leaderships to broker
    38, takes topic-0004-16, and broker 52 takes light leaderships from fuller brokers: leader-count CV on
    that case 0.074 -> 0.056."""
    if resource_guard and st.grows_at(dst, -st.LF[p_out]):
        return None  # dst itself cannot give it up
    for f in followers:
        mine = st.leaders_of(f)
        mine = mine[(mine != p_out) & ~st.frozen[mine]]
        if mine.size == 0 or not st.leader_ok(p_out, f):
            continue
        net = st.LF[p_out][None, :] - st.LF[mine]
        if resource_guard:
            u0 = st.load[f] / st.cap[f]
            fits = ~st.violation_grows(u0, (st.load[f] + net) / st.cap[f])
            mine = mine[fits]
        for q in mine[np.argsort(st.LF[mine].sum(axis=1), kind="stable")][:ROOM_TRIES].tolist():
            for g in st.rep[q].tolist():
                if g < 0 or g in (f, dst) or not st.may_lead[g] or not st.leader_ok(q, g):
                    continue
                if resource_guard and st.grows_at(g, st.LF[q]):
                    continue
                st.move_leadership(q, g)
                return f, [(q, f)]
    return None


def _pair_exchange(st: State, dst: int, resource_guard: bool) -> bool:
    """``dst`` (fewest leaders) and one broker ``s`` with two leaders more trade leaderships among themselves:
    ``dst`` takes two of ``s``'s and hands one back, so ``dst`` gains a leader and ``s`` loses one. The three
    moves are judged together, on the two brokers' loads after all of them: one at a time, each would take
    CPU or network-out out of its band on a small cluster, where one leadership weighs a tenth of a broker.

    Example (the 6-broker ``paper`` preset, seed 3): leader counts 5, 6, 7, 5, 6, 7. Every single leadership
    move from a broker with 7 to one with 5 puts network-out at γ 0.13 or more. Broker 0 taking two light
    leaderships from broker 2 and handing it one heavy one leaves γ at 0.06 and counts 6, 6, 6, 5, 6, 7."""
    m = st.members_arr(dst)
    m = m[~st.frozen[m]]
    if m.size < 3:
        return False
    lead = st.ldr[m]
    base = _dev_cost(st, st.load[dst], st.cap[dst])
    sources = np.unique(lead[(lead >= 0) & (lead != dst)])
    sources = sources[(st.lcount[sources] >= st.lcount[dst] + 2) & st.alive[sources]]
    mine = m[lead == dst]
    best: tuple[float, int, int, int, int] | None = None
    for s in sources.tolist():
        inc = m[lead == s][:X_CANDIDATES]
        out = mine[np.any(st.rep[mine] == s, axis=1) & st.may_lead[s]][:X_CANDIDATES]
        if inc.size < 2 or out.size == 0:
            continue
        iu, ju, net = _two_for_one(st, inc, out)
        new_d, new_s = st.load[dst] + net, st.load[s] - net
        cost = _dev_cost(st, new_d, st.cap[dst]) - base
        cost += _dev_cost(st, new_s, st.cap[s]) - _dev_cost(st, st.load[s], st.cap[s])
        if resource_guard:
            bad = st.violation_grows(st.load[dst] / st.cap[dst], new_d / st.cap[dst])
            bad |= st.violation_grows(st.load[s] / st.cap[s], new_s / st.cap[s])
            cost = np.where(bad, np.inf, cost)
        k = int(np.argmin(cost))
        oi, pi = divmod(k, cost.shape[1])
        if np.isfinite(cost[oi, pi]) and (best is None or cost[oi, pi] < best[0]):
            best = (float(cost[oi, pi]), s, int(out[oi]), int(inc[iu[pi]]), int(inc[ju[pi]]))
    if best is None:
        return False
    _, s, p_out, q1, q2 = best
    done: list[tuple[int, int]] = []
    for p, f in ((q1, dst), (q2, dst), (p_out, s)):
        if not st.leader_ok(p, f):
            _undo(st, done)
            return False
        done.append((p, int(st.ldr[p])))
        st.move_leadership(p, f)
    return True


def _leader_step_ok(st: State, p: int, f: int, resource_guard: bool) -> bool:
    if not st.leader_ok(p, f):
        return False
    if not resource_guard:
        return True
    s, d = int(st.ldr[p]), st.LF[p]
    return not (
        st.grows_at(s, -d)
        or st.grows_at(f, d)
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
