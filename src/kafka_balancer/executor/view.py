"""What the executor knows about a live cluster at one poll: plain data, no client objects.

The Kafka adapter (:mod:`.kafka_adapter`) fills a :class:`ClusterView`; everything that decides
(validation, batching, state transitions, verification) reads only this, so it is testable without a
cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TP = tuple[str, int]


def tp_label(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


@dataclass(frozen=True)
class PartitionState:
    """One partition as the controller reports it."""

    replicas: tuple[int, ...]
    leader: int  # -1 when offline
    isr: tuple[int, ...]


@dataclass(frozen=True)
class Reassignment:
    """An ongoing reassignment (``list_partition_reassignments``)."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass(frozen=True)
class ClusterView:
    """Brokers, partitions, ongoing reassignments and replica sizes at one moment."""

    alive: frozenset[int]
    partitions: dict[TP, PartitionState]
    reassigning: dict[TP, Reassignment] = field(default_factory=dict)
    # (topic, partition, broker) -> bytes of that replica's log (describe_log_dirs)
    replica_bytes: dict[tuple[str, int, int], int] = field(default_factory=dict)

    def partition_bytes(self, tp: TP) -> int:
        """Size of a partition: its largest replica (the leader's when in sync)."""
        sizes = [v for (t, p, _b), v in self.replica_bytes.items() if (t, p) == tp]
        return max(sizes, default=0)

    def topics(self) -> set[str]:
        return {t for t, _p in self.partitions}
