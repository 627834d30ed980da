"""Live brokers that hold no replica while the others hold some: brokers added to the cluster.

    >>> from kafka_balancer.serve.observation import Observation, Replicas
    >>> obs = Observation(0.0, frozenset({1, 2, 3}), {}, {("t", 0): Replicas((1, 2), 1, (1, 2))})
    >>> [f.key for f in detect(obs)]
    ['broker-3']
    >>> detect(obs, removed=frozenset({3}))  # drained by the operator (serve/broker_history.py): not new
    []
"""

from __future__ import annotations

from kafka_balancer.serve.anomaly import Finding
from kafka_balancer.serve.observation import Observation

TYPE = "new_brokers"


def detect(obs: Observation, removed: frozenset[int] = frozenset()) -> list[Finding]:
    """``removed``: brokers the operator removed, empty on purpose."""
    counts = obs.replica_counts()
    held = [c for b, c in counts.items() if b in obs.alive and c > 0]
    if not held:
        return []  # an empty cluster has nothing to spread
    mean = sum(held) / len(held)
    return [Finding(TYPE, f"broker-{b}", {"broker": b, "replicas": 0, "mean_replicas_others": round(mean, 2),
                                          "rack": obs.racks.get(b)})
            for b in sorted(obs.alive) if counts.get(b, 0) == 0 and b not in removed]
