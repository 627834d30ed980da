"""The batch job over plain Parquet samples: Spark reads and aggregates the samples, numpy the windows.

Spark tasks do the work that grows with the samples (:mod:`window_tasks`: one task per record type and
window aggregates its files with Arrow; the broker records through Spark SQL). What comes back is one row
per partition, replica, group series, topic-broker pair or broker and window: about 3M rows for a
100,000-partition cluster over 7 windows, against 64M samples. The window step (rates, loads, validity,
the CPU split, the summaries: :mod:`np_windows`, :mod:`np_cpu`) runs on those rows on the driver with
numpy, where Spark SQL spent most of the job's time planning and shuffling them (``docs/pipeline.md``).
The CPU fit's normal equations are summed by Spark tasks. The window tables are written with Arrow in the
layout Spark's writer uses (``cluster=<c>/window=<w>/``), and can be queried as DataFrames.

JSON-lines samples, ``engine="sql"`` and streaming keep the all-Spark-SQL route (``batch.compute``);
``tests/spark/test_columnar_tail.py`` checks that both give the same tables, report and snapshot.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.cpu_model import FEATURES, CpuModel, solve
from kafka_balancer.pipeline.file_windows import FileSpan, candidate_windows
from kafka_balancer.pipeline.np_cpu import (
    broker_table,
    broker_traffic,
    explode,
    fit_rows,
    split_cpu,
)
from kafka_balancer.pipeline.np_keys import floats, ints
from kafka_balancer.pipeline.np_windows import partition_windows, window_rounds
from kafka_balancer.pipeline.tables import step
from kafka_balancer.pipeline.window_tasks import broker_window_tasks, run_window_tasks, window_tasks


@dataclass
class ColumnarTables:
    """The two window tables held as Arrow tables; ``partition_windows`` and ``broker_windows`` give them
    as Spark DataFrames (made on first use)."""

    spark: SparkSession
    partition_arrow: pa.Table
    broker_arrow: pa.Table
    cpu_model: CpuModel
    windows: list[int]
    _frames: dict[str, DataFrame] = field(default_factory=dict)

    @property
    def partition_windows(self) -> DataFrame:
        return self._frame("partition_windows", self.partition_arrow)

    @property
    def broker_windows(self) -> DataFrame:
        return self._frame("broker_windows", self.broker_arrow)

    def _frame(self, name: str, table: pa.Table) -> DataFrame:
        if name not in self._frames:
            self._frames[name] = self.spark.createDataFrame(table)
        return self._frames[name]

    def release(self) -> None:
        """Forget the DataFrames made from the tables (nothing is stored in Spark)."""
        self._frames.clear()


@dataclass(frozen=True)
class Computed:
    tables: ColumnarTables
    cluster: str


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


def compute_tables(spark: SparkSession, files: dict[str, list[FileSpan]], cfg: PipelineConfig) -> Computed:
    """The window tables and the CPU model of the samples' cluster (``cfg.cluster`` or the only one).

    Two Spark jobs read the samples: the partition aggregate of every window (which tells the clusters
    and the closed windows), then the replica, group-offset, broker and topic-broker aggregates of the
    windows wanted. A third sums the CPU fit's normal equations."""
    from kafka_balancer.pipeline.batch import closed_windows, select_cluster

    w_ms = cfg.window_ms
    with step(spark, "partition aggregate"):
        tasks = window_tasks("partition", files["partition"], candidate_windows(files["partition"], w_ms), w_ms)
        part_all = run_window_tasks(spark, tasks, w_ms, cfg.cluster, ("partition",))["partition"]
    spans = window_spans(part_all)
    cluster = select_cluster([c for c, _, _ in spans], cfg.cluster, present=lambda: [
        c for c, _, _ in window_spans(run_window_tasks(spark, tasks, w_ms, None, ("partition",))["partition"])])
    windows = closed_windows([(w, ts) for c, w, ts in spans if c == cluster], w_ms, cfg.windows)
    if not windows:
        raise InputError(
            f"no closed {w_ms // 1000}s window in the samples of cluster {cluster!r}",
            hint="collect for longer than one window, or use a shorter --window",
        )
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
    return Computed(ColumnarTables(spark, pw, bt, model, windows), cluster)


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


# Spark's escaping of partition values in paths (ExternalCatalogUtils): these characters become %XX
_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(i) for i in range(32)}


DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Spark's folder for an empty or null partition value


def escape_path_value(value: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in value)


def write_tables(tables: ColumnarTables, tables_dir: str | Path) -> None:
    """``partition_windows/`` and ``broker_windows/`` in Spark's layout (one folder per cluster and window;
    a window written again replaces its folder, as Spark's dynamic partition overwrite does)."""
    d = Path(tables_dir)
    for name, table in (("partition_windows", tables.partition_arrow), ("broker_windows", tables.broker_arrow)):
        with step(tables.spark, f"{name} written"):
            _write_partitioned(table, d / name)


def _write_partitioned(table: pa.Table, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    cl = table.column("cluster").cast(pa.string())
    win = ints(table.column("window"))
    body = table.drop_columns(["cluster", "window"])
    labels = np.asarray(cl.to_pylist() if table.num_rows else [], dtype=object)
    for c in sorted(set(labels.tolist())):
        in_c = labels == c
        for w in np.unique(win[in_c]):
            rows = np.flatnonzero(in_c & (win == w))
            folder = root / f"cluster={escape_path_value(c) or DEFAULT_PARTITION}" / f"window={int(w)}"
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            pq.write_table(body.take(pa.array(rows)), folder / f"part-00000-{uuid.uuid4()}.c000.snappy.parquet",
                           compression="snappy")
    (root / "_SUCCESS").touch()
