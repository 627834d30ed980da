"""Bounded resources: a command whose size the user controls estimates its memory first, and refuses with one
line (the flag, the estimate, what the machine has available) when it would not fit.

The available memory is ``MemAvailable`` from ``/proc/meminfo`` (what the kernel can hand out without
swapping); elsewhere, or when it cannot be read, 8 GiB is assumed. ``KAFKA_BALANCER_MEM_AVAILABLE`` (bytes)
overrides it, for tests and for a machine shared with something big.
"""

from __future__ import annotations

import os

from kafka_balancer.errors import InputError

FALLBACK_BYTES = 8 * 2**30
# Leave this share of what is available to everything else (Python itself, the page cache, other jobs).
USABLE_SHARE = 0.8


def available_memory_bytes() -> int:
    env = os.environ.get("KAFKA_BALANCER_MEM_AVAILABLE")
    if env and env.isdigit():
        return int(env)
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return FALLBACK_BYTES


def human_bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def check_memory(estimate_bytes: float, what: str, hint: str) -> None:
    """Refuse ``what`` (e.g. ``simulate cluster --partitions 100000000``) when ``estimate_bytes`` exceeds the
    usable share of the available memory."""
    avail = available_memory_bytes()
    if estimate_bytes > USABLE_SHARE * avail:
        raise InputError(f"{what} needs about {human_bytes(estimate_bytes)} of memory; "
                         f"this machine has {human_bytes(avail)} available", hint=hint)
