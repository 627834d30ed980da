"""The batch pipeline: samples folder -> window tables (Parquet) -> snapshot + completeness report.

    >>> result = run_batch(spark, "samples/", PipelineConfig(window_ms=300_000, windows=6))  # doctest: +SKIP
    >>> result.snapshot["partitions"][0]["load"]["leader"]["nw_in"]                          # doctest: +SKIP
    2000000.0
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_balancer.errors import InputError
from kafka_balancer.files.outputs import write_bytes
from kafka_balancer.pipeline import np_cpu
from kafka_balancer.pipeline.aggregate import AGGREGATORS, window_start
from kafka_balancer.pipeline.assemble import broker_summary, partition_summary, snapshot_dict
from kafka_balancer.pipeline.columnar import ColumnarTables, compute_tables, write_tables
from kafka_balancer.pipeline.completeness import check, completeness_report, missing_reason
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.cpu_model import CpuModel
from kafka_balancer.pipeline.file_windows import parquet_files
from kafka_balancer.pipeline.rates import group_deltas
from kafka_balancer.pipeline.read import read_samples_by_type
from kafka_balancer.pipeline.tables import WindowTables, drop, materialise, step, window_tables


@dataclass
class BatchResult:
    snapshot: dict[str, Any]
    report: dict[str, Any]
    cpu_model: CpuModel
    tables: WindowTables | ColumnarTables
    windows: list[int]
    cluster: str

    def release(self) -> None:
        """Drop the stored window tables (and the aggregates behind them) from Spark's memory and disk.
        ``tables`` cannot be queried after this."""
        self.tables.release()


def window_spans(partition_agg: DataFrame) -> list[tuple[str, int, int]]:
    """(cluster, window, latest sample time) of every window in the partition aggregate: one small collect
    that gives the clusters, the windows and the open window at once."""
    rows = partition_agg.groupBy("cluster", "window").agg(F.max("last_ts").alias("last_ts")).collect()
    return [(str(r["cluster"]), int(r["window"]), int(r["last_ts"])) for r in rows]


def select_cluster(clusters: list[str], wanted: str | None,
                   present: Callable[[], list[str]] | None = None) -> str:
    """The cluster to snapshot. ``clusters``: those found (already narrowed to ``wanted`` when the reader
    filtered); ``present()``: every cluster label in the samples, asked only to explain a ``wanted`` not found."""
    clusters = sorted(set(clusters))
    if not clusters and wanted is not None:
        found = sorted(set(present())) if present is not None else []
        raise InputError(f"--cluster {wanted!r}: the samples hold no records of that cluster"
                         + (f" (found: {', '.join(found)})" if found else ""),
                         hint="pick one of the clusters found with --cluster" if found else
                         "check --cluster against the label `collect --cluster` wrote (default local)")
    if not clusters:
        raise InputError("the samples hold no partition records",
                         hint="check that the collector ran against a cluster with topics")
    if wanted is None:
        if len(clusters) > 1:
            raise InputError(f"the samples hold several clusters: {', '.join(clusters)}",
                             hint="pick one with --cluster")
        return clusters[0]
    if wanted not in clusters:
        raise InputError(f"cluster {wanted!r} is not in the samples (found: {', '.join(clusters)})",
                         hint="pick one with --cluster")
    return wanted


def closed_windows(spans: list[tuple[int, int]], window_ms: int, count: int) -> list[int]:
    """The ``count`` latest windows that are closed (a later round exists), oldest first.
    ``spans``: (window, latest sample time) of one cluster."""
    if not spans:
        return []
    open_start = max(ts for _, ts in spans) // window_ms * window_ms
    return sorted(w for w, _ in spans if w < open_start)[-count:]


def compute(spark: SparkSession, samples_dir: str | Path, cfg: PipelineConfig, engine: str = "auto") -> BatchResult:
    """Window tables, CPU model, completeness report and snapshot of the samples.

    ``engine``: ``auto`` takes plain Parquet samples through :mod:`columnar` (Spark aggregates the samples
    per window with Arrow, numpy computes the windows on the driver) and anything else through Spark SQL
    (:func:`compute_sql`); ``sql`` always uses Spark SQL. Both give the same results."""
    if engine not in ("auto", "sql"):
        raise InputError(f"unknown engine {engine!r}", hint="use 'auto' or 'sql'")
    files = parquet_files(samples_dir) if engine == "auto" else None
    if files is None:
        return compute_sql(spark, samples_dir, cfg)
    done = compute_tables(spark, files, cfg)
    with step(spark, "summaries"):
        parts = np_cpu.partition_summary(done.tables.partition_arrow)
        brokers = np_cpu.broker_summary(done.tables.broker_arrow)
    return document(done.tables, parts, brokers, cfg, done.cluster)


def compute_sql(spark: SparkSession, samples_dir: str | Path, cfg: PipelineConfig) -> BatchResult:
    """The all-Spark-SQL route. The heavy part (scan and window aggregates of the samples) runs once: the
    partition aggregate is stored first and tells the cluster and the windows; the broker and replica
    aggregates and the group deltas are computed, filtered to them, and stored; then the window tables."""
    held: list[DataFrame] = []
    try:
        with step(spark, "sample files listed, schemas read"):
            by_type = read_samples_by_type(spark, samples_dir, held)
        all_partitions = by_type["partition"]
        if cfg.cluster is not None:
            by_type = {t: df.where(F.col("cluster") == cfg.cluster) for t, df in by_type.items()}
        part = materialise(AGGREGATORS["partition"](by_type["partition"], cfg.window_ms, False), held,
                           "partition aggregate")
        with step(spark, "windows"):
            spans = window_spans(part)
        cluster = select_cluster([c for c, _, _ in spans], cfg.cluster, present=lambda: [
            str(r["cluster"]) for r in all_partitions.select("cluster").distinct().limit(50).collect()])
        windows = closed_windows([(w, ts) for c, w, ts in spans if c == cluster], cfg.window_ms, cfg.windows)
        if not windows:
            raise InputError(
                f"no closed {cfg.window_ms // 1000}s window in the samples of cluster {cluster!r}",
                hint="collect for longer than one window, or use a shorter --window",
            )
        base = windows[0] - cfg.window_ms
        sel = (F.col("cluster") == cluster) & (F.col("window") >= base) & (F.col("window") <= windows[-1])
        aggs = {"broker": materialise(AGGREGATORS["broker"](by_type["broker"], cfg.window_ms, False).where(sel),
                                      held, "broker aggregate"),
                "partition": part.where(sel)}
        # Each record type is scanned and aggregated once, here, and stored. The topic-broker byte counters
        # go to the window step as raw points (their rates need every point in time order, not a window
        # aggregate).
        aggs["replica"] = materialise(
            AGGREGATORS["replica"](by_type["replica"], cfg.window_ms, False).where(sel), held, "replica aggregate")
        group = AGGREGATORS["group_offset"](by_type["group_offset"], cfg.window_ms, False).where(sel)
        tb_window = window_start(cfg.window_ms)
        aggs["topic_broker"] = by_type["topic_broker"].where(
            (F.col("cluster") == cluster) & (tb_window >= base) & (tb_window <= windows[-1])
        ).select("cluster", "broker", "topic", "ts", "bytes_in", "bytes_out")
        # the group offsets are reduced to their per-partition deltas before they are stored
        gdel = materialise(group_deltas(group, cfg.window_ms), held, "group offset deltas")
        tables = window_tables(aggs, cfg.window_ms, windows, cfg.min_sample_ratio, cfg.cpu_min_obs,
                               cfg.cpu_min_windows, group_deltas_df=gdel, held=held)
    except BaseException:
        for df in held:
            drop(df)
        raise
    return finish(tables, cfg, cluster)


def finish(tables: WindowTables, cfg: PipelineConfig, cluster: str) -> BatchResult:
    """Summaries (Spark SQL), completeness report and snapshot document from the window tables."""
    pw = missing_reason(tables.partition_windows)
    with step(pw.sparkSession, "summaries"):
        parts = partition_summary(pw).toPandas()
        brokers = broker_summary(tables.broker_windows).toPandas()
    return document(tables, parts, brokers, cfg, cluster)


def document(tables: WindowTables | ColumnarTables, parts: pd.DataFrame, brokers: pd.DataFrame,
             cfg: PipelineConfig, cluster: str) -> BatchResult:
    """The completeness report and the snapshot document from the two summaries."""
    report = completeness_report(
        parts[["topic", "partition", "leader", "valid_windows", "reasons"]],
        brokers[["broker", "cpu_valid_windows", "cpu_windows"]],
        tables.windows,
        cfg.valid_windows_needed(),
        cfg.min_valid_ratio,
    )
    report["cluster"] = cluster
    report["cpu_model"] = tables.cpu_model.as_dict()
    snap = snapshot_dict(parts, brokers, cfg.capacity, cfg.broker_capacity, name=cluster)
    return BatchResult(snap, report, tables.cpu_model, tables, tables.windows, cluster)


def write_outputs(
    result: BatchResult, out: str | Path, tables_dir: str | Path | None, report_path: str | Path | None
) -> None:
    """Validates and writes the snapshot; writes the window tables (Parquet) and the report (JSON)."""
    from kafka_balancer.model.snapshot_io import snapshot_from_dict, write_snapshot

    out = Path(out)
    if report_path is not None:
        write_bytes(report_path, orjson.dumps(result.report, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY),
                    "--report")
    if tables_dir is not None:
        if isinstance(result.tables, ColumnarTables):
            write_tables(result.tables, tables_dir)
        else:
            write_window_tables(result.tables, tables_dir)
    write_snapshot(snapshot_from_dict(result.snapshot, source=str(out)), out)


def write_window_tables(tables: WindowTables, tables_dir: str | Path) -> None:
    """``partition_windows/`` and ``broker_windows/`` partitioned by cluster and window (Parquet, dynamic
    partition overwrite: rewriting a window replaces it)."""
    d = Path(tables_dir)
    for name, df in (("partition_windows", tables.partition_windows), ("broker_windows", tables.broker_windows)):
        with step(df.sparkSession, f"{name} written"):
            (df.repartition("cluster", "window").write.mode("overwrite")
               .option("partitionOverwriteMode", "dynamic")
               .partitionBy("cluster", "window").parquet(str(d / name)))


def run_batch(
    spark: SparkSession,
    samples_dir: str | Path,
    cfg: PipelineConfig,
    out: str | Path | None = None,
    tables_dir: str | Path | None = None,
    report_path: str | Path | None = None,
    engine: str = "auto",
) -> BatchResult:
    """The whole batch job; raises InputError (after writing the report) when completeness is too low.
    ``engine``: see :func:`compute`."""
    result = compute(spark, samples_dir, cfg, engine)
    if out is not None:
        try:
            check(result.report)
        except InputError:
            if report_path is not None:
                write_bytes(report_path, orjson.dumps(result.report, option=orjson.OPT_INDENT_2), "--report")
            raise
        write_outputs(result, out, tables_dir, report_path)
    else:
        check(result.report)
    return result
