"""``sticky``: Kafka's StickyAssignor goals, reimplemented (count balance first, then stickiness).

Goals, as Kafka documents them: the partition counts per member are as even as the subscriptions
allow (for identical subscriptions: differ by at most one), and as many partitions as possible
stay with their previous owner. Loads are ignored.

Homogeneous subscriptions (vectorised): every member gets a quota of ``n // m`` partitions, and the
``n % m`` members that already own the most get one more; each member keeps up to its quota of
what it owned; the rest are dealt to the members below quota. Mixed subscriptions: keep what is
owned, give each free partition (fewest eligible members first) to the eligible member with the
fewest partitions, then move partitions from a member to an eligible one with at least two fewer
until none can move.

Example:
    >>> import numpy as np
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> p = problem_from_arrays(3, [1.0] * 6, prev_owner=[0, 0, 0, 0, 1, 1])
    >>> assign(p).owner.tolist()
    [0, 0, 2, 2, 1, 1]
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem, IntArray
from kafka_balancer.consumer.result import EAGER, AssignmentResult

NAME = "sticky"


def _id_rank(problem: AssignmentProblem) -> IntArray:
    ids = np.array(problem.member_ids, dtype=object)
    return np.argsort(np.argsort(ids, kind="stable"), kind="stable").astype(np.int64)


def _partition_order(problem: AssignmentProblem) -> IntArray:
    tnames = np.array(problem.topics, dtype=object)
    topic_rank = np.argsort(np.argsort(tnames, kind="stable"), kind="stable")
    return np.lexsort((problem.partition, topic_rank[problem.topic_idx])).astype(np.int64)


def _homogeneous(problem: AssignmentProblem) -> IntArray:
    M, P = problem.n_members, problem.n_partitions
    prev = problem.prev_owner
    rank = _id_rank(problem)
    q, rem = divmod(P, M)
    owned_count = np.bincount(prev[prev >= 0], minlength=M)
    quota = np.full(M, q, dtype=np.int64)
    if rem:
        quota[np.lexsort((rank, -owned_count))[:rem]] += 1
    porder = _partition_order(problem)
    pos_in_order = np.empty(P, dtype=np.int64)
    pos_in_order[porder] = np.arange(P)
    owned = np.flatnonzero(prev >= 0)
    owned = owned[np.lexsort((pos_in_order[owned], prev[owned]))]
    owners = prev[owned]
    starts = np.searchsorted(owners, owners, side="left")
    within = np.arange(owned.size) - starts
    keep = owned[within < quota[owners]]
    owner = np.full(P, -1, dtype=np.int64)
    owner[keep] = prev[keep]
    deficit = quota - np.bincount(owner[keep], minlength=M)
    free = porder[owner[porder] < 0]
    by_id = np.argsort(rank, kind="stable")
    owner[free] = np.repeat(by_id, deficit[by_id])
    return owner


def _mixed(problem: AssignmentProblem) -> IntArray:
    M, P = problem.n_members, problem.n_partitions
    sub = problem.subscribed
    tidx = problem.topic_idx
    rank = _id_rank(problem).tolist()
    prev = problem.prev_owner
    owner = prev.copy()
    count = np.bincount(owner[owner >= 0], minlength=M).tolist()
    eligible = [np.flatnonzero(sub[:, t]).tolist() for t in range(len(problem.topics))]
    porder = _partition_order(problem)
    free = [int(p) for p in porder.tolist() if owner[p] < 0]
    free.sort(key=lambda p: len(eligible[int(tidx[p])]))
    for p in free:
        m = min(eligible[int(tidx[p])], key=lambda c: (count[c], rank[c]))
        owner[p] = m
        count[m] += 1
    moved = True
    parts_of: list[list[int]] = [[] for _ in range(M)]
    for p in porder.tolist():
        parts_of[int(owner[p])].append(p)
    while moved:
        moved = False
        for a in sorted(range(M), key=lambda c: (-count[c], rank[c])):
            # partitions that are not with their previous owner move first (free), then the rest
            for p in sorted(parts_of[a], key=lambda q: prev[q] == a):
                b = min(eligible[int(tidx[p])], key=lambda c: (count[c], int(prev[p] != c), rank[c]))
                if count[b] <= count[a] - 2:
                    owner[p] = b
                    parts_of[a].remove(p)
                    parts_of[b].append(p)
                    count[a] -= 1
                    count[b] += 1
                    moved = True
    assert P == 0 or owner.min() >= 0
    return owner


def sticky_owner(problem: AssignmentProblem) -> IntArray:
    """The target owner array shared by ``sticky`` and ``cooperative-sticky``."""
    if problem.n_partitions == 0:
        return np.zeros(0, dtype=np.int64)
    return _homogeneous(problem) if problem.homogeneous() else _mixed(problem)


def assign(problem: AssignmentProblem, *, protocol: str = EAGER) -> AssignmentResult:
    return AssignmentResult.build(NAME, problem, sticky_owner(problem), protocol)
