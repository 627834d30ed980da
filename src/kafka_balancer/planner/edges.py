"""How a broker's cost and goals respond to a change of its load, read from its utilisation alone.

- ``left`` / ``right``: per resource, the slopes of the total violation (``State.violation_of``) just below
  and just above the current utilisation. The violation is convex and piecewise linear in each resource's
  utilisation (the capacity term above θ, plus the band term max(u - hi, lo - u, 0)), so for any d ≥ 0,
  taking d off raises it by at least -left·d and adding d raises it by at least right·d.
- ``low`` / ``top``: per resource, the utilisations outside which a goal that holds now certainly breaks
  (``State.judge`` calls such a change bad), widened by ``MARGIN`` so that rounding never decides; -inf and
  inf where the violation is already above the tolerance.

Example: θ = 0.8 and a band of 0.72-0.80 on one resource. A broker at 0.9 has left = right = 10 / 0.8 +
1 / target, and no goal holding (low = -inf, top = inf). One at 0.75 has both slopes 0, and the range
0.72 - 1e-9 to 0.80 + 1e-9.

The swap search uses them to skip partners that cannot gain and pairs that certainly break a goal
(strategies/swap.py). In Python floats: four resources, where numpy's per-call cost would dominate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kafka_balancer.planner.goals import CAPACITY_WEIGHT
from kafka_balancer.planner.scalar_judge import TOL, Bands, violation

MARGIN = 1e-9  # utilisation; the tolerance (1e-12) is passed well within it on every term


@dataclass(frozen=True, slots=True)
class Edges:
    cap: list[float]
    util: list[float]
    left: list[float]
    right: list[float]
    low: list[float]
    top: list[float]


def _div(x: float, c: float) -> float:
    """``x / c`` as numpy divides: ±inf, or nan for 0 / 0, where ``c`` is 0."""
    if c:
        return x / c
    return math.copysign(math.inf, x) if x else math.nan


def of(bd: Bands, load: list[float], cap: list[float]) -> Edges:
    u = [_div(x, c) for x, c in zip(load, cap, strict=True)]
    th = bd.theta
    k = CAPACITY_WEIGHT / th
    left = [k if x > th else 0.0 for x in u]
    right = [k if x >= th else 0.0 for x in u]
    top = [th] * len(u)
    low = [-math.inf] * len(u)
    if bd.active:
        for i, (x, h, lo, s) in enumerate(zip(u, bd.hi, bd.lo, bd.inv, strict=True)):
            left[i] += (s if x > h else 0.0) - (s if x <= lo else 0.0)
            right[i] += (s if x >= h else 0.0) - (s if x < lo else 0.0)
            if s * MARGIN > 2 * TOL:  # the band term passes the tolerance within the margin
                top[i], low[i] = min(th, h), lo
    held = [v <= TOL for v in violation(bd, u)]
    return Edges(
        cap=cap, util=u, left=left, right=right,
        low=[x - MARGIN if k else -math.inf for x, k in zip(low, held, strict=True)],
        top=[x + MARGIN if k else math.inf for x, k in zip(top, held, strict=True)],
    )
