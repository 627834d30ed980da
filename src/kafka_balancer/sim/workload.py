"""Skewed Kafka workloads: what to create and produce (pure; :mod:`.workload_run` does the I/O).

A workload is a set of topics, each with a partition count, replication factor, message rate, message
size and key skew, plus consumer groups that read them. Keys are drawn so that a ``hot_fraction`` of the
messages carry one of ``hot_keys`` keys; Kafka's murmur2 partitioner then sends them to few partitions,
which makes those partitions (and the brokers leading them) hot. ``prefill_mb`` writes a backlog at the
start, which makes disk usage uneven.

    >>> import random
    >>> spec = skewed_workload(scale=1.0)
    >>> [t.name for t in spec.topics]
    ['orders', 'clicks', 'logs', 'metrics', 'audit']
    >>> k = KeyChooser(spec.topics[1], random.Random(7))
    >>> keys = [k.next() for _ in range(1000)]
    >>> sum(1 for x in keys if x.startswith(b"hot-")) > 700
    True
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class TopicLoad:
    name: str
    partitions: int
    replication: int
    rate: float  # messages per second
    size: int  # mean message bytes
    hot_keys: int = 0  # number of hot keys (0 = no key skew: keys uniform)
    hot_fraction: float = 0.0  # share of messages with a hot key
    key_space: int = 10_000
    prefill_mb: float = 0.0  # backlog produced before the timed run


@dataclass(frozen=True)
class GroupLoad:
    group: str
    topics: tuple[str, ...]
    members: int = 1


@dataclass(frozen=True)
class WorkloadSpec:
    topics: tuple[TopicLoad, ...]
    groups: tuple[GroupLoad, ...] = field(default_factory=tuple)

    def scaled(self, scale: float) -> WorkloadSpec:
        """Rates and backlog times ``scale``."""
        return replace(self, topics=tuple(replace(t, rate=t.rate * scale, prefill_mb=t.prefill_mb * scale)
                                          for t in self.topics))

    def bytes_per_s(self) -> float:
        return sum(t.rate * t.size for t in self.topics)


def skewed_workload(scale: float = 1.0, replication: int = 3) -> WorkloadSpec:
    """The demo workload: five topics of very different weight, hot keys on two of them.

    ``replication`` caps every topic's RF (a 3-broker test cluster takes 3; 2 keeps data small)."""
    rf = max(1, replication)
    spec = WorkloadSpec(
        topics=(
            TopicLoad("orders", partitions=6, replication=min(3, rf), rate=120, size=1500, hot_keys=2,
                      hot_fraction=0.7, prefill_mb=12),
            TopicLoad("clicks", partitions=8, replication=min(2, rf), rate=300, size=300, hot_keys=1,
                      hot_fraction=0.8),
            TopicLoad("logs", partitions=3, replication=min(2, rf), rate=20, size=8000, prefill_mb=40),
            TopicLoad("metrics", partitions=4, replication=min(3, rf), rate=60, size=400),
            TopicLoad("audit", partitions=2, replication=min(3, rf), rate=5, size=600, prefill_mb=2),
        ),
        groups=(
            GroupLoad("billing", ("orders",), members=1),
            GroupLoad("analytics", ("clicks", "orders"), members=1),
            GroupLoad("indexer", ("logs",), members=1),
        ),
    )
    return spec.scaled(scale)


class KeyChooser:
    """Seeded key stream of one topic (bytes keys, or None when the topic has no keys at all)."""

    def __init__(self, topic: TopicLoad, rng: random.Random) -> None:
        self.topic = topic
        self.rng = rng

    def next(self) -> bytes:
        t = self.topic
        if t.hot_keys and self.rng.random() < t.hot_fraction:
            return f"hot-{self.rng.randrange(t.hot_keys)}".encode()
        return f"k-{self.rng.randrange(t.key_space)}".encode()


def message_size(topic: TopicLoad, rng: random.Random) -> int:
    """Sizes vary ±25 % around the topic's mean."""
    return max(16, int(topic.size * rng.uniform(0.75, 1.25)))
