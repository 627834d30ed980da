"""History blocks + the cluster as it is now -> sample records of many rounds (pure; no I/O).

One call turns one time chunk into one Arrow table per record type (``docs/samples-format.md``), rows in
round order, every round with the records live collection would have written at that time:

* ``broker``: every broker known now (and every broker named in a replica list), each round; CPU seconds
  and cores from history; ``alive`` when it is in the cluster now and, if its CPU series exists, had a
  value in that round (a broker down then had none);
* ``topic_broker``: per broker and topic with any byte or message counter in that round;
* ``partition``: placement (replicas, leader, ISR) as of now; log end and start offsets from history
  (the current leader's series, else the largest of the other replicas' series) or, when history has
  no such series, the current offsets in every round;
* ``replica``: every replica of the current placement with a size in that round (from history, or the
  current size when history has none); the log dir is the current one;
* ``group_offset``: from history only (nothing when none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from kafka_balancer.collect.prometheus.fetch import Block

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
BOOL = npt.NDArray[np.bool_]


@dataclass
class Placement:
    """The cluster now (Admin API)."""

    brokers: dict[int, dict[str, Any]]  # id -> host, rack
    partitions: dict[tuple[str, int], dict[str, Any]]  # replicas, leader, isr
    end_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    start_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    sizes: dict[tuple[str, int, int], tuple[int, str]] = field(default_factory=dict)  # (t, p, b) -> size, dir


def _rows(values: F64, mask: BOOL, ts: I64) -> tuple[I64, I64]:
    """Key index and ts of every (key, round) in ``mask`` [keys, rounds], rounds first."""
    k, t = values.shape
    m = mask.T.reshape(-1)
    keys = np.tile(np.arange(k, dtype=np.int64), t)[m]
    times = np.repeat(ts, k)[m]
    return keys, times


def _matrix(block: Block | None, keys: list[tuple[Any, ...]], rounds: int) -> F64:
    out = np.full((len(keys), rounds), np.nan)
    if block is None or not block.keys:
        return out
    where = {k: i for i, k in enumerate(block.keys)}
    for i, k in enumerate(keys):
        j = where.get(k)
        if j is not None:
            out[i] = block.values[j]
    return out


def _nullable_int(x: F64) -> pa.Array:
    mask = np.isnan(x)
    return pa.array(np.where(mask, 0, x).astype(np.int64), mask=mask)


def _nullable_float(x: F64) -> pa.Array:
    return pa.array(x, mask=np.isnan(x))


def flat(m: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """[keys, rounds] -> one value per row, rounds first (the order of :func:`_rows`)."""
    return m.T.reshape(-1)


def _head(n: int, cluster: str, times: I64) -> dict[str, pa.Array]:
    return {"v": pa.array(np.ones(n, np.int32)), "cluster": pa.array([cluster] * n, pa.string()),
            "ts": pa.array(times, pa.int64())}


def broker_table(pl: Placement, ts: I64, blocks: Mapping[str, Block | None], cluster: str,
                 hosts: Mapping[int, str], cores_default: float | None) -> pa.Table:
    known = sorted(set(pl.brokers) | {b for p in pl.partitions.values() for b in p["replicas"]})
    keys = [(b,) for b in known]
    cpu = _matrix(blocks.get("cpu_seconds"), keys, len(ts))
    cores = _matrix(blocks.get("cpu_cores"), keys, len(ts))
    if cores_default is not None:
        cores = np.where(np.isnan(cores), cores_default, cores)
    in_meta = np.array([b in pl.brokers for b in known], bool)[:, None]
    has_cpu = ~np.all(np.isnan(cpu), axis=1, keepdims=True)
    alive = in_meta & (~has_cpu | ~np.isnan(cpu))
    idx, times = _rows(cpu, np.ones(cpu.shape, bool), ts)
    ids = np.array(known, np.int32)[idx]
    info = [pl.brokers.get(b, {}) for b in known]
    rack = pa.array([i.get("rack") for i in info], pa.string()).take(pa.array(idx))
    host = pa.array([hosts.get(b, info[n].get("host")) for n, b in enumerate(known)], pa.string()).take(pa.array(idx))
    return pa.table({**_head(len(idx), cluster, times), "broker": pa.array(ids, pa.int32()), "rack": rack,
                     "host": host, "alive": pa.array(flat(alive), pa.bool_()),
                     "cpu_seconds": _nullable_float(flat(cpu)),
                     "cpu_cores": pa.array(np.where(np.isnan(flat(cores)), 0, flat(cores)).astype(np.int32),
                                           mask=np.isnan(flat(cores)))})


def topic_broker_table(ts: I64, blocks: Mapping[str, Block | None], cluster: str,
                       keep_topic: Any) -> pa.Table:
    keys = sorted({k for n in ("bytes_in", "bytes_out", "messages_in") if (b := blocks.get(n)) is not None
                   for k in b.keys if keep_topic(k[1])})
    mats = {n: _matrix(blocks.get(n), keys, len(ts)) for n in ("bytes_in", "bytes_out", "messages_in")}
    if keys:
        present = ~(np.isnan(mats["bytes_in"]) & np.isnan(mats["bytes_out"]) & np.isnan(mats["messages_in"]))
    else:
        present = np.zeros((0, len(ts)), bool)
    idx, times = _rows(mats["bytes_in"], present, ts)
    m = present.T.reshape(-1)
    cols = {n: pa.array(np.nan_to_num(v.T.reshape(-1)[m], nan=0.0)) for n, v in mats.items()}
    brokers = np.array([k[0] for k in keys], np.int32)
    return pa.table({**_head(len(idx), cluster, times), "broker": pa.array(brokers[idx] if keys else [], pa.int32()),
                     "topic": pa.array([k[1] for k in keys], pa.string()).take(pa.array(idx)), **cols})


def _offsets(pl: Placement, parts: list[tuple[str, int]], block: Block | None, now: Mapping[tuple[str, int], int],
             rounds: int) -> F64:
    """Per partition and round: the leader's series, gaps filled by the largest other replica's."""
    out = np.full((len(parts), rounds), np.nan)
    if block is None:
        for i, tp in enumerate(parts):
            if tp in now:
                out[i] = now[tp]
        return out
    by_tp: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for j, (b, t, p) in enumerate(block.keys):
        by_tp.setdefault((t, p), []).append((b, j))
    for i, tp in enumerate(parts):
        rows = by_tp.get(tp)
        if not rows:
            continue
        leader = pl.partitions[tp]["leader"]
        lead = [j for b, j in rows if b == leader]
        others = [j for b, j in rows if b != leader]
        val = block.values[lead[0]].copy() if lead else np.full(rounds, np.nan)
        if others:
            rest = block.values[others]
            fill = np.where(np.all(np.isnan(rest), axis=0), np.nan, np.nanmax(np.nan_to_num(rest, nan=-np.inf), axis=0))
            val = np.where(np.isnan(val), fill, val)
        out[i] = val
    return out


def partition_table(pl: Placement, ts: I64, blocks: Mapping[str, Block | None], cluster: str) -> pa.Table:
    parts = sorted(pl.partitions)
    leo = _offsets(pl, parts, blocks.get("log_end_offset"), pl.end_offsets, len(ts))
    lso = _offsets(pl, parts, blocks.get("log_start_offset"), pl.start_offsets, len(ts))
    idx, times = _rows(leo, np.ones(leo.shape, bool), ts)
    take = pa.array(idx)
    info = [pl.partitions[tp] for tp in parts]
    return pa.table({
        **_head(len(idx), cluster, times),
        "topic": pa.array([t for t, _ in parts], pa.string()).take(take),
        "partition": pa.array([p for _, p in parts], pa.int32()).take(take),
        "replicas": pa.array([list(i["replicas"]) for i in info], pa.list_(pa.int32())).take(take),
        "leader": pa.array([int(i["leader"]) for i in info], pa.int32()).take(take),
        "isr": pa.array([list(i["isr"]) for i in info], pa.list_(pa.int32())).take(take),
        "log_end_offset": _nullable_int(leo.T.reshape(-1)),
        "log_start_offset": _nullable_int(lso.T.reshape(-1)),
    })


def replica_table(pl: Placement, ts: I64, blocks: Mapping[str, Block | None], cluster: str) -> pa.Table:
    keys = sorted((b, t, p) for (t, p), info in pl.partitions.items() for b in info["replicas"])
    block = blocks.get("log_size")
    if block is None:
        size = np.full((len(keys), len(ts)), np.nan)
        for i, (b, t, p) in enumerate(keys):
            if (t, p, b) in pl.sizes:
                size[i] = pl.sizes[(t, p, b)][0]
    else:
        size = _matrix(block, keys, len(ts))
    present = ~np.isnan(size)
    idx, times = _rows(size, present, ts)
    take = pa.array(idx)
    return pa.table({
        **_head(len(idx), cluster, times),
        "topic": pa.array([k[1] for k in keys], pa.string()).take(take),
        "partition": pa.array([k[2] for k in keys], pa.int32()).take(take),
        "broker": pa.array([k[0] for k in keys], pa.int32()).take(take),
        "size": pa.array(size.T.reshape(-1)[present.T.reshape(-1)].astype(np.int64)),
        "log_dir": pa.array([pl.sizes.get((t, p, b), (0, None))[1] for b, t, p in keys], pa.string()).take(take),
    })


def group_table(pl: Placement, ts: I64, blocks: Mapping[str, Block | None], cluster: str) -> pa.Table:
    block = blocks.get("group_committed")
    keys = sorted(k for k in block.keys if (k[1], k[2]) in pl.partitions) if block is not None else []
    vals = _matrix(block, keys, len(ts))
    present = ~np.isnan(vals) & (np.nan_to_num(vals, nan=-1.0) >= 0)
    idx, times = _rows(vals, present, ts)
    take = pa.array(idx)
    return pa.table({
        **_head(len(idx), cluster, times),
        "group": pa.array([k[0] for k in keys], pa.string()).take(take),
        "topic": pa.array([k[1] for k in keys], pa.string()).take(take),
        "partition": pa.array([k[2] for k in keys], pa.int32()).take(take),
        "committed": pa.array(vals.T.reshape(-1)[present.T.reshape(-1)].astype(np.int64)),
    })


def chunk_tables(pl: Placement, ts: I64, blocks: Mapping[str, Block | None], cluster: str,
                 hosts: Mapping[int, str], cores_default: float | None = None,
                 include_internal: bool = False) -> dict[str, pa.Table]:
    """The records of the rounds ``ts`` (ms), one table per record type, rows in round order."""
    def keep(topic: str) -> bool:
        return include_internal or not topic.startswith("__")

    return {
        "broker": broker_table(pl, ts, blocks, cluster, hosts, cores_default),
        "topic_broker": topic_broker_table(ts, blocks, cluster, keep),
        "partition": partition_table(pl, ts, blocks, cluster),
        "replica": replica_table(pl, ts, blocks, cluster),
        "group_offset": group_table(pl, ts, blocks, cluster),
    }
