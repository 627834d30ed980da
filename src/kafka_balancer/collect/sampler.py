"""One sampling round of a live cluster -> sample records (``docs/samples-format.md``, version 1).

:func:`read_round` does the I/O (kafka-python admin + HTTP scrapes of each broker's JMX exporter) and
returns a :class:`RawRound`; :func:`build_records` turns that into records and is pure.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_balancer.collect.admin import log_dir_replicas, quiet_kafka_logs
from kafka_balancer.collect.prom_text import BrokerMetrics, parse_broker_metrics

FORMAT_VERSION = 1


@dataclass
class RawRound:
    """What one round read, before it becomes records."""

    ts: int
    brokers: list[dict[str, Any]]  # describe_cluster brokers: broker_id, host, port, rack
    partitions: dict[tuple[str, int], dict[str, Any]]  # replicas, leader, isr
    end_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    start_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    replica_sizes: list[tuple[str, int, int, int, str]] = field(default_factory=list)  # t, p, b, size, dir
    group_offsets: list[tuple[str, str, int, int]] = field(default_factory=list)  # group, t, p, offset
    metrics: dict[int, BrokerMetrics | None] = field(default_factory=dict)
    # the parts a request for failed, with the error: "end offsets (UnknownBrokerIdError)". A client whose
    # metadata predates a broker that joined cannot reach it (kafka-python does not learn of it from
    # describe_cluster): every round would lack them until a fresh client reads (see retry_fresh)
    failed: list[str] = field(default_factory=list)


def build_records(raw: RawRound, cluster: str, hosts: Mapping[int, str] | None = None) -> list[dict[str, Any]]:
    """Sample records of one round. Brokers that hold replicas but are missing from the cluster
    metadata are reported with ``alive: false``.

        >>> raw = RawRound(ts=1000, brokers=[{"broker_id": 1, "host": "h", "rack": "r0"}],
        ...                partitions={("t", 0): {"replicas": [1, 2], "leader": 1, "isr": [1]}})
        >>> [(r["type"], r.get("broker"), r.get("alive")) for r in build_records(raw, "local")][:2]
        [('broker', 1, True), ('broker', 2, False)]
    """
    base = {"v": FORMAT_VERSION, "cluster": cluster, "ts": raw.ts}
    hosts = hosts or {}
    out: list[dict[str, Any]] = []
    alive = {int(b["broker_id"]): b for b in raw.brokers}
    known = set(alive) | {b for p in raw.partitions.values() for b in p["replicas"]}
    for b in sorted(known):
        info = alive.get(b, {})
        m = raw.metrics.get(b)
        out.append({
            **base, "type": "broker", "broker": b, "rack": info.get("rack"),
            "host": hosts.get(b, info.get("host")), "alive": b in alive,
            "cpu_seconds": m.cpu_seconds if m else None, "cpu_cores": m.cpu_cores if m else None,
        })
    for b in sorted(raw.metrics):
        m = raw.metrics[b]
        if m is None:
            continue
        for topic, c in m.topics.items():
            out.append({**base, "type": "topic_broker", "broker": b, "topic": topic,
                        "bytes_in": c.bytes_in, "bytes_out": c.bytes_out, "messages_in": c.messages_in})
    for (t, p), info in sorted(raw.partitions.items()):
        out.append({
            **base, "type": "partition", "topic": t, "partition": p,
            "replicas": list(info["replicas"]), "leader": int(info["leader"]), "isr": list(info["isr"]),
            "log_end_offset": raw.end_offsets.get((t, p)), "log_start_offset": raw.start_offsets.get((t, p)),
        })
    for t, p, b, size, log_dir in sorted(raw.replica_sizes):
        out.append({**base, "type": "replica", "topic": t, "partition": p, "broker": b,
                    "size": size, "log_dir": log_dir})
    for g, t, p, off in sorted(raw.group_offsets):
        out.append({**base, "type": "group_offset", "group": g, "topic": t, "partition": p, "committed": off})
    return out


def scrape(url: str, timeout_s: float = 3.0) -> BrokerMetrics | None:
    """One broker's exporter; None when it does not answer (the broker may be down)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            return parse_broker_metrics(r.read().decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def read_round(
    admin: Any, ts: int, metrics_urls: Mapping[int, str] | None = None, include_internal: bool = False
) -> RawRound:
    """Read everything one round needs from the cluster (partitions of offline leaders get no offsets)."""
    from kafka.admin import OffsetSpec
    from kafka.errors import KafkaError

    from kafka import TopicPartition

    with quiet_kafka_logs():
        info = admin.describe_cluster()
        brokers = [b for b in info["brokers"] if not b.get("is_fenced")]
        names = [t for t in admin.list_topics() if include_internal or not t.startswith("__")]
        parts: dict[tuple[str, int], dict[str, Any]] = {}
        if names:
            for t in admin.describe_topics(sorted(names)):
                if t.get("error_code", 0):
                    continue
                for p in t["partitions"]:
                    parts[(t["name"], int(p["partition_index"]))] = {
                        "replicas": [int(b) for b in p["replica_nodes"]],
                        "leader": int(p["leader_id"]), "isr": [int(b) for b in p["isr_nodes"]],
                    }
        raw = RawRound(ts=ts, brokers=brokers, partitions=parts)
        online = [TopicPartition(t, p) for (t, p), v in parts.items() if v["leader"] >= 0]
        for spec, dest, what in ((OffsetSpec.LATEST, raw.end_offsets, "end offsets"),
                                 (OffsetSpec.EARLIEST, raw.start_offsets, "start offsets")):
            try:
                res = admin.list_partition_offsets({tp: spec for tp in online}, timeout_ms=5000) if online else {}
            except KafkaError as exc:
                res = {}  # a leader changed mid-call, or a leader the client does not know: rates skip the round
                raw.failed.append(f"{what} ({type(exc).__name__})")
            dest.update({(tp.topic, tp.partition): int(o.offset) for tp, o in res.items()})
        topics = {t for t, _ in parts}
        alive_ids = sorted(int(b["broker_id"]) for b in brokers)
        try:
            dirs = admin.describe_log_dirs(None, alive_ids) if alive_ids else []
        except KafkaError as exc:
            dirs = []
            raw.failed.append(f"replica sizes ({type(exc).__name__})")
        for t, p, b, size, log_dir, future in log_dir_replicas(dirs, topics):
            if not future:
                raw.replica_sizes.append((t, p, b, size, log_dir))
        try:
            groups = [g["group_id"] for g in admin.list_groups()
                      if g.get("protocol_type") in ("consumer", "") or g.get("group_type") == "consumer"]
            offsets = admin.list_group_offsets(groups) if groups else {}
        except KafkaError as exc:
            offsets = {}
            raw.failed.append(f"group offsets ({type(exc).__name__})")
        for g, by_tp in offsets.items():
            for tp, om in by_tp.items():
                if tp.topic in topics and om.offset >= 0:
                    raw.group_offsets.append((g, tp.topic, tp.partition, int(om.offset)))
    for b, url in (metrics_urls or {}).items():
        m = scrape(url) if b in alive_ids else None
        if m is not None and not include_internal:
            m.topics = {t: c for t, c in m.topics.items() if not t.startswith("__")}
        raw.metrics[int(b)] = m
    return raw


def retry_fresh(read: Callable[[], RawRound], renew: Callable[[], None]) -> RawRound:
    """``read()``; if part of it failed, a fresh client (``renew()``) and ``read()`` once more, whose answer is
    kept even if it fails too (a broker that died is in the metadata until it is fenced)."""
    raw = read()
    if raw.failed:
        renew()
        raw = read()
    return raw
