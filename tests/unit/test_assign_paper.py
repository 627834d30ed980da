"""``paper``: seed 000's dealing as written, on hand-worked examples."""

from __future__ import annotations

import numpy as np

from kafka_balancer.consumer.assignors import run
from kafka_balancer.consumer.assignors.paper import largest_divisor_at_most
from kafka_balancer.consumer.problem import Member, make_problem, problem_from_arrays


def test_n_equals_m_reverse_order_by_uptime() -> None:
    # c1 started first (longest receiving) -> gets the lightest; c3 newest -> heaviest
    members = [Member("c3", ("t",), start_ms=300), Member("c1", ("t",), start_ms=100),
               Member("c2", ("t",), start_ms=200)]
    problem = make_problem(members, [("t", 0, 1.0), ("t", 1, 9.0), ("t", 2, 5.0)])
    owner = run("paper", problem).owner
    ids = [problem.member_ids[o] for o in owner]
    assert ids == ["c1", "c3", "c2"]


def test_n_greater_than_m_chunks_of_ceiling_with_remainder_last() -> None:
    # 10 partitions, 4 consumers: chunks of ceil(10/4)=3 from the light end: 3, 3, 3, then 1 (the heaviest)
    loads = np.arange(1.0, 11.0)  # partition i has load i+1; heaviest is t-9
    problem = problem_from_arrays(4, loads, start_ms=[1, 2, 3, 4])
    owner = run("paper", problem).owner
    assert np.bincount(owner, minlength=4).tolist() == [3, 3, 3, 1]
    assert owner[9] == 3 and owner.tolist()[:3] == [0, 0, 0]


def test_chunks_can_leave_the_last_consumer_idle() -> None:
    problem = problem_from_arrays(6, np.arange(1.0, 11.0), start_ms=range(6))
    assert np.bincount(run("paper", problem).owner, minlength=6).tolist() == [2, 2, 2, 2, 2, 0]


def test_equal_loads_use_a_divisor_count_of_consumers() -> None:
    # 10 equal partitions, 4 consumers: k(m - z) = n with m - z = 2, so two consumers take 5 each
    problem = problem_from_arrays(4, np.ones(10), start_ms=range(4))
    assert np.bincount(run("paper", problem).owner, minlength=4).tolist() == [5, 5, 0, 0]
    assert largest_divisor_at_most(12, 5) == 4 and largest_divisor_at_most(7, 6) == 1


def test_fewer_partitions_than_consumers() -> None:
    problem = problem_from_arrays(4, [3.0, 1.0], start_ms=range(4))
    assert run("paper", problem).owner.tolist() == [1, 0]


def test_unknown_start_counts_as_newest() -> None:
    members = [Member("a", ("t",)), Member("b", ("t",), start_ms=5)]
    problem = make_problem(members, [("t", 0, 2.0), ("t", 1, 1.0)])
    owner = run("paper", problem).owner
    assert problem.member_ids[owner[1]] == "b"  # b has the longest uptime -> lightest
