"""A reassignment plan: the partitions that change and their new replica lists (Kafka broker ids)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlanEntry:
    topic: str
    partition: int
    replicas: tuple[int, ...]  # Kafka broker ids; [0] is the intended leader


@dataclass(frozen=True)
class Plan:
    entries: tuple[PlanEntry, ...]

    def __len__(self) -> int:
        return len(self.entries)
