"""Plots of the consumer experiment grid (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def plot_grid(rows: list[dict[str, Any]], out: Path, title: str) -> Path:
    """Four panels against the number of killed consumers: throughput, p99 latency, max lag, downtime."""
    variants = sorted({f"{r['assignor']}/{r['protocol']}" for r in rows})
    metrics = [("throughput", "throughput (msg/s)", False), ("latency_p99_s", "e2e latency p99 (s)", True),
               ("max_lag", "max lag (messages)", True),
               ("downtime_per_rebalance_s", "downtime per rebalance (s)", False)]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax, (key, label, log) in zip(axes.flat, metrics, strict=True):
        for v in variants:
            pts = sorted((r["killed"], r[key]) for r in rows if f"{r['assignor']}/{r['protocol']}" == v)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v)
        ax.set_xlabel("consumers killed (of 6)")
        ax.set_ylabel(label)
        if log:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    from kafka_balancer.report.plots import save_figure

    save_figure(fig, out, "--out")
    plt.close(fig)
    return out
