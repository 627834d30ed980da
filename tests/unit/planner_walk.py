"""Seeded random walks over a planner ``State``, for tests that hold a shortcut to the exact rule on many
states: each step names two live brokers, the test checks them, then one random replica moves from the
first to the second (one whose partition the second does not hold), so the next step sees a new state."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from kafka_balancer.planner.state import State


def broker_pairs(st: State, seed: int, steps: int) -> Iterator[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    live = np.nonzero(st.alive)[0]
    for _ in range(steps):
        hi, lo = (int(x) for x in rng.choice(live, size=2, replace=False))
        yield hi, lo
        free = [int(p) for p in st.members_arr(hi) if lo not in st.rep[p]]
        if free:
            st.move_replica(free[int(rng.integers(len(free)))], hi, lo)
