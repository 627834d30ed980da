"""The demo's workload: skewed by placement, not by hot partitions, so that it *can* be balanced.

Every partition carries a similar, modest load (uniform keys, no partition hotter than a broker's fair
share), but the topics are created with a replica assignment that piles leaders and replicas onto the
first brokers, as after years of manual assignments or a cluster grown without rebalancing. The planner
can spread it within the ε band; a workload with single partitions hotter than the band (the one-shot
demo's hot keys) cannot be balanced by any placement.

    >>> a = skewed_assignment(12, 3, [1, 2, 3, 4, 5, 6], seed=0)
    >>> sorted({len(set(r)) for r in a.values()}), sum(r[0] in (1, 2) for r in a.values()) >= 8
    ([3], True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from kafka_balancer.sim.workload import GroupLoad, TopicLoad, WorkloadSpec


def balanceable_workload(scale: float = 1.0) -> WorkloadSpec:
    spec = WorkloadSpec(
        topics=(
            TopicLoad("orders", partitions=12, replication=3, rate=100, size=900, prefill_mb=10),
            TopicLoad("events", partitions=12, replication=2, rate=160, size=350, prefill_mb=5),
            TopicLoad("logs", partitions=6, replication=2, rate=12, size=4000, prefill_mb=12),
        ),
        groups=(
            GroupLoad("billing", ("orders",), members=1),
            GroupLoad("analytics", ("events", "orders"), members=1),
            GroupLoad("indexer", ("logs",), members=1),
        ),
    )
    return spec.scaled(scale)


def skewed_assignment(partitions: int, rf: int, brokers: Sequence[int], seed: int) -> dict[int, list[int]]:
    """Replica lists that favour the first brokers: leaders on the first third of the brokers, followers
    drawn with weights falling along the list (every broker still gets a few replicas)."""
    rng = random.Random(seed)
    b = list(brokers)
    heads = b[: max(1, len(b) // 3)]
    weights = [1.0 / (1 + i) ** 1.3 for i in range(len(b))]
    out = {}
    for p in range(partitions):
        lead = heads[p % len(heads)]
        rest = [x for x in b if x != lead]
        w = [weights[b.index(x)] for x in rest]
        chosen: list[int] = []
        while len(chosen) < rf - 1:
            x = rng.choices(rest, weights=w)[0]
            if x not in chosen:
                chosen.append(x)
        out[p] = [lead, *chosen]
    return out


def create_skewed_topics(bootstrap: str, spec: WorkloadSpec, brokers: Sequence[int], seed: int) -> None:
    """Create the workload's topics with :func:`skewed_assignment` (the workload runner then finds them)."""
    from kafka.admin import NewTopic

    from kafka_balancer.collect.admin import connect_admin, quiet_kafka_logs, retried

    admin = connect_admin(bootstrap)
    try:
        with quiet_kafka_logs():
            have = set(retried(admin.list_topics))  # the spare broker, stopped, is in the bootstrap list
            new = [NewTopic(t.name, -1, -1, replica_assignments=skewed_assignment(
                t.partitions, t.replication, brokers, seed + i)) for i, t in enumerate(spec.topics)
                if t.name not in have]
            if new:
                admin.create_topics(new)
                admin.wait_for_topics([t.name for t in new], timeout_ms=30000)
    finally:
        with quiet_kafka_logs():
            admin.close()
