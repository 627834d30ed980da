"""What both routes of the batch job produce, and the steps they share around the window tables: which
cluster and which windows to compute, and the report and snapshot made from the two summaries.

The routes (:mod:`kafka_balancer.pipeline.sql`, :mod:`kafka_balancer.pipeline.columnar`) depend on this
module; it depends on neither.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd
from pyspark.sql import DataFrame

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.assemble import snapshot_dict
from kafka_balancer.pipeline.completeness import completeness_report
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.cpu_model import CpuModel


class WindowTableSet(Protocol):
    """The two window tables of a route (partition windows, broker windows) with the CPU model."""

    cpu_model: CpuModel
    windows: list[int]

    @property
    def partition_windows(self) -> DataFrame: ...

    @property
    def broker_windows(self) -> DataFrame: ...

    def release(self) -> None: ...

    def write(self, tables_dir: str | Path) -> None: ...


@dataclass
class BatchResult:
    snapshot: dict[str, Any]
    report: dict[str, Any]
    cpu_model: CpuModel
    tables: WindowTableSet
    windows: list[int]
    cluster: str
    warnings: list[str] = field(default_factory=list)  # what the job skipped or fell back on, one line each

    def release(self) -> None:
        """Drop the stored window tables (and the aggregates behind them) from Spark's memory and disk.
        ``tables`` cannot be queried after this."""
        self.tables.release()


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


def no_closed_window(window_ms: int, cluster: str) -> InputError:
    return InputError(
        f"no closed {window_ms // 1000}s window in the samples of cluster {cluster!r}",
        hint="collect for longer than one window, or use a shorter --window",
    )


def check_windows(windows: list[int], cfg: PipelineConfig, cluster: str) -> list[str]:
    """Fail when the closed windows found cannot make a snapshot (fewer than a partition needs valid);
    a warning when there are fewer than asked for."""
    if not windows:
        raise no_closed_window(cfg.window_ms, cluster)
    need = cfg.valid_windows_needed()
    if len(windows) < need:
        raise InputError(
            f"the samples of cluster {cluster!r} hold {len(windows)} closed {cfg.window_ms // 1000}s window(s); "
            f"a partition needs {need} valid windows (--windows {cfg.windows})",
            hint="collect for longer, or lower --windows or --min-valid-windows",
        )
    if len(windows) < cfg.windows:
        return [f"built {len(windows)} of the {cfg.windows} windows asked for (--windows): the samples of "
                f"cluster {cluster!r} hold no more closed {cfg.window_ms // 1000}s windows"]
    return []


def document(tables: WindowTableSet, parts: pd.DataFrame, brokers: pd.DataFrame,
             cfg: PipelineConfig, cluster: str, warnings: list[str] | None = None) -> BatchResult:
    """The completeness report and the snapshot document from the two summaries. ``warnings``: what the
    route skipped; a CPU model that fell back to fixed weights is added."""
    warnings = list(warnings or [])
    if not tables.cpu_model.fitted:
        warnings.append(f"CPU model not fitted ({tables.cpu_model.reason}): broker CPU is split over replicas "
                        "with the fixed weights 0.7/0.15/0.15")
    report = completeness_report(
        parts[["topic", "partition", "leader", "valid_windows", "reasons"]],
        brokers[["broker", "cpu_valid_windows", "cpu_windows"]],
        tables.windows,
        cfg.valid_windows_needed(),
        cfg.min_valid_ratio,
    )
    report["cluster"] = cluster
    report["cpu_model"] = tables.cpu_model.as_dict()
    report["windows_asked"] = cfg.windows
    report["warnings"] = warnings
    snap = snapshot_dict(parts, brokers, cfg.capacity, cfg.broker_capacity, name=cluster)
    return BatchResult(snap, report, tables.cpu_model, tables, tables.windows, cluster, warnings)

