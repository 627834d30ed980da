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
    before: Metrics, after: Metrics, broker_ids: list[int], path: str | Path, title: str = "", flag: str = "--plot",
    after_ids: list[int] | None = None,
) -> None:
    """One panel per resource: per-broker utilisation before and after, with θ and the ε band.

    ``broker_ids`` are the brokers ``before`` measured, ``after_ids`` those ``after`` measured when they differ
    (a plan that removes brokers measures the ones that stay): bars are matched by broker id, and a broker
    measured on one side only has no bar on the other, which the figure names."""
    after_ids = broker_ids if after_ids is None else after_ids
    before_set, after_set = set(broker_ids), set(after_ids)
    gone = [b for b in broker_ids if b not in after_set]
    new = [b for b in after_ids if b not in before_set]
    ids = broker_ids + new
    x = np.arange(len(ids))
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    for ax, res in zip(axes.flat, RESOURCES, strict=True):
        b, a = before.resources[res], after.resources[res]
        ax.bar(x - 0.2, _aligned(b.util, broker_ids, ids), width=0.4, label="before", color="#c0504d")
        ax.bar(x + 0.2, _aligned(a.util, after_ids, ids), width=0.4, label="after", color="#4f81bd")
        ax.axhline(before.theta, color="black", linestyle="--", linewidth=1, label="θ")
        ax.axhspan(a.mean * (1 - after.eps), a.mean * (1 + after.eps), color="#4f81bd", alpha=0.12, label="ε band")
        ax.set_title(f"{res}: σ {b.sigma:.4f} → {a.sigma:.4f}")
        ax.set_ylabel("utilisation")
        if len(ids) <= 24:
            ax.set_xticks(x, [str(i) for i in ids])
    axes.flat[0].legend(loc="upper right", fontsize=8)
    notes = ([f"no bar after: broker(s) {_ids(gone)} (removed)"] if gone else []) + (
        [f"no bar before: broker(s) {_ids(new)}"] if new else [])
    fig.suptitle("\n".join([title or "per-broker utilisation before and after the plan", *notes]))
    fig.tight_layout()
    try:
        save_figure(fig, path, flag)
    finally:
        plt.close(fig)


def _aligned(util: np.ndarray, measured: list[int], ids: list[int]) -> np.ndarray:
    """``util`` (one value per broker of ``measured``) laid out over ``ids``; NaN (no bar) where not measured."""
    at = {b: i for i, b in enumerate(measured)}
    return np.array([util[at[b]] if b in at else np.nan for b in ids], dtype=float)


def _ids(ids: list[int]) -> str:
    return ",".join(str(b) for b in ids[:10]) + (" ..." if len(ids) > 10 else "")


def save_figure(fig: Any, path: str | Path, flag: str = "--plot") -> None:
    """Save a matplotlib figure through :func:`files.outputs.replacing` (atomic; format from the extension)."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in plot_formats():
        raise InputError(f"{flag} {path}: matplotlib cannot write a {ext or 'file without an extension'!r} file",
                         hint=f"end {flag} with one of .{', .'.join(sorted(plot_formats()))}")
    with replacing(path, flag) as tmp:
        fig.savefig(tmp, dpi=110, format=ext)
