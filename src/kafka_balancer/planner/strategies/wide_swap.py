"""Swaps with partners chosen across the cluster, for the (broker, resource) pairs that the move loop and the
repair pass left outside the band.

The move loop's swaps (swap.py) try the few least (or most) loaded brokers on the resource at fault and the
dozen replicas ranked first on each side. A pair is often left because the broker is also at an edge of its
band on another resource: a broker above its network-in band but at the bottom of its disk band cannot give
anything away without taking disk with it. What it needs is a partner with room on the first resource and
load to spare on the second, and a replica back that carries the second without the first. Here the
partners are ranked on exactly that, and every replica of both brokers is weighed, leader for leader and
follower for follower, so no broker's replica or leader count changes.

Example (``large-hard`` seed 0): broker 897 leaves the move loop at network-in 0.4412 against a band top of
0.4388, and at disk 0.4515, the very bottom of its band: anything it gives away takes disk with it. Two
swaps, with brokers 622 and 908, each trade one of its followers for one with less network-in and as much
disk: network-in 0.4388, disk unchanged.
"""

from __future__ import annotations

import time

import numpy as np

from kafka_balancer.planner.metrics import breached
from kafka_balancer.planner.ranking import smallest
from kafka_balancer.planner.state import TOL, State
from kafka_balancer.planner.strategies.swap import nearest_edge, swap_between

PARTNERS = 8  # partners tried per attempt, best fitting first
TRIES = 8  # swaps per pair at most; kept only if they bring it into its band


def partners(st: State, b: int, j: int, above: bool) -> list[int]:
    """Brokers fit to trade with ``b`` on ``j``: for ``above`` (``b`` must lose ``j``), those with room on
    ``j`` and load to spare on ``b``'s tight resource; otherwise the reverse. Ranked on the smaller of the two
    margins, largest first."""
    u = st.load / st.cap
    g = st.distribution_goal
    top = np.minimum(g.hi, st.capacity_goal.theta)
    k = nearest_edge(st, b, j, floor=above)
    if above:
        fit = np.minimum(top[j] - u[:, j], u[:, k] - g.lo[k]) if k != j else top[j] - u[:, j]
    else:
        fit = np.minimum(u[:, j] - g.lo[j], top[k] - u[:, k]) if k != j else u[:, j] - g.lo[j]
    keep = st.alive & (fit > 0)
    keep[b] = False
    return [int(c) for c in smallest(-fit, PARTNERS, keep)]


def outside(st: State, theta: float, eps: float) -> np.ndarray:
    """[B, R]: live (broker, resource) pairs outside seed 001's goals as measured (metrics.breached); False
    on dead brokers."""
    out = np.zeros(st.load.shape, dtype=bool)
    out[st.alive] = breached(st.util()[st.alive], theta, eps)
    return out


def repair(st: State, skip: np.ndarray, theta: float, eps: float, deadline: float) -> int:
    """For every pair outside seed 001's goals as measured (largest violation first; not ``skip``, [B, R]:
    out of reach by proof), up to :data:`TRIES` swaps, kept only if together they bring the pair into the
    state's band (the aim band, a little narrower than ε, as the summary's ``unresolved`` counts) and take
    no other pair outside seed 001's goals: swaps that only narrow the gap are undone, so the plan copies
    nothing for a pair it leaves where it was. Pairs inside ε are left alone, even outside the aim band: the
    plan meets the goal there. Returns the swaps kept."""
    v = st.violations()
    v[skip | ~outside(st, theta, eps)] = 0.0
    pairs = sorted(zip(*np.nonzero(v > TOL), strict=True), key=lambda bj: -float(v[bj]))
    kept = 0
    outer = st.journal
    for b0, j0 in pairs:
        b, j = int(b0), int(j0)
        if time.monotonic() > deadline:
            break
        gap = float(st.violation_of(st.util(b))[j])
        if gap <= TOL:  # brought in by an earlier pair's swaps
            continue
        before = outside(st, theta, eps)
        st.journal = []
        for done in range(1, TRIES + 1):
            above = bool(st.util(b)[j] > st.target[j])
            if not any(swap_between(st, b, c, j, toward=b) if above else swap_between(st, c, b, j, toward=b)
                       for c in partners(st, b, j, above)):
                break
            now = float(st.violation_of(st.util(b))[j])
            # closed, or out of reach at the pace so far (each swap takes the largest step there is)
            if now <= TOL or now * done > (gap - now) * (TRIES - done):
                break
        made, st.journal = st.journal, None
        if float(st.violation_of(st.util(b))[j]) <= TOL and not bool(np.any(outside(st, theta, eps) & ~before)):
            kept += len(made) // 2
            if outer is not None:
                outer.extend(made)
        else:
            for change in reversed(made):
                st.undo(change)
    st.journal = outer
    return kept
