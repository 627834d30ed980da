"""Check a plan against the live cluster before anything is submitted; refuse the whole plan on any fault.

Example::

    >>> from kafka_balancer.model.plan_io import Plan, PlanEntry
    >>> view = ClusterView(alive=frozenset({1, 2, 3}),
    ...                    partitions={("t", 0): PartitionState((1, 2), 1, (1, 2))})
    >>> plan_problems(Plan((PlanEntry("t", 0, (3, 1, 2)),)), view)
    ['t-0: replication factor would change from 2 to 3 (the plan has [3, 1, 2])']
"""

from __future__ import annotations

from kafka_balancer.errors import InputError
from kafka_balancer.executor.view import ClusterView, tp_label
from kafka_balancer.model.plan_io import Plan


def plan_problems(plan: Plan, view: ClusterView, known_brokers: frozenset[int] | None = None) -> list[str]:
    """Every reason to refuse ``plan`` (empty when it may run).

    ``known_brokers`` are brokers the cluster knows (alive or not); by default the alive ones plus
    every broker already holding a replica.
    """
    known = known_brokers
    if known is None:
        known = view.alive | frozenset(b for ps in view.partitions.values() for b in ps.replicas)
    problems: list[str] = []
    topics = view.topics()
    for e in plan.entries:
        tp = (e.topic, e.partition)
        label = tp_label(tp)
        if e.topic not in topics:
            problems.append(f"{label}: topic {e.topic!r} does not exist")
            continue
        cur = view.partitions.get(tp)
        if cur is None:
            n = sum(1 for t, _p in view.partitions if t == e.topic)
            problems.append(f"{label}: topic {e.topic!r} has no partition {e.partition} (it has {n})")
            continue
        if len(set(e.replicas)) != len(e.replicas):
            problems.append(f"{label}: a broker appears twice in {list(e.replicas)}")
        if len(e.replicas) != len(cur.replicas):
            problems.append(
                f"{label}: replication factor would change from {len(cur.replicas)} to {len(e.replicas)} "
                f"(the plan has {list(e.replicas)})"
            )
        for b in e.replicas:
            if b not in known:
                problems.append(f"{label}: broker {b} does not exist")
            elif b not in view.alive and b not in cur.replicas:
                problems.append(f"{label}: destination broker {b} is not alive")
        if tp in view.reassigning:
            problems.append(f"{label}: a reassignment is already in progress on it")
    return problems


def require_valid(plan: Plan, view: ClusterView, source: str = "plan") -> None:
    """Raise InputError listing the plan's problems (the first ten) if there are any."""
    if not len(plan):
        raise InputError(f"{source} lists no partitions", hint="nothing to execute")
    problems = plan_problems(plan, view)
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise InputError(
            f"{source} refused, nothing was submitted: " + "; ".join(problems[:10]) + more,
            hint="re-plan from a fresh snapshot of this cluster (`kafka-balancer collect`, `snapshot`, `plan`)",
        )
