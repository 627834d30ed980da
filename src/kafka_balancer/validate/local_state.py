"""The local cluster's state file (``<state-dir>/cluster.json``, written by ``local-cluster up``).

Checked: version 1; a cluster id; the spec (broker, controller and per-host counts, heap, string
overrides); every node's id (Kafka's: 32-bit, >= 0, each once), roles (``broker`` or
``broker,controller``), rack, ports (1..65535) and the pid recorded for it (a positive process id or
null). ``status`` and ``down`` act on those pids (only while ``/proc/<pid>/cmdline`` names the node's
own configuration), so a state file read wrongly must stop the command, never guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_balancer.errors import InputError
from kafka_balancer.localcluster.spec import ClusterSpec, NodeSpec
from kafka_balancer.validate.jsondoc import array, broker_id, field, integer, obj, parse_json, shown, string

FORMAT_VERSION = 1
PID_MAX = 2**22  # the kernel's largest pid_max
ROLES = ("broker", "broker,controller")
WHAT = "the state file `local-cluster up` wrote"
HINT = "stop leftover Kafka processes by hand, then remove the state folder (or use another --state-dir)"


@dataclass(frozen=True)
class LocalState:
    """What ``cluster.json`` records."""

    cluster_id: str
    spec: ClusterSpec
    nodes: tuple[NodeSpec, ...]
    pids: dict[int, int | None]


def parse_local_state(data: bytes, source: str) -> LocalState:
    """A state file's bytes to a :class:`LocalState`."""
    doc = obj(parse_json(data, source, WHAT), source)
    try:
        return local_state_from_dict(doc, source)
    except InputError as exc:
        if exc.hint is None:
            exc.hint = HINT
        raise


def local_state_from_dict(doc: dict[str, Any], source: str) -> LocalState:
    version = field(doc, "version", source)
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise InputError(f"{source}: unknown state file version {shown(version)}; this version reads "
                         f"{FORMAT_VERSION}", hint=HINT)
    cluster_id = string(field(doc, "cluster_id", source), f"{source}: cluster_id")
    s = obj(field(doc, "spec", source), f"{source}: spec")
    overrides = []
    for k, kv in enumerate(array(s.get("overrides", []), f"{source}: spec.overrides")):
        where = f"{source}: spec.overrides[{k}]"
        if not isinstance(kv, list) or len(kv) != 2:
            raise InputError(f"{where} is {shown(kv)}; it must be [key, value]")
        overrides.append((string(kv[0], f"{where} key"), string(kv[1], f"{where} value", allow_empty=True)))
    spec = ClusterSpec(
        brokers=integer(field(s, "brokers", f"{source}: spec"), f"{source}: spec.brokers", 1, 10_000),
        controllers=integer(field(s, "controllers", f"{source}: spec"), f"{source}: spec.controllers", 1, 10_000),
        brokers_per_host=integer(field(s, "brokers_per_host", f"{source}: spec"), f"{source}: spec.brokers_per_host",
                                 1, 10_000),
        heap_mb=integer(field(s, "heap_mb", f"{source}: spec"), f"{source}: spec.heap_mb", 128, 1 << 20),
        overrides=tuple(overrides),
        security=_security(s.get("security", "plaintext"), f"{source}: spec.security"),
    )
    nodes: list[NodeSpec] = []
    pids: dict[int, int | None] = {}
    for k, n in enumerate(array(field(doc, "nodes", source), f"{source}: nodes")):
        where = f"{source}: nodes[{k}]"
        n = obj(n, where)
        node = obj(field(n, "node", where), f"{where}: node")
        nid = broker_id(field(node, "node_id", f"{where}: node"), f"{where}: node.node_id")
        where = f"{source}: node {nid}"
        if nid in pids:
            raise InputError(f"{where} is listed twice")
        roles = field(node, "roles", where)
        if roles not in ROLES:
            raise InputError(f"{where}: roles is {shown(roles)}; it must be one of {', '.join(ROLES)}")
        cport = node.get("controller_port")
        nodes.append(NodeSpec(
            node_id=nid,
            roles=roles,
            rack=string(field(node, "rack", where), f"{where}: rack", allow_empty=True),
            broker_port=integer(field(node, "broker_port", where), f"{where}: broker_port", 1, 65535),
            metrics_port=integer(field(node, "metrics_port", where), f"{where}: metrics_port", 1, 65535),
            controller_port=None if cport is None else integer(cport, f"{where}: controller_port", 1, 65535),
        ))
        pid = n.get("pid")
        pids[nid] = None if pid is None else integer(pid, f"{where}: pid", 1, PID_MAX)
    return LocalState(cluster_id, spec, tuple(nodes), pids)


def _security(value: object, where: str) -> str:
    """``plaintext`` (also for state files written before secured clusters existed), ``ssl`` or ``sasl_ssl``."""
    if value not in ("plaintext", "ssl", "sasl_ssl"):
        raise InputError(f"{where} is {shown(value)}; it must be plaintext, ssl or sasl_ssl")
    return str(value)
