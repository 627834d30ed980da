"""``paper``: seed 000's dealing algorithm, as written (ambiguities resolved in docs/consumer.md).

Per topic:
  * partitions sorted by load, heaviest first (``n1`` is the heaviest, ``nn`` the lightest);
  * subscribed members sorted by how long they have been receiving, longest first (``start_ms``
    ascending; unknown start counts as "just started"; ties by member id);
  * if some partition's load is above the topic's mean ("an overloaded partition exists"):
      - ``n == m``: one to one in reverse load order, ``m1 ← nn, …, mm ← n1``;
      - ``n > m``: chunks of ``⌈n/m⌉`` partitions in reverse load order (``m1`` gets the lightest
        chunk), and whatever is left after ``m - 1`` chunks goes to the last member ``mm`` (which
        may be nothing, when the chunks already used every partition);
      - ``n < m`` (not covered by the text): one to one in reverse order for ``m1..mn``, the rest idle;
  * otherwise (all loads equal): keep ``k(m - z) = n`` — only the first ``m' = m - z`` members
    work, where ``m'`` is the largest divisor of ``n`` not above ``m`` — dealing ``k = n/m'``
    partitions each, in order. (A pure assignor cannot add members; ``consumers advise`` suggests
    the ``m + z`` option.)

Example:
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> p = problem_from_arrays(2, [5.0, 1.0, 2.0, 3.0])   # n=4, m=2, chunks of 2
    >>> assign(p).owner.tolist()                            # c0: the 2 lightest, c1: the rest
    [1, 0, 0, 1]
"""

from __future__ import annotations

import math

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem
from kafka_balancer.consumer.result import EAGER, AssignmentResult, seq_sum

NAME = "paper"


def largest_divisor_at_most(n: int, m: int) -> int:
    """Largest ``d <= m`` with ``n % d == 0`` (``1`` when ``n == 0``)."""
    for d in range(min(n, m), 0, -1):
        if n % d == 0:
            return d
    return 1


def assign(problem: AssignmentProblem, *, protocol: str = EAGER) -> AssignmentResult:
    owner = np.full(problem.n_partitions, -1, dtype=np.int64)
    ids = np.array(problem.member_ids, dtype=object)
    id_rank = np.argsort(np.argsort(ids, kind="stable"), kind="stable")
    for t in range(len(problem.topics)):
        mem = np.flatnonzero(problem.subscribed[:, t])
        mem = mem[np.lexsort((id_rank[mem], problem.start_ms[mem]))]
        pidx = np.flatnonzero(problem.topic_idx == t)
        loads = problem.load[pidx]
        pidx = pidx[np.lexsort((problem.partition[pidx], -loads))]  # n1 (heaviest) .. nn
        loads = problem.load[pidx]
        n, m = pidx.size, mem.size
        reverse = pidx[::-1]  # nn (lightest) .. n1
        overloaded = bool((loads > seq_sum(loads) / n).any()) if n else False
        if overloaded:
            if n <= m:
                owner[reverse] = mem[:n]
            else:
                q = math.ceil(n / m)
                slot = np.minimum(np.arange(n) // q, m - 1)
                owner[reverse] = mem[slot]
        else:
            working = largest_divisor_at_most(n, m)
            k = n // working if working else 0
            in_order = pidx[np.argsort(problem.partition[pidx], kind="stable")]
            owner[in_order] = mem[np.arange(n) // max(k, 1)]
    return AssignmentResult.build(NAME, problem, owner, protocol)
