"""``roundrobin``: Kafka's RoundRobinAssignor, reimplemented (balances counts across topics).

All partitions sorted by (topic, partition), members sorted by id and walked in a circle; each
partition goes to the next member in the circle that subscribes to its topic. Loads are ignored.

Example:
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> assign(problem_from_arrays(2, [1.0, 1.0, 1.0])).owner.tolist()
    [0, 1, 0]
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem
from kafka_balancer.consumer.result import EAGER, AssignmentResult

NAME = "roundrobin"


def assign(problem: AssignmentProblem, *, protocol: str = EAGER) -> AssignmentResult:
    M, P = problem.n_members, problem.n_partitions
    owner = np.full(P, -1, dtype=np.int64)
    ids = np.array(problem.member_ids, dtype=object)
    members = np.argsort(ids, kind="stable")
    tnames = np.array(problem.topics, dtype=object)
    topic_rank = np.argsort(np.argsort(tnames, kind="stable"), kind="stable")
    order = np.lexsort((problem.partition, topic_rank[problem.topic_idx]))
    if problem.homogeneous():
        owner[order] = members[np.arange(P) % M]
        return AssignmentResult.build(NAME, problem, owner, protocol)
    sub = problem.subscribed
    pos = 0
    for p, t in zip(order.tolist(), problem.topic_idx[order].tolist(), strict=True):
        while not sub[members[pos % M], t]:
            pos += 1
        owner[p] = members[pos % M]
        pos += 1
    return AssignmentResult.build(NAME, problem, owner, protocol)
