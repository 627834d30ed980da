"""``collect --prometheus URL --since 6h``: sample records from a Prometheus server's history.

    res = collect_history(HistoryOptions(prometheus_url="http://127.0.0.1:9090", bootstrap="127.0.0.1:19092",
                                         out_dir=Path("out/samples"), start_ms=..., end_ms=..., step_ms=10_000))

The Admin API gives the cluster as it is now (brokers, racks, placement, log dirs, and the current
sizes and offsets where history has none); Prometheus gives the counters and gauges of every round
(``fetch.py`` reads them in chunks, ``assemble.py`` makes the records). The files are the live
collector's (``docs/samples-format.md``), so the pipeline builds a snapshot from them at once.
"""

from __future__ import annotations

import sys
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kafka_balancer.collect.admin import connect_admin, quiet_kafka_logs
from kafka_balancer.collect.capacity import read_disk_capacity, write_capacity_file
from kafka_balancer.collect.prometheus.api import PromClient
from kafka_balancer.collect.prometheus.assemble import Placement, chunk_tables
from kafka_balancer.collect.prometheus.fetch import Block, Found, fetch_block, find_metric, plan_chunks
from kafka_balancer.collect.prometheus.mapping import Kind, load_mapping
from kafka_balancer.collect.prometheus.mapping import Mapping as SeriesMapping
from kafka_balancer.collect.sampler import read_round
from kafka_balancer.collect.writer import SampleFileWriter, _arrow_schema
from kafka_balancer.errors import InputError
from kafka_balancer.files.outputs import replacing

# what the snapshot loses when a kind has no series (kinds not listed: nothing, or said by the caller)
CONSEQUENCE = {
    "cpu_seconds": "broker CPU will be null (no CPU load in the snapshot's windows)",
    "cpu_cores": "CPU cannot be turned into percent of cores; set series.cpu_cores.default in a mapping file",
    "messages_in": "topic_broker.messages_in will be 0 (the pipeline does not need it)",
    "log_size": "replica sizes are the current ones (describe_log_dirs) in every round",
    "log_start_offset": "log start offsets are the current ones in every round (retention not seen)",
    "group_committed": "no group_offset records: consumer bytes are split over partitions by appended messages",
    "bytes_in": "no network-in history",
    "bytes_out": "topic_broker.bytes_out will be 0 (Kafka creates the series at a topic's first consumer "
                 "fetch): network out is replication only",
    "log_end_offset": "topic bytes cannot be split over partitions",
}


@dataclass(frozen=True)
class HistoryOptions:
    prometheus_url: str
    bootstrap: str
    out_dir: Path
    start_ms: int
    end_ms: int
    step_ms: int = 10_000
    cluster: str = "local"
    metrics_urls: Mapping[int, str] = field(default_factory=dict)  # ties exporter instances to broker ids
    hosts: Mapping[int, str] = field(default_factory=dict)
    mapping_path: Path | None = None
    include_internal: bool = False
    timeout_s: float = 15.0
    file_format: str = "jsonl"
    max_points: int = 1_000_000  # per query_range answer
    max_values: int = 20_000_000  # per time chunk, over all series
    security: Any = None  # SecuritySettings from --command-config (None: plaintext)
    # the cluster as it is now, when the caller has it (bench/prometheus_collect.py: a simulated cluster);
    # None: read it with the Admin API from ``bootstrap``
    placement: Placement | None = None


@dataclass
class HistoryResult:
    rounds: int = 0
    records: int = 0
    files: list[Path] = field(default_factory=list)
    requests: int = 0
    bytes_read: int = 0
    series: dict[str, int] = field(default_factory=dict)  # kind -> series count
    missing: list[str] = field(default_factory=list)  # kinds without series
    messages: list[str] = field(default_factory=list)


def _instance_of(url: str) -> str:
    u = urllib.parse.urlsplit(url)
    return u.netloc


def _key_fn(kind: Kind, mapping: SeriesMapping, instances: Mapping[str, int], hosts: Mapping[str, int],
            unplaced: set[str]) -> Callable[[dict[str, str]], tuple[Any, ...] | None]:
    lab = mapping.labels

    def key(labels: dict[str, str]) -> tuple[Any, ...] | None:
        b = mapping.broker_of(labels, instances, hosts)
        try:
            if kind.per == "group":
                return (labels[lab["group"]], labels[lab["topic"]], int(labels[lab["partition"]]))
            if kind.per == "replica":
                return (-1 if b is None else b, labels[lab["topic"]], int(labels[lab["partition"]]))
        except (KeyError, ValueError):
            unplaced.add(f"{kind.name}: series without {lab['topic']}/{lab['partition']} labels")
            return None
        if b is None:
            unplaced.add(labels.get(lab["instance"], str(labels)))
            return None
        if kind.per == "topic":
            t = labels.get(lab["topic"])
            return (b, t) if t else None
        return (b,)

    return key


def placement_now(admin: Any, include_internal: bool) -> Placement:
    raw = read_round(admin, int(time.time() * 1000), None, include_internal)
    return Placement(
        brokers={int(b["broker_id"]): {"host": b.get("host"), "rack": b.get("rack")} for b in raw.brokers},
        partitions=raw.partitions, end_offsets=raw.end_offsets, start_offsets=raw.start_offsets,
        sizes={(t, p, b): (size, d) for t, p, b, size, d in raw.replica_sizes},
    )


def _placement_and_capacity(opt: HistoryOptions) -> Placement:
    admin = connect_admin(opt.bootstrap, timeout_s=opt.timeout_s, security=opt.security)
    try:
        if opt.security is not None:  # the same ACLs as live collection, checked before anything is read
            from kafka_balancer.security.acl import COLLECT_CLUSTER, require_cluster

            require_cluster(admin, COLLECT_CLUSTER, "collect", opt.security.who)
        pl = placement_now(admin, opt.include_internal)
        disk, dirs = read_disk_capacity(admin, sorted(pl.brokers))
        if disk:
            write_capacity_file(opt.out_dir, opt.cluster, disk, dirs)
    finally:
        with quiet_kafka_logs():
            admin.close()
    return pl


def _write_parquet(out_dir: Path, tables: dict[str, pa.Table], seq: int) -> list[Path]:
    files = []
    for rtype, tbl in tables.items():
        if tbl.num_rows == 0:
            continue
        d = out_dir / "parquet" / rtype
        d.mkdir(parents=True, exist_ok=True)
        name = f"samples-{tbl.column('ts')[0].as_py()}-{seq:04d}.parquet"
        with replacing(d / name, "--out", suffix=".tmp") as tmp:  # a unique dot-name, then renamed
            pq.write_table(tbl.cast(_arrow_schema(rtype)), tmp, compression="snappy")
        files.append(d / name)
    return files


def _write_jsonl(writer: SampleFileWriter, tables: dict[str, pa.Table], ts: np.ndarray) -> None:
    per_type = {}
    for rtype, tbl in tables.items():
        col = tbl.column("ts").to_numpy()
        rows = tbl.to_pylist()
        per_type[rtype] = (rows, np.searchsorted(col, ts, "left"), np.searchsorted(col, ts, "right"))
    for i, _ in enumerate(ts):
        records: list[dict[str, Any]] = []
        for rtype, (rows, lo, hi) in per_type.items():
            records.extend({"type": rtype, **r} for r in rows[lo[i]:hi[i]])
        if records:
            writer.write_round(records)


def _essential_error(mapping: SeriesMapping, found: dict[str, Found], missing: list[str], url: str) -> InputError:
    names = ", ".join(f"{k} (tried {' / '.join(found[k].tried) or 'no metric names'})" for k in missing)
    return InputError(f"Prometheus at {url} has no series for {names} over the span",
                      hint="check --since and the exporter rules; name your metrics in a "
                      f"--prometheus-mapping file (mapping used: {mapping.source}; docs/prometheus.md)")


def collect_history(opt: HistoryOptions, say: Callable[[str], None] | None = None,
                    progress: bool = True) -> HistoryResult:
    say = say or (lambda m: print(m, file=sys.stderr))
    if opt.file_format not in ("jsonl", "parquet"):
        raise InputError(f"unknown sample file format {opt.file_format!r}", hint="use jsonl or parquet")
    if opt.step_ms <= 0 or opt.end_ms < opt.start_ms:
        raise InputError("the span to read from Prometheus is empty", hint="use e.g. --since 6h --interval 30s")
    mapping = load_mapping(opt.mapping_path)
    client = PromClient(opt.prometheus_url)
    start_ms = -(-opt.start_ms // opt.step_ms) * opt.step_ms  # rounds on multiples of the step
    end_ms = opt.end_ms // opt.step_ms * opt.step_ms
    if end_ms < start_ms:
        raise InputError("--since is shorter than one --interval", hint="use a longer --since or a shorter --interval")
    res = HistoryResult()
    found = {k: find_metric(client, mapping, kind, start_ms / 1000, end_ms / 1000) for k, kind in mapping.kinds.items()}
    res.series = {k: f.total for k, f in found.items() if f.metric}
    for k, f in found.items():
        if f.metric is None:
            cores = k == "cpu_cores" and mapping.kinds[k].default is not None
            if cores:
                continue
            res.missing.append(k)
            msg = (f"prometheus: no series for {k}: {mapping.kinds[k].what}; tried "
                   f"{' / '.join(f.tried) or '(no metric names in the mapping)'}; {CONSEQUENCE.get(k, '')}")
            res.messages.append(msg)
            say(msg)
    essential_missing = [k for k in res.missing if mapping.kinds[k].essential]
    if essential_missing:
        raise _essential_error(mapping, found, essential_missing, client.url)

    pl = opt.placement if opt.placement is not None else _placement_and_capacity(opt)
    instances = {_instance_of(u): int(b) for b, u in opt.metrics_urls.items()}
    adv: dict[str, list[int]] = {}
    for b, info in pl.brokers.items():
        if info.get("host"):
            adv.setdefault(str(info["host"]), []).append(b)
    hosts = {h: ids[0] for h, ids in adv.items() if len(ids) == 1}
    unplaced: dict[str, set[str]] = {k: set() for k in found}
    keyfns = {k: _key_fn(mapping.kinds[k], mapping, instances, hosts, unplaced[k]) for k in found}

    total = sum(f.total for f in found.values() if f.metric)
    chunks = plan_chunks(start_ms, end_ms, opt.step_ms, total, opt.max_values)
    say(f"prometheus: {client.url}: {len(chunks)} time chunk(s) of up to "
        f"{(chunks[0][1] - chunks[0][0]) // opt.step_ms + 1} rounds, {total} series in "
        f"{sum(1 for f in found.values() if f.metric)} kinds, rounds every {opt.step_ms / 1000:g} s")
    bar: Any = None
    if progress and sys.stderr.isatty():  # a bar on a terminal; one line per chunk otherwise
        from tqdm import tqdm

        bar = tqdm(total=len(chunks) * len(res.series), unit="query", desc="prometheus", file=sys.stderr,
                   leave=False)
    t_start = time.monotonic()
    writer = SampleFileWriter(opt.out_dir) if opt.file_format == "jsonl" else None
    for seq, chunk in enumerate(chunks):
        ts = np.arange(chunk[0], chunk[1] + 1, opt.step_ms, dtype=np.int64)
        blocks: dict[str, Block | None] = {}
        for k, f in found.items():
            if f.metric is None:
                blocks[k] = None
                continue
            block, _ = fetch_block(client, mapping, f, chunk, opt.step_ms, keyfns[k], opt.max_points)
            blocks[k] = block
            if bar is not None:
                bar.update(1)
        # a round with no value of any kind is a time Prometheus knew nothing (before the history began)
        seen = np.zeros(len(ts), bool)
        for blk in blocks.values():
            if blk is not None and blk.keys:
                seen |= ~np.all(np.isnan(blk.values), axis=0)
        if not seen.any():
            continue
        ts_kept = ts[seen]
        kept = {k: (Block(blk.keys, blk.values[:, seen]) if blk is not None else None)
                for k, blk in blocks.items()}
        tables = chunk_tables(pl, ts_kept, kept, opt.cluster, opt.hosts,
                              mapping.kinds["cpu_cores"].default, opt.include_internal)
        if writer is not None:
            _write_jsonl(writer, tables, ts_kept)
        else:
            res.files.extend(_write_parquet(opt.out_dir, tables, seq))
        res.rounds += len(ts_kept)
        res.records += sum(t.num_rows for t in tables.values())
        if bar is None:
            say(f"prometheus: chunk {seq + 1}/{len(chunks)}: {len(ts_kept)} rounds, "
                f"{sum(t.num_rows for t in tables.values())} records ({time.monotonic() - t_start:.1f} s)")
    if bar is not None:
        bar.close()
    if writer is not None:
        res.files = list(writer.files)
    for k, names in unplaced.items():
        if names:
            msg = (f"prometheus: {k}: series of {len(names)} instance(s) could not be tied to a broker id "
                   f"(e.g. {sorted(names)[0]}); they were left out")
            res.messages.append(msg)
            say(msg + "\n  hint: pass --metrics ID=URL per broker, or name the broker-id label in "
                "broker_id_labels of a --prometheus-mapping file")
    res.requests, res.bytes_read = client.requests, client.bytes
    return res
