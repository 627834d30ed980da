"""How even a plan is, judged move by move at the end of planning.

The last passes of a plan (:func:`compact.compact_evenly`, :func:`even_counts.even_counts`) may only make
moves that leave the plan no less even than it is. :class:`Evenness` judges one load change between two
live brokers against the live utilisations' running sums:

- no (broker, resource) pair leaves seed 001's goals as measured (θ, and γ around the mean utilisation);
- no pair inside the usage band leaves it;
- and either no resource's spread grows (``count_weight`` None: every resource judged on its own), or the
  sum over resources of the utilisations' squared coefficient of variation, plus ``count_weight`` × that of
  the live brokers' replica counts, does not grow (one replica leaves the source for the destination).

Example: 6 brokers with replica counts [18, 15, 17, 17, 17, 17]. A move from the first to the second lowers
the counts' squared CV from 0.0028 to 0.0012. With a weight of 0.5 it is judged even if the four resources'
squared CVs together grow by less than 0.0008.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_balancer.planner.metrics import breached
from kafka_balancer.planner.state import State

__all__ = ["Evenness"]

TOL = 1e-12


@dataclass(frozen=True)
class _Spread:
    changes: int  # the state's change counter when taken
    util: np.ndarray  # [live brokers, resources]
    s1: np.ndarray  # per resource: sum of the utilisations
    s2: np.ndarray  # and of their squares
    c1: float  # sum of the live brokers' replica counts
    c2: float  # and of their squares


class Evenness:
    """Judges load changes between two live brokers (see the module)."""

    def __init__(self, st: State, theta: float, eps: float, band: float | None) -> None:
        self.st, self.theta, self.eps, self.band = st, theta, eps, band
        self.live = np.flatnonzero(st.alive)
        self._seen: _Spread | None = None

    def _now(self) -> _Spread:
        st, seen = self.st, self._seen
        if seen is None or seen.changes != st.changes:
            util = st.load[self.live] / st.cap[self.live]
            c = st.rcount[self.live].astype(np.float64)
            seen = _Spread(st.changes, util, util.sum(axis=0), (util**2).sum(axis=0), float(c.sum()),
                           float((c**2).sum()))
            self._seen = seen
        return seen

    def change(self, src: int, dst: int, delta: np.ndarray, count_weight: float | None = None) -> float | None:
        """``delta`` (per resource) leaving ``src`` for ``dst``: None if it makes the plan less even, else the
        change of the summed squared CVs (with the counts' term when ``count_weight`` is given)."""
        st, now, n = self.st, self._now(), self.live.size
        rows = np.searchsorted(self.live, [src, dst])
        u0 = now.util[rows]
        du = np.stack([-delta / st.cap[src], delta / st.cap[dst]])
        u1 = u0 + du
        s1 = now.s1 + du.sum(axis=0)  # exactly the same sum where the two brokers are of one size
        s2 = now.s2 + (u1**2 - u0**2).sum(axis=0)
        cv0, cv1 = _cv2(now.s1, now.s2, n), _cv2(s1, s2, n)
        if count_weight is None:
            if np.any(cv1 > cv0 * (1 + TOL) + 1e-18):
                return None
            gain = float(cv1.sum() - cv0.sum())
        else:
            a, b = float(st.rcount[src]), float(st.rcount[dst])  # one replica from a broker of a to one of b
            k0 = _count_cv2(now.c1, now.c2, n)
            k1 = _count_cv2(now.c1, now.c2 + (a - 1) ** 2 - a**2 + (b + 1) ** 2 - b**2, n)
            before, after = float(cv0.sum()) + count_weight * k0, float(cv1.sum()) + count_weight * k1
            if after > before * (1 + TOL) + 1e-18:
                return None
            gain = after - before
        mean0, mean1 = now.s1 / n, s1 / n
        if np.array_equal(mean0, mean1):  # brokers of one size: only the two brokers' pairs can change
            was, will = u0, u1
        else:  # the mean moved: any broker's γ may change
            was, will = now.util, now.util.copy()
            will[rows] = u1
        if np.any(breached(will, self.theta, self.eps, mean1) & ~breached(was, self.theta, self.eps, mean0)):
            return None
        return gain if _band_kept(st, u0, u1, self.band) else None


def _cv2(s1: np.ndarray, s2: np.ndarray, n: int) -> np.ndarray:
    """Per resource, the squared coefficient of variation of ``n`` utilisations from their sum and the sum of
    their squares (σ is this spread, divided by the number of brokers)."""
    mean = s1 / n
    var = np.maximum(s2 / n - mean**2, 0.0)
    return np.asarray(np.where(mean > 0, var / np.where(mean > 0, mean, 1.0) ** 2, 0.0))


def _count_cv2(c1: float, c2: float, n: int) -> float:
    return float(_cv2(np.array([c1]), np.array([c2]), n)[0])


def _band_kept(st: State, now: np.ndarray, then: np.ndarray, band: float | None) -> bool:
    """Utilisations ``now`` → ``then`` of some brokers: does no pair inside the usage ``band`` (relative to the
    target) leave it?"""
    if band is None:
        return True
    before, after = st.relative_deviation(now), st.relative_deviation(then)
    inside = np.abs(before) <= band + 1e-12
    return not bool(np.any(inside & (np.abs(after) > band + 1e-12)))
