"""Plans (``execute --plan``): the JSON ``kafka-reassign-partitions.sh --execute`` takes, to a :class:`Plan`.

``{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 0, 5]}]}``

Checked: version 1; every entry has a non-empty topic, a Kafka partition number (32-bit, >= 0), and a
non-empty list of distinct Kafka broker ids (32-bit, >= 0), and lists its partition once. Extra keys
(Kafka's ``log_dirs``) are allowed. Whether the plan fits a cluster is checked against the cluster
(``model.plan_io.validate_plan``, ``executor.validate``).
"""

from __future__ import annotations

from typing import Any

from kafka_balancer.errors import InputError
from kafka_balancer.model.plan import Plan, PlanEntry
from kafka_balancer.validate.jsondoc import (
    array,
    broker_id,
    default_hint,
    field,
    obj,
    parse_json,
    partition_number,
    shown,
    string,
)

WHAT = "a plan (kafka-reassign-partitions JSON, as `kafka-balancer plan` writes it)"


def parse_plan(data: bytes, source: str) -> Plan:
    """A plan file's bytes to a :class:`Plan`."""
    return plan_from_dict(parse_json(data, source, WHAT), source)


def plan_from_dict(doc: Any, source: str = "plan") -> Plan:
    """Validate a parsed plan document."""
    with default_hint(f"give {WHAT}"):
        return _plan(doc, source)


def _plan(doc: Any, source: str = "plan") -> Plan:
    if not isinstance(doc, dict):
        raise InputError(f"{source}: a plan is a JSON object with 'version' and 'partitions'", hint=f"give {WHAT}")
    version = doc.get("version")
    if isinstance(version, bool) or version != 1:
        raise InputError(f"{source}: unknown plan version {shown(version)}",
                         hint="kafka-reassign-partitions plans have version 1")
    parts = array(field(doc, "partitions", source, f"give {WHAT}"), f"{source}: 'partitions'")
    seen: set[tuple[str, int]] = set()
    entries = []
    for i, e in enumerate(parts):
        where = f"{source}: partitions[{i}]"
        e = obj(e, where)
        topic = string(field(e, "topic", where), f"{where}: topic")
        num = partition_number(field(e, "partition", where), f"{where}: partition")
        label = f"{source}: partition {topic}-{num}"
        if (topic, num) in seen:
            raise InputError(f"{label} is listed twice", hint="list each partition once")
        seen.add((topic, num))
        reps = array(field(e, "replicas", label), f"{label}: replicas", nonempty=True)
        ids = tuple(broker_id(b, f"{label}: replicas[{k}]") for k, b in enumerate(reps))
        if len(set(ids)) != len(ids):
            raise InputError(f"{label}: a broker appears twice in replicas {shown(list(ids))}",
                             hint="a partition has at most one replica per broker")
        entries.append(PlanEntry(topic, num, ids))
    return Plan(tuple(entries))
