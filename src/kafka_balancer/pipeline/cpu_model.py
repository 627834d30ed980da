"""How much CPU a partition costs: fit broker CPU on leader and follower traffic, then split it.

Model (Cruise Control's): a broker's CPU is ``a·Lin + b·Lout + c·Fin`` where ``Lin``/``Lout`` are the
bytes in/out per second of the partitions it leads (out includes replication fetches) and ``Fin`` the
bytes in of those it follows. The coefficients are fitted by least squares with no intercept and
non-negative coefficients over every (broker, window) with valid CPU and traffic. Spark computes the
normal equations (one aggregation over the observations); the 3×3 solve is done on the driver.
With too little history the fixed weights 0.7 / 0.15 / 0.15 are used instead.

Only the *relative* weights matter for the split: within a window, a broker's measured CPU is divided
over its replicas in proportion to ``a·in + b·out`` (leader) and ``c·in`` (follower).

Example: brokers at 10 % and 20 % CPU, each leading one partition with 1 MB/s in and no out, and
nothing else: a = 15 % per MB/s fits both up to an error of ±5 %.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

FIXED_WEIGHTS = (0.7, 0.15, 0.15)
FEATURES = ("lin", "lout", "fin")


@dataclass(frozen=True)
class CpuModel:
    weights: tuple[float, float, float]  # a, b, c used for splitting (raw coefficients when fitted)
    normalised: tuple[float, float, float]  # a, b, c / (a + b + c)
    fitted: bool
    reason: str
    observations: int
    windows: int
    rmse: float | None  # CPU percent
    mean_cpu: float | None
    r2: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def solve(g: dict[str, float], min_obs: int = 10, min_windows: int = 3) -> CpuModel:
    """Non-negative least squares on the normal equations (enumerating active sets; 3 unknowns)."""
    n, windows = int(g["n"]), int(g["windows"])

    def fallback(reason: str) -> CpuModel:
        return CpuModel(FIXED_WEIGHTS, FIXED_WEIGHTS, False, reason, n, windows, None, None, None)

    if windows < min_windows or n < min_obs:
        return fallback(f"too little history: {n} broker-windows over {windows} windows "
                        f"(need {min_obs} over {min_windows})")
    xx = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            xx[i, j] = g[f"xx_{min(i, j)}{max(i, j)}"]
    xy = np.array([g[f"xy_{i}"] for i in range(3)])
    scale = np.sqrt(np.maximum(np.diag(xx), 1e-300))
    a = xx / np.outer(scale, scale)
    b = xy / scale
    best: tuple[float, np.ndarray] | None = None
    for k in (3, 2, 1):
        for subset in itertools.combinations(range(3), k):
            idx = list(subset)
            sub = a[np.ix_(idx, idx)]
            if np.linalg.cond(sub) > 1e10:
                continue
            sol = np.linalg.solve(sub, b[idx])
            if (sol < 0).any():
                continue
            beta = np.zeros(3)
            beta[idx] = sol
            sse = g["syy"] - 2 * beta @ b + beta @ a @ beta
            if best is None or sse < best[0] - 1e-12 * max(g["syy"], 1.0):
                best = (sse, beta)
    if best is None or best[1].sum() <= 0:
        return fallback("the fit found no non-negative solution (traffic does not explain CPU)")
    sse, beta_s = best
    coef = beta_s / scale
    sst = g["syy"] - g["sy"] ** 2 / n
    rmse = math.sqrt(max(float(sse), 0.0) / n)
    w = tuple(float(x) for x in coef)
    tot = sum(w)
    return CpuModel(
        weights=(w[0], w[1], w[2]),
        normalised=(w[0] / tot, w[1] / tot, w[2] / tot),
        fitted=True,
        reason="fitted",
        observations=n,
        windows=windows,
        rmse=rmse,
        mean_cpu=g["sy"] / n,
        r2=float(1.0 - sse / sst) if sst > 0 else None,
    )


