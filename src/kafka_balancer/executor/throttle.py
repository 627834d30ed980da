"""Replication throttle for a set of moves, as Kafka's reassignment tool sets it.

* brokers taking part (every current and target replica of a moving partition) get
  ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate`` = the rate;
* each topic gets ``leader.replication.throttled.replicas`` = ``partition:broker`` for the replicas that
  may serve the copy (the current ones) and ``follower.replication.throttled.replicas`` for the replicas
  being created (the added ones).

Pure: computes the configs; the adapter applies and deletes them. Example::

    >>> from kafka_balancer.executor.machine import Task
    >>> cfg = throttle_configs([Task(("t", 0), (1, 2), (3, 2), 10)], rate=1000)
    >>> cfg.topics["t"]
    {'leader.replication.throttled.replicas': '0:1,0:2', 'follower.replication.throttled.replicas': '0:3'}
    >>> sorted(cfg.brokers)
    [1, 2, 3]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka_balancer.executor.machine import Task

BROKER_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
TOPIC_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


@dataclass(frozen=True)
class ThrottleConfigs:
    """Dynamic configs to set: per broker id and per topic, key -> value."""

    brokers: dict[int, dict[str, str]]
    topics: dict[str, dict[str, str]]

    def to_dict(self) -> dict[str, Any]:
        return {"brokers": {str(b): c for b, c in self.brokers.items()}, "topics": self.topics}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> ThrottleConfigs:
        return ThrottleConfigs({int(b): dict(c) for b, c in d["brokers"].items()},
                               {t: dict(c) for t, c in d["topics"].items()})

    @property
    def empty(self) -> bool:
        return not self.brokers and not self.topics


def throttle_configs(tasks: Iterable[Task], rate: int) -> ThrottleConfigs:
    """The throttle for the replica-moving tasks among ``tasks`` at ``rate`` bytes/s per broker."""
    leaders: dict[str, set[tuple[int, int]]] = defaultdict(set)
    followers: dict[str, set[tuple[int, int]]] = defaultdict(set)
    brokers: set[int] = set()
    for t in tasks:
        if not t.moves_data:
            continue
        topic, part = t.tp
        leaders[topic] |= {(part, b) for b in t.current}
        followers[topic] |= {(part, b) for b in t.adding}
        brokers |= set(t.current) | set(t.target)

    def fmt(pairs: set[tuple[int, int]]) -> str:
        return ",".join(f"{p}:{b}" for p, b in sorted(pairs))

    topics = {
        topic: {TOPIC_KEYS[0]: fmt(leaders[topic]), TOPIC_KEYS[1]: fmt(followers[topic])}
        for topic in sorted(leaders)
    }
    return ThrottleConfigs({b: {k: str(int(rate)) for k in BROKER_KEYS} for b in sorted(brokers)}, topics)
