"""The consumer assignors' input (``assign --input``, ``docs/consumer.md``) to an :class:`AssignmentProblem`.

``{"members": [{"id", "topics", "start_ms"?, "capacity"?, "owned"?}], "partitions": [{"topic", "partition",
"load"?}]}``. Checked: member ids non-empty, unique strings; topics non-empty strings; ``owned`` as
``[[topic, partition], ...]``; ``start_ms`` a finite number; ``capacity`` a positive number that is not
denormal (loads are divided by it); partition numbers Kafka's (32-bit, >= 0); loads finite numbers >= 0
written as numbers (a load in quotes is refused, not converted). The loads must add up to a finite number,
and the heaviest a member could get (every load on the slowest member) must stay under 1e150, so that the
bounds and ratios printed are numbers. Consistency (unknown topics, partitions owned twice, topics nobody
subscribes to) is :func:`kafka_balancer.consumer.problem.make_problem`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem, Member, make_problem
from kafka_balancer.errors import InputError
from kafka_balancer.validate.jsondoc import (
    array,
    default_hint,
    field,
    number,
    obj,
    parse_json,
    partition_number,
    shown,
    string,
)

WHAT = 'an assignor input ({"members": [...], "partitions": [...]}, docs/consumer.md)'
MAX_NORMALISED_LOAD = 1e150


def parse_consumer_input(data: bytes, source: str) -> AssignmentProblem:
    """An input file's bytes to an :class:`AssignmentProblem`."""
    return consumer_input_from_dict(parse_json(data, source, WHAT), source)


def consumer_input_from_dict(doc: Any, source: str = "input") -> AssignmentProblem:
    with default_hint(f"give {WHAT}"):
        return _consumer_input(doc, source)


def _consumer_input(doc: Any, source: str = "input") -> AssignmentProblem:
    doc = obj(doc, source)
    members: list[Member] = []
    for i, m in enumerate(array(field(doc, "members", source, f"give {WHAT}"), f"{source}: 'members'")):
        where = f"{source}: members[{i}]"
        m = obj(m, where)
        mid = string(field(m, "id", where, "each member is an object with 'id' and 'topics'"), f"{where}: id")
        who = f"{source}: member {shown(mid)}"
        topics = tuple(string(t, f"{who}: topics[{k}]")
                       for k, t in enumerate(array(field(m, "topics", who), f"{who}: topics")))
        owned: list[tuple[str, int]] = []
        for k, o in enumerate(array(m.get("owned", []), f"{who}: owned")):
            if not isinstance(o, list) or len(o) != 2:
                raise InputError(f"{who}: owned[{k}] is {shown(o)}; it must be [topic, partition]",
                                 hint="write owned as [[topic, partition], ...]")
            owned.append((string(o[0], f"{who}: owned[{k}] topic"),
                          partition_number(o[1], f"{who}: owned[{k}] partition")))
        start = m.get("start_ms")
        start_ms = None
        if start is not None:
            start_ms = int(number(start, f"{who}: start_ms",
                                  hint="'start_ms' is a timestamp in milliseconds (or omit it)"))
        capacity = number(m.get("capacity", 1.0), f"{who}: capacity", positive=True,
                          hint="'capacity' is the member's relative speed, a number > 0 (1.0 = reference)")
        members.append(Member(id=mid, topics=topics, start_ms=start_ms, capacity=capacity, owned=tuple(owned)))
    parts: list[tuple[str, int, float]] = []
    for i, p in enumerate(array(field(doc, "partitions", source, f"give {WHAT}"), f"{source}: 'partitions'")):
        where = f"{source}: partitions[{i}]"
        p = obj(p, where)
        topic = string(field(p, "topic", where), f"{where}: topic")
        num = partition_number(field(p, "partition", where), f"{where}: partition")
        load = number(p.get("load", 1.0), f"{source}: partition {topic}-{num}: load",
                      hint="'load' is a number >= 0, written without quotes")
        parts.append((topic, num, load))
    try:
        problem = make_problem(members, parts)
    except InputError as exc:
        exc.message = f"{source}: {exc.message}"
        exc.args = (exc.message,)
        raise
    check_magnitudes(problem, source)
    return problem


def check_magnitudes(problem: AssignmentProblem, source: str) -> None:
    """Refuse loads whose sum overflows, or whose share on the slowest member would."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(problem.load.sum())
        slowest = float(problem.capacity.min()) if problem.n_members else 1.0
        worst = total / slowest
    if not np.isfinite(total):
        raise InputError(f"{source}: the partitions' loads add up to more than the largest number "
                         f"({np.finfo(np.float64).max:.3g})", hint="give loads in a smaller unit")
    if not worst <= MAX_NORMALISED_LOAD:
        raise InputError(f"{source}: the loads ({total:.3g}) over the slowest member's capacity ({slowest:.3g}) "
                         f"reach {worst:.3g}; the assignors work up to {MAX_NORMALISED_LOAD:.0e}",
                         hint="give loads and capacities on a comparable scale")
