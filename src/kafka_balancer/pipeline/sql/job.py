"""The batch job on the Spark SQL route: samples folder -> window aggregates -> window tables -> summaries."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.progress import step
from kafka_balancer.pipeline.read import read_samples_checked
from kafka_balancer.pipeline.result import BatchResult, check_windows, closed_windows, document, select_cluster
from kafka_balancer.pipeline.sql.aggregate import AGGREGATORS, window_start
from kafka_balancer.pipeline.sql.rates import group_deltas
from kafka_balancer.pipeline.sql.summaries import broker_summary, partition_summary
from kafka_balancer.pipeline.sql.tables import WindowTables, drop, materialise, window_tables
from kafka_balancer.pipeline.sql.validity import missing_reason


def window_spans(partition_agg: DataFrame) -> list[tuple[str, int, int]]:
    """(cluster, window, latest sample time) of every window in the partition aggregate: one small collect
    that gives the clusters, the windows and the open window at once."""
    rows = partition_agg.groupBy("cluster", "window").agg(F.max("last_ts").alias("last_ts")).collect()
    return [(str(r["cluster"]), int(r["window"]), int(r["last_ts"])) for r in rows]


def compute(spark: SparkSession, samples_dir: str | Path, cfg: PipelineConfig) -> BatchResult:
    """The all-Spark-SQL route. The heavy part (scan and window aggregates of the samples) runs once: the
    partition aggregate is stored first and tells the cluster and the windows; the broker and replica
    aggregates and the group deltas are computed, filtered to them, and stored; then the window tables."""
    held: list[DataFrame] = []
    try:
        with step(spark, "sample files listed, schemas read"):
            by_type, skipped = read_samples_checked(spark, samples_dir, held)
        warnings = [w for w in [skipped.warning()] if w]
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
        warnings += check_windows(windows, cfg, cluster)
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
    return finish(tables, cfg, cluster, warnings)


def finish(tables: WindowTables, cfg: PipelineConfig, cluster: str, warnings: list[str] | None = None) -> BatchResult:
    """Summaries (Spark SQL), completeness report and snapshot document from the window tables."""
    pw = missing_reason(tables.partition_windows)
    with step(pw.sparkSession, "summaries"):
        parts = partition_summary(pw).toPandas()
        brokers = broker_summary(tables.broker_windows).toPandas()
    return document(tables, parts, brokers, cfg, cluster, warnings)

