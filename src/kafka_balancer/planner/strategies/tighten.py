"""Tightening by leadership alone, once every goal holds: it moves no bytes, so it is worth doing.

Repeatedly take the live broker furthest above the ideal on CPU or network-out and hand one of its
leaderships to a follower, if that lowers the squared deviation of the two brokers on those resources
and keeps every goal that holds. Stops when no broker improves or after ``max_moves``.
"""

from __future__ import annotations

import time

import numpy as np

from kafka_balancer.model.snapshot import CPU, NW_OUT
from kafka_balancer.planner.state import TOL, State

ROLE_RESOURCES = [CPU, NW_OUT]
MAX_CANDIDATES = 32


def _dev(st: State, load: np.ndarray, b: int) -> np.ndarray:
    t = st.target[ROLE_RESOURCES]
    safe = np.where(t > 0, t, 1.0)
    return np.where(t > 0, (load[ROLE_RESOURCES] / st.cap[b, ROLE_RESOURCES] - t) / safe, 0.0)


def _keeps_goals(st: State, b: int, delta: np.ndarray) -> bool:
    v0 = st.violation_of(st.load[b] / st.cap[b])
    v1 = st.violation_of((st.load[b] + delta) / st.cap[b])
    return not np.any((v0 <= TOL) & (v1 > TOL)) and float(v1.sum()) <= float(v0.sum()) + TOL


def tighten(st: State, max_moves: int, deadline: float, min_dev: float = 0.01) -> int:
    done: set[int] = set()
    moves = 0
    while moves < max_moves and time.monotonic() < deadline:
        u = st.load[:, ROLE_RESOURCES] / st.cap[:, ROLE_RESOURCES]
        t = st.target[ROLE_RESOURCES]
        dev = np.where(t > 0, (u - t) / np.where(t > 0, t, 1.0), 0.0).max(axis=1)
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
    weight = (st.LF[leaders][:, ROLE_RESOURCES] / st.cap[s, ROLE_RESOURCES]).sum(axis=1)
    order = np.argsort(-weight, kind="stable")[:MAX_CANDIDATES]
    base_s = float((_dev(st, st.load[s], s) ** 2).sum())
    for p in leaders[order].tolist():
        delta = st.LF[p]
        after_s = float((_dev(st, st.load[s] - delta, s) ** 2).sum())
        for f in [int(b) for b in st.rep[p] if b >= 0 and b != s and st.alive[b]]:
            before = base_s + float((_dev(st, st.load[f], f) ** 2).sum())
            after = after_s + float((_dev(st, st.load[f] + delta, f) ** 2).sum())
            if after < before - 1e-9 and _keeps_goals(st, s, -delta) and _keeps_goals(st, f, delta):
                st.move_leadership(p, f)
                return f
    return None
