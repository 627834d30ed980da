"""Plots a person would rather look at than a table (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from kafka_balancer.errors import InputError
from kafka_balancer.files.outputs import plot_formats, replacing
from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.planner.metrics import Metrics


def utilisation_before_after(
    before: Metrics, after: Metrics, broker_ids: list[int], path: str | Path, title: str = "", flag: str = "--plot"
) -> None:
    """One panel per resource: per-broker utilisation before and after, with θ and the ε band."""
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    x = np.arange(len(broker_ids))
    for ax, res in zip(axes.flat, RESOURCES, strict=True):
        b, a = before.resources[res], after.resources[res]
        ax.bar(x - 0.2, b.util, width=0.4, label="before", color="#c0504d")
        ax.bar(x + 0.2, a.util, width=0.4, label="after", color="#4f81bd")
        ax.axhline(before.theta, color="black", linestyle="--", linewidth=1, label="θ")
        ax.axhspan(a.mean * (1 - after.eps), a.mean * (1 + after.eps), color="#4f81bd", alpha=0.12, label="ε band")
        ax.set_title(f"{res}: σ {b.sigma:.4f} → {a.sigma:.4f}")
        ax.set_ylabel("utilisation")
        if len(broker_ids) <= 24:
            ax.set_xticks(x, [str(i) for i in broker_ids])
    axes.flat[0].legend(loc="upper right", fontsize=8)
    fig.suptitle(title or "per-broker utilisation before and after the plan")
    fig.tight_layout()
    try:
        save_figure(fig, path, flag)
    finally:
        plt.close(fig)


def save_figure(fig: Any, path: str | Path, flag: str = "--plot") -> None:
    """Save a matplotlib figure through :func:`files.outputs.replacing` (atomic; format from the extension)."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in plot_formats():
        raise InputError(f"{flag} {path}: matplotlib cannot write a {ext or 'file without an extension'!r} file",
                         hint=f"end {flag} with one of .{', .'.join(sorted(plot_formats()))}")
    with replacing(path, flag) as tmp:
        fig.savefig(tmp, dpi=110, format=ext)
