"""Replica movement (seed 001, definition 2): a replica is copied to a broker that holds none of its
partition, then dropped from its source. Moves disk and network-in, and whatever its role carries.

Candidate replicas: those that alone close the gap, smallest on disk first (least data moved); then
the rest, largest contribution first (the paper's descending order). For each, the destination is the
first in ascending order of load on the resource that every goal accepts (§3.1 (4)); among the
candidates, the move that removes the most violation per byte copied wins.
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.ranking import smallest
from kafka_balancer.planner.state import State

MAX_CANDIDATES = 24
MAX_SOURCES = 16
MAX_DESTINATIONS = 64
FIRST_DESTINATIONS = 16  # judged for every candidate; the other destinations only where none of these fits


def _candidate_order(contrib: np.ndarray, need: float, cost: np.ndarray) -> np.ndarray:
    closers = np.nonzero(contrib >= need)[0]
    others = np.nonzero(contrib < need)[0]
    closers = closers[np.lexsort((contrib[closers], cost[closers]))]
    others = others[np.argsort(-contrib[others], kind="stable")]
    return np.concatenate([closers, others])


def shed(st: State, src: int, r: int) -> bool:
    """Move one replica off ``src``, which is above its band (or above θ) on resource ``r``.

    In the repair pass (``st.sift``), if none of the candidates can go and some of them only because
    ``src`` would leave its band on another resource (a broker above the band on network-in but at the
    bottom of it on disk), a second round weighs only the replicas that ``src`` can give up."""
    m = st.members_arr(src)
    if m.size == 0:
        return False
    roles = st.member_roles(src)
    contrib = roles[:, r]
    keep = (contrib > 0) & st.affordable(m, src)
    m, contrib, roles = m[keep], contrib[keep], roles[keep]
    if m.size == 0:
        return False
    u = st.load[src, r] / st.cap[src, r]
    ceiling = min(float(st.distribution_goal.hi[r]), st.theta) if u > st.theta else float(st.distribution_goal.hi[r])
    need = max((u - ceiling) * st.cap[src, r], 0.0)
    order = _candidate_order(contrib, need, st.disk_bytes[m])[:MAX_CANDIDATES]
    moved, source_blocked = _place(st, src, r, m[order], roles[order])
    if moved or not source_blocked or not st.sift:
        return moved
    u_src = st.load[src] / st.cap[src]
    bad, _ = st.judge(u_src[None, :], (st.load[src][None, :] - roles) / st.cap[src][None, :])
    m, contrib, roles = m[~bad], contrib[~bad], roles[~bad]
    if m.size == 0:
        return False
    order = _candidate_order(contrib, need, st.disk_bytes[m])[:MAX_CANDIDATES]
    return _place(st, src, r, m[order], roles[order])[0]


def _place(st: State, src: int, r: int, cands: np.ndarray, deltas: np.ndarray) -> tuple[bool, bool]:
    """Move the best of ``cands`` (replicas on ``src``, in preference order; ``deltas``: the load each puts
    on ``src``, ``[K, 4]``) to the first acceptable of the destinations least loaded on ``r``. Returns (moved,
    whether the source refused any candidate)."""
    util_r = st.load[:, r] / st.cap[:, r]
    # destinations in ascending order of load on r; only the least loaded are worth evaluating
    dests = smallest(util_r, MAX_DESTINATIONS, st.alive)
    u_src = st.load[src] / st.cap[src]
    bad_src, gain_src = st.judge(u_src[None, :], (st.load[src][None, :] - deltas) / st.cap[src][None, :],
                                 st.violation_at(src)[None, :])  # [K]
    first, gain = _first_acceptable(st, src, cands, deltas, gain_src, (~bad_src).nonzero()[0], dests)
    rows = (first >= 0).nonzero()[0]
    if rows.size == 0:
        return False, bool(bad_src.any())
    if st.by_gain_per_byte:
        score = gain[rows] / (st.disk_bytes[cands[rows]] + st.byte_floor)
        k = int(rows[score.argmax()])
    else:
        k = int(rows[0])  # the first acceptable candidate in preference order
    st.move_replica(int(cands[k]), src, int(dests[first[k]]))
    return True, False


def _first_acceptable(st: State, src: int, cands: np.ndarray, deltas: np.ndarray, gain_src: np.ndarray,
                      rows: np.ndarray, dests: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate: the index in ``dests`` of the first destination that takes it (-1 if none) and the
    move's gain there. Only ``rows`` (the candidates the source lets go) are judged, and only where the
    hard constraints allow the move: the same element-wise arithmetic as on the whole grid, on fewer pairs.
    The first ``FIRST_DESTINATIONS`` are judged for every candidate, the rest only for the candidates none
    of them takes (on `large-hard` seed 2, 79k of the 91k candidates that can move find theirs among the first 16)."""
    first = np.full(cands.size, -1, dtype=np.int64)
    gain = np.zeros(cands.size)
    for start, stop in ((0, FIRST_DESTINATIONS), (FIRST_DESTINATIONS, dests.size)):
        if rows.size == 0 or start >= dests.size:
            break
        cols = dests[start:stop]
        kk, dd = st.dest_masks(cands[rows], src, cols).nonzero()
        # each pair's destination row, gathered once (``take``: a row gather without fancy indexing's setup);
        # its violation now is read from the kept rows
        to, rk = cols[dd], rows[kk]
        load_d, cap_d = st.load.take(to, axis=0), st.cap.take(to, axis=0)
        bad_dst, gain_dst = st.judge(load_d / cap_d, (load_d + deltas.take(rk, axis=0)) / cap_d, st.violation_at(to),
                                     rows=to)
        g = gain_dst + gain_src[rk]
        ok = np.zeros((rows.size, cols.size), dtype=bool)
        ok[kk, dd] = ~bad_dst & (g > 1e-9)
        grid = np.zeros((rows.size, cols.size))
        grid[kk, dd] = g
        has = np.logical_or.reduce(ok, axis=1)
        at = ok.argmax(axis=1)[has]  # the first acceptable destination in ascending order of load
        first[rows[has]] = start + at
        gain[rows[has]] = grid[has.nonzero()[0], at]
        rows = rows[~has]
    return first, gain


def attract(st: State, dst: int, r: int) -> bool:
    """Move one replica onto ``dst``, which is below its band on ``r`` (e.g. a new, empty broker).

    Sources are the live brokers above the ideal on ``r``, most loaded first; among their replicas the
    move that removes the most violation per byte copied wins.
    """
    util_r = st.load[:, r] / st.cap[:, r]
    ranked = smallest(-util_r, MAX_SOURCES * 4)
    sources = [int(s) for s in ranked if st.alive[s] and s != dst and util_r[s] > st.target[r]]
    sources = sources[:MAX_SOURCES]
    if not sources:
        return False
    parts_l: list[np.ndarray] = []
    src_l: list[np.ndarray] = []
    for src in sources:
        m = st.members_arr(src)
        parts_l.append(m)
        src_l.append(np.full(m.size, src, dtype=np.int64))
    parts = np.concatenate(parts_l)
    srcs = np.concatenate(src_l)
    keep = ~np.any(st.rep[parts] == dst, axis=1)
    parts, srcs = parts[keep], srcs[keep]
    if parts.size == 0:
        return False
    deltas = st.role_loads(parts, srcs)
    contrib = deltas[:, r]
    keep = (contrib > 0) & st.affordable(parts, srcs, dst)
    parts, srcs, deltas, contrib = parts[keep], srcs[keep], deltas[keep], contrib[keep]
    if parts.size == 0:
        return False
    need = max((float(st.distribution_goal.lo[r]) - util_r[dst]) * st.cap[dst, r], 0.0)
    order = _candidate_order(contrib, need, st.disk_bytes[parts])[: MAX_CANDIDATES * 4]
    parts, srcs, deltas = parts[order], srcs[order], deltas[order]
    # destination side, all candidates at once
    bad_d, gain_d = st.judge(
        (st.load[dst] / st.cap[dst])[None, :], (st.load[dst][None, :] + deltas) / st.cap[dst][None, :], rows=dst
    )
    # source side: each candidate's own source
    bad_s, gain_s = st.judge(st.load[srcs] / st.cap[srcs], (st.load[srcs] - deltas) / st.cap[srcs])
    new_bad = bad_d | bad_s
    gain = gain_d + gain_s
    score = np.where(~new_bad & (gain > 1e-9), gain / (st.disk_bytes[parts] + st.byte_floor), -np.inf)
    for k in np.argsort(-score, kind="stable").tolist():
        if not np.isfinite(score[k]):
            return False
        p, src = int(parts[k]), int(srcs[k])
        if st.spread_ok(p, src, dst):
            st.move_replica(p, src, dst)
            return True
    return False
