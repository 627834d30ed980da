"""``sticky``/``cooperative-sticky`` against kafka-python's own StickyAssignmentExecutor."""

from __future__ import annotations

import numpy as np
from kafka.coordinator.assignors.sticky.sticky_assignor import (
    StickyAssignmentExecutor,
    StickyAssignorMemberMetadataV1,
)
from kafka.structs import TopicPartition

from kafka_balancer.consumer.assignors import run
from kafka_balancer.consumer.invariants import owner_from_lists, violations
from kafka_balancer.consumer.problem import AssignmentProblem, problem_from_arrays
from kafka_balancer.consumer.result import stats
from kafka_balancer.consumer.workloads import random_problem


class _Metadata:
    """The two ClusterMetadata methods the executor reads, over our problem."""

    def __init__(self, problem: AssignmentProblem) -> None:
        self.problem = problem

    def topics(self) -> set[str]:
        return set(self.problem.topics)

    def partitions_for_topic(self, topic: str) -> set[int]:
        t = self.problem.topics.index(topic)
        return set(self.problem.partition[self.problem.topic_idx == t].tolist())


def _kafka_python_sticky(problem: AssignmentProblem) -> np.ndarray:
    members = {}
    for mi, mid in enumerate(problem.member_ids):
        owned = [TopicPartition(*problem.tp(int(i))) for i in np.flatnonzero(problem.prev_owner == mi)]
        topics = [problem.topics[int(t)] for t in np.flatnonzero(problem.subscribed[mi])]
        members[mid] = StickyAssignorMemberMetadataV1(subscription=topics, partitions=owned, generation=1)
    ex = StickyAssignmentExecutor(_Metadata(problem), members)
    ex.perform_initial_assignment()
    ex.balance()
    lists = {mid: [[t, q] for t, ps in ex.get_final_assignment(mid) for q in ps]
             for mid in problem.member_ids}
    return owner_from_lists(problem, lists)


def test_homogeneous_as_balanced_and_no_more_moves_than_kafka_python() -> None:
    for seed in range(80):
        problem = random_problem(seed, mixed=False, capacities=False)
        theirs = stats(problem, _kafka_python_sticky(problem))
        ours = stats(problem, run("sticky", problem).owner)
        assert ours.count_spread <= 1
        assert ours.count_spread <= theirs.count_spread
        assert ours.moved <= theirs.moved, seed


def test_mixed_reaches_kafkas_balance_criterion() -> None:
    """No partition can move to an eligible member with at least two fewer partitions."""
    for seed in range(60):
        problem = random_problem(seed, mixed=True, capacities=False)
        owner = run("sticky", problem).owner
        assert violations(problem, owner) == []
        assert violations(problem, _kafka_python_sticky(problem)) == []
        counts = np.bincount(owner, minlength=problem.n_members)
        for p in range(problem.n_partitions):
            eligible = np.flatnonzero(problem.subscribed[:, problem.topic_idx[p]])
            assert counts[eligible].min() >= counts[owner[p]] - 1, (seed, p)


def test_sticky_keeps_everything_when_already_even() -> None:
    problem = problem_from_arrays(3, np.ones(9), prev_owner=[2, 2, 2, 0, 0, 0, 1, 1, 1])
    assert stats(problem, run("sticky", problem).owner).moved == 0


def test_cooperative_sticky_round_one() -> None:
    problem = problem_from_arrays(3, np.ones(6), prev_owner=[0, 0, 0, 1, 1, 1])
    result = run("cooperative-sticky", problem)
    assert result.protocol == "cooperative"
    assert np.bincount(result.owner, minlength=3).tolist() == [2, 2, 2]
    moved = problem.prev_owner != result.owner
    assert moved.sum() == 2
    assert (result.round1[moved] == -1).all()
