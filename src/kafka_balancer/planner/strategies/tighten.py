"""Tightening by leadership alone, once every goal holds: it moves no bytes, so it is worth doing.

Repeatedly take the live broker furthest above the ideal on CPU or network-out and hand one of its
leaderships to a follower, if that lowers the squared deviation of the two brokers on those resources
and keeps every goal that holds. Stops when no broker improves or after ``max_moves``.
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


def tighten(st: State, max_moves: int, deadline: float, min_dev: float = 0.01) -> int:
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
        if f is None:
            done.add(s)
        else:
            moves += 1
            done.discard(f)  # only the two brokers that changed can have new options
    return moves


def _step(st: State, s: int) -> int | None:
    """Hand one leadership from ``s`` to a follower; returns that follower, or None."""
    leaders = st.leaders_of(s)
    if leaders.size == 0:
        return None
    rr = ROLE_RESOURCES
    weight = (st.LF[leaders][:, rr] / st.cap[s, rr]).sum(axis=1)
    leaders = leaders[np.argsort(-weight, kind="stable")[:MAX_CANDIDATES]]
    rows = st.rep[leaders]
    pairs_p = np.repeat(leaders, rows.shape[1])
    pairs_f = rows.reshape(-1)
    keep = (pairs_f >= 0) & (pairs_f != s)
    keep[keep] &= st.alive[pairs_f[keep]]
    pairs_p, pairs_f = pairs_p[keep], pairs_f[keep]
    if pairs_p.size == 0:
        return None
    delta = st.LF[pairs_p][:, rr]

    def dev(load: np.ndarray, cap: np.ndarray) -> np.ndarray:
        return st.relative_deviation(load / cap, rr)

    cap_s, cap_f = st.cap[s, rr], st.cap[pairs_f][:, rr]
    load_s, load_f = st.load[s, rr], st.load[pairs_f][:, rr]
    before = (dev(load_s, cap_s) ** 2).sum() + (dev(load_f, cap_f) ** 2).sum(axis=1)
    after = (dev(load_s - delta, cap_s) ** 2).sum(axis=1) + (dev(load_f + delta, cap_f) ** 2).sum(axis=1)
    better = before - after
    for k in np.argsort(-better, kind="stable").tolist():
        if better[k] <= 1e-9:
            return None
        p, f = int(pairs_p[k]), int(pairs_f[k])
        full = st.LF[p]
        if _keeps_goals(st, s, -full) and _keeps_goals(st, f, full) and st.leader_ok(p, f):
            st.move_leadership(p, f)
            return f
    return None
