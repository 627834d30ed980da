"""How many consumers a group should have: seed 000's k(m ± z) = n and a throughput-based count.

Example:
    >>> divisor_counts(12, 5)
    (4, 6)
    >>> throughput_count([300.0, 100.0, 100.0, 100.0], per_consumer=400.0, target_util=0.8)
    (2, 0.75)
    >>> round(lag_trend([(0.0, 100.0), (10.0, 200.0), (20.0, 300.0)]), 3)
    10.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from kafka_balancer.consumer.assignors import run
from kafka_balancer.consumer.problem import problem_from_arrays
from kafka_balancer.consumer.result import normalised_loads


def divisor_counts(n_partitions: int, current: int) -> tuple[int | None, int | None]:
    """Seed 000: the nearest consumer counts ``m - z`` (below or at) and ``m + z`` (above) dividing ``n``."""
    below = next((d for d in range(min(current, n_partitions), 0, -1) if n_partitions % d == 0), None)
    above = next((d for d in range(current + 1, n_partitions + 1) if n_partitions % d == 0), None)
    return below, above


def throughput_count(rates: Sequence[float], per_consumer: float, target_util: float = 0.7) -> tuple[int, float]:
    """Fewest consumers so that ``balanced`` keeps every consumer at or below ``target_util``.

    Returns ``(count, utilisation of the hottest partition alone)``; when a single partition is
    above the target no count helps (the count returned is then the partition count).
    """
    r = np.asarray(rates, dtype=np.float64)
    budget = per_consumer * target_util
    hottest = float(r.max() / per_consumer) if r.size else 0.0
    if r.size == 0:
        return 0, 0.0
    start = max(1, math.ceil(float(r.sum()) / budget))
    for m in range(start, r.size + 1):
        owner = run("balanced", problem_from_arrays(m, r)).owner
        if float(normalised_loads(problem_from_arrays(m, r), owner).max()) <= budget * (1 + 1e-9):
            return m, hottest
    return int(r.size), hottest


def lag_trend(samples: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of total lag over time (messages/s; positive = falling behind)."""
    if len(samples) < 2:
        return 0.0
    t = np.asarray([s[0] for s in samples])
    y = np.asarray([s[1] for s in samples])
    if np.ptp(t) == 0:
        return 0.0
    return float(np.polyfit(t, y, 1)[0])
