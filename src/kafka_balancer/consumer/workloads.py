"""Seeded synthetic consumer-group workloads for tests, benchmarks and the simulator.

``zipf_loads(P, s, seed)``: partition ``r``-th heaviest has load ``∝ r^(-s)``, ranks shuffled over
partition numbers, scaled so the mean load is 1. ``random_problem(seed)``: a small random group
with optional mixed subscriptions, capacities, start times and previous owners.

Example:
    >>> zipf_loads(4, 1.0, seed=0).round(3).tolist()
    [0.64, 1.92, 0.96, 0.48]
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem, FloatArray, Member, make_problem


def zipf_loads(n: int, s: float = 1.0, seed: int = 0) -> FloatArray:
    """Zipf-skewed loads with mean 1, in random (seeded) partition order."""
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    base *= n / base.sum()
    return rng.permutation(base)


def random_problem(seed: int, *, mixed: bool = True, capacities: bool = True, owned: bool = True,
                   max_members: int = 12, max_topics: int = 4, max_partitions: int = 40) -> AssignmentProblem:
    """A random, valid problem; every topic has at least one subscriber."""
    rng = np.random.default_rng(seed)
    n_topics = int(rng.integers(1, max_topics + 1))
    topics = [f"t{i}" for i in range(n_topics)]
    parts: list[tuple[str, int, float]] = []
    for t in topics:
        n = int(rng.integers(1, max_partitions + 1))
        s = float(rng.uniform(0.0, 1.5))
        loads = zipf_loads(n, s, seed=int(rng.integers(1 << 30))) * float(rng.uniform(0.5, 20.0))
        if rng.random() < 0.2:
            loads[rng.random(n) < 0.3] = 0.0
        parts.extend((t, i, float(v)) for i, v in enumerate(loads))
    n_members = int(rng.integers(1, max_members + 1))
    subs: list[list[str]] = []
    for _ in range(n_members):
        if mixed and n_topics > 1:
            k = int(rng.integers(1, n_topics + 1))
            subs.append(sorted(rng.choice(topics, size=k, replace=False).tolist()))
        else:
            subs.append(list(topics))
    for t in topics:  # make sure each topic has a subscriber
        if not any(t in s for s in subs):
            subs[int(rng.integers(n_members))].append(t)
    owner_of: dict[tuple[str, int], int] = {}
    if owned:
        for t, p, _ in parts:
            if rng.random() < 0.7:
                owner_of[(t, p)] = int(rng.integers(n_members))
    members = []
    for i in range(n_members):
        own = tuple(tp for tp, o in owner_of.items() if o == i)
        members.append(Member(
            id=f"m{int(rng.integers(1000)):03d}-{i}", topics=tuple(sorted(subs[i])),
            start_ms=int(rng.integers(0, 10**6)) if rng.random() < 0.8 else None,
            capacity=float(rng.choice([0.5, 1.0, 2.0])) if capacities else 1.0, owned=own,
        ))
    return make_problem(members, parts)
