"""The per-move judgement of :class:`~kafka_balancer.planner.state.State` for ONE broker, in plain floats.

Most moves the planner weighs change two brokers' loads on four resources. Judging them with numpy spends
far more time creating tiny arrays than computing; these functions do the same arithmetic on Python floats.
Every operation is the one numpy performs element by element (IEEE double, correctly rounded), and sums
run left to right from the first element, as numpy's reduction does on four elements, so the results are
bit-for-bit those of ``State.judge`` and ``State.violation_grows`` (the plan digests test holds them to it).

Example: broker 3 with load [50, 20, 10, 10] and capacity [100] * 4 taking a delta [5, 1, 0, 0] is judged
on utilisations [0.50, 0.20, 0.10, 0.10] → [0.55, 0.21, 0.10, 0.10], as the numpy path would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kafka_balancer.planner.goals import CAPACITY_WEIGHT, THETA_FIRST

if TYPE_CHECKING:
    from kafka_balancer.planner.state import State

TOL = 1e-12


def _sq(x: float) -> float:
    return x * x  # numpy's ``a ** 2`` is ``a * a``


def ltr_sum(xs: list[float]) -> float:
    s = xs[0]
    for x in xs[1:]:
        s += x
    return s


class Bands:
    """The goals' per-resource numbers as Python floats, rebuilt when a goal object is replaced."""

    __slots__ = ("active", "cap_goal", "dist_goal", "hi", "inv", "lo", "target", "target_arr", "theta")

    def __init__(self, st: State) -> None:
        self.cap_goal = st.capacity_goal
        self.dist_goal = st.distribution_goal
        self.target_arr = st.target
        self.theta = float(self.cap_goal.theta)
        self.active = bool(self.dist_goal.active)
        self.hi: list[float] = self.dist_goal.hi.tolist()
        self.lo: list[float] = self.dist_goal.lo.tolist()
        self.inv: list[float] = self.dist_goal.inv_scale.tolist()
        self.target: list[float] = np.asarray(st.target, dtype=np.float64).tolist()

    def fresh(self, st: State) -> bool:
        return (self.cap_goal is st.capacity_goal and self.dist_goal is st.distribution_goal
                and self.target_arr is st.target)


def bands(st: State) -> Bands:
    b = st._bands
    if b is None or not b.fresh(st):
        b = Bands(st)
        st._bands = b
    return b


# Python's ``max(a, b)`` is ``b if b > a else a``; the functions below spell it so (a conditional costs a
# third of a call), in that form exactly, so NaN and signed zeros come out as from ``max``:
# ``max(0.0, d)`` is ``d if d > 0.0 else 0.0``, ``max(m, 0.0)`` is ``0.0 if m < 0.0 else m``.


def capacity_violation(bd: Bands, u: list[float]) -> list[float]:
    th = bd.theta
    return [(d if (d := x - th) > 0.0 else 0.0) / th * CAPACITY_WEIGHT for x in u]


def violation(bd: Bands, u: list[float]) -> list[float]:
    """``capacity_violation(u)[i] + max(max(u[i] - hi, lo - u[i]), 0.0) * inv``, in one pass."""
    if not bd.active:
        return [c + 0.0 for c in capacity_violation(bd, u)]
    th = bd.theta
    return [(d if (d := x - th) > 0.0 else 0.0) / th * CAPACITY_WEIGHT
            + (0.0 if (m := (b if (b := lo - x) > (a := x - h) else a)) < 0.0 else m) * s
            for x, h, lo, s in zip(u, bd.hi, bd.lo, bd.inv, strict=True)]


def _cap_rows(st: State) -> list[list[float] | None]:
    """Each broker's capacities as Python floats, None where one is not positive (capacities never change)."""
    rows = st._cap_rows
    if rows is None:
        rows = [c if all(x > 0.0 for x in c) else None for c in st.cap.tolist()]
        st._cap_rows = rows
    return rows


def utils(st: State, b: int, delta: np.ndarray) -> tuple[list[float], list[float]] | None:
    """Utilisation of broker ``b`` before and after adding ``delta``; None when a capacity is not
    positive (the numpy path then decides, with its own inf/nan semantics)."""
    cap = _cap_rows(st)[b]
    if cap is None:
        return None
    load: list[float] = st.load[b].tolist()
    d: list[float] = np.asarray(delta, dtype=np.float64).tolist()
    if len(d) != len(load):
        return None
    return [x / c for x, c in zip(load, cap, strict=True)], [(x + e) / c for x, e, c in zip(load, d, cap, strict=True)]


def keeps(bd: Bands, u0: list[float], u1: list[float]) -> bool:
    """No violation appears and the total does not grow (``tighten``'s test, for one broker)."""
    v0, v1 = violation(bd, u0), violation(bd, u1)
    return not any(a <= TOL and b > TOL for a, b in zip(v0, v1, strict=True)) and ltr_sum(v1) <= ltr_sum(v0) + TOL


def grows(bd: Bands, u0: list[float], u1: list[float]) -> bool:
    """``State.violation_grows`` for one broker."""
    g0, g1 = violation(bd, u0), violation(bd, u1)
    return any(b > max(a, TOL) + TOL for a, b in zip(g0, g1, strict=True))


def _rises(k0: list[float], k1: list[float]) -> list[bool]:
    """``state._rises`` for one broker."""
    return [b > max(a, TOL) + TOL for a, b in zip(k0, k1, strict=True)]


def judge(st: State, bd: Bands, u0: list[float], u1: list[float], b: int | None = None) -> tuple[bool, float]:
    """``State.judge`` for one broker: (breaks a goal that held, drop of cost); ``b``: the broker, as the
    judge's ``rows``."""
    if st.polishing:
        c0 = [_sq((x - t) / t) if t > 0 else 0.0 for x, t in zip(u0, bd.target, strict=True)]
        c1 = [_sq((x - t) / t) if t > 0 else 0.0 for x, t in zip(u1, bd.target, strict=True)]
        return grows(bd, u0, u1), ltr_sum(c0) - ltr_sum(c1)
    if st.theta_first:
        k0, k1 = capacity_violation(bd, u0), capacity_violation(bd, u1)
        bad = any(_rises(k0, k1))
        drop = ltr_sum(violation(bd, u0)) - ltr_sum(violation(bd, u1))
        return bad, drop + THETA_FIRST * (ltr_sum(k0) - ltr_sum(k1))
    if st.relaxed:
        g0, g1 = capacity_violation(bd, u0), capacity_violation(bd, u1)
        c0 = [v * v for v in violation(bd, u0)]
        c1 = [v * v for v in violation(bd, u1)]
    else:
        g0, g1 = violation(bd, u0), violation(bd, u1)
        c0, c1 = g0, g1
    bad = any(x <= TOL and y > TOL for x, y in zip(g0, g1, strict=True))
    if b is not None and not bad and not st.relaxed:  # State.lifts_pinned
        mask, some = st.pins()
        if some and mask[b].any():
            rises = _rises(capacity_violation(bd, u0), capacity_violation(bd, u1))
            bad = any(bool(p) and x for p, x in zip(mask[b].tolist(), rises, strict=True))
    return bad, ltr_sum(c0) - ltr_sum(c1)
