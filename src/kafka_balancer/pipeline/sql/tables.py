"""From window aggregates to the two window tables (partition windows, broker windows) and the CPU model.

This is the step batch and streaming share: both hand it the aggregates of the windows to compute plus,
when available, the window just before them (the base of the first interval).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_balancer.pipeline.cpu_model import CpuModel
from kafka_balancer.pipeline.progress import step
from kafka_balancer.pipeline.sql.cpu import broker_traffic, fit_cpu_model, split_cpu
from kafka_balancer.pipeline.sql.loads import partition_loads
from kafka_balancer.pipeline.sql.rates import (
    broker_cpu_rates,
    group_deltas,
    partition_deltas,
    replica_deltas,
    topic_broker_rates,
)
from kafka_balancer.pipeline.sql.validity import mark_valid


@dataclass
class WindowTables:
    partition_windows: DataFrame  # one row per partition and window
    broker_windows: DataFrame  # one row per broker and window (CPU and traffic)
    cpu_model: CpuModel
    windows: list[int]
    held: list[DataFrame] = field(default_factory=list)  # stored frames behind the two tables

    def release(self) -> None:
        """Drop the stored tables (and whatever they were computed from) from Spark's memory and disk; the
        tables cannot be queried after this."""
        for df in self.held:
            drop(df)
        self.held.clear()

    def write(self, tables_dir: str | Path) -> None:
        """``partition_windows/`` and ``broker_windows/`` partitioned by cluster and window (Parquet, dynamic
        partition overwrite: rewriting a window replaces it)."""
        d = Path(tables_dir)
        for name, df in (("partition_windows", self.partition_windows), ("broker_windows", self.broker_windows)):
            with step(df.sparkSession, f"{name} written"):
                (df.repartition("cluster", "window").write.mode("overwrite")
                   .option("partitionOverwriteMode", "dynamic")
                   .partitionBy("cluster", "window").parquet(str(d / name)))


def materialise(df: DataFrame, held: list[DataFrame], label: str) -> DataFrame:
    """Compute ``df`` now (one action, described as ``label``) and keep its rows (in memory, spilling to
    disk). The frame returned reads those rows and its plan starts there (a local checkpoint), so later
    steps neither re-run nor re-plan what came before: with a cache instead, every later query drags the
    whole lineage through Spark's analyser, seconds per step on a large job. ``held`` collects it for
    :func:`drop`."""
    with step(df.sparkSession, label):
        stored = df.localCheckpoint(eager=True)
    held.append(stored)
    return stored


def _stored_rdd(df: DataFrame) -> Any:
    """The JVM RDD whose blocks hold a materialised frame's rows (None for any other frame)."""
    plan = df._jdf.queryExecution().logical()
    return plan.rdd() if plan.nodeName() == "LogicalRDD" else None


def is_stored(df: DataFrame) -> bool:
    """Whether ``df``'s rows are held by Spark (materialised, or cached)."""
    rdd = _stored_rdd(df)
    level = rdd.getStorageLevel() if rdd is not None else None
    if level is not None and (level.useMemory() or level.useDisk()):
        return True
    return bool(df.storageLevel.useMemory or df.storageLevel.useDisk)


def drop(df: DataFrame) -> None:
    """Free the rows of a materialised or cached frame."""
    rdd = _stored_rdd(df)
    if rdd is not None:
        rdd.unpersist(False)
    df.unpersist()


def window_tables(
    aggs: dict[str, DataFrame],
    window_ms: int,
    windows: list[int],
    min_sample_ratio: float = 0.5,
    cpu_min_obs: int = 10,
    cpu_min_windows: int = 3,
    group_deltas_df: DataFrame | None = None,
    held: list[DataFrame] | None = None,
) -> WindowTables:
    """Rates, loads, validity and CPU split for ``windows`` (aggregates may hold earlier windows too).

    ``group_deltas_df``: the group deltas when the caller already has them (then ``aggs`` needs no
    ``group_offset``). ``aggs["topic_broker"]``: the topic-broker window aggregate, or the raw points
    (see :func:`topic_broker_rates`).
    ``held``: frames the caller stored for this computation, released with the tables.

    Each step is one action whose result is stored (:func:`materialise`): the topic-broker rates, the
    partition window table, the broker windows, the broker traffic, the CPU split and the broker table;
    each later step reads the stored tables, none re-runs the aggregation.
    """
    held = list(held or [])
    keep = F.col("window").isin(windows)
    bw = broker_cpu_rates(aggs["broker"], window_ms)
    tb = materialise(topic_broker_rates(aggs["topic_broker"], aggs["broker"], window_ms).where(keep), held,
                     "topic-broker byte rates")
    pdel = partition_deltas(aggs["partition"], window_ms)
    rdel = replica_deltas(aggs["replica"], window_ms)
    gdel = group_deltas_df if group_deltas_df is not None else group_deltas(aggs["group_offset"], window_ms)
    pw = partition_loads(pdel.where(keep), tb, rdel.where(keep), gdel.where(keep))
    pw, bw = mark_valid(pw, bw.where(keep), min_sample_ratio)
    pw = materialise(pw, held, "partition windows (rates, loads, validity)")
    bw = materialise(bw, held, "broker windows (CPU rates)")
    traffic = materialise(broker_traffic(pw), held, "broker traffic")
    with step(bw.sparkSession, "CPU model fit"):
        model = fit_cpu_model(bw, traffic, cpu_min_obs, cpu_min_windows)
    pw_cpu = materialise(split_cpu(pw, bw, traffic, model), held, "CPU split over replicas")
    bw_full = materialise(bw.join(traffic, ["cluster", "broker", "window"], "left"), held, "broker table")
    return WindowTables(pw_cpu, bw_full, model, windows, held)
