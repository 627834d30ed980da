"""Plans in the JSON that ``kafka-reassign-partitions.sh --execute`` takes.

``{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 0, 5]}]}``

Only partitions that change are listed; ``replicas[0]`` is the intended leader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from kafka_balancer.errors import InputError
from kafka_balancer.model.fileio import read_input_bytes, write_atomic
from kafka_balancer.model.snapshot import Snapshot


@dataclass(frozen=True)
class PlanEntry:
    topic: str
    partition: int
    replicas: tuple[int, ...]  # Kafka broker ids; [0] is the intended leader


@dataclass(frozen=True)
class Plan:
    entries: tuple[PlanEntry, ...]

    def __len__(self) -> int:
        return len(self.entries)


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {"topic": e.topic, "partition": e.partition, "replicas": list(e.replicas)} for e in plan.entries
        ],
    }


def plan_from_dict(doc: Any, source: str = "plan") -> Plan:
    if not isinstance(doc, dict):
        raise InputError(f"{source}: a plan is a JSON object with 'version' and 'partitions'")
    if doc.get("version") != 1:
        raise InputError(
            f"{source}: unknown plan version {doc.get('version')!r}",
            hint="kafka-reassign-partitions plans have version 1",
        )
    parts = doc.get("partitions")
    if not isinstance(parts, list):
        raise InputError(f"{source}: 'partitions' must be a list")
    seen: set[tuple[str, int]] = set()
    entries = []
    for i, e in enumerate(parts):
        where = f"{source}: partitions[{i}]"
        if not isinstance(e, dict):
            raise InputError(f"{where} must be an object with topic, partition, replicas")
        topic, num, reps = e.get("topic"), e.get("partition"), e.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise InputError(f"{where}: topic {topic!r} must be a non-empty string")
        if isinstance(num, bool) or not isinstance(num, int) or not 0 <= num < 2**31:
            raise InputError(f"{where}: partition {num!r} must be an integer from 0 to {2**31 - 1}")
        label = f"{source}: partition {topic}-{num}"
        if (topic, num) in seen:
            raise InputError(f"{label} is listed twice", hint="list each partition once")
        seen.add((topic, num))
        if (
            not isinstance(reps, list)
            or not reps
            or not all(isinstance(b, int) and not isinstance(b, bool) for b in reps)
        ):
            raise InputError(f"{label}: replicas {reps!r} must be a non-empty list of broker ids")
        if len(set(reps)) != len(reps):
            raise InputError(f"{label}: a broker appears twice in replicas {reps}")
        entries.append(PlanEntry(topic, num, tuple(reps)))
    return Plan(tuple(entries))


def read_plan(path: str | Path) -> Plan:
    p = Path(path)
    raw = read_input_bytes(p, "a plan JSON file")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{p}: not valid JSON: {exc}",
                         hint="a plan is kafka-reassign-partitions JSON, as `kafka-balancer plan` writes it") from None
    return plan_from_dict(doc, source=str(p))


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
