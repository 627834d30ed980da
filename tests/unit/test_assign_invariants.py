"""Every assignor, on many seeded random groups, passes the one shared invariant checker."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.consumer.assignors import STRATEGIES, run
from kafka_balancer.consumer.invariants import check_result, owner_from_lists, violations
from kafka_balancer.consumer.problem import problem_from_arrays
from kafka_balancer.consumer.result import assignment_lists, stats
from kafka_balancer.consumer.workloads import random_problem

SEEDS = range(60)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize("protocol", ["eager", "cooperative"])
def test_random_groups_satisfy_invariants(name: str, protocol: str) -> None:
    for seed in SEEDS:
        problem = random_problem(seed)
        result = run(name, problem, protocol=protocol)
        check_result(problem, result)
        # the dict form round-trips to the same owners
        back = owner_from_lists(problem, assignment_lists(problem, result.owner))
        assert np.array_equal(back, result.owner), (name, seed)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_assignors_do_not_mutate_the_problem(name: str) -> None:
    problem = random_problem(7)
    before = (problem.prev_owner.copy(), problem.load.copy(), problem.capacity.copy())
    run(name, problem)
    assert np.array_equal(before[0], problem.prev_owner)
    assert np.array_equal(before[1], problem.load)
    assert np.array_equal(before[2], problem.capacity)


def test_checker_catches_each_broken_rule() -> None:
    p = problem_from_arrays(2, [1.0, 2.0, 3.0], prev_owner=[0, 0, 1])
    assert violations(p, np.array([0, 1, -1])) == ["partition t-2 is not assigned to any member"]
    assert "out of range" in violations(p, np.array([0, 1, 2]))[0]
    # round one may not hand t-1 to member 1 while member 0 still owns it
    bad = violations(p, np.array([0, 1, 1]), round1=np.array([0, 1, 1]))
    assert any("still owns it" in v for v in bad)
    # nor withhold a partition that does not move
    bad = violations(p, np.array([0, 1, 1]), round1=np.array([-1, -1, 1]))
    assert any("withholds t-0" in v for v in bad)
    with pytest.raises(AssertionError, match="assigned twice"):
        owner_from_lists(p, {"c0": [["t", 0]], "c1": [["t", 0]]})


def test_mixed_subscriptions_respected_by_balanced() -> None:
    for seed in SEEDS:
        problem = random_problem(seed, mixed=True)
        owner = run("balanced", problem).owner
        assert problem.subscribed[owner, problem.topic_idx].all()
        assert stats(problem, owner).ratio >= 1.0 - 1e-9
