"""Partitions led by another replica than the preferred one (``replicas[0]``) although the preferred
replica is alive and in sync: what a broker restart leaves behind (Kafka's own automatic leader
rebalance is off on the local cluster, and often elsewhere).

    >>> from kafka_balancer.serve.observation import Observation, Replicas
    >>> obs = Observation(0.0, frozenset({1, 2}), {}, {("t", 0): Replicas((1, 2), 2, (1, 2))})
    >>> [(f.key, f.evidence["count"]) for f in detect(obs)]
    [('preferred-leaders', 1)]
    >>> detect(obs, demoted=frozenset({1}))  # demoted by the operator: never elected back
    []
"""

from __future__ import annotations

from kafka_balancer.serve.anomaly import Finding
from kafka_balancer.serve.observation import TP, Observation

TYPE = "leaders"


def lost(obs: Observation, demoted: frozenset[int] = frozenset()) -> list[TP]:
    """Partitions whose preferred replica is alive, in sync and not leading; ``demoted``: brokers that must
    not lead (serve/broker_history.py), whose partitions are left as they are."""
    return sorted(tp for tp, p in obs.partitions.items()
                  if p.replicas and p.leader != p.replicas[0] and p.replicas[0] in obs.alive
                  and p.replicas[0] in p.isr and p.replicas[0] not in demoted)


def detect(obs: Observation, demoted: frozenset[int] = frozenset()) -> list[Finding]:
    tps = lost(obs, demoted)
    if not tps:
        return []
    by_broker: dict[int, int] = {}
    for tp in tps:
        b = obs.partitions[tp].replicas[0]
        by_broker[b] = by_broker.get(b, 0) + 1
    return [Finding(TYPE, "preferred-leaders", {
        "count": len(tps), "preferred_broker_counts": {str(b): n for b, n in sorted(by_broker.items())},
        "partitions": [f"{t}-{p}" for t, p in tps[:20]],
    })]
