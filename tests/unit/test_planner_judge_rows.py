"""The judge of single replica moves reads each destination's violation from the kept rows
(``State.violation_at``), computes violations against the band's rows repeated in memory
(``State._band_rows``), and in normal mode reduces column by column and weighs pinned pairs only when some
pair is pinned (``State._judge_normal``). On a seeded walk of replica moves, with and without pinned pairs,
all must give what the plain formulas give, bit for bit, and so must every mode of the judge and
``violation_grows`` on [K, D, R] grids; the column sums must be numpy's, whatever the memory layout. The
candidates' loads come from ``State.role_loads`` (a row take): each must be ``role_load``'s."""

from __future__ import annotations

import numpy as np
import pytest
from planner_walk import broker_pairs

from kafka_balancer.planner.goals import CapacityGoal
from kafka_balancer.planner.state import THETA_FIRST, TOL, State, _any_last, _rises, _sum_last
from kafka_balancer.sim.cluster import PRESETS, generate


def _judge_formula(st: State, u0: np.ndarray, u1: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normal mode's rule as first written: the goals' violations afresh, ``np.any`` and ``sum``, pins always
    weighed."""
    g0, g1 = (st.capacity_goal.violation(u) + st.distribution_goal.violation(u) for u in (u0, u1))
    bad = np.any((g0 <= TOL) & (g1 > TOL), axis=-1)
    mask, some = st.pins()
    pin = mask[rows] if some else np.zeros(g0.shape, dtype=bool)
    k0, k1 = st.capacity_goal.violation(u0), st.capacity_goal.violation(u1)
    bad |= np.any(pin & _rises(k0, k1), axis=-1)
    return bad, g0.sum(axis=-1) - g1.sum(axis=-1)


@pytest.mark.parametrize(("preset", "seed", "pinned"), [("overloaded", 0, True), ("hetero", 1, False),
                                                        ("racks48", 2, True), ("new-brokers", 3, False)])
def test_judging_from_kept_rows_is_the_formula(preset: str, seed: int, pinned: bool) -> None:
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97)
    rng = np.random.default_rng(seed)
    live = np.nonzero(st.alive)[0]
    if pinned:
        st.exempt_pairs(rng.choice(live, size=max(1, live.size // 4), replace=False), [0, 2])
    st.violations()  # the rows are kept from here on; the walk's moves leave some of them to recompute
    for hi, _lo in broker_pairs(st, seed, 40):
        n = int(rng.choice([30, 600]))  # past the 256 rows _band_rows keeps at first
        to = rng.choice(live, size=n)
        m = st.members_arr(hi)
        deltas = st.role_loads(m[rng.integers(m.size, size=n)], hi) if m.size else np.zeros((n, st.load.shape[1]))
        u0, u1 = st.load[to] / st.cap[to], (st.load[to] + deltas) / st.cap[to]
        assert np.array_equal(st.violation_at(to), st.violation_of(u0))
        assert st.violation_of(u1).tobytes() == (st.capacity_goal.violation(u1) +
                                                  st.distribution_goal.violation(u1)).tobytes()
        bad, gain = st.judge(u0, u1, st.violation_at(to), rows=to)
        want_bad, want_gain = _judge_formula(st, u0, u1, to)
        assert np.array_equal(bad, want_bad)
        assert gain.tobytes() == want_gain.tobytes()


@pytest.mark.parametrize("shape", [(4,), (1, 4), (3, 4), (229, 4), (7, 16, 4), (5, 3)])
def test_column_reductions_are_numpys(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape) * 100 + shape[0])
    for _ in range(200):
        # magnitudes 1e-8 to 1e16 of both signs: any change of the order of additions shows
        x = rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 17, size=shape)
        for y in (x, x[::-1], np.asfortranarray(x), x[..., ::2, :] if x.ndim > 1 else x):
            assert np.asarray(_sum_last(y)).tobytes() == np.asarray(y.sum(axis=-1)).tobytes()
        b = x > 1.0
        assert np.array_equal(_any_last(b), b.any(axis=-1))


def _formulas(st: State, u0: np.ndarray, u1: np.ndarray) -> tuple[np.ndarray, ...]:
    """(violation_grows, then judge's bad and gain in the state's mode), with the goals' own violations,
    ``np.any`` and ``sum``."""
    def viol(u: np.ndarray) -> np.ndarray:
        return np.asarray(st.capacity_goal.violation(u) + st.distribution_goal.violation(u))
    g0, g1 = viol(u0), viol(u1)
    grows = np.any(g1 > np.maximum(g0, TOL) + TOL, axis=-1)
    k0, k1 = st.capacity_goal.violation(u0), st.capacity_goal.violation(u1)
    if st.polishing:
        c0, c1 = st.relative_deviation(u0) ** 2, st.relative_deviation(u1) ** 2
        return grows, grows, c0.sum(axis=-1) - c1.sum(axis=-1)
    if st.theta_first:
        drop = g0.sum(axis=-1) - g1.sum(axis=-1)
        return grows, np.any(_rises(k0, k1), axis=-1), drop + THETA_FIRST * (k0.sum(axis=-1) - k1.sum(axis=-1))
    if st.relaxed:
        return grows, np.any((k0 <= TOL) & (k1 > TOL), axis=-1), (g0 ** 2).sum(axis=-1) - (g1 ** 2).sum(axis=-1)
    return grows, np.any((g0 <= TOL) & (g1 > TOL), axis=-1), g0.sum(axis=-1) - g1.sum(axis=-1)


@pytest.mark.parametrize("mode", ["normal", "relaxed", "theta_first", "polishing"])
def test_every_mode_on_grids_is_the_formula(mode: str) -> None:
    st = State(generate(PRESETS["hetero"], seed=4), 0.8, 0.1, 0.97)
    if mode != "normal":
        setattr(st, mode, True)
    rng = np.random.default_rng(4)
    live = np.nonzero(st.alive)[0]
    for k, d in ((3, 5), (24, 16), (40, 2000)):  # the last past MAX_BAND_ROWS: the band broadcast
        if k == 40:
            st.capacity_goal = CapacityGoal(0.5)  # new goals: some pairs above θ
        dests = rng.choice(live, size=d)
        deltas = st.role_loads(st.members_arr(int(live[0]))[:k], int(live[0]))
        u0 = (st.load[dests] / st.cap[dests])[None, :, :]
        u1 = (st.load[dests][None, :, :] + deltas[:, None, :]) / st.cap[dests][None, :, :]
        grows, bad, gain = _formulas(st, u0, u1)
        assert np.array_equal(st.violation_grows(u0, u1), grows)
        got_bad, got_gain = st.judge(u0, u1)
        assert np.array_equal(got_bad, bad)
        assert got_gain.tobytes() == gain.tobytes()


def test_role_loads_pick_each_replicas_role() -> None:
    st = State(generate(PRESETS["racks48"], seed=5), 0.8, 0.1, 0.97)
    rng = np.random.default_rng(5)
    for _ in range(20):
        parts = rng.integers(st.snap.n_partitions, size=int(rng.integers(0, 40)))
        holders = st.ldr[parts] if rng.random() < 0.5 else st.rep[parts, 1]
        want = np.array([st.role_load(int(p), int(h)) for p, h in zip(parts, holders, strict=True)]).reshape(-1, 4)
        assert st.role_loads(parts, holders).tobytes() == want.tobytes()
        b = int(holders[0]) if parts.size else 0
        want_b = np.array([st.role_load(int(p), b) for p in parts]).reshape(-1, 4)
        assert st.role_loads(parts, b).tobytes() == want_b.tobytes()
