"""Replica counts evened at the end of a plan, as far as the replica-count goal's band asks.

The replica-count goal keeps each live broker within mean ± max(1, 5 %) replicas, and its move loop widens
that band to whole counts: a mean of 16.83 gives 15..18, a CV of up to 0.07 on six brokers. This pass works
on the band as the goal states it, 15.83..17.83, so 16..17 in whole counts. It runs last, after the usage
band and the end-of-plan compaction. It makes moves only while some live broker is outside that band, and
only moves that:

- break no goal and grow no violation (the same checks as every strategy);
- fit in what is left of the usage band's byte allowance;
- leave the plan no less even, counts included (:class:`evenness.Evenness` with ``COUNT_WEIGHT``): a move
  may let one resource's spread grow only if the others' and the counts' fall by more. Every (broker,
  resource) pair stays within seed 001's goals as measured and within the usage band.

A move is one follower or leader replica from a broker with the most replicas to one with at least two
fewer, or, where no single replica qualifies, two light replicas for one (the source ends one replica
lighter, the destination one heavier, and the loads change by the difference only). Of the moves that
qualify, the one leaving the plan most even is made.

Example: 6 brokers with counts [18, 15, 18, 17, 17, 16] (mean 16.83; band 16..17). A 25 GB follower leaves
a broker with 18 for the one with 15 if the four resources' spreads together grow by less than half the
counts' squared CV falls: [17, 16, 18, 17, 17, 16], CV 0.063 → 0.041; then one from the other 18.

On larger clusters the goal's band is wider than a whole count (48 brokers with 100 replicas each: 95..105),
so its move loop leaves little here: the pass makes a few moves at most.
"""

from __future__ import annotations

import math

import numpy as np

from kafka_balancer.planner.count_goals.replica_count import ReplicaCountGoal
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies.evenness import Evenness

__all__ = ["COUNT_WEIGHT", "even_counts", "goal_band"]

COUNT_WEIGHT = 0.5  # the counts' squared CV, against the four resources' (see docs/benchmarks.md, session 28)
SOURCES = 4  # brokers with the most replicas tried per move
DESTS = 8  # and brokers with the fewest
CANDIDATES = 16  # replicas per source, lightest first (single moves)
PAIR_CANDIDATES = 8  # the source's lightest replicas paired in a two-for-one exchange
EXCHANGE_PAIRS = 4  # (source, destination) pairs a two-for-one exchange is tried on


def goal_band(counts: np.ndarray) -> tuple[int, int]:
    """The replica-count goal's band in whole counts, not widened: ⌈mean − tol⌉..⌊mean + tol⌋ with tol =
    max(1, 5 % of the mean) (the goal's own ``band`` is ⌊mean − tol⌋..⌈mean + tol⌉)."""
    mean = float(counts.mean()) if counts.size else 0.0
    tol = ReplicaCountGoal.tolerance(mean)
    return math.ceil(mean - tol - 1e-9), math.floor(mean + tol + 1e-9)


def even_counts(st: State, theta: float, eps: float, band: float | None, allowance: float, max_moves: int) -> int:
    """Moves replicas until every live broker's count is inside :func:`goal_band`, no move qualifies, or
    ``max_moves`` are made (see the module). Nothing is done unless every count is inside the widened band:
    where the goal's move loop stopped short of it (its work budget ran out on 1,000 brokers; higher goals
    blocked it on brokers of unequal size), this pass would be its unbudgeted continuation. ``band``: the
    usage band's half width, or None when it is not a goal; ``allowance``: the bytes the plan as a whole may
    have copied. Returns the moves made."""
    live = np.flatnonzero(st.alive)
    if live.size < 2:
        return 0
    wide_lo, wide_hi = ReplicaCountGoal().band(st)
    if st.rcount[live].min() < wide_lo or st.rcount[live].max() > wide_hi:
        return 0  # the goal's own move loop stopped short of its band: its business, not this pass's
    judge = Evenness(st, theta, eps, band)
    moves = 0
    while moves < max_moves:
        lo, hi = goal_band(st.rcount[live])
        c = st.rcount
        if int(c[live].min()) >= lo and int(c[live].max()) <= hi:
            break
        srcs = live[np.argsort(-c[live], kind="stable")[:SOURCES]]
        dests = live[st.receive[live]]
        dests = dests[np.argsort(c[dests], kind="stable")[:DESTS]]
        pairs = [(int(s), int(d)) for s in srcs for d in dests if c[s] - c[d] >= 2 and (c[s] > hi or c[d] < lo)]
        if not pairs or not (_move_one(st, pairs, judge, allowance) or _exchange(st, pairs, judge, allowance)):
            break
        moves += 1
    return moves


def _fits(st: State, parts: list[int], srcs: list[int], dsts: list[int], allowance: float) -> bool:
    """Would these replica moves keep the plan's copied bytes within ``allowance``?"""
    extra = 0.0
    for p, s, d in zip(parts, srcs, dsts, strict=True):
        extra += st.copy_change(p, s, d) * float(st.disk_bytes[p])
    return st.copied + extra <= allowance * (1 + 1e-12)


def _light(st: State, parts: np.ndarray, b: int, k: int) -> np.ndarray:
    """The ``k`` lightest of ``parts`` on broker ``b``: smallest summed share of the ideal load."""
    t = np.where(st.target > 0, st.target, 1.0)
    weight = (st.role_loads(parts, b) / st.cap[b] / t).sum(axis=1)
    return parts[np.argsort(weight, kind="stable")[:k]]


def _move_one(st: State, pairs: list[tuple[int, int]], judge: Evenness, allowance: float) -> bool:
    best: tuple[float, int, int, int] | None = None
    for src, dst in pairs:
        m = st.members_arr(src)
        m = m[~st.frozen[m]]
        for p in _light(st, m, src, CANDIDATES).tolist():
            if st.ldr[p] == src and st.lcount[dst] + 1 > st.lcount[src]:
                continue  # leader counts may not come further apart
            delta = st.role_load(p, src)
            if not st.spread_ok(p, src, dst) or st.grows_at(src, -delta) or st.grows_at(dst, delta):
                continue
            if not _fits(st, [p], [src], [dst], allowance):
                continue
            gain = judge.change(src, dst, delta, COUNT_WEIGHT)
            if gain is not None and (best is None or gain < best[0]):
                best = (gain, p, src, dst)
    if best is None:
        return False
    st.move_replica(best[1], best[2], best[3])
    return True


def _exchange(st: State, pairs: list[tuple[int, int]], judge: Evenness, allowance: float) -> bool:
    """Two light replicas of the source for one of the destination's (see the module); leaderships go with
    their replicas, and the two brokers' leader counts may come no further apart."""
    for src, dst in pairs[:EXCHANGE_PAIRS]:
        a = st.members_arr(src)
        a = a[~st.frozen[a]]
        a = np.array([p for p in _light(st, a, src, PAIR_CANDIDATES).tolist() if st.spread_ok(p, src, dst)],
                     dtype=np.int64)
        q = st.members_arr(dst)
        q = q[~st.frozen[q] & ~np.any(st.rep[q] == src, axis=1)]
        q = np.array([p for p in q.tolist() if st.spread_ok(p, dst, src)], dtype=np.int64)
        diff = int(st.lcount[src]) - int(st.lcount[dst])
        best: tuple[float, int, int, int] | None = None
        for i in range(a.size):
            for j in range(i + 1, a.size):
                p1, p2 = int(a[i]), int(a[j])
                for pq in q.tolist():
                    # leaderships go with their replicas: the two brokers' leader counts come no further apart
                    led = int(st.ldr[p1] == src) + int(st.ldr[p2] == src) - int(st.ldr[pq] == dst)
                    if abs(diff - 2 * led) > abs(diff):
                        continue
                    net = st.role_load(p1, src) + st.role_load(p2, src) - st.role_load(pq, dst)
                    if st.grows_at(src, -net) or st.grows_at(dst, net):
                        continue
                    if not _fits(st, [p1, p2, pq], [src, src, dst], [dst, dst, src], allowance):
                        continue
                    gain = judge.change(src, dst, net, COUNT_WEIGHT)
                    if gain is not None and (best is None or gain < best[0]):
                        best = (gain, p1, p2, pq)
        if best is not None and st.move_replicas([(best[1], src, dst), (best[2], src, dst), (best[3], dst, src)]):
            return True
    return False
