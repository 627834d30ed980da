"""The batch job over plain Parquet samples: Spark reads and aggregates the samples, numpy the windows.

Spark tasks do the work that grows with the samples (:mod:`window_tasks`: one task per record type and
window aggregates its files with Arrow; the broker records through Spark SQL). What comes back is one row
per partition, replica, group series, topic-broker pair or broker and window: about 3M rows for a
100,000-partition cluster over 7 windows, against 64M samples. The window step (rates, loads, validity,
the CPU split, the summaries: :mod:`np_windows`, :mod:`np_cpu`) runs on those rows on the driver with
numpy, where Spark SQL spent most of the job's time planning and shuffling them (``docs/pipeline.md``).
The CPU fit's normal equations are summed by Spark tasks. The window tables are written with Arrow in the
layout Spark's writer uses (``cluster=<c>/window=<w>/``), and can be queried as DataFrames.

JSON-lines samples, ``engine="sql"`` and streaming keep the all-Spark-SQL route
(:mod:`kafka_balancer.pipeline.sql`); ``tests/spark/test_file_windows.py`` checks that both give the same
tables, report and snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from kafka_balancer.pipeline.columnar import np_cpu
from kafka_balancer.pipeline.columnar.file_windows import FileSpan, candidate_windows
from kafka_balancer.pipeline.columnar.np_cpu import (
    broker_table,
    broker_traffic,
    explode,
    fit_rows,
    split_cpu,
)
from kafka_balancer.pipeline.columnar.np_keys import floats, ints
from kafka_balancer.pipeline.columnar.np_windows import partition_windows, window_rounds
from kafka_balancer.pipeline.columnar.tables import ColumnarTables
from kafka_balancer.pipeline.columnar.window_tasks import broker_window_tasks, run_window_tasks, window_tasks
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.cpu_model import FEATURES, CpuModel, solve
from kafka_balancer.pipeline.progress import step
from kafka_balancer.pipeline.result import BatchResult, check_windows, closed_windows, document, select_cluster


@dataclass(frozen=True)
class Computed:
    tables: ColumnarTables
    cluster: str
    warnings: list[str]


def window_spans(part: pa.Table) -> list[tuple[str, int, int]]:
    """(cluster, window, latest sample time) of every window of the partition aggregate."""
    part = part.select(["cluster", "window", "last_ts"])
    part = part.set_column(0, "cluster", part.column("cluster").cast(pa.string()))
    g = part.group_by(["cluster", "window"]).aggregate([("last_ts", "max")])
    return [(str(c), int(w), int(ts)) for c, w, ts in zip(
        g.column("cluster").cast(pa.string()).to_pylist(), g.column("window").to_pylist(),
        g.column("last_ts_max").to_pylist(), strict=True)]


def _in_windows(t: pa.Table, cluster: str, lo: int, hi: int) -> pa.Table:
    w = t.column("window")
    return t.filter(pc.and_(pc.equal(t.column("cluster").cast(pa.string()), cluster),
                            pc.and_(pc.greater_equal(w, lo), pc.less_equal(w, hi))))


def compute(spark: SparkSession, files: dict[str, list[FileSpan]], cfg: PipelineConfig) -> BatchResult:
    """Window tables, CPU model, completeness report and snapshot of the Parquet samples ``files``
    (:func:`kafka_balancer.pipeline.columnar.file_windows.parquet_files`)."""
    done = compute_tables(spark, files, cfg)
    with step(spark, "summaries"):
        parts = np_cpu.partition_summary(done.tables.partition_arrow)
        brokers = np_cpu.broker_summary(done.tables.broker_arrow)
    return document(done.tables, parts, brokers, cfg, done.cluster, done.warnings)


def compute_tables(spark: SparkSession, files: dict[str, list[FileSpan]], cfg: PipelineConfig) -> Computed:
    """The window tables and the CPU model of the samples' cluster (``cfg.cluster`` or the only one).

    Two Spark jobs read the samples: the partition aggregate of every window (which tells the clusters
    and the closed windows), then the replica, group-offset, broker and topic-broker aggregates of the
    windows wanted. A third sums the CPU fit's normal equations."""
    w_ms = cfg.window_ms
    with step(spark, "partition aggregate"):
        tasks = window_tasks("partition", files["partition"], candidate_windows(files["partition"], w_ms), w_ms)
        part_all = run_window_tasks(spark, tasks, w_ms, cfg.cluster, ("partition",))["partition"]
    spans = window_spans(part_all)
    cluster = select_cluster([c for c, _, _ in spans], cfg.cluster, present=lambda: [
        c for c, _, _ in window_spans(run_window_tasks(spark, tasks, w_ms, None, ("partition",))["partition"])])
    windows = closed_windows([(w, ts) for c, w, ts in spans if c == cluster], w_ms, cfg.windows)
    warnings = check_windows(windows, cfg, cluster)
    base = windows[0] - w_ms
    span = list(range(base, windows[-1] + 1, w_ms))
    part = _in_windows(part_all, cluster, base, windows[-1])
    with step(spark, "replica, group offset, broker and topic-broker aggregates"):
        tasks = (window_tasks("replica", files["replica"], span, w_ms)
                 + window_tasks("group_offset", files["group_offset"], span, w_ms)
                 + broker_window_tasks(files["topic_broker"], files["broker"], windows, w_ms))
        out = run_window_tasks(spark, tasks, w_ms, cluster, ("replica", "group_offset", "broker", "topic_broker"))
    bw = out["broker"]
    with step(spark, "partition windows (rates, loads, validity; numpy)"):
        kept = part.filter(pc.is_in(part.column("window"), pa.array(windows, pa.int64())))
        rounds = window_rounds(bw, kept)
        pw = partition_windows(part, out["replica"], out["group_offset"], out["topic_broker"], rounds, w_ms, windows,
                               cfg.min_sample_ratio)
        reps = explode(pw, bw)
        traffic = broker_traffic(pw, reps)
        bt = broker_table(bw, traffic, rounds, cfg.min_sample_ratio, reps)
    with step(spark, "CPU model fit"):
        model = fit(spark, bt, cfg)
    with step(spark, "CPU split over replicas (numpy)"):
        pw = split_cpu(pw, bw, traffic, model, reps)
    return Computed(ColumnarTables(spark, pw, bt, model, windows), cluster, warnings)


def fit(spark: SparkSession, bt: pa.Table, cfg: PipelineConfig) -> CpuModel:
    """The CPU model from the broker windows: Spark tasks sum the normal equations (:func:`gram_sums`, one
    slice of the observations each), the driver adds the slices up and solves."""
    rows = fit_rows(bt)
    obs = np.column_stack([floats(rows.column(c)) for c in ("y", *FEATURES)]) if rows.num_rows else np.empty((0, 4))
    windows = ints(rows.column("window"))
    slices = max(1, min(spark.sparkContext.defaultParallelism, len(obs)))
    parts = np.array_split(np.arange(len(obs)), slices)
    sums = spark.sparkContext.parallelize([(obs[i], windows[i]) for i in parts], slices).map(gram_sums).collect()
    total: dict[str, float] = {}
    seen: set[int] = set()
    for g, w in sums:
        for k, v in g.items():
            total[k] = total.get(k, 0.0) + v
        seen |= w
    total["windows"] = float(len(seen))
    return solve(total, cfg.cpu_min_obs, cfg.cpu_min_windows)


def gram_sums(part: tuple[np.ndarray, np.ndarray]) -> tuple[dict[str, float], set[int]]:
    """The sums of ``cpu_model.gram`` over a slice of observations (columns y, lin, lout, fin; NaN = null,
    skipped in a sum as Spark does) and the windows it covers."""
    obs, windows = part
    y = obs[:, 0]
    g = {"n": float(len(obs)), "sy": float(np.nansum(y)), "syy": float(np.nansum(y * y))}
    for i in range(3):
        g[f"xy_{i}"] = float(np.nansum(obs[:, i + 1] * y))
        for j in range(i, 3):
            g[f"xx_{i}{j}"] = float(np.nansum(obs[:, i + 1] * obs[:, j + 1]))
    return g, {int(w) for w in windows}
