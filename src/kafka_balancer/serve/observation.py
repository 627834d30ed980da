"""What one sampling round tells about the cluster's topology: plain data the detectors read.

    >>> obs = Observation(ts=0.0, alive=frozenset({1, 2}), racks={1: "a", 2: "b"},
    ...                   partitions={("t", 0): Replicas((1, 2), 2, (1, 2))})
    >>> obs.replica_counts(), obs.under_replicated()
    ({1: 1, 2: 1}, [])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TP = tuple[str, int]


@dataclass(frozen=True)
class Replicas:
    replicas: tuple[int, ...]
    leader: int  # -1: offline
    isr: tuple[int, ...]


@dataclass(frozen=True)
class Observation:
    ts: float  # seconds since the epoch
    alive: frozenset[int]
    racks: Mapping[int, str | None]
    partitions: Mapping[TP, Replicas]
    # listed alive by the controller but not answering its metrics endpoint: the first sign of a dead
    # broker (the controller fences it only after its session times out, ~9 s later)
    unreachable: frozenset[int] = frozenset()
    # listed alive, and its metrics endpoint answered the round
    answered: frozenset[int] = frozenset()
    # host and port of each live broker's listener, as describe_cluster gives them (the liveness probe's aim)
    listeners: Mapping[int, tuple[str, int]] = field(default_factory=dict)

    def replica_counts(self) -> dict[int, int]:
        out = {b: 0 for b in self.alive}
        for p in self.partitions.values():
            for b in p.replicas:
                out[b] = out.get(b, 0) + 1
        return out

    def under_replicated(self) -> list[TP]:
        return sorted(tp for tp, p in self.partitions.items() if len(p.isr) < len(p.replicas))

    def offline(self) -> list[TP]:
        return sorted(tp for tp, p in self.partitions.items() if p.leader < 0)

    def brokers(self) -> set[int]:
        """Alive brokers and every broker named in a replica list."""
        return set(self.alive) | {b for p in self.partitions.values() for b in p.replicas}


def from_raw(raw: Any) -> Observation:
    """An :class:`Observation` from the collector's ``RawRound`` (collect/sampler.py)."""
    alive = frozenset(int(b["broker_id"]) for b in raw.brokers)
    racks = {int(b["broker_id"]): b.get("rack") for b in raw.brokers}
    parts = {tp: Replicas(tuple(v["replicas"]), int(v["leader"]), tuple(v["isr"]))
             for tp, v in raw.partitions.items()}
    unreachable = frozenset(b for b in alive if b in raw.metrics and raw.metrics[b] is None)
    answered = frozenset(b for b in alive if raw.metrics.get(b) is not None)
    listeners = {int(b["broker_id"]): (str(b["host"]), int(b["port"])) for b in raw.brokers
                 if b.get("host") and b.get("port")}
    return Observation(ts=raw.ts / 1000.0, alive=alive, racks=racks, partitions=parts, unreachable=unreachable,
                       answered=answered, listeners=listeners)
