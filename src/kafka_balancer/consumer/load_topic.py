"""Per-partition consume loads on a compacted Kafka topic, for the broker-side assignor.

The pipeline (``pipeline --publish-loads BOOTSTRAP``) and, later, ``serve`` publish each partition's
consume load to ``__kafka_balancer_partition_loads`` (compacted, so the latest value per partition
survives); the ``kafka-balancer`` assignor plugin reads it in a background thread on the broker.

* **Key**: ``<topic>:<partition>`` in UTF-8 (``:`` cannot occur in a Kafka topic name).
* **Value**: JSON ``{"v": 1, "generation": G, "ts_ms": T, "load": L, "unit": "...", "source": "..."}``.
  ``v`` is the format version (a reader skips versions it does not know); ``generation`` numbers a
  publication (all records of one run share it; by default its time in ms); ``ts_ms`` is when the
  load was measured; the plugin ignores loads older than its ``kafka.balancer.loads.max.age.ms``.
  A null value (tombstone) deletes a partition's load.

Example:
    >>> k, v = encode_record("orders", 3, 12.5, generation=7, ts_ms=1000)
    >>> k, decode_record(k, v)
    (b'orders:3', LoadRecord(topic='orders', partition=3, load=12.5, generation=7, ts_ms=1000, unit='bytes/s', source='pipeline'))
"""  # noqa: E501

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_balancer.errors import ClusterError, InputError

LOADS_TOPIC = "__kafka_balancer_partition_loads"
FORMAT_VERSION = 1
TP = tuple[str, int]


@dataclass(frozen=True)
class LoadRecord:
    topic: str
    partition: int
    load: float
    generation: int
    ts_ms: int
    unit: str = "bytes/s"
    source: str = "pipeline"


def encode_record(topic: str, partition: int, load: float, *, generation: int, ts_ms: int,
                  unit: str = "bytes/s", source: str = "pipeline") -> tuple[bytes, bytes]:
    """Key and value bytes of one partition's load."""
    if not topic or ":" in topic:
        raise InputError(f"topic name {topic!r} cannot be a loads-topic key", hint="Kafka topic names have no ':'")
    if not math.isfinite(load) or load < 0:
        raise InputError(f"partition {topic}-{partition} has load {load!r}", hint="loads are finite numbers >= 0")
    value = {"v": FORMAT_VERSION, "generation": int(generation), "ts_ms": int(ts_ms), "load": float(load),
             "unit": unit, "source": source}
    return f"{topic}:{int(partition)}".encode(), json.dumps(value, separators=(",", ":")).encode()


def decode_record(key: bytes, value: bytes | None) -> LoadRecord | None:
    """One record back (None for a tombstone); InputError naming the key for anything malformed."""
    k = key.decode("utf-8", errors="replace")
    topic, sep, part = k.rpartition(":")
    if not sep or not topic or not part.isdigit():
        raise InputError(f"loads-topic key {k!r} is not <topic>:<partition>")
    if value is None:
        return None
    try:
        doc = json.loads(value)
    except ValueError as exc:
        raise InputError(f"loads-topic value for {k} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("v") != FORMAT_VERSION:
        version = doc.get("v") if isinstance(doc, dict) else "?"
        raise InputError(f"loads-topic value for {k} has format version {version}",
                         hint=f"this version reads format {FORMAT_VERSION}")
    load, ts = doc.get("load"), doc.get("ts_ms")
    if isinstance(load, bool) or not isinstance(load, int | float) or not isinstance(ts, int):
        raise InputError(f"loads-topic value for {k} lacks a numeric 'load' or an integer 'ts_ms'")
    return LoadRecord(topic, int(part), float(load), int(doc.get("generation", 0)), ts,
                      str(doc.get("unit", "")), str(doc.get("source", "")))


def ensure_topic(admin: Any, *, replication: int | None = None) -> bool:
    """Create the compacted loads topic if it is missing (1 partition). Returns True if it was created."""
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    if LOADS_TOPIC in set(admin.list_topics()):
        return False
    if replication is None:
        replication = min(3, len(admin.describe_cluster()["brokers"]))
    topic = NewTopic(LOADS_TOPIC, 1, replication, topic_configs={"cleanup.policy": "compact"})
    try:
        admin.create_topics([topic])
    except TopicAlreadyExistsError:
        return False
    return True


def publish_loads(bootstrap: str, loads: Mapping[TP, float], *, generation: int | None = None,
                  ts_ms: int | None = None, unit: str = "bytes/s", source: str = "pipeline",
                  timeout_s: float = 30.0, security: Any = None) -> int:
    """Write every partition's load (one record each, acks=all) and wait; returns the number written.
    ``security``: the ``--command-config`` settings (kafka_balancer.security), None for plaintext."""
    from kafka.errors import KafkaError

    from kafka import KafkaProducer
    from kafka_balancer.collect.admin import connect_admin, quiet_kafka_logs, retried
    from kafka_balancer.security.clients import kafka_kwargs

    now = int(time.time() * 1000)
    ts = now if ts_ms is None else ts_ms
    gen = now if generation is None else generation
    records = [encode_record(t, p, v, generation=gen, ts_ms=ts, unit=unit, source=source)
               for (t, p), v in sorted(loads.items())]
    admin = connect_admin(bootstrap, timeout_s=timeout_s, security=security)
    try:
        retried(lambda: ensure_topic(admin))
    finally:
        with quiet_kafka_logs():
            admin.close()
    try:
        with quiet_kafka_logs():
            producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                                     client_id="kafka-balancer-loads", **kafka_kwargs(security))
            try:
                futures = [producer.send(LOADS_TOPIC, key=k, value=v) for k, v in records]
                producer.flush(timeout=timeout_s)
                for f in futures:
                    f.get(timeout=timeout_s)
            finally:
                producer.close(timeout=5)
    except KafkaError as exc:
        raise ClusterError(f"cannot publish loads to {LOADS_TOPIC} on {bootstrap}: {exc}",
                           hint="check the cluster is reachable and the topic may be written") from exc
    return len(records)


def read_loads(bootstrap: str, *, timeout_s: float = 20.0) -> dict[TP, LoadRecord]:
    """The latest load per partition on the topic (malformed records skipped), read to its end."""
    from kafka.structs import TopicPartition

    from kafka import KafkaConsumer
    from kafka_balancer.collect.admin import quiet_kafka_logs

    out: dict[TP, LoadRecord] = {}
    with quiet_kafka_logs():
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                 client_id="kafka-balancer-loads-reader")
        try:
            parts = consumer.partitions_for_topic(LOADS_TOPIC) or set()
            tps = [TopicPartition(LOADS_TOPIC, p) for p in sorted(parts)]
            if not tps:
                return out
            consumer.assign(tps)
            consumer.seek_to_beginning(*tps)
            end = consumer.end_offsets(tps)
            deadline = time.monotonic() + timeout_s
            while any(consumer.position(tp) < end[tp] for tp in tps) and time.monotonic() < deadline:
                for batch in consumer.poll(timeout_ms=500).values():
                    for r in batch:
                        try:
                            rec = decode_record(r.key, r.value)
                        except InputError:
                            continue
                        key = r.key.decode("utf-8", errors="replace").rpartition(":")
                        tp = (key[0], int(key[2]))
                        if rec is None:
                            out.pop(tp, None)
                        else:
                            out[tp] = rec
        finally:
            consumer.close()
    return out


def loads_from_snapshot(path: str | Path) -> dict[TP, float]:
    """Each partition's consume load from a pipeline snapshot: its leader's bytes-in rate (``nw_in``,
    what every consumer group of the topic reads), as :class:`~kafka_balancer.consumer.loads.SnapshotLoads`."""
    from kafka_balancer.consumer.loads import SnapshotLoads

    return dict(SnapshotLoads(path).loads)


def publish_snapshot(bootstrap: str, snapshot: str | Path, security: Any = None) -> int:
    """Publish a snapshot's per-partition loads (the pipeline's ``--publish-loads``)."""
    loads = loads_from_snapshot(snapshot)
    return publish_loads(bootstrap, loads, source="pipeline", security=security)
