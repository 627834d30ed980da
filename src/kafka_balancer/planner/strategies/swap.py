"""Swaps: two replicas of different partitions trade brokers, for gaps no single move can close
(a move that would overshoot the destination, or push another resource out of its band)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kafka_balancer.planner.edges import Edges
from kafka_balancer.planner.ranking import smallest
from kafka_balancer.planner.state import State

TOP_A = 12
TOP_B = 24
MAX_PARTNERS = 6
MAX_PAIRS_CHECKED = 64
WIDE_TOP = 128  # wide searches: replicas per side per ranking (two rankings a side: at most 256 × 256 pairs)


def _givers(st: State, hi: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """``hi``'s replicas and their loads, heaviest on ``r`` first (stable: ties keep member order)."""
    order = st.member_order(hi, r, descending=True)
    return st.members_arr(hi)[order], st.member_roles(hi)[order]


def _context(st: State, hi: int, lo: int, byte_room: float) -> tuple[object, ...]:
    """Everything a swap between ``hi`` and ``lo`` that finds no acceptable pair depends on: the two brokers'
    versions (their loads, replicas and roles) and the judge's settings, the guarding count goals included. The
    goals are compared by id, and carried along so that a remembered id cannot be reused by a new goal."""
    cg, dg = st.capacity_goal, st.distribution_goal
    return (st.version[hi], st.version[lo], st.polishing, st.relaxed, st.theta_first, byte_room, st.min_gain_per_byte,
            id(cg), id(dg), cg, dg, tuple(st.guards))


def _normal_edges(st: State, hi: int, lo: int) -> tuple[Edges, Edges] | None:
    """Both brokers' edges (edges.py) where the bounds drawn from them apply: in normal mode (the relaxed and
    polishing modes have other costs and rules) and with every capacity positive; None elsewhere."""
    if st.polishing or st.relaxed or st.theta_first:
        return None
    e_hi, e_lo = st.edges(hi), st.edges(lo)
    if min(e_hi.cap) <= 0 or min(e_lo.cap) <= 0:
        return None
    return e_hi, e_lo


def _cannot_gain(st: State, hi: int, lo: int) -> bool:
    """Whether no change of load between ``hi`` and ``lo`` can lower the total violation: on every resource,
    a unit of load leaving ``hi`` removes at most as much as it adds arriving at ``lo``, and the same the
    other way. False where the bounds do not apply (``_normal_edges``)."""
    edges = _normal_edges(st, hi, lo)
    if edges is None:
        return False
    e_hi, e_lo = edges
    return all(
        lh / ch <= rl / cl and ll / cl <= rh / ch
        for lh, rh, ll, rl, ch, cl in zip(e_hi.left, e_hi.right, e_lo.left, e_lo.right, e_hi.cap, e_lo.cap,
                                          strict=True)
    )


def _keeps_goals(st: State, hi: int, lo: int, net: np.ndarray) -> np.ndarray:
    """[A, B]: pairs whose net load ``net`` ([A, B, R], what ``hi`` loses and ``lo`` gains) may keep every
    goal that holds on ``hi`` and ``lo`` (the holding range). The others are certainly judged bad, so they
    are not judged (on `overloaded`, nine pairs in ten). Every pair is kept where the bounds do not apply
    (``_normal_edges``)."""
    edges = _normal_edges(st, hi, lo)
    if edges is None:
        return np.ones(net.shape[:2], dtype=bool)
    e_hi, e_lo = edges
    hi_side = zip(e_hi.util, e_hi.low, e_hi.top, e_hi.cap, strict=True)
    lo_side = zip(e_lo.util, e_lo.low, e_lo.top, e_lo.cap, strict=True)
    least, most = [], []
    for (u, low_h, top_h, c), (v, low_l, top_l, d) in zip(hi_side, lo_side, strict=True):
        least.append(max((u - top_h) * c, (low_l - v) * d))
        most.append(min((u - low_h) * c, (top_l - v) * d))
    return np.asarray(np.all((net >= np.array(least)) & (net <= np.array(most)), axis=2))


def swap_between(st: State, hi: int, lo: int, r: int,
                 givers: tuple[np.ndarray, np.ndarray] | None = None, toward: int | None = None) -> bool:
    """Best swap lowering resource ``r`` on ``hi`` and raising it on ``lo``, if any is acceptable.

    ``givers`` is ``_givers(st, hi, r)`` when the caller tries several partners for one ``hi`` (the state
    does not change between failed attempts, and filtering a stable order keeps it the stable order of
    what is left, so the candidates are the same as computing them here).

    ``toward`` (``hi`` or ``lo``): a wide search that repairs that broker's ``r``: up to 256 replicas a side
    are candidates, not the few ranked first; only replicas of the same role trade (leader for leader,
    follower for follower; no single move), so both brokers keep their replica and leader counts; and of
    the acceptable pairs the one that lowers ``toward``'s violation on ``r`` most is made (wide_swap.py, for
    what the move loop left).

    A search that finds no pair worth judging further is remembered in ``st.swap_misses`` and not repeated
    until its context changes (on `overloaded`, a third of the calls). A search that failed only on the
    spread or budget checks is not: those read other brokers' replicas too. Wide searches are not
    remembered (they are few, and their candidates differ)."""
    wide = toward is not None
    byte_room = min(float(st.byte_budget), float(st.max_bytes - st.copied))
    key = (hi, lo, r)
    ctx = _context(st, hi, lo, byte_room)

    def miss() -> bool:
        if not wide:
            st.swap_misses[key] = ctx
        return False

    if not wide and st.swap_misses.get(key) == ctx:
        return False
    if _cannot_gain(st, hi, lo):
        return miss()
    a, la = givers if givers is not None else _givers(st, hi, r)
    if a.size == 0:
        return miss()
    b, lb = st.members_arr(lo), st.member_roles(lo)
    a_at = _not_on(st, a, lo, None if wide else TOP_A)
    a, la = a[a_at], la[a_at]
    if a.size == 0:
        return miss()
    if wide:
        b_at = _not_on(st, b, hi)
        b, lb = b[b_at], lb[b_at]
        # hi gives the heaviest on r and the lightest on the resource nearest its band bottom; lo gives back
        # the lightest on r and the heaviest on the resource nearest its band top
        ka, kb = nearest_edge(st, hi, r, floor=True), nearest_edge(st, lo, r, floor=False)
        pick_a = _ranked_union([-la[:, r], la[:, ka]], WIDE_TOP)
        pick_b = _ranked_union([lb[:, r], -lb[:, kb]], WIDE_TOP)
        return _judge_pairs(st, hi, lo, r, a[pick_a], la[pick_a], b[pick_b], lb[pick_b], byte_room, miss,
                            toward=toward)
    # what lo could give back (none of hi's partitions): its lightest replicas on r, and its heaviest on the
    # resource where it is closest to its ceiling (a broker full on network-in but short of disk trades one
    # for the other)
    u_lo = st.load[lo] / st.cap[lo]
    room = np.where(np.arange(u_lo.size) == r, -np.inf, u_lo / np.maximum(st.distribution_goal.hi, 1e-12))
    tight = int(np.argmax(room))
    by_r, by_tight = st.member_order(lo, r, descending=False), st.member_order(lo, tight, descending=True)
    b_top = np.zeros(b.size, dtype=bool)  # the union of the two, in b's order
    b_top[by_r[_not_on(st, b[by_r], hi, TOP_B)]] = True
    b_top[by_tight[_not_on(st, b[by_tight], hi, TOP_B)]] = True
    b, lb = b[b_top], lb[b_top]
    # a pure move (b = nothing) is included as a zero row, so swaps subsume single moves here
    b = np.concatenate([b, np.array([-1])])
    lb = np.vstack([lb, np.zeros((1, la.shape[1]))])
    return _judge_pairs(st, hi, lo, r, a, la, b, lb, byte_room, miss)


def _not_on(st: State, parts: np.ndarray, broker: int, first: int | None = None) -> np.ndarray:
    """Positions in ``parts`` of the partitions without a replica on ``broker``, in order; with ``first``, only
    the first ``first`` of them, read a prefix at a time (two brokers share few partitions, so a prefix of
    twice that is almost always enough)."""
    if first is None:
        return np.nonzero(~np.any(st.rep[parts] == broker, axis=1))[0]
    k = 2 * first
    while True:
        pos = np.nonzero(~np.any(st.rep[parts[:k]] == broker, axis=1))[0]
        if pos.size >= first or k >= parts.size:
            return pos[:first]
        k *= 2


def nearest_edge(st: State, b: int, r: int, floor: bool) -> int:
    """The resource other than ``r`` on which broker ``b`` is nearest its band bottom (``floor``) or top
    (θ if lower); ``r`` itself where every other is unbounded."""
    u = st.util(b)
    g = st.distribution_goal
    room = (u - g.lo) if floor else (np.minimum(g.hi, st.capacity_goal.theta) - u)
    room = np.where((np.arange(u.size) == r) | (st.target <= 0), np.inf, room)  # (an unloaded resource has no band)
    k = int(np.argmin(room))
    return k if np.isfinite(room[k]) else r


def _ranked_union(keys: list[np.ndarray], n: int) -> np.ndarray:
    """Rows among the first ``n`` of any of ``keys`` (ascending, stable), in row order."""
    return np.unique(np.concatenate([np.argsort(k, kind="stable")[:n] for k in keys]))


def _judge_pairs(st: State, hi: int, lo: int, r: int, a: np.ndarray, la: np.ndarray, b: np.ndarray,
                 lb: np.ndarray, byte_room: float, miss: Callable[[], bool], toward: int | None = None) -> bool:
    """Judge every pair of ``a`` (on ``hi``) against ``b`` (on ``lo``; -1: no replica back) and make the best
    acceptable swap: the most gain per byte, or with ``toward`` (swap_between) a leader only for a leader
    and the most lowered violation of ``toward`` on ``r``. ``miss`` records a search with nothing worth
    judging."""
    net = la[:, None, :] - lb[None, :, :]  # what hi loses and lo gains, [A, B, R]
    # only pairs that lower r on hi and may keep the goals are judged (the others never qualify): same
    # arithmetic, fewer rows
    cand = (net[:, :, r] > 0) & _keeps_goals(st, hi, lo, net)
    if toward is not None:
        cand &= (st.ldr[a] == hi)[:, None] == (st.ldr[np.maximum(b, 0)] == lo)[None, :]
    ii, jj = np.nonzero(cand)
    if ii.size == 0:
        return miss()
    sub = net[ii, jj]  # [M, R]
    # both brokers judged in one call, hi first: [2, 1, R] before, [2, M, R] after
    u0 = np.stack([st.load[hi] / st.cap[hi], st.load[lo] / st.cap[lo]])[:, None, :]
    u1 = np.stack([(st.load[hi] - sub) / st.cap[hi], (st.load[lo] + sub) / st.cap[lo]])
    size_a = st.disk_bytes[a]
    size_b = np.where(b >= 0, st.disk_bytes[np.maximum(b, 0)], 0.0)
    size = size_a[:, None] + size_b[None, :]
    gain = np.full(net.shape[:2], -np.inf)
    if st.polishing and toward is None:
        gain[ii, jj] = _polish_gains(st, u0, u1, size[ii, jj], byte_room)
    else:
        bad, both = st.judge(u0, u1, rows=np.array([[hi], [lo]]))
        gain[ii, jj] = np.where(bad[0] | bad[1], -np.inf, both[0] + both[1])
    pays = gain >= st.min_gain_per_byte * size  # polishing: a move pays for the bytes it copies
    if toward is None:
        per = gain / (size + st.byte_floor)
    else:  # a wide search is kept only if it brings the pair into its band within a few swaps
        side = 0 if toward == hi else 1
        v0 = float(st.violation_of(u0[side, 0])[r])
        per = np.full(gain.shape, -np.inf)
        per[ii, jj] = v0 - st.violation_of(u1[side])[:, r]
        gain = np.where(per > 1e-12, gain, -np.inf)  # acceptable and lowering the pair's own violation
    score = np.where((gain > 1e-9) & (size <= byte_room) & pays, per, -np.inf)
    if toward is None:
        flat = np.argsort(-score, axis=None, kind="stable")
    else:  # equal gains on the pair (each bringing it into its band, say): the fewest bytes first
        flat = np.lexsort((size.ravel(), -score.ravel()))
    top = flat[:MAX_PAIRS_CHECKED]
    top_i, top_j = np.divmod(top, gain.shape[1])
    finite = np.isfinite(score.ravel()[top])
    a_ok: dict[int, bool] = {}
    b_ok: dict[int, bool] = {}
    a_ids, b_ids = a.tolist(), b.tolist()
    for n, (i, j, fin) in enumerate(zip(top_i.tolist(), top_j.tolist(), finite.tolist(), strict=True)):
        if not fin:
            return miss() if n == 0 else False
        pa, pb = a_ids[i], b_ids[j]
        # hard constraints are checked lazily, best pair first
        if i not in a_ok:
            a_ok[i] = st.spread_ok(pa, hi, lo)
        if not a_ok[i]:  # (pb's check waits for a pair whose pa may go)
            continue
        if j not in b_ok:
            b_ok[j] = pb < 0 or st.spread_ok(pb, lo, hi)
        if not b_ok[j] or not st.pair_within_budget(pa, hi, lo, pb):
            continue
        st.move_replica(pa, hi, lo)
        if pb >= 0:
            st.move_replica(pb, lo, hi)
        return True
    return False


def _polish_gains(st: State, u0: np.ndarray, u1: np.ndarray, size: np.ndarray, byte_room: float) -> np.ndarray:
    """[M]: each pair's drop of polishing's cost (``u0`` [2, 1, R] and ``u1`` [2, M, R], as judged), -inf
    where a goal breaks. The goals are checked only on the pairs that would count (a gain that pays for
    ``size`` bytes and fits ``byte_room``): on 1,000 brokers most searches have none, and the rest few.
    What _judge_pairs makes of the result is what it makes of ``State.judge``'s."""
    both = st.polish_gain(u0, u1)
    gain = both[0] + both[1]
    worth = (gain > 1e-9) & (size <= byte_room) & (gain >= st.min_gain_per_byte * size)
    out = np.where(worth, gain, -np.inf)
    if worth.any():
        grows = st.violation_grows(u0, u1[:, worth])
        out[np.nonzero(worth)[0][grows[0] | grows[1]]] = -np.inf
    return out


def _partners(st: State, b: int, r: int, ascending: bool) -> list[int]:
    util_r = st.load[:, r] / st.cap[:, r]
    keep = st.alive.copy()
    keep[b] = False
    return [int(d) for d in smallest(util_r if ascending else -util_r, MAX_PARTNERS, keep)]


def shed(st: State, src: int, r: int) -> bool:
    partners = _partners(st, src, r, ascending=True)
    if not partners:
        return False
    givers = _givers(st, src, r)
    return any(swap_between(st, src, d, r, givers) for d in partners)


def attract(st: State, dst: int, r: int) -> bool:
    return any(swap_between(st, s, dst, r) for s in _partners(st, dst, r, ascending=False))
