"""Count-goal swaps skip the exact resource guard where it certainly refuses (count_goals/swaps.py,
``_guard_refuses``): every pair it marks must be one the guard refuses, on seeded random states."""

from __future__ import annotations

import numpy as np
import pytest
from planner_walk import broker_pairs

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.count_goals.swaps import _guard_refuses, _pairs
from kafka_balancer.planner.goals import DistributionGoal
from kafka_balancer.planner.state import State
from kafka_balancer.sim.cluster import PRESETS, generate


def _guard_passes(st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[A, B+1]: the exact guard's answer for every pair (no violation of ``hi`` or ``lo`` grows)."""
    ii, jj, _, _ = _pairs(st, hi, lo, a, b, np.ones((a.size, b.size + 1)), True)
    ok = np.zeros((a.size, b.size + 1), dtype=bool)
    ok[ii, jj] = True
    return ok


@pytest.mark.parametrize(("preset", "seed"), [("overloaded", 0), ("overloaded", 3), ("hetero", 1), ("racks48", 2)])
def test_a_pair_marked_as_refused_is_refused_by_the_guard(preset: str, seed: int) -> None:
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97)
    marked = 0
    for hi, lo in broker_pairs(st, seed, 12):
        a, b = st.members_arr(hi), st.members_arr(lo)
        refused = _guard_refuses(st, hi, lo, a, b)
        assert not (refused & _guard_passes(st, hi, lo, a, b)).any()
        marked += int(refused.sum())
    if preset == "overloaded":
        assert marked > 0  # every broker is above θ on disk: the check has work to do
    if preset == "racks48":
        assert marked == 0  # no broker above θ: nothing is certain without judging


def test_a_rising_broker_is_above_theta() -> None:
    st = State(generate(PRESETS["overloaded"], seed=0), 0.8, 0.1, 0.97)
    u = st.load / st.cap
    for b in range(st.snap.n_brokers):
        assert not (st.rising(b) & (u[b] <= 0.8)).any()


def test_a_broker_above_theta_but_below_a_steep_band_is_not_rising() -> None:
    """Broker 1 at utilisation 0.85 on every resource, under a band of 0.9-1.0 around a target of 0.05:
    there the band term falls (slope 20) faster than the capacity term rises (10 / 0.8 = 12.5), so load
    added to it lowers its violation. Broker 0, at 1.2, is above the band: giving load away lowers its
    own. The guard lets partition 0 (0.04 of a broker) move from 0 to 1, and it must not be marked."""
    snap = Snapshot.build(
        broker_ids=[0, 1], capacity=np.full((2, 4), 100.0), topics=["t"], topic_idx=[0, 0, 0],
        partition=[0, 1, 2], replicas=[[0], [0], [1]], leader=[0, 0, 1],
        leader_load=np.array([[4.0] * 4, [116.0] * 4, [85.0] * 4]),
        follower_load=np.array([[2.0] * 4, [58.0] * 4, [40.0] * 4]),
    )
    st = State(snap, 0.8, 0.1, 0.97)
    st.distribution_goal = DistributionGoal(target=np.full(4, 0.05), lo=np.full(4, 0.9), hi=np.full(4, 1.0))
    assert not st.rising(1).any()
    assert st.rising(0).all()
    a, b = st.members_arr(0), st.members_arr(1)
    small = int(np.nonzero(a == 0)[0][0])
    assert _guard_passes(st, 0, 1, a, b)[small, -1]
    assert not _guard_refuses(st, 0, 1, a, b)[small, -1]
