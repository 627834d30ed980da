"""Broker traffic, the CPU split and the summaries with numpy, from the partition window table of
:mod:`np_windows`: what ``cpu_model.broker_traffic``/``split_cpu``, the broker table of
``tables.window_tables`` and ``assemble.partition_summary``/``broker_summary`` compute in Spark SQL, with
the same rules (see their docstrings). The CPU fit's sums run as Spark tasks (:func:`columnar.fit`).

Example (``cpu_model``'s): a broker at 20 % CPU leads one partition with 1 MB/s in and 0 out and follows
none: its whole 20 % is that partition's leader CPU in that window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kafka_balancer.pipeline.assemble import LOADS
from kafka_balancer.pipeline.columnar.np_keys import (
    floats,
    group_max,
    group_mean,
    group_sum,
    groups,
    ints,
    lookup,
    radix,
    shared_codes,
    take,
)
from kafka_balancer.pipeline.columnar.np_windows import doubles, per_window
from kafka_balancer.pipeline.cpu_model import CpuModel

TRAFFIC = ("lin", "lout", "fin", "replica_count", "invalid_partitions")


@dataclass(frozen=True)
class Replicas:
    """The partition windows exploded into one entry per replica (Spark's ``explode("replicas")``: a null
    or empty list gives no entry)."""

    parent: np.ndarray  # row of the partition window table
    broker: np.ndarray  # broker code (-1: null)
    window: np.ndarray  # window code
    lead: np.ndarray  # broker == leader (both known)
    follow: np.ndarray  # broker != leader (both known)
    brokers: pa.Array  # broker id of each code
    windows: np.ndarray  # window of each code


def explode(pw: pa.Table, bw: pa.Table) -> Replicas:
    reps = pw.column("replicas").combine_chunks()
    parent = np.asarray(pc.list_parent_indices(reps).to_numpy(zero_copy_only=False), dtype=np.int64)
    flat = pc.list_flatten(reps)
    ids = pa.chunked_array([flat, pw.column("leader").combine_chunks(), bw.column("broker").combine_chunks()],
                           pa.int32()).combine_chunks()
    vocab = pc.unique(pc.drop_null(ids)).sort()
    b_rep = broker_codes(flat, vocab)
    lead_of = broker_codes(pw.column("leader"), vocab)[parent]
    known = (b_rep >= 0) & (lead_of >= 0)
    win = ints(pw.column("window"))
    wins, w_of = np.unique(win, return_inverse=True)
    return Replicas(parent, b_rep, w_of.reshape(-1)[parent], known & (b_rep == lead_of), known & (b_rep != lead_of),
                    vocab, wins)


def broker_codes(col: pa.ChunkedArray | pa.Array, vocab: pa.Array) -> np.ndarray:
    return ints(pc.index_in(col.cast(pa.int32()), value_set=vocab))


def broker_traffic(pw: pa.Table, r: Replicas) -> pa.Table:
    """Per broker and window: lin, lout, fin, replica_count, invalid_partitions (``cpu_model.broker_traffic``)."""
    nw_in, nw_out = floats(pw.column("nw_in"))[r.parent], floats(pw.column("nw_out"))[r.parent]
    # when(~pw_valid, 1).otherwise(0): a null pw_valid counts as valid here
    invalid = np.asarray(pc.fill_null(pc.invert(pw.column("pw_valid")), False).to_numpy(zero_copy_only=False),
                         dtype=bool)[r.parent]
    keys, of = groups(radix([(r.broker, len(r.brokers)), (r.window, len(r.windows))]))
    n = len(keys)
    first = np.zeros(n, dtype=np.int64)
    first[of[::-1]] = np.arange(len(of))[::-1]  # any row of the group: its broker and window
    cluster = pw.column("cluster")[0].as_py() if pw.num_rows else None
    return pa.table({
        "cluster": pa.array([cluster] * n, pa.string()),
        "broker": _broker_ids(r.broker[first], r.brokers),
        "window": pa.array(r.windows[r.window[first]] if n else np.array([], np.int64), pa.int64()),
        "lin": doubles(group_sum(np.where(r.lead, nw_in, 0.0), of, n)),
        "lout": doubles(group_sum(np.where(r.lead, nw_out, 0.0), of, n)),
        "fin": doubles(group_sum(np.where(r.follow, nw_in, 0.0), of, n)),
        "replica_count": pa.array(np.bincount(of, minlength=n), pa.int64()),
        "invalid_partitions": pa.array(np.bincount(of, weights=invalid, minlength=n).astype(np.int64), pa.int64()),
    })


def _broker_ids(codes: np.ndarray, vocab: pa.Array) -> pa.Array:
    ids = vocab.take(pa.array(np.maximum(codes, 0))) if len(vocab) else pa.nulls(len(codes), pa.int32())
    return pc.if_else(pa.array(codes >= 0), ids, pa.scalar(None, pa.int32())).cast(pa.int32())


def _broker_window_key(t: pa.Table, r: Replicas) -> np.ndarray:
    """The (broker, window) join key of a broker or traffic table's rows, in ``r``'s codes."""
    b = broker_codes(t.column("broker"), r.brokers)
    w = lookup(ints(t.column("window")), r.windows)
    return radix([(b, len(r.brokers)), (w, len(r.windows))], join=True)


def broker_table(bw: pa.Table, traffic: pa.Table, rounds_of: dict[int, int], min_sample_ratio: float,
                 r: Replicas) -> pa.Table:
    """The broker window table: the broker CPU rates with rounds, min_samples, cpu_valid
    (``completeness.mark_valid``) and the broker's traffic (left join)."""
    rounds, need = per_window(rounds_of, ints(bw.column("window")), min_sample_ratio)
    cpu = floats(bw.column("cpu"))
    intervals = ints(bw.column("cpu_intervals"), 0)
    valid = ~np.isnan(cpu) & (intervals >= np.maximum(1, need - 1))
    out = bw.append_column("rounds", pa.array(rounds, pa.int64())).append_column(
        "min_samples", pa.array(need, pa.int64())).append_column("cpu_valid", pa.array(valid, pa.bool_()))
    row = lookup(_broker_window_key(bw, r), _broker_window_key(traffic, r))
    hit = pa.array(row >= 0)
    picked = traffic.take(pa.array(np.maximum(row, 0))) if traffic.num_rows else None
    for name in TRAFFIC:
        typ = traffic.schema.field(name).type
        col = pc.if_else(hit, picked.column(name), pa.scalar(None, typ)) if picked is not None else pa.nulls(
            bw.num_rows, typ)
        out = out.append_column(name, col)
    return out


def fit_rows(bt: pa.Table) -> pa.Table:
    """The broker windows the CPU fit uses (``cpu_model.fit_observations``): valid CPU, traffic known and
    every partition valid; columns cluster, broker, window, y, lin, lout, fin."""
    ok = pc.and_(pc.fill_null(bt.column("cpu_valid"), False), pc.fill_null(pc.equal(bt.column("invalid_partitions"), 0),
                                                                           False))
    t = bt.filter(ok)
    return pa.table({"cluster": t.column("cluster"), "broker": t.column("broker"), "window": t.column("window"),
                     "y": t.column("cpu"), "lin": t.column("lin"), "lout": t.column("lout"), "fin": t.column("fin")})


def split_cpu(pw: pa.Table, bw: pa.Table, traffic: pa.Table, model: CpuModel, r: Replicas) -> pa.Table:
    """Adds cpu_leader and cpu_follower to the partition windows (``cpu_model.split_cpu``)."""
    a, b, c = model.weights
    with np.errstate(divide="ignore", invalid="ignore"):
        lin, lout, fin = (floats(traffic.column(x)) for x in ("lin", "lout", "fin"))
        wt = a * lin + b * lout + c * fin
        t_key = _broker_window_key(traffic, r)
        cpu_all = floats(bw.column("cpu"))
        has = ~np.isnan(cpu_all)
        cpu = take(cpu_all[has], lookup(t_key, _broker_window_key(bw, r)[has]))
        t_win = ints(traffic.column("window"))
        wins, w_of = np.unique(t_win, return_inverse=True)
        w_of = w_of.reshape(-1)
        use = ~np.isnan(cpu) & (wt > 0)
        k_cluster = group_sum(np.where(use, cpu, np.nan), w_of, len(wins)) / group_sum(
            np.where(use, wt, np.nan), w_of, len(wins))
        k = np.where(wt > 0, cpu / wt, np.nan)
        k = np.where(np.isnan(k), k_cluster[w_of], k)
        k_rep = take(k, lookup(radix([(r.broker, len(r.brokers)), (r.window, len(r.windows))], join=True), t_key))
        nw_in, nw_out = floats(pw.column("nw_in"))[r.parent], floats(pw.column("nw_out"))[r.parent]
        cost = np.where(r.lead, a * nw_in + b * nw_out, c * nw_in)
        rcpu = k_rep * cost
        n = pw.num_rows
        leader = group_max(np.where(r.lead, rcpu, np.nan), r.parent, n)
        follower = group_mean(np.where(r.follow, rcpu, np.nan), r.parent, n)
    follower = np.where(np.isnan(follower), 0.0, follower)
    return pw.append_column("cpu_leader", doubles(leader)).append_column("cpu_follower", pa.array(follower))


REASONS = ("too few samples", "no rate (counter reset or no offsets)", "no replica size")


def reasons(pw: pa.Table) -> np.ndarray:
    """Why each partition window does not count, as an index into :data:`REASONS` (-1 when it counts):
    ``completeness.missing_reason``."""
    valid = np.asarray(pw.column("pw_valid").to_numpy(zero_copy_only=False), dtype=bool)
    few = ints(pw.column("n")) < ints(pw.column("min_samples"))
    no_rate = np.isnan(floats(pw.column("nw_in")))
    return np.where(valid, -1, np.where(few, 0, np.where(no_rate, 1, 2)))


def partition_summary(pw: pa.Table) -> pd.DataFrame:
    """One row per partition (``assemble.partition_summary``): valid_windows, replicas and leader of the
    latest window, disk of the latest valid window (else of the latest with a disk), the reasons its
    windows do not count (sorted), and the mean loads over valid windows (else over all, else 0)."""
    (topic,), nt = shared_codes(pw.column("topic"))
    (part,), npart = shared_codes(pw.column("partition"))
    win = ints(pw.column("window"))
    order = np.lexsort((win, part, topic))
    keys, of = groups(radix([(topic, nt), (part, npart)]))
    n = len(keys)
    valid = np.asarray(pw.column("pw_valid").to_numpy(zero_copy_only=False), dtype=bool)
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order))  # rank in (topic, partition, window) order
    last = _last_where(np.ones(len(of), bool), pos, of, n, order)
    disk = floats(pw.column("disk"))
    d_valid = _last_where(valid, pos, of, n, order)
    d_any = _last_where(~np.isnan(disk), pos, of, n, order)
    disk_p = np.where(d_valid >= 0, take(disk, d_valid), take(disk, d_any))
    why = reasons(pw)
    listed: list[list[str]] = [[] for _ in range(n)]
    for g, reason in sorted({(int(g), int(w)) for g, w in zip(of[why >= 0], why[why >= 0], strict=True)}):
        listed[g].append(REASONS[reason])
    for lst in listed:
        lst.sort()
    rows = pa.array(last)
    out = pd.DataFrame({
        "cluster": pw.column("cluster").take(rows).to_pylist(),
        "topic": pw.column("topic").take(rows).to_pylist(),
        "partition": pw.column("partition").take(rows).to_numpy(),
        "valid_windows": np.bincount(of, weights=valid, minlength=n).astype(np.int64),
        "replicas": pw.column("replicas").take(rows).to_pylist(),
        "leader": pw.column("leader").take(rows).to_pandas(),
        "disk": disk_p,
        "reasons": listed,
    })
    for col in LOADS:
        v = floats(pw.column(col))
        mean = group_mean(np.where(valid, v, np.nan), of, n)
        mean = np.where(np.isnan(mean), group_mean(v, of, n), mean)
        out[col] = np.where(np.isnan(mean), 0.0, mean)
    return out


def _last_where(cond: np.ndarray, pos: np.ndarray, of: np.ndarray, n: int, order: np.ndarray) -> np.ndarray:
    """Per group, the row with the latest window among the rows where ``cond`` holds (-1: none)."""
    best = np.full(n, -1, dtype=np.int64)
    np.maximum.at(best, of[cond], pos[cond])
    return np.where(best >= 0, order[np.maximum(best, 0)], -1)


def broker_summary(bt: pa.Table) -> pd.DataFrame:
    """One row per broker (``assemble.broker_summary``): rack, host, alive at its latest sample, last_ts,
    windows with valid CPU, windows, mean valid CPU."""
    (b,), _ = shared_codes(bt.column("broker"))
    keys, of = groups(b)
    n = len(keys)
    ts = ints(bt.column("last_ts"))
    order = np.lexsort((ts, of))
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order))
    latest = pa.array(_last_where(np.ones(len(of), bool), pos, of, n, order))
    valid = np.asarray(pc.fill_null(bt.column("cpu_valid"), False).to_numpy(zero_copy_only=False), dtype=bool)
    cpu = floats(bt.column("cpu"))
    return pd.DataFrame({
        "cluster": bt.column("cluster").take(latest).to_pylist(),
        "broker": bt.column("broker").take(latest).to_pandas(),
        "rack": bt.column("rack").take(latest).to_pylist(),
        "host": bt.column("host").take(latest).to_pylist(),
        "alive": bt.column("alive").take(latest).to_pylist(),
        "last_ts": ts[np.asarray(latest.to_numpy(), dtype=np.int64)] if n else np.array([], np.int64),
        "cpu_valid_windows": np.bincount(of, weights=valid, minlength=n).astype(np.int64),
        "cpu_windows": np.bincount(of, minlength=n).astype(np.int64),
        "cpu_mean": group_mean(np.where(valid, cpu, np.nan), of, n),
    })
