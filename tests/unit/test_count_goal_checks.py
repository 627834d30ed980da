"""The count goals' one-pair checks (``replica_ok_one``, ``leader_ok``, in Python scalars) against their
array form (``replica_ok``), and the count band kept between moves against a fresh one, on seeded random
states: the per-move hard-constraint checks use the scalar form, so the two must agree everywhere."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from kafka_balancer.planner.count_goals import make_goal
from kafka_balancer.planner.count_goals.base import _band_delta, _step_delta
from kafka_balancer.planner.state import State
from kafka_balancer.sim.cluster import ClusterSpec, generate

SPEC = ClusterSpec(brokers=10, brokers_per_host=2, racks=3, topics=6, partitions=120, new_brokers=2, name="checks")
GOALS = ("replica_count", "leader_count", "potential_nw_out", "topic_spread", "rack_repair")


def _random_moves(st: State, rng: np.random.Generator, n: int) -> None:
    """``n`` random replica and leadership moves, whatever they do to balance (the checks must agree on any
    state)."""
    live = np.nonzero(st.alive)[0]
    for _ in range(n):
        p = int(rng.integers(st.snap.n_partitions))
        row = [int(b) for b in st.rep[p] if b >= 0]
        if rng.random() < 0.3 and len(row) > 1:
            st.move_leadership(p, int(rng.choice(row)))
            continue
        free = [int(b) for b in live if b not in row]
        if free:
            st.move_replica(p, int(rng.choice(row)), int(rng.choice(free)))


@pytest.mark.parametrize("seed", range(12))
def test_one_pair_checks_agree_with_the_array_form(seed: int) -> None:
    snap = generate(replace(SPEC, dead_brokers=seed % 2), seed=seed)
    st = State(snap, 0.8, 0.1, 0.97)
    rng = np.random.default_rng(seed)
    goals = [make_goal(g, 0.8) for g in GOALS]
    checked = 0
    for _round in range(4):
        _random_moves(st, rng, 25)
        for _ in range(150):
            p = int(rng.integers(snap.n_partitions))
            row = [int(b) for b in st.rep[p] if b >= 0]
            src = int(rng.choice(row))
            dst = int(rng.integers(snap.n_brokers))
            for g in goals:
                one = g.replica_ok_one(st, p, src, dst)
                arr = bool(g.replica_ok(st, np.array([p]), src, np.array([dst]))[0, 0])
                assert one == arr, (g.name, p, src, dst)
                checked += 1
    assert checked == 4 * 150 * len(GOALS)


@pytest.mark.parametrize("seed", range(6))
def test_the_kept_band_is_the_fresh_band(seed: int) -> None:
    snap = generate(replace(SPEC, dead_brokers=1), seed=seed)
    st = State(snap, 0.8, 0.1, 0.97)
    rng = np.random.default_rng(100 + seed)
    # replicas leaving the dead broker raise the live brokers' total, and with it the band
    goal, fresh = make_goal("replica_count", 0.8), make_goal("replica_count", 0.8)
    bands = set()
    for _ in range(40):
        _random_moves(st, rng, 5)
        kept = goal.band(st)  # type: ignore[attr-defined]
        fresh._band_cache = None  # type: ignore[attr-defined]
        assert kept == fresh.band(st)  # type: ignore[attr-defined]
        bands.add(kept)
    assert len(bands) > 1  # the band did move, so a stale one would have been caught
    # another state of the same snapshot is not served the first one's band
    other = State(snap, 0.8, 0.1, 0.97)
    fresh._band_cache = None  # type: ignore[attr-defined]
    assert goal.band(other) == fresh.band(other)  # type: ignore[attr-defined]


@pytest.mark.parametrize("step", [+1, -1])
def test_step_delta_is_band_delta(step: int) -> None:
    counts = np.arange(-3, 30)
    for lo, hi in ((4.0, 9.0), (0.0, 1.0), (10.0, 10.0)):
        want = _band_delta(counts, lo, hi, step)
        got = [_step_delta(int(c), lo, hi, step) for c in counts]
        assert got == want.tolist()
