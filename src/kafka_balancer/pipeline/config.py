"""Pipeline settings (one frozen dataclass shared by batch, streaming and the CLI)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.validate.values import list_items

MIN_CAPACITY = 1e-6  # below it a capacity means nothing, and loads divided by it overflow
DEFAULT_CAPACITY: dict[str, float] = {"cpu": 100.0, "disk": 1.0e12, "nw_in": 1.25e8, "nw_out": 1.25e8}


@dataclass(frozen=True)
class PipelineConfig:
    window_ms: int = 300_000
    windows: int = 6
    min_sample_ratio: float = 0.5
    min_valid_windows: int | None = None  # default: half the windows, rounded up
    min_valid_ratio: float = 0.95
    cpu_min_obs: int = 10
    cpu_min_windows: int = 3
    cluster: str | None = None
    capacity: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    broker_capacity: dict[int, dict[str, float]] = field(default_factory=dict)

    def valid_windows_needed(self) -> int:
        from kafka_balancer.pipeline.completeness import min_valid_windows_default

        return self.min_valid_windows if self.min_valid_windows is not None else min_valid_windows_default(
            self.windows
        )


_DURATION = re.compile(r"^(\d+)(ms|s|m|h)?$")


def parse_duration_ms(text: str) -> int:
    """'5m' -> 300000, '90s' -> 90000, '1h', '500ms'; a bare number is seconds.

    >>> parse_duration_ms("5m")
    300000
    """
    m = _DURATION.match(text.strip())
    if not m:
        raise InputError(f"cannot read the duration {text!r}", hint="use e.g. 5m, 90s, 1h or 500ms")
    unit = m.group(2) or "s"
    value = int(m.group(1)) * {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}[unit]
    if value <= 0:
        raise InputError(f"the duration {text!r} must be positive")
    return value


def parse_capacity(text: str) -> dict[str, float]:
    """'cpu=100,disk=5e11,nw_in=1.25e8,nw_out=1.25e8' (any subset) over the defaults."""
    out = dict(DEFAULT_CAPACITY)
    if not text.strip():
        return out
    for part in list_items(text, "--capacity", "e.g. --capacity cpu=100,disk=5e11"):
        key, _, val = part.partition("=")
        if key not in RESOURCES:
            raise InputError(f"unknown capacity resource {key!r} in {text!r}", hint=f"use {', '.join(RESOURCES)}")
        try:
            out[key] = float(val)
        except ValueError:
            raise InputError(f"capacity {key}={val!r} is not a number") from None
        if not math.isfinite(out[key]) or out[key] < MIN_CAPACITY:
            raise InputError(f"capacity {key} must be a finite number of at least {MIN_CAPACITY:g}, got {val}",
                             hint="e.g. --capacity cpu=100,disk=5e11")
    return out
