"""``cooperative-sticky``: the sticky target, delivered with the cooperative (KIP-429) protocol.

Same final placement as :mod:`.sticky`; partitions that change owner are revoked in round one and
assigned in round two, so members keep consuming everything that does not move.

Example:
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> r = assign(problem_from_arrays(2, [1.0, 1.0], prev_owner=[0, 0]))
    >>> r.owner.tolist(), r.round1.tolist()
    ([0, 1], [0, -1])
"""

from __future__ import annotations

from kafka_balancer.consumer.assignors.sticky import sticky_owner
from kafka_balancer.consumer.problem import AssignmentProblem
from kafka_balancer.consumer.result import COOPERATIVE, AssignmentResult

NAME = "cooperative-sticky"


def assign(problem: AssignmentProblem, *, protocol: str = COOPERATIVE) -> AssignmentResult:
    return AssignmentResult.build(NAME, problem, sticky_owner(problem), protocol)
