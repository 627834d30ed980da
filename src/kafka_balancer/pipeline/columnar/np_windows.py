"""The partition window table with numpy: rates, loads and validity of every partition and window.

This is what ``rates.partition_deltas``/``replica_deltas``/``group_deltas``, ``loads.partition_loads`` and
``completeness.mark_valid`` compute in Spark SQL, over the same window aggregates held as Arrow tables
(one row per partition, replica or group series and window: about 0.7M, 2.1M and 0.3M rows for a
100,000-partition cluster over 7 windows, a few seconds of numpy). The rules are theirs, null for null
(see their docstrings); ``tests/spark/test_columnar_tail.py`` checks the two give the same table.

Example (the :mod:`loads` example): a broker leads p0 and p1 of topic t with 300 and 100 new messages and
t's bytes-in rate on it is 4000 B/s, so p0's ``nw_in`` is 3000 B/s and p1's 1000 B/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kafka_balancer.pipeline.columnar.np_keys import (
    floats,
    greatest0,
    group_count,
    group_max,
    group_sum,
    groups,
    ints,
    lookup,
    positive,
    previous,
    radix,
    shared_codes,
    take,
)

PW_BASE_COLUMNS = ("cluster", "topic", "partition", "window", "n", "last_ts", "replicas", "leader", "isr",
                   "leader_moved")


def longs(values: np.ndarray) -> pa.Array:
    """A float array (NaN = null) as an int64 Arrow array."""
    null = np.isnan(values)
    return pa.array(np.where(null, 0.0, values).astype(np.int64), pa.int64(), mask=null)


def doubles(values: np.ndarray) -> pa.Array:
    return pa.array(values, pa.float64(), mask=np.isnan(values))


@dataclass(frozen=True)
class Span:
    """Each row's base (the previous adjacent window's last value, else the window's own first): the base
    time and the span to the window's last sample (``rates._span``)."""

    prev: np.ndarray  # row of the previous adjacent window, -1 when none
    span_ms: np.ndarray

    def base(self, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        return _base(self.prev, first, last)


def _base(prev: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Each row's base value: ``last`` of the previous adjacent window's row, else its own ``first``."""
    return np.where(prev >= 0, last[np.maximum(prev, 0)] if len(last) else last, first)


def span_of(t: pa.Table, key: np.ndarray, window_ms: int) -> Span:
    prev = previous(key, ints(t.column("window")), window_ms)
    last_ts = ints(t.column("last_ts"))
    return Span(prev, last_ts - _base(prev, ints(t.column("first_ts")), last_ts))


@dataclass(frozen=True)
class Codes:
    """Shared codes of the key columns of every aggregate (so their keys compare equal)."""

    topic: list[np.ndarray]  # partition, replica, group, topic-broker rates
    part: list[np.ndarray]  # partition, replica, group
    broker: list[np.ndarray]  # partition leader, replica broker, topic-broker broker
    n_topic: int
    n_part: int
    n_broker: int


def shared(part: pa.Table, replica: pa.Table, group: pa.Table, tb: pa.Table) -> Codes:
    topic, nt = shared_codes(part.column("topic"), replica.column("topic"), group.column("topic"), tb.column("topic"))
    pnum, npart = shared_codes(part.column("partition"), replica.column("partition"), group.column("partition"))
    broker, nb = shared_codes(part.column("leader"), replica.column("broker"), tb.column("broker"))
    return Codes(topic, pnum, broker, nt, npart, nb)


def partition_windows(part: pa.Table, replica: pa.Table, group: pa.Table, tb: pa.Table,
                      rounds: dict[int, int], window_ms: int, windows: list[int],
                      min_sample_ratio: float) -> pa.Table:
    """The partition window table of ``windows`` (columns as in Spark SQL's, without the CPU split).

    ``part``, ``replica``, ``group``: the window aggregates of one cluster (``aggregate.py``) over
    ``windows`` and the window before the first; ``tb``: the topic-broker rates of ``windows``;
    ``rounds``: the sampling rounds seen in each window (:func:`window_rounds`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _partition_windows(part, replica, group, tb, rounds, window_ms, windows, min_sample_ratio)


def _partition_windows(part: pa.Table, replica: pa.Table, group: pa.Table, tb: pa.Table,
                       rounds_of: dict[int, int], window_ms: int, windows: list[int],
                       min_sample_ratio: float) -> pa.Table:
    c = shared(part, replica, group, tb)
    base_w = windows[0] - window_ms
    nwin = (windows[-1] - base_w) // window_ms + 1

    def widx(t: pa.Table) -> np.ndarray:
        return (ints(t.column("window")) - base_w) // window_ms

    # partition deltas (all windows: the base window's rows are the previous values of the first)
    pk = radix([(c.topic[0], c.n_topic), (c.part[0], c.n_part)])
    ps = span_of(part, pk, window_ms)
    last_leo, last_lso = floats(part.column("last_leo")), floats(part.column("last_lso"))
    d_leo = last_leo - ps.base(floats(part.column("first_leo")), last_leo)
    d_leo = np.where(d_leo >= 0, d_leo, np.nan)
    d_lso = greatest0(last_lso - ps.base(floats(part.column("first_lso")), last_lso))
    leo_rate = d_leo / positive(ps.span_ms) * 1000.0
    keep = np.flatnonzero(np.isin(ints(part.column("window")), np.asarray(windows, dtype=np.int64)))
    pwi = widx(part)[keep]
    topic_k, part_k, leader_k = c.topic[0][keep], c.part[0][keep], c.broker[0][keep]
    pw_key = radix([(topic_k, c.n_topic), (part_k, c.n_part), (pwi, nwin)], join=True)

    # group deltas, summed over groups per partition window
    gcode, ng = shared_codes(group.column("group"))
    gs = span_of(group, radix([(gcode[0], ng), (c.topic[2], c.n_topic), (c.part[2], c.n_part)]), window_ms)
    last_c = floats(group.column("last_c"))
    d_c = greatest0(last_c - gs.base(floats(group.column("first_c")), last_c))
    c_rate = d_c / positive(gs.span_ms) * 1000.0
    g_key, g_of = groups(radix([(c.topic[2], c.n_topic), (c.part[2], c.n_part), (widx(group), nwin)], join=True))
    g_row = lookup(pw_key, g_key)
    d_committed = take(group_sum(d_c, g_of, len(g_key)), g_row)
    committed_rate = take(group_sum(c_rate, g_of, len(g_key)), g_row)

    # replica deltas; the largest replica and the leader's replica per partition window
    rs = span_of(replica, radix([(c.topic[1], c.n_topic), (c.part[1], c.n_part), (c.broker[1], c.n_broker)]),
                 window_ms)
    last_size = floats(replica.column("last_size"))
    d_size = last_size - rs.base(floats(replica.column("first_size")), last_size)
    rwi = widx(replica)
    r_key, r_of = groups(radix([(c.topic[1], c.n_topic), (c.part[1], c.n_part), (rwi, nwin)], join=True))
    max_size = take(group_max(last_size, r_of, len(r_key)), lookup(pw_key, r_key))
    lr = lookup(radix([(topic_k, c.n_topic), (part_k, c.n_part), (leader_k, c.n_broker), (pwi, nwin)], join=True),
                radix([(c.topic[1], c.n_topic), (c.part[1], c.n_part), (c.broker[1], c.n_broker), (rwi, nwin)],
                      join=True))
    leader_size, leader_d_size = take(last_size, lr), take(d_size, lr)
    size_span = take(rs.span_ms.astype(np.float64), lr)

    # the topic's rates on the leader, split by appended messages (in) and committed messages (out)
    leo_rate_k = leo_rate[keep]
    _, tl_of = groups(radix([(topic_k, c.n_topic), (leader_k, c.n_broker), (pwi, nwin)]))
    m = int(tl_of.max()) + 1 if len(tl_of) else 0
    leo_tot = group_sum(leo_rate_k, tl_of, m)[tl_of]
    cons_tot = group_sum(committed_rate, tl_of, m)[tl_of]
    led = group_count(leo_rate_k, tl_of, m)[tl_of]
    in_share = np.where(leo_tot > 0, leo_rate_k / leo_tot, np.where(~np.isnan(leo_rate_k), 1.0 / led, np.nan))
    out_share = np.where(cons_tot > 0, np.nan_to_num(committed_rate, nan=0.0) / cons_tot, np.nan)
    out_share = np.where(np.isnan(out_share), in_share, out_share)
    t_row = lookup(radix([(topic_k, c.n_topic), (leader_k, c.n_broker), (pwi, nwin)], join=True),
                   radix([(c.topic[3], c.n_topic), (c.broker[2], c.n_broker), (widx(tb), nwin)], join=True))
    jmx_in = {s: in_share * take(floats(tb.column(f"in_rate{s}")), t_row) for s in ("", "_max", "_p95")}
    jmx_out = {s: out_share * take(floats(tb.column(f"out_rate{s}")), t_row) for s in ("", "_max", "_p95")}

    # loads
    pk_part = part.take(pa.array(keep))
    msgs = last_leo[keep] - last_lso[keep]
    size = np.where(np.isnan(leader_size), max_size, leader_size)
    bpm = np.where(msgs > 0, size / msgs, np.nan)
    raw_in = (leader_d_size + d_lso[keep] * bpm) / positive(size_span) * 1000.0
    # null stays null, and no rate when the log end offset went back (loads.py)
    size_in = np.where(np.isnan(raw_in) | np.isnan(d_leo[keep]), np.nan, np.maximum(raw_in, 0.0))
    span_k = ps.span_ms[keep]
    size_cons = d_committed * bpm / positive(span_k) * 1000.0
    reps = pk_part.column("replicas")
    n_reps = np.asarray(pc.fill_null(pc.list_value_length(reps), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    repl = np.maximum(n_reps - 1, 0).astype(np.float64)
    nw_in = np.where(np.isnan(jmx_in[""]), size_in, jmx_in[""])
    consumer = np.where(np.isnan(jmx_out[""]), size_cons, jmx_out[""])
    consumer = np.where(np.isnan(consumer), 0.0, consumer)
    nw_out = consumer + nw_in * repl
    source = np.full(len(keep), None, dtype=object)
    source[~np.isnan(size_in)] = "size"
    source[~np.isnan(jmx_in[""])] = "jmx"
    peaks: dict[str, np.ndarray] = {}
    for s in ("_max", "_p95"):
        peak_in = np.where(np.isnan(jmx_in[s]), nw_in, jmx_in[s])
        peak_cons = np.where(np.isnan(jmx_out[s]), consumer, jmx_out[s])
        peaks[f"nw_in{s}"], peaks[f"nw_out{s}"] = peak_in, peak_cons + peak_in * repl

    # validity: enough samples for the window's rounds, a rate and a size
    n = ints(pk_part.column("n"))
    win_k = ints(pk_part.column("window"))
    rounds, min_samples = per_window(rounds_of, win_k, min_sample_ratio)
    valid = (n >= min_samples) & ~np.isnan(nw_in) & ~np.isnan(size)

    cols: dict[str, pa.Array | pa.ChunkedArray] = {
        "cluster": pk_part.column("cluster").cast(pa.string()),
        "topic": pk_part.column("topic").cast(pa.string()),
        **{k: pk_part.column(k) for k in PW_BASE_COLUMNS[2:]},
        "nw_in": doubles(nw_in), "nw_in_max": doubles(peaks["nw_in_max"]), "nw_in_p95": doubles(peaks["nw_in_p95"]),
        "nw_out": doubles(nw_out), "nw_out_max": doubles(peaks["nw_out_max"]),
        "nw_out_p95": doubles(peaks["nw_out_p95"]),
        "consumer_out": doubles(consumer), "disk": doubles(size),
        "nw_in_source": pa.array(source.tolist(), pa.string()),
        "d_leo": longs(d_leo[keep]), "d_lso": longs(d_lso[keep]), "span_ms": pa.array(span_k, pa.int64()),
        "rounds": pa.array(rounds, pa.int64()), "min_samples": pa.array(min_samples, pa.int64()),
        "pw_valid": pa.array(valid, pa.bool_()),
    }
    return pa.table(cols)


def window_rounds(*tables: pa.Table) -> dict[int, int]:
    """The sampling rounds seen in each window: the largest ``n`` of any row of ``tables`` (the broker and
    the partition windows) in it (``completeness.window_min_samples``)."""
    out: dict[int, int] = {}
    for t in tables:
        win, n = ints(t.column("window")), ints(t.column("n"), 0)
        for w in np.unique(win):
            out[int(w)] = max(out.get(int(w), 0), int(n[win == w].max()))
    return out


def per_window(rounds_of: dict[int, int], windows: np.ndarray, min_sample_ratio: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """(rounds, min_samples) of each row from its window: at least ``ceil(ratio × rounds)``, at least 1."""
    uniq, of = np.unique(windows, return_inverse=True)
    r = np.array([rounds_of.get(int(w), 0) for w in uniq], dtype=np.int64)
    need = np.array([max(1, math.ceil(int(x) * min_sample_ratio)) for x in r], dtype=np.int64)
    return r[of.reshape(-1)], need[of.reshape(-1)]
