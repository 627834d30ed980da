"""The sampling loop: every ``interval`` take a round, write it, until ``rounds`` or ``duration``.

    result = collect(CollectOptions(bootstrap="127.0.0.1:19092", out_dir=Path("out/samples"),
                                    interval_s=10, rounds=6, metrics_urls={1: "http://..."}))
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_balancer.collect.admin import RenewingAdmin, retried
from kafka_balancer.collect.sampler import build_records, read_round, retry_fresh
from kafka_balancer.collect.writer import SampleFileWriter, SampleParquetWriter, SampleTopicWriter
from kafka_balancer.errors import InputError


@dataclass(frozen=True)
class CollectOptions:
    bootstrap: str
    out_dir: Path
    interval_s: float = 10.0
    rounds: int | None = None  # stop after this many rounds
    duration_s: float | None = None  # or after this long
    cluster: str = "local"
    metrics_urls: Mapping[int, str] = field(default_factory=dict)
    hosts: Mapping[int, str] = field(default_factory=dict)
    topic: str | None = None  # also produce records here
    include_internal: bool = False
    timeout_s: float = 15.0
    file_format: str = "jsonl"  # or "parquet" (collect/writer.py)
    security: Any = None  # SecuritySettings from --command-config (None: plaintext)


@dataclass
class CollectResult:
    rounds: int = 0
    records: int = 0
    files: list[Path] = field(default_factory=list)
    scraped: int = 0  # broker scrapes that answered
    last_round_s: float = 0.0


def parse_interval(text: str) -> float:
    """``10s``, ``500ms``, ``2m`` or plain seconds."""
    t = text.strip().lower()
    for suffix, mult in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if t.endswith(suffix):
            t, factor = t[: -len(suffix)], mult
            break
    else:
        factor = 1.0
    try:
        v = float(t) * factor
    except ValueError:
        raise InputError(f"bad interval {text!r}", hint="e.g. 10s, 500ms, 1m") from None
    if not math.isfinite(v) or v <= 0:
        raise InputError(f"interval must be a finite positive duration, got {text!r}", hint="e.g. 10s, 500ms, 1m")
    return v


def _write_capacity(admin: Any, out_dir: Path, cluster: str) -> None:
    """The brokers' disk capacities (DescribeLogDirs), next to the samples (collect/capacity.py)."""
    from kafka_balancer.collect.capacity import read_disk_capacity, write_capacity_file

    brokers = sorted(int(b["broker_id"]) for b in retried(admin.describe_cluster)["brokers"])
    disk, dirs = read_disk_capacity(admin, brokers)
    if disk:
        write_capacity_file(out_dir, cluster, disk, dirs)


def collect(opt: CollectOptions, say: Callable[[str], None] | None = None) -> CollectResult:
    if opt.rounds is None and opt.duration_s is None:
        raise InputError("collect needs --rounds or --duration (or run it until Ctrl-C with --forever)")
    say = say or (lambda m: print(m, file=sys.stderr))
    session = RenewingAdmin.connect(opt.bootstrap, timeout_s=opt.timeout_s, security=opt.security)
    admin = session.client
    if opt.security is not None:
        from kafka_balancer.security.acl import COLLECT_CLUSTER, require_cluster

        require_cluster(admin, COLLECT_CLUSTER, "collect", opt.security.who)
    if opt.file_format not in ("jsonl", "parquet"):
        raise InputError(f"unknown sample file format {opt.file_format!r}", hint="use jsonl or parquet")
    files: SampleFileWriter | SampleParquetWriter = (
        SampleFileWriter(opt.out_dir) if opt.file_format == "jsonl" else SampleParquetWriter(opt.out_dir))
    topic = SampleTopicWriter(opt.bootstrap, opt.topic, admin, security=opt.security) if opt.topic else None
    _write_capacity(admin, opt.out_dir, opt.cluster)
    res = CollectResult()
    t_start = time.monotonic()
    try:
        while True:
            t0 = time.monotonic()
            # a broker that just died is still in the metadata until it is fenced: the round is tried again
            raw = retry_fresh(lambda: session.call(lambda client: read_round(
                client, int(time.time() * 1000), opt.metrics_urls, opt.include_internal)), session.renew)
            records = build_records(raw, opt.cluster, opt.hosts)
            path = files.write_round(records)
            if topic is not None:
                topic.write_round(records)
            res.rounds += 1
            res.records += len(records)
            res.scraped += sum(1 for m in raw.metrics.values() if m is not None)
            res.last_round_s = time.monotonic() - t0
            alive = sum(1 for r in records if r["type"] == "broker" and r["alive"])
            say(f"round {res.rounds}: {len(records)} records ({alive} brokers alive, "
                f"{len(raw.partitions)} partitions, {sum(1 for m in raw.metrics.values() if m)} scraped) "
                f"-> {path.name} in {res.last_round_s:.1f} s"
                + (f"; without {', '.join(raw.failed)}" if raw.failed else ""))
            if opt.rounds is not None and res.rounds >= opt.rounds:
                break
            elapsed = time.monotonic() - t_start
            if opt.duration_s is not None and elapsed + opt.interval_s > opt.duration_s + 1e-9:
                break
            time.sleep(max(0.0, opt.interval_s - (time.monotonic() - t0)))
    finally:
        files.close()
        res.files = list(files.files)
        if topic is not None:
            topic.close()
        session.close()
    return res
