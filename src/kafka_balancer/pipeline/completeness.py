"""Completeness: which windows count, which partitions count, and a report of what is missing.

* A partition's window counts when it has at least ``ceil(min_sample_ratio × rounds)`` samples, where
  ``rounds`` is the number of sampling rounds seen in that window, and a rate and a size could be derived.
* A broker's CPU window counts when it has at least ``max(1, min_samples − 1)`` CPU intervals.
* A partition counts when at least ``min_valid_windows`` of the requested windows count.

The report lists, per topic and per broker (the partition's current leader), the partitions that do not
count and the windows they miss; :func:`check` raises an :class:`InputError` when the share of partitions
that count is under ``min_valid_ratio`` (0.95 by default).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from kafka_balancer.errors import InputError


def completeness_report(
    part_summary: pd.DataFrame,
    broker_summary: pd.DataFrame,
    windows: list[int],
    min_valid_windows: int,
    min_valid_ratio: float,
) -> dict[str, Any]:
    """The report (a plain dict, written as JSON next to the snapshot).

    ``part_summary``: topic, partition, leader, valid_windows, reasons (list of str);
    ``broker_summary``: broker, cpu_valid_windows, cpu_windows.
    """
    ps = part_summary.copy()
    ps["valid"] = ps["valid_windows"] >= min_valid_windows
    total = len(ps)
    valid = int(ps["valid"].sum())
    ratio = valid / total if total else 0.0
    ps["missing_windows"] = len(windows) - ps["valid_windows"]
    by_topic = (
        ps.groupby("topic")
        .agg(partitions=("partition", "size"), valid=("valid", "sum"), missing_windows=("missing_windows", "sum"))
        .reset_index()
    )
    by_topic = by_topic[by_topic["valid"] < by_topic["partitions"]].sort_values("valid")
    by_broker = (
        ps.groupby("leader")
        .agg(partitions_led=("partition", "size"), invalid=("valid", lambda v: int((~v).sum())),
             missing_windows=("missing_windows", "sum"))
        .reset_index()
        .rename(columns={"leader": "broker"})
    )
    by_broker = by_broker.merge(broker_summary, on="broker", how="outer").fillna(0)
    by_broker = by_broker[(by_broker["invalid"] > 0) | (by_broker["cpu_valid_windows"] < len(windows))]
    invalid = ps[~ps["valid"]].sort_values(["topic", "partition"])
    reasons: dict[str, int] = {}
    for rs in ps["reasons"]:
        for r in rs:
            reasons[r] = reasons.get(r, 0) + 1
    return {
        "windows": windows,
        "min_valid_windows": min_valid_windows,
        "min_valid_ratio": min_valid_ratio,
        "partitions": total,
        "valid_partitions": valid,
        "valid_ratio": ratio,
        "reasons": reasons,
        "topics": [
            {k: _plain(v) for k, v in row.items()} for row in by_topic.to_dict(orient="records")
        ],
        "brokers": [
            {k: _plain(v) for k, v in row.items()} for row in by_broker.to_dict(orient="records")
        ],
        "invalid_partitions": [
            {"topic": r["topic"], "partition": int(r["partition"]), "leader": int(r["leader"]),
             "valid_windows": int(r["valid_windows"]), "reasons": list(r["reasons"])}
            for r in invalid.head(200).to_dict(orient="records")
        ],
    }


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return v


def check(report: dict[str, Any]) -> None:
    """Raise when too few partitions have enough valid windows."""
    if report["partitions"] == 0:
        raise InputError("the samples hold no partition records in the selected windows",
                         hint="check --window/--windows against the time span the collector covered")
    if report["valid_ratio"] + 1e-12 < report["min_valid_ratio"]:
        worst_t = ", ".join(
            f"{t['topic']} ({int(t['valid'])}/{int(t['partitions'])})" for t in report["topics"][:5]
        )
        worst_b = ", ".join(
            f"broker {int(b['broker'])} ({int(b['invalid'])} partitions invalid, "
            f"CPU in {int(b['cpu_valid_windows'])}/{len(report['windows'])} windows)"
            for b in sorted(report["brokers"], key=lambda b: -b["invalid"])[:5]
        )
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(report["reasons"].items(), key=lambda kv: -kv[1]))
        raise InputError(
            f"only {report['valid_partitions']} of {report['partitions']} partitions "
            f"({100 * report['valid_ratio']:.1f} %) have at least {report['min_valid_windows']} valid "
            f"windows of {len(report['windows'])}; need {100 * report['min_valid_ratio']:.1f} %. "
            f"Worst topics: {worst_t or '-'}; brokers: {worst_b or '-'}; window problems: {reasons or '-'}",
            hint="collect for longer (more windows), lower --min-valid-ratio, or see the completeness report "
            "(--report) for every partition",
        )


def min_valid_windows_default(windows: int) -> int:
    return max(1, math.ceil(windows / 2))
