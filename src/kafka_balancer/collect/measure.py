"""Per-broker load measured from the live cluster (not from the load model), for before/after tables.

Two readings of every broker's exporter, ``Δt`` apart, give per-broker rates: CPU (process CPU seconds
÷ cores × 100, percent of the broker's cores), network in (client BytesIn + ReplicationBytesIn) and
network out (client BytesOut + ReplicationBytesOut); disk is the sum of the broker's replica sizes from
``describe_log_dirs`` at the second reading. A broker whose counter went down (restart) or that did not
answer is left out (NaN).

    >>> r0 = Reading(0.0, {1: (10.0, 2, {"bytes_in": 0.0, "replication_bytes_in": 0.0,
    ...                                  "bytes_out": 0.0, "replication_bytes_out": 0.0})})
    >>> r1 = Reading(10.0, {1: (12.0, 2, {"bytes_in": 1000.0, "replication_bytes_in": 500.0,
    ...                                   "bytes_out": 300.0, "replication_bytes_out": 0.0})})
    >>> loads(r0, r1, {1: 4096})[1]
    (10.0, 4096.0, 150.0, 30.0)
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_balancer.collect.sampler import scrape

Counters = tuple[float | None, int | None, dict[str, float]]


@dataclass(frozen=True)
class Reading:
    ts: float
    brokers: dict[int, Counters]


def read(metrics_urls: Mapping[int, str]) -> Reading:
    out: dict[int, Counters] = {}
    for b, url in metrics_urls.items():
        m = scrape(url)
        if m is not None:
            out[int(b)] = (m.cpu_seconds, m.cpu_cores, dict(m.totals))
    return Reading(time.monotonic(), out)


def broker_disk(admin: Any) -> dict[int, int]:
    """Bytes of all replicas per broker (topics not starting with ``__``)."""
    from kafka_balancer.collect.admin import quiet_kafka_logs

    with quiet_kafka_logs():
        alive = [int(b["broker_id"]) for b in admin.describe_cluster()["brokers"]]
        out: dict[int, int] = {}
        for b in alive:
            total = 0
            for entry in admin.describe_log_dirs(None, [b]):
                for d in entry["log_dirs"]:
                    for t in d.get("topics", []):
                        if not t["name"].startswith("__"):
                            total += sum(int(p["partition_size"]) for p in t["partitions"])
            out[b] = total
    return out


def loads(r0: Reading, r1: Reading, disk: Mapping[int, int]) -> dict[int, tuple[float, float, float, float]]:
    """Broker -> (cpu %, disk bytes, nw_in B/s, nw_out B/s) between two readings."""
    dt = r1.ts - r0.ts
    out: dict[int, tuple[float, float, float, float]] = {}
    for b in sorted(set(r0.brokers) | set(r1.brokers) | set(disk)):
        c0, c1 = r0.brokers.get(b), r1.brokers.get(b)
        nan = math.nan
        cpu = nw_in = nw_out = nan
        if c0 and c1 and dt > 0:
            if c0[0] is not None and c1[0] is not None and c1[0] >= c0[0]:
                cpu = (c1[0] - c0[0]) / dt / (c1[1] or 1) * 100.0
            t0, t1 = c0[2], c1[2]

            def rate(*keys: str, t0: dict[str, float] = t0, t1: dict[str, float] = t1) -> float:
                d = sum(t1.get(k, 0.0) for k in keys) - sum(t0.get(k, 0.0) for k in keys)
                return d / dt if d >= 0 else math.nan

            nw_in = rate("bytes_in", "replication_bytes_in")
            nw_out = rate("bytes_out", "replication_bytes_out")
        out[b] = (cpu, float(disk.get(b, nan)), nw_in, nw_out)
    return out
