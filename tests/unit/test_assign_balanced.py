"""``balanced``: distance to the lower bound, never worse than paper/range, stickiness, budget."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.consumer.assignors import run
from kafka_balancer.consumer.problem import problem_from_arrays
from kafka_balancer.consumer.result import lower_bound, stats
from kafka_balancer.consumer.workloads import random_problem, zipf_loads


@pytest.mark.parametrize(("partitions", "members"), [(1000, 10), (1000, 100), (10_000, 100), (10_000, 1000)])
@pytest.mark.parametrize("s", [0.5, 0.8, 1.0, 1.2])
def test_zipf_within_five_percent_of_lower_bound(partitions: int, members: int, s: float) -> None:
    problem = problem_from_arrays(members, zipf_loads(partitions, s, seed=partitions + members))
    st = stats(problem, run("balanced", problem).owner)
    assert st.max_load <= 1.05 * st.lower_bound


def test_never_worse_than_paper_or_range_on_random_groups() -> None:
    for seed in range(80):
        problem = random_problem(seed, owned=False)
        ours = stats(problem, run("balanced", problem).owner).max_load
        for other in ("paper", "range", "roundrobin", "sticky"):
            theirs = stats(problem, run(other, problem).owner).max_load
            assert ours <= theirs * (1 + 1e-9), (seed, other, ours, theirs)


def test_beats_count_based_and_paper_on_skew() -> None:
    problem = problem_from_arrays(6, zipf_loads(60, 1.0, seed=3))
    ours = stats(problem, run("balanced", problem).owner).max_load
    for other in ("paper", "range", "roundrobin", "sticky"):
        assert ours < stats(problem, run(other, problem).owner).max_load


def test_capacity_weighting_gives_the_fast_member_more() -> None:
    problem = problem_from_arrays(2, np.ones(30), capacity=[1.0, 2.0])
    owner = run("balanced", problem).owner
    counts = np.bincount(owner, minlength=2)
    assert counts.tolist() == [10, 20]
    assert lower_bound(problem) == pytest.approx(10.0)


def test_sticky_when_already_balanced() -> None:
    loads = zipf_loads(500, 0.8, seed=1)
    fresh = problem_from_arrays(8, loads)
    first = run("balanced", fresh).owner
    again = problem_from_arrays(8, loads, prev_owner=first)
    st = stats(again, run("balanced", again).owner)
    assert st.moved == 0


def test_member_leaving_moves_only_its_partitions_when_enough() -> None:
    loads = zipf_loads(2000, 0.6, seed=2)
    first = run("balanced", problem_from_arrays(10, loads)).owner
    prev = np.where(first == 9, -1, first)
    problem = problem_from_arrays(9, loads, prev_owner=prev)
    st = stats(problem, run("balanced", problem).owner)
    assert st.ratio <= 1.02
    assert st.moved <= 20  # the orphans are free; survivors barely move (sticky)
    sticky = stats(problem, run("sticky", problem).owner)
    assert st.moved <= sticky.moved


def test_member_joining_respects_budget() -> None:
    loads = zipf_loads(1000, 0.6, seed=4)
    first = run("balanced", problem_from_arrays(10, loads)).owner
    problem = problem_from_arrays(11, loads, prev_owner=first)
    free = stats(problem, run("balanced", problem).owner)
    capped = stats(problem, run("balanced", problem, max_moves=3).owner)
    assert capped.moved <= 3 < free.moved
    assert free.max_load < capped.max_load
    assert free.ratio <= 1.02


def test_cooperative_round_one_revokes_exactly_the_moves() -> None:
    loads = zipf_loads(300, 0.6, seed=5)
    first = run("balanced", problem_from_arrays(5, loads)).owner
    problem = problem_from_arrays(6, loads, prev_owner=first)
    result = run("balanced", problem, protocol="cooperative")
    moving = problem.prev_owner != result.owner
    assert moving.any()
    assert (result.round1[moving] == -1).all()
    assert (result.round1[~moving] == result.owner[~moving]).all()


def test_reports_lower_bound_from_largest_partition() -> None:
    problem = problem_from_arrays(4, [100.0, 1.0, 1.0, 1.0])
    st = stats(problem, run("balanced", problem).owner)
    assert st.lower_bound == 100.0 and st.ratio == 1.0
