"""The distribution and capacity goals (seed 001: σ ≤ η, every γ ≤ ε, every B ≤ θ) missed on the load
model. Found once per window; confirmed when it persists for ``goal_violation_windows`` windows.

    >>> import numpy as np
    >>> from kafka_balancer.planner.metrics import Metrics, resource_metrics
    >>> m = Metrics(2, 0.8, 0.1, 0.05, {"cpu": resource_metrics(np.array([0.2, 0.6]), 0.8, 0.1)})
    >>> [f.evidence["resources"] for f in detect(m)]
    [['cpu']]
"""

from __future__ import annotations

from kafka_balancer.planner.metrics import Metrics
from kafka_balancer.serve.anomaly import Finding

TYPE = "goal_violation"


def detect(metrics: Metrics) -> list[Finding]:
    bad = {}
    for res, m in metrics.resources.items():
        why = []
        if m.sigma > m.eta + 1e-12:  # (a resource measured over fewer brokers has its own η: model_metrics)
            why.append(f"σ {m.sigma:.4f} > η {m.eta:.4f}")
        if m.max_gamma > metrics.eps + 1e-12:
            why.append(f"max γ {m.max_gamma:.3f} > ε {metrics.eps:g}")
        if m.over_theta:
            why.append(f"{m.over_theta} broker(s) above θ {metrics.theta:g}")
        if why:
            bad[res] = why
    if not bad:
        return []
    return [Finding(TYPE, "cluster", {
        "resources": sorted(bad), "why": {r: "; ".join(w) for r, w in bad.items()},
        "sigma": {r: round(m.sigma, 6) for r, m in metrics.resources.items()}, "eta": metrics.eta,
    })]
