"""Memory estimates of the simulators, checked before they allocate (validate/resources.py).

The coefficients are peak resident sizes measured with ``/usr/bin/time -f %M`` (see docs/errors.md,
"Bounded resources"), rounded up:

- ``simulate cluster --preset large``: 128 MB at 20k partitions, 479 MB at 200k, 1.65 GB at 800k: about
  2 KB per partition at replication factor 3 (so 0.7 KB a replica) over a 100 MB base;
- ``simulate consumers`` (one run at a time): 134 MB for 400 s of simulated time, 209 MB for 1,600 s, at 20 ms
  ticks and 24 partitions: about 1.3 KB per tick, plus a few bytes per partition and tick.
"""

from __future__ import annotations

BASE = 150e6
CLUSTER_PER_REPLICA = 800.0
CLUSTER_PER_BROKER = 2_000.0
CLUSTER_PER_TOPIC = 500.0
CONSUMERS_PER_TICK = 1_600.0
CONSUMERS_PER_PARTITION_TICK = 16.0
CONSUMERS_PER_PARTITION = 400.0


def cluster_bytes(brokers: int, partitions: int, topics: int, max_rf: int) -> float:
    """Peak memory of generating and writing a snapshot of this size."""
    return BASE + CLUSTER_PER_REPLICA * partitions * max_rf + CLUSTER_PER_BROKER * brokers + CLUSTER_PER_TOPIC * topics


def consumers_bytes(duration_ms: int, tick_ms: int, partitions: int, consumers: int) -> float:
    """Peak memory of one consumer-group simulation (the grid runs them one after another)."""
    ticks = duration_ms / max(tick_ms, 1) + 1
    return (BASE + ticks * (CONSUMERS_PER_TICK + CONSUMERS_PER_PARTITION_TICK * partitions)
            + CONSUMERS_PER_PARTITION * partitions + CLUSTER_PER_BROKER * consumers)
