"""The move loop's violations are kept per broker between steps, and only the rows of brokers a move touched
are recomputed (``State._violation_all``): after every step of a seeded walk of replica and leadership moves,
and after the goals change, they are the same, bit for bit, as computed afresh."""

from __future__ import annotations

import numpy as np
import pytest
from planner_walk import broker_pairs

from kafka_balancer.planner import bounds
from kafka_balancer.planner.goals import CapacityGoal
from kafka_balancer.planner.state import State
from kafka_balancer.sim.cluster import PRESETS, generate


@pytest.mark.parametrize(("preset", "seed"), [("overloaded", 0), ("hetero", 1), ("racks48", 2)])
def test_violations_kept_between_moves_equal_a_fresh_computation(preset: str, seed: int) -> None:
    snap = generate(PRESETS[preset], seed=seed)
    st = State(snap, theta=0.8, eps=0.1, margin=0.97)
    st.exempt_roles(bounds.hot_partitions(snap, 0.1)[1])
    rng = np.random.default_rng(seed)

    def fresh() -> np.ndarray:
        v = st.violation_of(st.load / st.cap)
        v[~st.alive] = 0.0
        v[st.out_of_reach()] = 0.0
        return v

    for step, (hi, _lo) in enumerate(broker_pairs(st, seed, 60)):
        assert np.array_equal(st.violations(), fresh())
        led = st.leaders_of(hi)
        if led.size and step % 3 == 0:
            p = int(led[int(rng.integers(led.size))])
            others = [int(b) for b in st.rep[p] if b >= 0 and b != hi and st.alive[b]]
            if others:
                st.move_leadership(p, others[0])
                assert np.array_equal(st.violations(), fresh())
        if step == 30:
            st.capacity_goal = CapacityGoal(0.6)
        if step == 40:
            st.distribution_goal = st.distribution_goal.towards_mean(
                st.util()[st.alive].mean(axis=0), 0.05, np.ones(st.cap.shape[1], dtype=bool)
            )
    assert np.array_equal(st.violations(), fresh())
