"""planner.ranking.smallest gives exactly what a full stable argsort gives, ties and masks included."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.planner.ranking import smallest


@pytest.mark.parametrize("seed", range(200))
def test_same_as_a_stable_argsort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    values = rng.integers(0, 8, size=n).astype(np.float64) / 4  # many ties
    if rng.random() < 0.5:
        values = -values
    keep = rng.random(n) < 0.8 if rng.random() < 0.7 else None
    k = int(rng.integers(0, n + 3))
    full = np.argsort(values, kind="stable")
    if keep is not None:
        full = full[keep[full]]
    assert smallest(values, k, keep).tolist() == full[:k].tolist()
