"""Reading a span of history out of Prometheus in pieces small enough for any server.

A 1,000-broker cluster over 6 hours is millions of points per metric, more than one ``query_range`` may
return (Prometheus refuses more than 11,000 points per series and, by default, 50M samples per query).
So the span is cut into time chunks (:func:`plan_chunks`: every chunk holds at most ``max_values``
values over all series, so a chunk's matrices stay small) and each metric's series into batches of
exporter instances (:func:`plan_batches`: at most ``max_points`` points per request). Each request's
answer becomes a :class:`Block`: one row of values per series key, one column per round.

    >>> plan_chunks(0, 36_000, 10, total_series=10_000, max_values=20_000_000)
    [(0, 19990), (20000, 36000)]
    >>> plan_batches({"a": 40, "b": 40, "c": 40}, steps=100, max_points=8_000)
    [['a', 'b'], ['c']]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kafka_balancer.collect.prometheus.api import PromClient
from kafka_balancer.collect.prometheus.mapping import Kind
from kafka_balancer.collect.prometheus.mapping import Mapping as SeriesMapping

F64 = npt.NDArray[np.float64]
MAX_STEPS = 11_000  # Prometheus's limit of points per series in one query_range


def plan_chunks(start_ms: int, end_ms: int, step_ms: int, total_series: int,
                max_values: int = 20_000_000) -> list[tuple[int, int]]:
    """Time chunks ``(first round, last round)`` in ms, both inclusive, rounds every ``step_ms``."""
    steps = max(1, min(MAX_STEPS, max_values // max(1, total_series)))
    out: list[tuple[int, int]] = []
    t = start_ms
    while t <= end_ms:
        last = min(end_ms, t + (steps - 1) * step_ms)
        out.append((t, last))
        t = last + step_ms
    return out


def plan_batches(series_per_instance: Mapping[str, int], steps: int, max_points: int = 1_000_000) -> list[list[str]]:
    """Instances grouped so that one request returns at most ``max_points`` points (an instance with
    more series than that is a batch of its own)."""
    out: list[list[str]] = []
    cur: list[str] = []
    n = 0
    for inst in sorted(series_per_instance):
        k = max(1, series_per_instance[inst]) * steps
        if cur and n + k > max_points:
            out.append(cur)
            cur, n = [], 0
        cur.append(inst)
        n += k
    if cur:
        out.append(cur)
    return out


def selector(metric: str, mapping: SeriesMapping, kind: Kind, instances: Sequence[str] | None = None) -> str:
    """The PromQL selector of one metric: the mapping's matchers, a non-empty topic for per-topic kinds
    (the broker-wide series of the same name have none), and the instance batch."""
    parts = [mapping.selector] if mapping.selector else []
    if kind.per in ("topic", "replica"):
        parts.append(f'{mapping.labels["topic"]}!=""')
    if instances:
        # a regex in a PromQL string: the regex's backslashes are escaped once more
        alts = "|".join(re.escape(i) for i in instances).replace("\\", "\\\\")
        parts.append(f'{mapping.labels["instance"]}=~"{alts}"')
    return metric + "{" + ",".join(parts) + "}"


@dataclass
class Found:
    """The metric chosen for a kind, and its series count per exporter instance."""

    kind: Kind
    metric: str | None
    tried: list[str]
    series_per_instance: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.series_per_instance.values())


def find_metric(client: PromClient, mapping: SeriesMapping, kind: Kind, start_s: float, end_s: float) -> Found:
    """The first of the kind's metric names with series in the span, and how many series per instance."""
    found = Found(kind, None, [])
    inst_label = mapping.labels["instance"]
    for metric in kind.metrics:
        sel = selector(metric, mapping, kind)
        found.tried.append(sel)
        names = client.label_values("__name__", sel, start_s, end_s)
        if not names:
            continue
        found.metric = metric
        instances = client.label_values(inst_label, sel, start_s, end_s)
        counts = {str(r["metric"].get(inst_label, "")): int(float(r["value"][1]))
                  for r in client.query(f"count by ({inst_label}) ({sel})", end_s)}
        per = max(1, math.ceil(sum(counts.values()) / max(1, len(counts)))) if counts else 1
        found.series_per_instance = {i: counts.get(i, per) for i in instances} or {"": per}
        return found
    return found


@dataclass
class Block:
    """Values of one kind over one time chunk: ``keys[i]`` -> ``values[i, j]`` at round ``j`` (NaN: none)."""

    keys: list[tuple[Any, ...]]
    values: F64


KeyFn = Callable[[dict[str, str]], tuple[Any, ...] | None]


def fetch_block(client: PromClient, mapping: SeriesMapping, found: Found, chunk: tuple[int, int], step_ms: int,
                key_of: KeyFn, max_points: int = 1_000_000,
                progress: Callable[[int], None] | None = None) -> tuple[Block, int]:
    """All series of ``found`` over ``chunk``, one row per key (several series of one key: the largest
    value). Returns the block and the number of series ``key_of`` could not place."""
    assert found.metric is not None
    t0, t1 = chunk
    steps = (t1 - t0) // step_ms + 1
    rows: dict[tuple[Any, ...], F64] = {}
    unplaced = 0
    with_instances = [i for i in found.series_per_instance if i]
    batches: list[list[str] | None] = (
        list(plan_batches(found.series_per_instance, steps, max_points)) if with_instances else [None])
    for batch in batches:
        sel = selector(found.metric, mapping, found.kind, batch)
        for series in client.query_range(sel, t0 / 1000, t1 / 1000, step_ms / 1000):
            key = key_of(series["metric"])
            if key is None:
                unplaced += 1
                continue
            vals = series["values"]
            idx = np.fromiter(((round(float(v[0]) * 1000) - t0) // step_ms for v in vals), np.int64, len(vals))
            x = np.fromiter((float(v[1]) for v in vals), np.float64, len(vals))
            row = rows.get(key)
            if row is None:
                row = rows[key] = np.full(steps, np.nan)
            ok = (idx >= 0) & (idx < steps)
            row[idx[ok]] = np.fmax(row[idx[ok]], x[ok])
        if progress is not None:
            progress(1)
    keys = list(rows)
    values = np.vstack([rows[k] for k in keys]) if keys else np.empty((0, steps))
    return Block(keys, values), unplaced
