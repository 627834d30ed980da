"""From window aggregates to the two window tables (partition windows, broker windows) and the CPU model.

This is the step batch and streaming share: both hand it the aggregates of the windows to compute plus,
when available, the window just before them (the base of the first interval).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_balancer.pipeline.completeness import mark_valid
from kafka_balancer.pipeline.cpu_model import CpuModel, broker_traffic, fit_cpu_model, split_cpu
from kafka_balancer.pipeline.loads import partition_loads
from kafka_balancer.pipeline.rates import (
    broker_cpu_rates,
    group_deltas,
    partition_deltas,
    replica_deltas,
    topic_broker_rates,
)


@dataclass
class WindowTables:
    partition_windows: DataFrame  # one row per partition and window
    broker_windows: DataFrame  # one row per broker and window (CPU and traffic)
    cpu_model: CpuModel
    windows: list[int]


def window_tables(
    aggs: dict[str, DataFrame],
    window_ms: int,
    windows: list[int],
    min_sample_ratio: float = 0.5,
    cpu_min_obs: int = 10,
    cpu_min_windows: int = 3,
) -> WindowTables:
    """Rates, loads, validity and CPU split for ``windows`` (aggregates may hold earlier windows too)."""
    keep = F.col("window").isin(windows)
    bw = broker_cpu_rates(aggs["broker"], window_ms)
    tb = topic_broker_rates(aggs["topic_broker"], aggs["broker"], window_ms)
    pdel = partition_deltas(aggs["partition"], window_ms)
    rdel = replica_deltas(aggs["replica"], window_ms)
    gdel = group_deltas(aggs["group_offset"], window_ms)
    pw = partition_loads(pdel.where(keep), tb.where(keep), rdel.where(keep), gdel.where(keep))
    pw, bw = mark_valid(pw, bw.where(keep), min_sample_ratio)
    pw = pw.persist()
    bw = bw.persist()
    traffic = broker_traffic(pw).persist()
    model = fit_cpu_model(bw, traffic, cpu_min_obs, cpu_min_windows)
    pw_cpu = split_cpu(pw, bw, traffic, model).persist()
    bw_full = bw.join(traffic, ["cluster", "broker", "window"], "left").persist()
    return WindowTables(pw_cpu, bw_full, model, windows)
