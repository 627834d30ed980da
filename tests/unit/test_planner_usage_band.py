"""The usage band (docs/planner.md, "The goal policy"): its measure by hand, its place in the policy, and
what it does to a plan: lower σ, within its byte allowance, never at a higher goal's expense."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner import plan, usage_band
from kafka_balancer.planner.invariants import hard_violations
from kafka_balancer.planner.plan import POLISH_SHARE, PlanResult
from kafka_balancer.planner.policy import COUNT_GOALS, DEFAULT_GOALS, DESCRIPTIONS, USAGE_BAND, parse_goals
from kafka_balancer.planner.state import State
from kafka_balancer.sim.cluster import PRESETS, generate

WITHOUT = ",".join(g for g in DEFAULT_GOALS if g != USAGE_BAND)


def _goal(r: PlanResult, name: str) -> float:
    return next(g.after for g in r.goals if g.name == name)


def test_the_band_by_hand() -> None:
    # four brokers of 1 TB, one partition each: disk 0.30 / 0.40 / 0.40 / 0.50 of capacity, target 0.40 (the
    # mean), so -25 % and +25 %: two pairs outside ±7.5 %; CPU and network are the same on every broker
    sizes = [3e11, 4e11, 4e11, 5e11]
    lead = np.array([[10.0, s, 1e6, 1e6] for s in sizes])
    snap = Snapshot.build(
        broker_ids=[0, 1, 2, 3], capacity=np.tile([100.0, 1e12, 1e8, 1e8], (4, 1)), topics=["t"],
        topic_idx=[0] * 4, partition=[0, 1, 2, 3], replicas=[[0], [1], [2], [3]], leader=[0, 1, 2, 3],
        leader_load=lead, follower_load=lead,
    )
    st = State(snap, 0.8, 0.1, 0.97)
    assert usage_band.deviation(st)[:, 1] == pytest.approx([-0.25, 0.0, 0.0, 0.25])
    assert usage_band.deviation(st)[:, [0, 2, 3]] == pytest.approx(np.zeros((4, 3)))
    n, detail = usage_band.violation(st)
    assert n == 2.0 and "2 (broker, resource) pair(s) more than 7.5 % off the target" in detail
    assert "largest cpu 0.0 %, disk 25.0 %, nw_in 0.0 %, nw_out 0.0 %" in detail
    assert f"±{usage_band.BAND * 100:g} %" in DESCRIPTIONS[USAGE_BAND]


def test_it_comes_last_after_both_resource_goals() -> None:
    assert DEFAULT_GOALS[-1] == USAGE_BAND
    assert parse_goals("capacity,distribution,usage_band")[-1] == USAGE_BAND
    for bad in ("usage_band,capacity,distribution", "capacity,distribution,usage_band,replica_count",
                "capacity,usage_band", "usage_band"):
        with pytest.raises(InputError, match="usage_band must come last, after capacity and distribution"):
            parse_goals(bad)


@pytest.mark.parametrize("seed", [2, 3])
def test_it_lowers_sigma_within_its_allowance(seed: int) -> None:
    # racks48 seeds 2 and 3: seed 001's goals alone leave brokers balanced but up to ±10 % apart
    snap = generate(PRESETS["racks48"], seed=seed)
    alone = plan(snap, goals="capacity,distribution")
    banded = plan(snap, goals="capacity,distribution,usage_band")
    assert alone.after.balanced() and banded.after.balanced()
    assert _goal(banded, USAGE_BAND) < usage_band.violation(State(alone.after_snapshot, 0.8, 0.1, 0.97))[0]
    assert banded.after.resources["disk"].sigma < alone.after.resources["disk"].sigma
    bound = banded.moved_bytes_lower_bound
    assert alone.moved_bytes <= POLISH_SHARE * bound * (1 + 1e-9)
    cap = usage_band.allowance(POLISH_SHARE * bound, State(snap, 0.8, 0.1, 0.97))
    assert alone.moved_bytes < banded.moved_bytes <= cap * (1 + 1e-9)
    assert hard_violations(snap, banded.after_snapshot) == []
    assert "move(s) for this goal" in next(g.detail for g in banded.goals if g.name == USAGE_BAND)


@pytest.mark.parametrize(("preset", "seed"), [("racks48", 0), ("racks48", 2), ("new-brokers", 0), ("paper", 0)])
def test_no_higher_goal_pays_for_it(preset: str, seed: int) -> None:
    # the band's moves come after the count goals, guarded by all of them: none ends worse than without it
    snap = generate(PRESETS[preset], seed=seed)
    without = plan(snap, goals=WITHOUT)
    full = plan(snap)
    assert full.after.balanced() and without.after.balanced()
    for name in COUNT_GOALS:
        assert _goal(full, name) <= _goal(without, name) + 1e-9, name
    assert _goal(full, USAGE_BAND) <= usage_band.violation(State(without.after_snapshot, 0.8, 0.1, 0.97))[0]
    assert hard_violations(snap, full.after_snapshot) == []


def test_an_operator_allowance_caps_it_and_polish_zero_turns_it_off() -> None:
    snap = generate(PRESETS["racks48"], seed=2)
    off = plan(snap, polish_share=0.0)
    assert "0 move(s) for this goal" in next(g.detail for g in off.goals if g.name == USAGE_BAND)
    # without count goals (which spend bytes of their own) an allowance named in bytes caps the whole plan
    goals = "capacity,distribution,usage_band"
    free = plan(snap, goals=goals)
    allowance = 0.9 * free.moved_bytes
    capped = plan(snap, goals=goals, polish_bytes=allowance)
    assert capped.moved_bytes <= allowance * (1 + 1e-9)


def test_the_allowance_by_hand() -> None:
    # replicas of 10, 20 and 30 GB, and two of 40 GB: 140 GB over 5 replicas, 28 GB on average
    sizes = [10e9, 20e9, 30e9, 40e9]
    load = np.array([[1.0, s, 1e6, 1e6] for s in sizes])
    snap = Snapshot.build(
        broker_ids=[0, 1, 2], capacity=np.tile([100.0, 1e12, 1e8, 1e8], (3, 1)), topics=["t"],
        topic_idx=[0] * 4, partition=[0, 1, 2, 3], replicas=[[0], [1], [2], [0, 1]], leader=[0, 1, 2, 0],
        leader_load=load, follower_load=load,
    )
    st = State(snap, 0.8, 0.1, 0.97)
    assert usage_band.allowance(100e9, st) == pytest.approx(usage_band.SHARE * 100e9 + usage_band.GRAIN * 28e9)
    # no polishing allowance (--polish 0, or a bound of 0): no band either
    assert usage_band.allowance(0.0, st) == 0.0


def test_the_grain_lets_a_small_cluster_make_its_swap() -> None:
    # the 6-broker testbed, seed 6: a byte bound of 38 GB against replicas of 31 GB on average; 3 × the bound
    # was spent before the band's turn, and CPU stayed 1.10 × as uneven as Cruise Control's fast mode left it
    snap = generate(PRESETS["paper"], seed=6)
    r = plan(snap)
    assert r.moved_bytes > usage_band.SHARE * POLISH_SHARE * r.moved_bytes_lower_bound
    assert r.after.resources["cpu"].sigma < 0.0070  # 0.0085 without the grain; Cruise Control 0.0077
    assert r.after.balanced() and hard_violations(snap, r.after_snapshot) == []
