"""``scalar_judge.violation`` and ``capacity_violation`` spell Python's ``max`` as conditionals, in one pass;
``scalar_judge.utils`` reads capacities kept per broker. On seeded random utilisations, including the
band's and θ's own values, signed zeros, infinities and NaN, they must give what the ``max`` formulas give,
bit for bit and sign of zero included; and the violation must be ``State.violation_of``'s."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kafka_balancer.planner import scalar_judge
from kafka_balancer.planner.goals import CAPACITY_WEIGHT
from kafka_balancer.planner.state import State
from kafka_balancer.sim.cluster import PRESETS, generate


def _with_max(bd: scalar_judge.Bands, u: list[float]) -> list[float]:
    th = bd.theta
    cap = [max(0.0, x - th) / th * CAPACITY_WEIGHT for x in u]
    if not bd.active:
        return [c + 0.0 for c in cap]
    return [c + max(max(x - h, lo - x), 0.0) * s for c, x, h, lo, s in zip(cap, u, bd.hi, bd.lo, bd.inv, strict=True)]


def _bits(xs: list[float]) -> list[str]:
    return [x.hex() if not math.isnan(x) else "nan" for x in xs]


@pytest.mark.parametrize(("preset", "seed", "active"), [("overloaded", 0, True), ("hetero", 1, True),
                                                        ("racks48", 2, False)])
def test_conditionals_are_max(preset: str, seed: int, active: bool) -> None:
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97, distribution=active)
    bd = scalar_judge.bands(st)
    rng = np.random.default_rng(seed)
    special = [bd.theta, -0.0, 0.0, math.inf, -math.inf, math.nan, *bd.hi, *bd.lo]
    for _ in range(3000):
        u = [float(rng.choice(special)) if rng.random() < 0.3 else float(rng.random() * 1.2) for _ in range(4)]
        assert _bits(scalar_judge.violation(bd, u)) == _bits(_with_max(bd, u))
        want_cap = [max(0.0, x - bd.theta) / bd.theta * CAPACITY_WEIGHT for x in u]
        assert _bits(scalar_judge.capacity_violation(bd, u)) == _bits(want_cap)
        finite = [x if math.isfinite(x) else 0.5 for x in u]
        want = st.violation_of(np.array([finite]))[0].tolist()
        assert scalar_judge.violation(bd, finite) == want


def test_utils_reads_the_capacities_of_the_broker() -> None:
    st = State(generate(PRESETS["hetero"], seed=3), 0.8, 0.1, 0.97)
    st.cap = st.cap.copy()
    st.cap[1, 2] = 0.0  # a broker with a capacity that is not positive: the numpy path decides
    delta = np.array([1.0, 2.0, 3.0, 4.0])
    for b in range(st.cap.shape[0]):
        us = scalar_judge.utils(st, b, delta)
        if b == 1:
            assert us is None
            continue
        assert us is not None
        assert us[0] == (st.load[b] / st.cap[b]).tolist()
        assert us[1] == ((st.load[b] + delta) / st.cap[b]).tolist()
