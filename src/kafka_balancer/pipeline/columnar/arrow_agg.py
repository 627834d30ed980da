"""One window of one record type, aggregated with Arrow and numpy (no Spark): the vectorised first stage.

A batch job over Parquet samples runs these inside Spark tasks, one task per record type and window
(:mod:`kafka_balancer.pipeline.columnar.window_tasks`). Each function returns exactly what the Spark SQL
aggregation of the same rows returns (:mod:`aggregate`, :func:`rates.topic_broker_rates`), row for row;
``tests/spark/test_file_windows.py`` checks that on seeded random samples.

* :func:`first_last`: count, first and last sample time, and the values at those times (offsets, sizes,
  the partition's replicas, leader and ISR), per key and window;
* :func:`counter_rates`: the mean, max and p95 byte rates of one topic-broker window, from the points of
  that window and the one before it (an interval counts when it ends in the window and starts in it or in
  the window just before).

Example (one replica, sizes 10 → 30 → 70 at 0, 20 and 40 s, 60 s windows)::

    >>> t = pa.table({"cluster": ["c"] * 3, "topic": ["t"] * 3, "partition": [0] * 3, "broker": [1] * 3,
    ...               "ts": [40_000, 0, 20_000], "size": [70, 10, 30]})
    >>> first_last(t, ["cluster", "topic", "partition", "broker"], {"size": "size"}, 60_000).to_pylist()
    [{'cluster': 'c', 'topic': 't', 'partition': 0, 'broker': 1, 'window': 0, 'n': 3, 'first_ts': 0, \
'last_ts': 40000, 'first_size': 10, 'last_size': 70}]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

P95 = 0.95


def windows_of(ts: np.ndarray, window_ms: int) -> np.ndarray:
    """Epoch-aligned window start of each sample time (``ts - ts mod window``, as :func:`window_start`)."""
    return ts - np.mod(ts, window_ms)


def _ts(t: pa.Table) -> np.ndarray:
    return np.asarray(t.column("ts").to_numpy(zero_copy_only=False), dtype=np.int64)


def first_last(
    t: pa.Table,
    keys: Sequence[str],
    fields: dict[str, str],
    window_ms: int,
    count: bool = True,
    last_only: Sequence[str] = (),
    min_max: Sequence[str] = (),
) -> pa.Table:
    """Per ``keys`` and window: ``n`` (rows; when ``count``), ``first_ts``/``last_ts`` (min and max sample
    time), ``first_<name>``/``last_<name>`` (the column's value at those times) for each ``{name: column}``
    of ``fields``, the value at the last time of each ``last_only`` column, and ``<c>_min``/``<c>_max``
    (nulls skipped) of each ``min_max`` column. Rows without a sample time are dropped. Samples that share
    a time within a group: the first and the last of them in input order."""
    t = t.filter(pc.is_valid(t.column("ts")))
    ts = _ts(t)
    # rank of each row in time order (stable): the min and max rank of a group are its first and last row
    order = np.argsort(ts, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    keyed = t.select([*keys, *min_max]).append_column("window", pa.array(windows_of(ts, window_ms))).append_column(
        "_r", pa.array(rank))
    aggs: list[tuple[str, str]] = [("_r", "min"), ("_r", "max"), ("_r", "count")]
    aggs += [(c, "min") for c in min_max] + [(c, "max") for c in min_max]
    g = keyed.group_by([*keys, "window"], use_threads=False).aggregate(aggs)
    first = pa.array(order[np.asarray(g.column("_r_min").to_numpy(), dtype=np.int64)])
    last = pa.array(order[np.asarray(g.column("_r_max").to_numpy(), dtype=np.int64)])
    cols: dict[str, pa.ChunkedArray | pa.Array] = {k: g.column(k) for k in keys}
    cols["window"] = g.column("window")
    if count:
        cols["n"] = g.column("_r_count")
    cols["first_ts"] = t.column("ts").take(first)
    cols["last_ts"] = t.column("ts").take(last)
    for name, column in fields.items():
        cols[f"first_{name}"] = t.column(column).take(first)
        cols[f"last_{name}"] = t.column(column).take(last)
    for column in last_only:
        cols[column] = t.column(column).take(last)
    for column in min_max:
        cols[f"{column}_min"] = g.column(f"{column}_min")
        cols[f"{column}_max"] = g.column(f"{column}_max")
    return pa.table(cols)


def _codes(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Integer codes of a key column, 0..k-1: equal values get equal codes, null gets -1. Dictionary
    columns use their (unified) indices; integers their offset from the smallest when the range is small."""
    arr = col.unify_dictionaries().combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not pa.types.is_dictionary(arr.type):
        if pa.types.is_integer(arr.type) and len(arr):
            lo_hi = pc.min_max(arr).as_py()
            if lo_hi["min"] is not None and lo_hi["max"] - lo_hi["min"] < 1 << 24:
                v = pc.subtract(arr.cast(pa.int64()), lo_hi["min"])
                return np.asarray(pc.fill_null(v, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
        arr = pc.dictionary_encode(arr)
    return np.asarray(pc.fill_null(arr.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _composite(codes: list[np.ndarray]) -> np.ndarray | None:
    """One int64 per row that is equal exactly when all ``codes`` are (None when it would overflow)."""
    key = np.zeros(len(codes[0]), dtype=np.int64)
    size = 1
    for c in codes:
        k = int(c.max()) + 2 if len(c) else 1
        if size * k >= 2**62:
            return None
        key = key * k + (c + 1)
        size *= k
    return key


def _values(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(values as float64 with nulls at 0, validity mask)."""
    valid = np.asarray(pc.is_valid(col).to_numpy(zero_copy_only=False), dtype=bool)
    vals = np.asarray(pc.fill_null(col.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False), dtype=np.float64)
    return vals, valid


def _restart_mask(broker: pa.ChunkedArray, rows: np.ndarray, end_ts: np.ndarray,
                  restarts: set[tuple[int, int]]) -> np.ndarray:
    """Intervals (ending at row ``rows[i]`` of ``broker``, at ``end_ts[i]``) whose (broker, end time) is a
    restart of that broker's CPU counter."""
    mask = np.zeros(len(end_ts), dtype=bool)
    if not restarts:
        return mask
    times = np.fromiter({ts for _, ts in restarts}, dtype=np.int64)
    for i in np.flatnonzero(np.isin(end_ts, times)):
        b = broker[int(rows[i])].as_py()
        mask[i] = b is not None and (int(b), int(end_ts[i])) in restarts
    return mask


def group_percentile(values: np.ndarray, group: np.ndarray, groups: int, q: float) -> np.ndarray:
    """Exact percentile ``q`` of ``values`` per group (0..groups-1, ``group`` non-decreasing), interpolated
    between the two closest ranks as Spark's ``percentile`` does; NaN for a group without values."""
    out = np.full(groups, np.nan)
    if len(values) == 0:
        return out
    cnt = np.bincount(group, minlength=groups)
    start = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    width = int(cnt.max())
    if groups * width <= 4 * len(values) + 1024:
        # a few values per group: one row per group, padded with +inf, sorted along the rows
        grid = np.full((groups, width), np.inf)
        grid[group, np.arange(len(values)) - start[group]] = values
        grid.sort(axis=1)
        flat, base = grid.ravel(), np.arange(groups) * width
    else:
        o = np.lexsort((values, group))
        flat, base = values[o], start
    has = cnt > 0
    pos = (cnt[has] - 1) * q
    lo, hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
    a, b = flat[base[has] + lo], flat[base[has] + hi]
    out[has] = np.where(hi == lo, a, (hi - pos) * a + (pos - lo) * b)
    return out


def counter_rates(
    t: pa.Table,
    keys: Sequence[str],
    fields: dict[str, str],
    window_ms: int,
    window: int,
    restarts: set[tuple[int, int]] | None = None,
    count_name: str = "intervals",
) -> pa.Table:
    """Rates of window ``window`` from counter points (``t``: ``keys``, ``ts`` and the ``fields`` columns;
    it should hold the points of this window and the one before it).

    Consecutive points of a series (``keys``) make an interval; it counts when it ends in ``window``, lasts
    more than 0 ms, starts in ``window`` or the window just before, no counter went down in it, and its
    (``broker``, end time) is not in ``restarts``. Per series: ``<prefix>`` = sum of deltas / sum of
    durations (per second), ``<prefix>_max`` and ``<prefix>_p95`` of the interval rates for each
    ``{column: prefix}`` of ``fields``, and ``count_name`` = kept intervals. Series without a kept
    interval have no row."""
    t = t.filter(pc.is_valid(t.column("ts")))
    n = t.num_rows
    if n < 2:
        return _rates_table(t.slice(0, 0), keys, fields, window, [], count_name)
    ts = _ts(t)
    codes = [_codes(t.column(k)) for k in keys]
    key = _composite(codes)
    span = int(ts.max()) - int(ts.min()) + 1
    if key is not None and int(key.max()) < (2**62) // span:
        order = np.argsort(key * span + (ts - int(ts.min())), kind="stable")
    else:  # too many distinct series for one int64 sort key
        order = np.lexsort((ts, *reversed(codes)))
    ts = ts[order]
    same = np.ones(n - 1, dtype=bool)
    for c in codes:
        cs = c[order]
        same &= cs[1:] == cs[:-1]
    win = windows_of(ts, window_ms)
    dt = ts[1:] - ts[:-1]
    ok = same & (dt > 0) & (win[:-1] >= win[1:] - window_ms) & (win[1:] == window)
    deltas: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for column in fields:
        vals, valid = _values(t.column(column))
        vals, valid = vals[order], valid[order]
        d, dv = vals[1:] - vals[:-1], valid[1:] & valid[:-1]
        ok &= ~dv | (d >= 0)
        deltas[column] = (d, dv)
    if restarts and "broker" in keys:
        ok &= ~_restart_mask(t.column("broker"), order[1:], ts[1:], restarts)
    idx = np.flatnonzero(ok)
    series = np.concatenate([[0], np.cumsum(~same)])[idx + 1]
    starts = np.flatnonzero(np.concatenate([[True], series[1:] != series[:-1]])) if len(idx) else np.array([], int)
    groups = len(starts)
    group = np.repeat(np.arange(groups), np.diff(np.concatenate([starts, [len(idx)]])))
    dt_ok = dt[idx].astype(np.float64)
    stats: list[tuple[str, np.ndarray, np.ndarray]] = []
    sum_dt = np.add.reduceat(dt_ok, starts) if groups else np.array([])
    for column, prefix in fields.items():
        d, dv = deltas[column][0][idx], deltas[column][1][idx]
        nv = np.add.reduceat(dv.astype(np.int64), starts) if groups else np.array([], int)
        total = np.add.reduceat(np.where(dv, d, 0.0), starts) if groups else np.array([])
        rate = np.divide(d, dt_ok, out=np.zeros_like(d), where=dt_ok > 0) * 1000.0
        top = np.maximum.reduceat(np.where(dv, rate, -np.inf), starts) if groups else np.array([])
        has = nv > 0
        stats += [
            (prefix, np.where(has, total / np.where(sum_dt > 0, sum_dt, 1.0) * 1000.0, np.nan), has),
            (f"{prefix}_max", top, has),
            (f"{prefix}_p95", group_percentile(rate[dv], group[dv], groups, P95), has),
        ]
    rows = t.select(list(keys)).take(pa.array(order[idx[starts] + 1] if groups else np.array([], np.int64)))
    count = np.diff(np.concatenate([starts, [len(idx)]])) if groups else np.array([], np.int64)
    return _rates_table(rows, keys, fields, window, stats, count_name, count)


def _rates_table(rows: pa.Table, keys: Sequence[str], fields: dict[str, str], window: int,
                 stats: list[tuple[str, np.ndarray, np.ndarray]], count_name: str,
                 count: np.ndarray | None = None) -> pa.Table:
    cols: dict[str, pa.Array | pa.ChunkedArray] = {k: rows.column(k) for k in keys}
    cols["window"] = pa.array(np.full(rows.num_rows, window, dtype=np.int64))
    if not stats:
        for prefix in fields.values():
            for name in (prefix, f"{prefix}_max", f"{prefix}_p95"):
                cols[name] = pa.array([], pa.float64())
    for name, values, has in stats:
        cols[name] = pa.array(values, pa.float64(), mask=~has)
    cols[count_name] = pa.array(count if count is not None else np.array([], np.int64), pa.int64())
    return pa.table(cols)
