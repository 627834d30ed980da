"""Plans in the JSON that ``kafka-reassign-partitions.sh --execute`` takes.

``{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 0, 5]}]}``

Only partitions that change are listed; ``replicas[0]`` is the intended leader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson

from kafka_balancer.errors import InputError
from kafka_balancer.model.fileio import read_input_bytes, write_atomic
from kafka_balancer.model.plan import Plan, PlanEntry
from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.validate.plan import parse_plan, plan_from_dict

__all__ = ["Plan", "PlanEntry", "apply_plan", "partition_index", "plan_from_dict", "plan_to_dict", "read_plan",
           "validate_plan", "write_plan"]


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {"topic": e.topic, "partition": e.partition, "replicas": list(e.replicas)} for e in plan.entries
        ],
    }


def read_plan(path: str | Path) -> Plan:
    """Read and validate a plan file (:mod:`kafka_balancer.validate.plan` says what is checked)."""
    p = Path(path)
    return parse_plan(read_input_bytes(p, "a plan JSON file"), str(p))


def write_plan(plan: Plan, path: str | Path) -> None:
    opts = orjson.OPT_INDENT_2 if len(plan) <= 20000 else 0
    write_atomic(path, orjson.dumps(plan_to_dict(plan), option=opts) + b"\n")


def partition_index(snap: Snapshot) -> dict[tuple[str, int], int]:
    topics = snap.topics
    pairs = zip(snap.topic_idx.tolist(), snap.partition.tolist(), strict=True)
    return {(topics[t], p): j for j, (t, p) in enumerate(pairs)}


def validate_plan(snap: Snapshot, plan: Plan, source: str = "plan") -> None:
    """Refuse a plan that does not fit the snapshot: unknown partition or broker, RF change, dead target."""
    index = partition_index(snap)
    pos = snap.broker_pos()
    for e in plan.entries:
        label = f"{source}: partition {e.topic}-{e.partition}"
        j = index.get((e.topic, e.partition))
        if j is None:
            raise InputError(f"{label} does not exist in the cluster", hint="regenerate the plan")
        if len(e.replicas) != int(snap.rf[j]):
            raise InputError(
                f"{label}: plan has {len(e.replicas)} replicas, the partition has {int(snap.rf[j])}",
                hint="a plan must not change the replication factor",
            )
        for b in e.replicas:
            if b not in pos:
                raise InputError(f"{label}: broker {b} is not in the cluster")
            if not snap.alive[pos[b]]:
                current = {int(snap.broker_ids[x]) for x in snap.replicas[j] if x >= 0}
                if b not in current:
                    raise InputError(
                        f"{label}: destination broker {b} is down",
                        hint=f"start broker {b} or regenerate the plan",
                    )


def apply_plan(snap: Snapshot, plan: Plan) -> Snapshot:
    """The snapshot after the plan: listed partitions get the new replicas, led by ``replicas[0]``."""
    validate_plan(snap, plan)
    index = partition_index(snap)
    pos = snap.broker_pos()
    replicas = snap.replicas.copy()
    leader = snap.leader.copy()
    for e in plan.entries:
        j = index[(e.topic, e.partition)]
        row = np.full(replicas.shape[1], -1, dtype=np.int32)
        row[: len(e.replicas)] = [pos[b] for b in e.replicas]
        replicas[j] = row
        leader[j] = row[0] if snap.alive[row[0]] else -1
    return snap.with_assignment(replicas, leader)
