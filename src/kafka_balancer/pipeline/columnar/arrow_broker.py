"""One window of broker records, with Arrow and numpy: the broker window row (samples, latest labels,
cores) and its CPU rates, plus the intervals in which a broker's CPU counter went down (a restart).

What ``aggregate.broker_window_agg`` followed by ``rates.broker_cpu_rates`` and ``rates.restart_intervals``
give for that window, from the raw broker records of the window and the one before it (an interval
counts when it ends in the window and starts in it or in the window just before).

Example (the :mod:`rates` example: CPU seconds 100 → 160 → 10 → 70 at 60 s rounds on 4 cores: the drop
is a restart, the two other intervals burn 1 CPU second per second, 25 % of the broker)::

    >>> t = pa.table({"cluster": ["c"] * 4, "broker": pa.array([1] * 4, pa.int32()), "ts": [0, 60_000, 120_000,
    ...               180_000], "cpu_seconds": [100.0, 160.0, 10.0, 70.0], "cpu_cores": pa.array([4] * 4, pa.int32()),
    ...               "rack": ["r"] * 4, "host": ["h"] * 4, "alive": [True] * 4})
    >>> rows, restarts = broker_window(t, 300_000, 0)
    >>> rows.column("cpu").to_pylist(), rows.column("restarts").to_pylist(), sorted(restarts)
    ([25.0], [1], [(1, 120000)])
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kafka_balancer.pipeline.columnar.arrow_agg import P95, group_percentile, windows_of
from kafka_balancer.pipeline.columnar.np_keys import floats, group_max, group_sum, groups, ints, radix, shared_codes

BW_SCHEMA = pa.schema([
    ("cluster", pa.string()), ("broker", pa.int32()), ("window", pa.int64()), ("n", pa.int64()),
    ("last_ts", pa.int64()), ("rack", pa.string()), ("host", pa.string()), ("alive", pa.bool_()),
    ("cores", pa.int32()), ("cpu", pa.float64()), ("cpu_max", pa.float64()), ("cpu_p95", pa.float64()),
    ("cpu_intervals", pa.int64()), ("restarts", pa.int64()),
])


def broker_window(t: pa.Table, window_ms: int, window: int) -> tuple[pa.Table, set[tuple[int, int]]]:
    """(rows of ``window``, in :data:`BW_SCHEMA`; the (broker, end time) of every interval ending in the
    window whose CPU counter went down). ``t``: broker records (cluster, broker, ts, cpu_seconds,
    cpu_cores, rack, host, alive) of one cluster, of the window and the one before it."""
    t = t.filter(pc.is_valid(t.column("ts")))
    ts = ints(t.column("ts"))
    win = windows_of(ts, window_ms)
    (code,), nb = shared_codes(t.column("broker"))
    # the window's rows per broker; labels from the latest sample (the last of equal times)
    inw = np.flatnonzero(win == window)
    keys, of = groups(radix([(code[inw], nb)]))
    n = len(keys)
    order = np.lexsort((np.arange(len(inw)), ts[inw], of))
    last = order[np.r_[np.flatnonzero(of[order][1:] != of[order][:-1]), len(order) - 1]] if n else order
    latest = pa.array(inw[last])
    cores = group_max(floats(t.column("cpu_cores"))[inw], of, n)
    # CPU intervals: consecutive valid points of a broker, ending in the window
    v = floats(t.column("cpu_seconds"))
    pts = np.flatnonzero(~np.isnan(v))
    p = pts[np.lexsort((ts[pts], code[pts]))]
    same = code[p][1:] == code[p][:-1]
    dt = ts[p][1:] - ts[p][:-1]
    end_win = win[p][1:]
    iv = same & (dt > 0) & (win[p][:-1] >= end_win - window_ms) & (end_win == window)
    d_v = v[p][1:] - v[p][:-1]
    # each interval's broker row in the window (every interval's end is a sample of the window)
    row_of = np.full(nb + 1, -1, dtype=np.int64)
    row_of[np.maximum(code[inw][last], -1) + 1] = np.arange(n)
    grp = row_of[code[p][1:] + 1]
    c = cores[np.maximum(grp, 0)] if n else np.zeros(len(grp))
    d_pct = d_v * 100000.0 / np.where(np.isnan(c), 1.0, np.maximum(c, 1.0))
    ok, down = iv & (d_v >= 0), iv & (d_v < 0)
    rate = d_pct[ok] / dt[ok] * 1.0
    sum_dt = group_sum(dt[ok].astype(np.float64), grp[ok], n)
    cpu = group_sum(d_pct[ok], grp[ok], n) / sum_dt * 1.0
    g_ok = grp[ok]
    o = np.argsort(g_ok, kind="stable")
    p95 = group_percentile(rate[o], g_ok[o], n, P95)
    broker = t.column("broker").take(latest).cast(pa.int32())
    rows = pa.table({
        "cluster": t.column("cluster").take(latest).cast(pa.string()),
        "broker": broker,
        "window": pa.array(np.full(n, window, dtype=np.int64)),
        "n": pa.array(np.bincount(of, minlength=n).astype(np.int64)),
        "last_ts": pa.array(ts[inw][last]),
        "rack": t.column("rack").take(latest).cast(pa.string()),
        "host": t.column("host").take(latest).cast(pa.string()),
        "alive": t.column("alive").take(latest).cast(pa.bool_()),
        "cores": pa.array(np.where(np.isnan(cores), 0, cores).astype(np.int32), mask=np.isnan(cores)),
        "cpu": pa.array(cpu, mask=np.isnan(cpu)),
        "cpu_max": pa.array(group_max(rate, g_ok, n), mask=np.bincount(g_ok, minlength=n) == 0),
        "cpu_p95": pa.array(p95, mask=np.isnan(p95)),
        "cpu_intervals": pa.array(np.bincount(g_ok, minlength=n).astype(np.int64)),
        "restarts": pa.array(np.bincount(grp[down], minlength=n).astype(np.int64)),
    }, schema=BW_SCHEMA)
    ids = t.column("broker").to_numpy(zero_copy_only=False) if t.num_rows else np.array([])
    end_rows = p[1:][down]
    restarts = {(int(ids[i]), int(ts[i])) for i in end_rows if code[i] >= 0}
    return rows, restarts
