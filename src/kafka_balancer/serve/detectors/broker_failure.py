"""A broker that is gone while replicas still name it.

Found every sampling round; confirmed once it has been dead for the grace period (``--grace``), so a
broker that dies and returns within the grace period (a restart, a flap) triggers nothing. Evidence: the
broker, how many replicas and leaderships it holds, the partitions left offline.

    >>> from kafka_balancer.serve.observation import Observation, Replicas
    >>> obs = Observation(0.0, frozenset({1, 2}), {}, {("t", 0): Replicas((3, 1), 1, (1,))})
    >>> [(f.key, f.evidence["replicas"]) for f in detect(obs, known=frozenset({1, 2, 3}))]
    [('broker-3', 1)]
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_balancer.serve.anomaly import Finding
from kafka_balancer.serve.observation import Observation

TYPE = "broker_failure"


def detect(obs: Observation, known: frozenset[int], dead_since: Mapping[int, float] | None = None) -> list[Finding]:
    """``known``: brokers seen alive before or named by a replica list; ``dead_since``: when each was
    first seen dead (the grace period counts from there)."""
    dead_since = dead_since or {}
    dead = (set(known) | obs.brokers()) - set(obs.alive)
    out = []
    for b in sorted(dead):
        held = [tp for tp, p in obs.partitions.items() if b in p.replicas]
        if not held:
            continue  # nothing on it: nothing to fix (an evacuated or decommissioned broker)
        offline = [f"{t}-{p}" for (t, p) in sorted(held) if obs.partitions[(t, p)].leader < 0]
        out.append(Finding(TYPE, f"broker-{b}", {
            "broker": b, "replicas": len(held),
            "partitions": [f"{t}-{p}" for t, p in sorted(held)[:20]],
            "offline_partitions": offline[:20], "offline_count": len(offline),
        }, since=dead_since.get(b)))
    return out
