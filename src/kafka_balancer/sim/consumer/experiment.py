"""Seed 000's experiment in the simulator: 6 consumers, then 0..5 of them killed, per assignor.

Each cell averages ``kill_sets`` deterministic runs: the group is stable at t=0, ``k`` consumers
(a seeded random subset, the same subsets for every assignor) are killed at ``kill_at_ms``, and
everything from the kill to the end is measured. ``keeps_up`` is the fraction of runs whose
backlog was drained by the end.

Example:
    >>> rows = run_grid(GridSpec(kills=(1,), variants=(("balanced", "eager"),), duration_ms=30000,
    ...                          kill_at_ms=5000, partitions=6))
    >>> rows[0]["killed"], rows[0]["assignor"], rows[0]["keeps_up"]
    (1, 'balanced', 1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kafka_balancer.consumer.workloads import zipf_loads
from kafka_balancer.sim.consumer.config import SimConfig
from kafka_balancer.sim.consumer.run import SimResult, simulate

VARIANTS: tuple[tuple[str, str], ...] = (
    ("paper", "eager"), ("balanced", "eager"), ("balanced", "cooperative"), ("range", "eager"),
    ("roundrobin", "eager"), ("sticky", "eager"), ("cooperative-sticky", "cooperative"),
)


@dataclass(frozen=True)
class GridSpec:
    consumers: int = 6
    partitions: int = 24
    skew: float = 1.0
    utilisation: float = 0.4  # total arrival rate ÷ total capacity of all consumers
    capacity: float = 1000.0  # messages/s per consumer
    kills: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    variants: tuple[tuple[str, str], ...] = VARIANTS
    kill_at_ms: int = 20000
    duration_ms: int = 80000
    heartbeat_ms: int = 1000
    session_timeout_ms: int = 6000
    tick_ms: int = 20
    seed: int = 0
    kill_sets: int = 3

    def victims(self, killed: int) -> list[tuple[int, ...]]:
        """The consumer subsets killed for ``killed`` (identical for every assignor)."""
        if killed == 0:
            return [()]
        rng = np.random.default_rng(self.seed * 1000 + killed)
        return [tuple(sorted(rng.choice(self.consumers, size=killed, replace=False).tolist()))
                for _ in range(self.kill_sets)]

    def rates(self) -> tuple[float, ...]:
        total = self.utilisation * self.capacity * self.consumers
        loads = zipf_loads(self.partitions, self.skew, seed=self.seed)
        return tuple(float(x) for x in loads * (total / loads.sum()))

    def config(self, assignor: str, protocol: str, victims: tuple[int, ...], run: int = 0) -> SimConfig:
        return SimConfig(
            rates=self.rates(), capacities=(self.capacity,) * self.consumers, assignor=assignor,
            protocol=protocol, heartbeat_ms=self.heartbeat_ms, session_timeout_ms=self.session_timeout_ms,
            duration_ms=self.duration_ms, tick_ms=self.tick_ms,
            kills=tuple((self.kill_at_ms, c) for c in victims), measure_from_ms=self.kill_at_ms,
            seed=self.seed * 100 + run,
        )


def _aggregate(killed: int, results: list[SimResult]) -> dict[str, Any]:
    rows = [r.summary() for r in results]
    out: dict[str, Any] = {"killed": killed, "alive": len(results[0].config.capacities) - killed,
                           "runs": len(rows)}
    for key, value in rows[0].items():
        if isinstance(value, bool | int | float):
            out[key] = float(np.mean([r[key] for r in rows]))
        else:
            out[key] = value
    return out


def run_grid(spec: GridSpec, progress: Callable[[int], object] | None = None) -> list[dict[str, Any]]:
    rows = []
    for killed in spec.kills:
        sets = spec.victims(killed)
        for assignor, protocol in spec.variants:
            results = [simulate(spec.config(assignor, protocol, v, run=i)) for i, v in enumerate(sets)]
            rows.append(_aggregate(killed, results))
            if progress:
                progress(1)
    return rows


def compare(rows: list[dict[str, Any]], a: str, b: str, metric: str = "latency_p50_s") -> dict[int, float]:
    """Per ``killed``: relative difference ``(b - a) / b`` of ``metric`` (positive: ``a`` is lower)."""
    out: dict[int, float] = {}
    for k in sorted({r["killed"] for r in rows}):
        va = [r[metric] for r in rows if r["killed"] == k and f"{r['assignor']}/{r['protocol']}" == a]
        vb = [r[metric] for r in rows if r["killed"] == k and f"{r['assignor']}/{r['protocol']}" == b]
        if va and vb and vb[0] and np.isfinite(vb[0]):
            out[k] = float((vb[0] - va[0]) / vb[0])
    return out
