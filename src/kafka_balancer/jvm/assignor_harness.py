"""Run the broker-side assignor (the ``assignor`` JVM artifact set) on groups from Python.

The plugin's ``JsonHarness`` main class reads one JSON problem per line on stdin and writes one
assignment per line; :func:`run_batch` starts ONE JVM for a whole list of problems (JVM start-up
dominates otherwise). :func:`problem_doc` turns an :class:`~kafka_balancer.consumer.problem.AssignmentProblem`
into that JSON (the ``assign --input`` document plus ``max_moves``/``tolerance``; previous owners as
``owned``). The cross-check test and ``bench/assignor_plugin.py`` use it.

Example (no JVM needed):
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> doc = problem_doc(problem_from_arrays(2, [3.0, 1.0], prev_owner=[1, -1]), max_moves=0)
    >>> [m["owned"] for m in doc["members"]], doc["max_moves"]
    ([[], [['t', 0]]], 0)
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem
from kafka_balancer.errors import ClusterError

HARNESS_CLASS = "io.github.kafkabalancer.assignor.JsonHarness"
ASSIGNOR_CLASS = "io.github.kafkabalancer.assignor.KafkaBalancerAssignor"
ASSIGNOR_NAME = "kafka-balancer"


def plugin_jars() -> list[Path]:
    """The plugin jar(s) built by ``setup-jvm`` (InputError with a hint when missing or stale)."""
    from kafka_balancer.jvm.artifacts import set_jars

    return set_jars("assignor")


def kafka_jars() -> list[Path]:
    """The broker's jars (the plugin's ``provided`` dependencies), without the JMX agent."""
    from kafka_balancer.jvm.artifacts import set_jars

    return [j for j in set_jars("kafka") if not j.name.startswith("jmx_prometheus_javaagent")]


def classpath() -> str:
    return ":".join(str(p) for p in [*plugin_jars(), *kafka_jars()])


def canonical(problem: AssignmentProblem) -> AssignmentProblem:
    """The same group in the order the plugin sees it: members sorted by id (the broker's member ids
    have no other order), partitions grouped by topic (topics in their first-appearance order, which the
    harness keeps) in partition-number order, and no start times (the broker knows none). Both
    implementations then number members and partitions alike, and break ties alike.

    Example:
        >>> from kafka_balancer.consumer.problem import Member, make_problem
        >>> p = make_problem([Member("b", ("t",), owned=(("t", 1),)), Member("a", ("t",))],
        ...                  [("t", 1, 2.0), ("t", 0, 1.0)])
        >>> c = canonical(p)
        >>> c.member_ids, c.partition.tolist(), c.prev_owner.tolist()
        (('a', 'b'), [0, 1], [-1, 1])
    """
    order_m = np.argsort(np.array(problem.member_ids, dtype=object), kind="stable")
    new_pos = np.empty_like(order_m)
    new_pos[order_m] = np.arange(order_m.size)
    order_p = np.lexsort((problem.partition, problem.topic_idx))
    prev = problem.prev_owner[order_p]
    prev = np.where(prev >= 0, new_pos[np.maximum(prev, 0)], -1).astype(np.int64)
    return dataclasses.replace(
        problem, member_ids=tuple(problem.member_ids[i] for i in order_m.tolist()),
        capacity=problem.capacity[order_m].copy(), start_ms=np.full(order_m.size, np.inf),
        subscribed=problem.subscribed[order_m].copy(), topic_idx=problem.topic_idx[order_p].copy(),
        partition=problem.partition[order_p].copy(), load=problem.load[order_p].copy(), prev_owner=prev,
        _cache={})


def problem_doc(problem: AssignmentProblem, *, max_moves: int | None = None, tolerance: float = 0.01,
                racks: dict[str, str] | None = None, partition_racks: dict[tuple[str, int], list[str]] | None = None,
                doc_id: Any = None) -> dict[str, Any]:
    """The harness's JSON for one problem."""
    owned: list[list[list[Any]]] = [[] for _ in problem.member_ids]
    for p, o in enumerate(problem.prev_owner.tolist()):
        if o >= 0:
            owned[o].append(list(problem.tp(p)))
    members = []
    for i, mid in enumerate(problem.member_ids):
        m: dict[str, Any] = {
            "id": mid,
            "topics": [problem.topics[t] for t in range(len(problem.topics)) if problem.subscribed[i, t]],
            "capacity": float(problem.capacity[i]),
            "owned": owned[i],
        }
        if racks and mid in racks:
            m["rack"] = racks[mid]
        members.append(m)
    parts = []
    for p in range(problem.n_partitions):
        t, n = problem.tp(p)
        e: dict[str, Any] = {"topic": t, "partition": n, "load": float(problem.load[p])}
        if partition_racks and (t, n) in partition_racks:
            e["racks"] = partition_racks[(t, n)]
        parts.append(e)
    return {"id": doc_id, "members": members, "partitions": parts, "max_moves": max_moves,
            "tolerance": tolerance}


def run_batch(docs: Sequence[dict[str, Any]], *, java: str = "java", timeout_s: float = 600.0) -> list[dict[str, Any]]:
    """Run the plugin on every problem in one JVM; returns one ``{"id", "assignment", "micros"}`` each."""
    cmd = [java, "-Xss4m", "-XX:+UseSerialGC", "-cp", classpath(), HARNESS_CLASS]
    payload = "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs)
    proc = subprocess.run(cmd, input=payload, capture_output=True, text=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        raise ClusterError(f"the assignor harness failed (exit {proc.returncode}): "
                           + " | ".join(proc.stderr.strip().splitlines()[-3:]),
                           hint="run `kafka-balancer setup-jvm` to rebuild the plugin")
    out = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(out) != len(docs):
        raise ClusterError(f"the assignor harness answered {len(out)} of {len(docs)} problems")
    return out
