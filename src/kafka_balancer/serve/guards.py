"""Guards between a confirmed anomaly (or an operator's request) and an execution. Pure functions.

* one execution at a time;
* the pause switch;
* a cooldown after each execution (not for the evacuation of a dead broker, which cannot wait);
* no action while partitions are under-replicated, except the evacuation of a dead broker (which is what
  brings them back to full replication);
* a cap on bytes moved per sliding hour: a plan that does not fit is cut to the entries that do, in plan
  order, and the rest waits for the next window.

    >>> ctx = GuardContext(now=100.0, paused=False, executing=False, last_end=50.0, cooldown_s=60.0,
    ...                    under_replicated=0, moved_last_hour=0.0, max_bytes_per_hour=1e9)
    >>> hold_reason("rebalance", ctx)
    'cooldown: 10 s left of 60 s after the last execution'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

HOUR = 3600.0
EVACUATE = "evacuate"


@dataclass(frozen=True)
class GuardContext:
    now: float
    paused: bool
    executing: bool
    last_end: float | None  # when the last execution ended (None: never)
    cooldown_s: float
    under_replicated: int
    moved_last_hour: float
    max_bytes_per_hour: float
    last_failed: bool = False  # the last execution ended without being verified

    @property
    def budget(self) -> float:
        return max(0.0, self.max_bytes_per_hour - self.moved_last_hour)


def hold_reason(mode: str, ctx: GuardContext, operator: bool = False) -> str | None:
    """Why an execution of ``mode`` may not start now, or None. ``operator``: asked through the API (the
    cooldown does not apply; the other guards do)."""
    if ctx.executing:
        return "another execution is running"
    if ctx.paused and not operator:
        return "paused"
    cooled = mode != EVACUATE or ctx.last_failed  # an evacuation waits only after a failure (no tight retries)
    if not operator and cooled and ctx.last_end is not None and ctx.now - ctx.last_end < ctx.cooldown_s:
        left = ctx.cooldown_s - (ctx.now - ctx.last_end)
        return f"cooldown: {left:.0f} s left of {ctx.cooldown_s:g} s after the last execution"
    if ctx.under_replicated and mode != EVACUATE:
        return f"{ctx.under_replicated} partition(s) under-replicated: only a dead broker's evacuation may run"
    if ctx.budget <= 0:
        return (f"byte cap: {ctx.moved_last_hour / 1e6:.1f} MB moved in the last hour, cap "
                f"{ctx.max_bytes_per_hour / 1e6:.1f} MB")
    return None


def moved_in_window(executions: Sequence[tuple[float, float]], now: float, span_s: float = HOUR) -> float:
    """Bytes of the executions (start time, bytes) that started within ``span_s`` before ``now``."""
    return float(sum(b for t, b in executions if now - t < span_s))


def fit_budget(entry_bytes: Sequence[float], budget: float) -> int:
    """How many leading plan entries fit in ``budget`` bytes (entries that move no data always fit).

    >>> fit_budget([10, 0, 30, 5], 15)
    2
    """
    total = 0.0
    for i, b in enumerate(entry_bytes):
        if total + b > budget + 1e-9:
            return i
        total += b
    return len(entry_bytes)
