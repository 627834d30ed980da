"""What an assignor returns, and the numbers every report needs (loads, lower bound, moves).

An assignment is an owner array: ``owner[p]`` is the member position that gets partition ``p``.
Under the cooperative protocol a rebalance has two rounds: in round one a partition that changes
hands is assigned to nobody (its old owner revokes it), in round two it reaches its new owner.

Example:
    >>> import numpy as np
    >>> prev = np.array([0, 0, 1]); target = np.array([0, 1, 1])
    >>> cooperative_round1(prev, target).tolist()
    [0, -1, 1]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem, FloatArray, IntArray

EAGER = "eager"
COOPERATIVE = "cooperative"


def cooperative_round1(prev_owner: IntArray, target: IntArray) -> IntArray:
    """Round one of a cooperative rebalance: partitions moving away from a live owner go to nobody."""
    round1 = target.copy()
    moving = (prev_owner >= 0) & (prev_owner != target)
    round1[moving] = -1
    return round1


@dataclass(frozen=True, eq=False)
class AssignmentResult:
    """The final (target) owner of each partition, and round one when cooperative."""

    strategy: str
    protocol: str
    owner: IntArray
    round1: IntArray

    @staticmethod
    def build(
        strategy: str, problem: AssignmentProblem, owner: IntArray, protocol: str = EAGER
    ) -> AssignmentResult:
        owner = np.asarray(owner, dtype=np.int64)
        round1 = cooperative_round1(problem.prev_owner, owner) if protocol == COOPERATIVE else owner
        return AssignmentResult(strategy, protocol, owner, round1)


def member_loads(problem: AssignmentProblem, owner: IntArray) -> FloatArray:
    """Sum of partition loads per member (raw, not divided by capacity)."""
    ok = owner >= 0
    return np.bincount(owner[ok], weights=problem.load[ok], minlength=problem.n_members).astype(np.float64)


def normalised_loads(problem: AssignmentProblem, owner: IntArray) -> FloatArray:
    """Per-member load divided by capacity: the quantity ``balanced`` minimises the maximum of."""
    return member_loads(problem, owner) / problem.capacity


def seq_sum(values: FloatArray) -> float:
    """Left-to-right sum (numpy's ``sum`` is pairwise): the broker-side plugin adds in the same order,
    so both implementations see the same bits and break ties alike.

    Example:
        >>> seq_sum(np.array([0.1, 0.2, 0.3]))
        0.6000000000000001
    """
    return float(np.cumsum(values)[-1]) if values.size else 0.0


def lower_bound(problem: AssignmentProblem) -> float:
    """A lower bound on the best achievable max normalised load.

    The largest of: total load ÷ total capacity; for each subscription class (topics with the same
    subscribers), that class's load ÷ its members' capacity; and each partition's load ÷ the largest
    capacity among the members that may take it.

    Example:
        >>> from kafka_balancer.consumer.problem import problem_from_arrays
        >>> lower_bound(problem_from_arrays(2, [5.0, 1.0, 1.0]))
        5.0
    """
    if problem.n_partitions == 0:
        return 0.0
    cls, members_of = problem.subscription_classes()
    class_load = np.bincount(cls, weights=problem.load, minlength=len(members_of))
    best = seq_sum(problem.load) / seq_sum(problem.capacity)
    for k, mem in enumerate(members_of):
        cap = problem.capacity[mem]
        best = max(best, float(class_load[k]) / seq_sum(cap))
        in_k = cls == k
        if in_k.any():
            best = max(best, float(problem.load[in_k].max() / cap.max()))
    return best


@dataclass(frozen=True)
class AssignmentStats:
    max_load: float
    mean_load: float
    lower_bound: float
    ratio: float  # max_load / lower_bound (1.0 is optimal)
    moved: int
    moved_load: float
    count_spread: int  # max - min partitions per member

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_load": self.max_load, "mean_load": self.mean_load, "lower_bound": self.lower_bound,
            "ratio": self.ratio, "moved": self.moved, "moved_load": self.moved_load,
            "count_spread": self.count_spread,
        }


def stats(problem: AssignmentProblem, owner: IntArray) -> AssignmentStats:
    """Max/mean normalised load, the lower bound, the distance to it, and the moves made."""
    norm = normalised_loads(problem, owner)
    lb = lower_bound(problem)
    mx = float(norm.max()) if norm.size else 0.0
    moved_mask = (problem.prev_owner >= 0) & (problem.prev_owner != owner)
    counts = np.bincount(owner[owner >= 0], minlength=problem.n_members)
    return AssignmentStats(
        max_load=mx,
        mean_load=float(problem.load.sum() / problem.n_members),
        lower_bound=lb,
        ratio=(mx / lb) if lb > 0 else 1.0,
        moved=int(moved_mask.sum()),
        moved_load=float(problem.load[moved_mask].sum()),
        count_spread=int(counts.max() - counts.min()) if counts.size else 0,
    )


def assignment_lists(problem: AssignmentProblem, owner: IntArray) -> dict[str, list[list[Any]]]:
    """``{member_id: [[topic, partition], ...]}`` sorted by topic then partition; every member listed."""
    out: dict[str, list[list[Any]]] = {mid: [] for mid in problem.member_ids}
    order = np.lexsort((problem.partition, problem.topic_idx))
    topics = problem.topics
    for p in order.tolist():
        o = int(owner[p])
        if o >= 0:
            out[problem.member_ids[o]].append([topics[int(problem.topic_idx[p])], int(problem.partition[p])])
    for lst in out.values():
        lst.sort()
    return out
