"""Tightening by leadership alone, once every goal holds: it moves no bytes, so it is worth doing.

Repeatedly take the live broker furthest above the ideal on CPU or network-out and hand one of its
leaderships to a follower, if that lowers the squared deviation of the two brokers on those resources
and keeps every goal that holds. Stops when no broker improves or after ``max_moves``.

With ``trades`` (the last tightening of a plan, under every count goal's guard), a broker that can hand
off no single leadership trades one instead: it gives partition ``p`` to a broker ``f`` that follows ``p``
and takes partition ``q`` from ``f``, which leads ``q`` while it follows. Both brokers keep their leader
counts, so the trade passes where a single handoff would take a count out of the leader-count goal's band.

Example (tests/unit/test_planner_tighten_trades.py): brokers 0 and 1 each lead two partitions and follow
the other's two; a follower carries no CPU. Broker 0 leads partitions of CPU 30 and 10 (40), broker 1 of 25
and 5 (30). Handing over the 10 gives 30 against 40 and the 30 gives 10 against 60: no single handoff
brings them closer. Trading the 30 for the 25 gives 35 and 35, and both still lead two partitions.
"""

from __future__ import annotations

import time

import numpy as np

from kafka_balancer.model.snapshot import CPU, NW_OUT
from kafka_balancer.planner import scalar_judge
from kafka_balancer.planner.state import TOL, State

ROLE_RESOURCES = [CPU, NW_OUT]
MAX_CANDIDATES = 32


def _keeps_goals(st: State, b: int, delta: np.ndarray) -> bool:
    us = scalar_judge.utils(st, b, delta)
    if us is not None:
        return scalar_judge.keeps(scalar_judge.bands(st), *us)
    v0 = st.violation_of(st.load[b] / st.cap[b])
    v1 = st.violation_of((st.load[b] + delta) / st.cap[b])
    return not np.any((v0 <= TOL) & (v1 > TOL)) and float(v1.sum()) <= float(v0.sum()) + TOL


def tighten(st: State, max_moves: int, deadline: float, min_dev: float = 0.01, trades: bool = False) -> int:
    done: set[int] = set()
    moves = 0
    while moves < max_moves and time.monotonic() < deadline:
        u = st.load[:, ROLE_RESOURCES] / st.cap[:, ROLE_RESOURCES]
        dev = st.relative_deviation(u, ROLE_RESOURCES).max(axis=1)
        dev[~st.alive] = -np.inf
        if done:
            dev[list(done)] = -np.inf
        s = int(np.argmax(dev))
        if dev[s] <= min_dev:
            break
        f = _step(st, s)
        if f is None and trades:
            f = _trade(st, s)
        if f is None:
            done.add(s)
        else:
            moves += 1
            done.discard(f)  # only the two brokers that changed can have new options
    return moves


def _gain(st: State, s: int, fs: np.ndarray, net: np.ndarray) -> np.ndarray:
    """[K]: how much the squared relative deviation of ``s`` and ``fs[k]`` on CPU and network-out falls when
    ``net[k]`` (those two resources) leaves ``s`` for ``fs[k]``."""
    rr = ROLE_RESOURCES

    def dev(load: np.ndarray, cap: np.ndarray) -> np.ndarray:
        return st.relative_deviation(load / cap, rr)

    cap_s, cap_f = st.cap[s, rr], st.cap[fs][:, rr]
    load_s, load_f = st.load[s, rr], st.load[fs][:, rr]
    before = (dev(load_s, cap_s) ** 2).sum() + (dev(load_f, cap_f) ** 2).sum(axis=1)
    after = (dev(load_s - net, cap_s) ** 2).sum(axis=1) + (dev(load_f + net, cap_f) ** 2).sum(axis=1)
    return np.asarray(before - after)


def _heaviest(st: State, s: int, led: np.ndarray) -> np.ndarray:
    """The ``MAX_CANDIDATES`` of ``led`` (partitions ``s`` leads) whose leadership weighs most on ``s``'s CPU and
    network-out, heaviest first."""
    rr = ROLE_RESOURCES
    weight = (st.LF[led][:, rr] / st.cap[s, rr]).sum(axis=1)
    return led[np.argsort(-weight, kind="stable")[:MAX_CANDIDATES]]


def _step(st: State, s: int) -> int | None:
    """Hand one leadership from ``s`` to a follower; returns that follower, or None."""
    leaders = st.leaders_of(s)
    if leaders.size == 0:
        return None
    rr = ROLE_RESOURCES
    leaders = _heaviest(st, s, leaders)
    rows = st.rep[leaders]
    pairs_p = np.repeat(leaders, rows.shape[1])
    pairs_f = rows.reshape(-1)
    keep = (pairs_f >= 0) & (pairs_f != s)
    keep[keep] &= st.alive[pairs_f[keep]]
    pairs_p, pairs_f = pairs_p[keep], pairs_f[keep]
    if pairs_p.size == 0:
        return None
    better = _gain(st, s, pairs_f, st.LF[pairs_p][:, rr])
    for k in np.argsort(-better, kind="stable").tolist():
        if better[k] <= 1e-9:
            return None
        p, f = int(pairs_p[k]), int(pairs_f[k])
        full = st.LF[p]
        if _keeps_goals(st, s, -full) and _keeps_goals(st, f, full) and st.leader_ok(p, f):
            st.move_leadership(p, f)
            return f
    return None


def _trade(st: State, s: int) -> int | None:
    """Trade leaderships between ``s`` and a broker ``f`` that follows one of its partitions: ``s`` hands
    ``p`` to ``f`` and takes ``q``, which ``f`` leads and ``s`` follows. Leader counts stay as they are, so
    this works where a single handoff would take a count out of its band. Returns ``f``, or None."""
    if not st.may_lead[s]:
        return None
    m = st.members_arr(s)
    m = m[~st.frozen[m]]
    led = st.ldr[m] == s
    mine, theirs = m[led], m[~led]
    theirs = theirs[st.ldr[theirs] >= 0]  # (a partition with no leader has none to give)
    if mine.size == 0 or theirs.size == 0:
        return None
    rr = ROLE_RESOURCES
    mine = _heaviest(st, s, mine)
    givers = st.ldr[theirs]  # f: leads q, which s follows
    keep = st.alive[givers] & st.may_lead[givers]
    theirs, givers = theirs[keep], givers[keep]
    # pairs (p, q) where q's leader follows p
    match = (st.rep[mine][:, :, None] == givers[None, None, :]).any(axis=1)  # [P, Q]
    ip, iq = np.nonzero(match)
    if ip.size == 0:
        return None
    pp, qq, ff = mine[ip], theirs[iq], givers[iq]
    better = _gain(st, s, ff, st.LF[pp][:, rr] - st.LF[qq][:, rr])
    for k in np.argsort(-better, kind="stable")[:MAX_CANDIDATES].tolist():
        if better[k] <= 1e-9:
            return None
        p, q, f = int(pp[k]), int(qq[k]), int(ff[k])
        full = st.LF[p] - st.LF[q]
        if not (_keeps_goals(st, s, -full) and _keeps_goals(st, f, full)):
            continue
        st.move_leadership(p, f)
        if st.leader_ok(q, s):
            st.move_leadership(q, s)
            return f
        st.move_leadership(p, s)
    return None
