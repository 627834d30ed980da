"""Consumer assignors as pure functions over :class:`~kafka_balancer.consumer.problem.AssignmentProblem`.

``STRATEGIES`` maps each strategy name to ``assign(problem, *, protocol=...) -> AssignmentResult``.

Example:
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> run("range", problem_from_arrays(2, [1.0, 1.0])).owner.tolist()
    [0, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_balancer.consumer.assignors import balanced, cooperative_sticky, paper, roundrobin, sticky
from kafka_balancer.consumer.assignors import range as range_
from kafka_balancer.consumer.problem import AssignmentProblem
from kafka_balancer.consumer.result import COOPERATIVE, EAGER, AssignmentResult
from kafka_balancer.errors import InputError

Assignor = Callable[..., AssignmentResult]

STRATEGIES: dict[str, Assignor] = {
    paper.NAME: paper.assign,
    balanced.NAME: balanced.assign,
    range_.NAME: range_.assign,
    roundrobin.NAME: roundrobin.assign,
    sticky.NAME: sticky.assign,
    cooperative_sticky.NAME: cooperative_sticky.assign,
}

DEFAULT_PROTOCOL = {name: (COOPERATIVE if name == cooperative_sticky.NAME else EAGER) for name in STRATEGIES}


def run(
    name: str, problem: AssignmentProblem, *, protocol: str | None = None, **options: Any
) -> AssignmentResult:
    """Run strategy ``name``; ``protocol`` defaults to the strategy's own (eager, or cooperative)."""
    if name not in STRATEGIES:
        raise InputError(f"unknown strategy {name!r}", hint="choose one of: " + ", ".join(STRATEGIES))
    proto = protocol or DEFAULT_PROTOCOL[name]
    if proto not in (EAGER, COOPERATIVE):
        raise InputError(f"unknown protocol {proto!r}", hint="use 'eager' or 'cooperative'")
    return STRATEGIES[name](problem, protocol=proto, **options)
