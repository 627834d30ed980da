"""The swap strategy skips a pair of brokers between which no load change can lower the total violation
(strategies/swap.py, ``_cannot_gain``, from the slopes of edges.py). The skip must never drop a swap the judge
would accept: checked here against the judge itself, on every pair of replicas, on seeded random states."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from planner_walk import broker_pairs

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.goals import CapacityGoal
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies import swap
from kafka_balancer.sim.cluster import PRESETS, generate


def _best_gain(st: State, hi: int, lo: int) -> float:
    """The judge's largest gain over every swap between ``hi`` and ``lo`` (and every single move)."""
    la, lb = st.member_roles(hi), st.member_roles(lo)
    lb = np.vstack([lb, np.zeros((1, la.shape[1]))])
    net = (la[:, None, :] - lb[None, :, :]).reshape(-1, la.shape[1])
    _, g_hi = st.judge(st.load[hi] / st.cap[hi], (st.load[hi] - net) / st.cap[hi])
    _, g_lo = st.judge(st.load[lo] / st.cap[lo], (st.load[lo] + net) / st.cap[lo])
    return float((g_hi + g_lo).max())


@pytest.mark.parametrize(("preset", "seed"), [("overloaded", 0), ("overloaded", 3), ("hetero", 1), ("racks48", 2)])
def test_a_skipped_pair_of_brokers_has_no_gaining_swap(preset: str, seed: int) -> None:
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97)
    rng = np.random.default_rng(seed)
    live = np.nonzero(st.alive)[0].tolist()
    skipped = 0
    for _ in range(2):
        for hi, lo in itertools.permutations(live, 2):
            if swap._cannot_gain(st, hi, lo):
                skipped += 1
                assert _best_gain(st, hi, lo) <= 1e-9, (hi, lo)
        # move on to another state: random replicas to random brokers that hold none of their partition
        for _ in range(20):
            hi, lo = (int(x) for x in rng.choice(live, size=2, replace=False))
            free = [int(p) for p in st.members_arr(hi) if lo not in st.rep[p]]
            if free:
                st.move_replica(free[int(rng.integers(len(free)))], hi, lo)
    assert skipped > 0  # brokers on the same slopes on every resource: the check has work to do


@pytest.mark.parametrize(("preset", "seed"), [("overloaded", 1), ("hetero", 0), ("paper", 2)])
def test_slopes_match_the_violation_on_either_side(preset: str, seed: int) -> None:
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97)
    h = 1e-7
    for b in np.nonzero(st.alive)[0].tolist():
        u = st.load[b] / st.cap[b]
        left, right = st.edges(b).left, st.edges(b).right
        v = st.violation_of(u)
        np.testing.assert_allclose((v - st.violation_of(u - h)) / h, left, atol=1e-4)
        np.testing.assert_allclose((st.violation_of(u + h) - v) / h, right, atol=1e-4)


def _two(util_lo: float) -> State:
    """Broker 0 at utilisation 0.9 on every resource, in nine partitions of 0.1; broker 1 at ``util_lo``, in
    one partition. θ 0.8, equal capacities, ε 0.1 (the band is the target ± 9.7 %)."""
    lead = np.array([[10.0] * 4] * 9 + [[util_lo * 100.0] * 4])
    snap = Snapshot.build(
        broker_ids=[0, 1], capacity=np.full((2, 4), 100.0), topics=["t"], topic_idx=[0] * 10,
        partition=list(range(10)), replicas=[[0]] * 9 + [[1]], leader=[0] * 9 + [1], leader_load=lead,
        follower_load=lead * 0.5,
    )
    return State(snap, 0.8, 0.1, 0.97)


def test_two_brokers_on_the_same_slopes_cannot_gain() -> None:
    """Target 0.875, band 0.79-0.96: both brokers (0.9 and 0.85) are inside the band and above θ, so a unit
    of load costs the same on either: moving any of it from one to the other lowers nothing."""
    st = _two(0.85)
    assert swap._cannot_gain(st, 0, 1)
    assert _best_gain(st, 0, 1) <= 1e-9
    st.polishing = True  # another cost: not decided here
    assert not swap._cannot_gain(st, 0, 1)


def test_a_partner_below_theta_and_the_band_can_gain() -> None:
    """Target 0.8, band 0.72-0.80 (θ caps it): broker 1 at 0.7 is below θ and below the band, so a partition
    of 0.1 leaving broker 0 (above θ) for it lowers both brokers' violations."""
    st = _two(0.7)
    assert not swap._cannot_gain(st, 0, 1)
    assert _best_gain(st, 0, 1) > 1e-9


@pytest.mark.parametrize(("preset", "seed"), [("overloaded", 0), ("overloaded", 3), ("hetero", 1), ("racks48", 2)])
def test_a_pair_left_unjudged_breaks_a_goal(preset: str, seed: int) -> None:
    """``_keeps_goals`` drops pairs before the judge; each one it drops must be one the judge calls bad."""
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97)
    dropped = 0
    for hi, lo in broker_pairs(st, seed, 30):
        la, lb = st.member_roles(hi), st.member_roles(lo)
        lb = np.vstack([lb, np.zeros((1, la.shape[1]))])
        net = la[:, None, :] - lb[None, :, :]
        drop = ~swap._keeps_goals(st, hi, lo, net)
        flat = net[drop]
        bad_hi, _ = st.judge(st.load[hi] / st.cap[hi], (st.load[hi] - flat) / st.cap[hi])
        bad_lo, _ = st.judge(st.load[lo] / st.cap[lo], (st.load[lo] + flat) / st.cap[lo])
        assert (bad_hi | bad_lo).all()
        dropped += flat.shape[0]
    assert dropped > 0


def test_the_holding_range_is_the_band_under_theta() -> None:
    """Target 0.8, band 0.72-0.80 (θ caps its top). Broker 1 at 0.7 is below the band: no goal holds there,
    so nothing bounds it. Once a partition of 0.1 has moved to it, it sits at 0.8 with every goal holding,
    and its range is the band's, widened by the 1e-9 margin."""
    st = _two(0.7)
    e = st.edges(1)
    assert e.low == [-np.inf] * 4 and e.top == [np.inf] * 4
    st.move_replica(0, 0, 1)
    e = st.edges(1)  # a new version of broker 1: computed again
    np.testing.assert_allclose(e.low, st.distribution_goal.lo - 1e-9, rtol=0, atol=1e-15)
    np.testing.assert_allclose(e.top, np.full(4, 0.8 + 1e-9), rtol=0, atol=1e-15)


def test_edges_follow_the_goals() -> None:
    """Broker 1 at 0.85: above θ = 0.8, its right slope carries the capacity term (12.5); once θ is 0.9 it
    does not, and the cached edges must not survive the change of goal."""
    st = _two(0.85)
    assert st.edges(1).right[0] == pytest.approx(12.5)
    st.capacity_goal = CapacityGoal(0.9)
    assert st.edges(1).right[0] == pytest.approx(0.0)
