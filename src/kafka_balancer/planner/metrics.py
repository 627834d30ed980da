"""Seed 001's balance metrics, per resource, over the live brokers.

For broker ``j`` with utilisation ``B(j) = load / capacity`` and ``N`` live brokers:

* (1) mean ``B̄ = ΣB(j) / N``;  (2) normalised share ``D(j) = B(j) / ΣB``;  (3) ``D̄ = 1/N``;
* (4) deviation ``γ(j) = |B(j) − B̄| / B̄ = |D(j) − D̄| / D̄``;
* (5) ``σ = sqrt(Σ(D(j) − D̄)² / N)``, the population standard deviation of the shares;
* (6) threshold ``η = ε · D̄ = ε / N``.

Since ``σ = std(B) / ΣB = CV(B) / N``, ``σ ≤ η`` says exactly that the coefficient of variation of the
utilisations is at most ``ε``. The capacity goal is ``B(j) ≤ θ`` on every live broker.

Example: utilisations 0.2 and 0.4 give ``D = (1/3, 2/3)``, ``σ = 1/6``, ``γ = (1/3, 1/3)``::

    >>> import numpy as np
    >>> m = resource_metrics(np.array([0.2, 0.4]), theta=0.8, eps=0.1)
    >>> round(m.sigma, 4), round(m.max_gamma, 4), m.eta
    (0.1667, 0.3333, 0.05)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kafka_balancer.model.snapshot import RESOURCES, FloatArr, IntArr, Snapshot, broker_loads


@dataclass(frozen=True)
class ResourceMetrics:
    util: FloatArr  # B(j) of the live brokers
    mean: float
    share: FloatArr  # D(j)
    gamma: FloatArr  # γ(j)
    sigma: float
    eta: float
    max_gamma: float
    max_util: float
    over_theta: int

    def as_dict(self) -> dict[str, float]:
        return {
            "sigma": self.sigma,
            "gamma": self.max_gamma,
            "max_util": self.max_util,
            "mean_util": self.mean,
            "over_theta": self.over_theta,
        }


@dataclass(frozen=True)
class Metrics:
    n_live: int
    theta: float
    eps: float
    eta: float
    resources: dict[str, ResourceMetrics]

    def balanced(self) -> bool:
        return all(
            m.sigma <= self.eta + 1e-12 and m.max_gamma <= self.eps + 1e-12 and m.over_theta == 0
            for m in self.resources.values()
        )

    def as_dict(self) -> dict[str, Any]:
        return {res: m.as_dict() for res, m in self.resources.items()}


def gamma_of(util: FloatArr, mean: FloatArr | None = None) -> FloatArr:
    """Seed 001's γ of live brokers' utilisations ``util`` [brokers, resources]: distance from the arithmetic
    mean utilisation, relative to it. ``mean``: that mean, per resource, when ``util`` holds only some of the
    live brokers."""
    if mean is None:
        mean = util.mean(axis=0) if util.size else np.zeros(util.shape[-1])
    return np.asarray(np.abs(util - mean) / np.where(mean > 0, mean, 1.0))


def breached(util: FloatArr, theta: float, eps: float, mean: FloatArr | None = None) -> np.ndarray:
    """[brokers, resources] of live brokers' utilisations ``util``: pairs outside seed 001's goals as
    measured, above θ or with γ above ε (``mean``: as in :func:`gamma_of`)."""
    return np.asarray((util > theta + 1e-12) | (gamma_of(util, mean) > eps + 1e-12))


def resource_metrics(util: FloatArr, theta: float, eps: float) -> ResourceMetrics:
    n = len(util)
    total = float(util.sum())
    mean = total / n if n else 0.0
    if total > 0:
        share = util / total
        gamma = np.abs(util - mean) / mean
    else:  # no load at all on this resource: perfectly balanced
        share = np.full(n, 1.0 / n) if n else util.copy()
        gamma = np.zeros(n)
    sigma = float(np.sqrt(np.mean((share - 1.0 / n) ** 2))) if n else 0.0
    return ResourceMetrics(
        util=util,
        mean=mean,
        share=share,
        gamma=gamma,
        sigma=sigma,
        eta=eps / n if n else 0.0,
        max_gamma=float(gamma.max()) if n else 0.0,
        max_util=float(util.max()) if n else 0.0,
        over_theta=int((util > theta + 1e-12).sum()),
    )


def goals_missed(m: Metrics) -> int:
    """How often the metrics miss seed 001's goals: (broker, resource) pairs above θ or with γ above ε,
    plus resources whose σ is above η (each such resource's own η).

    >>> goals_missed(Metrics(2, 0.8, 0.1, 0.05, {"cpu": resource_metrics(np.array([0.2, 0.6]), 0.8, 0.1)}))
    3
    """
    missed = 0
    for r in m.resources.values():
        missed += int(((r.gamma > m.eps + 1e-12) | (r.util > m.theta + 1e-12)).sum()) + int(r.sigma > r.eta + 1e-12)
    return missed


def evaluate(
    snap: Snapshot,
    theta: float = 0.8,
    eps: float = 0.1,
    replicas: IntArr | None = None,
    leader: IntArr | None = None,
    loads: FloatArr | None = None,
) -> Metrics:
    """Metrics of the snapshot's assignment, or of another assignment over the same loads (or of the
    per-broker ``loads`` given, e.g. a derived view's or the planner state's)."""
    if loads is None:
        loads = broker_loads(snap, replicas, leader)
    live = snap.alive
    util = loads[live] / snap.capacity[live]
    n = int(live.sum())
    return Metrics(
        n_live=n,
        theta=theta,
        eps=eps,
        eta=eps / n if n else 0.0,
        resources={res: resource_metrics(util[:, r], theta, eps) for r, res in enumerate(RESOURCES)},
    )
