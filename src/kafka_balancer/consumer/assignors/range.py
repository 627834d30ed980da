"""``range``: Kafka's RangeAssignor, reimplemented over plain data (balances counts per topic).

Per topic, partitions in numeric order and subscribed members sorted by id; each member gets
``n // m`` consecutive partitions and the first ``n % m`` members one more. Loads are ignored.

Example:
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> assign(problem_from_arrays(2, [1.0, 1.0, 1.0])).owner.tolist()
    [0, 0, 1]
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem
from kafka_balancer.consumer.result import EAGER, AssignmentResult

NAME = "range"


def assign(problem: AssignmentProblem, *, protocol: str = EAGER) -> AssignmentResult:
    owner = np.full(problem.n_partitions, -1, dtype=np.int64)
    ids = np.array(problem.member_ids, dtype=object)
    for t in range(len(problem.topics)):
        mem = np.flatnonzero(problem.subscribed[:, t])
        mem = mem[np.argsort(ids[mem], kind="stable")]
        pidx = np.flatnonzero(problem.topic_idx == t)
        pidx = pidx[np.argsort(problem.partition[pidx], kind="stable")]
        n, m = pidx.size, mem.size
        q, rem = divmod(n, m)
        r = np.arange(n)
        boundary = rem * (q + 1)
        slot = np.where(r < boundary, r // (q + 1), rem + (r - boundary) // max(q, 1))
        owner[pidx] = mem[slot]
    return AssignmentResult.build(NAME, problem, owner, protocol)
