"""Leadership tightening's trades (``tighten(..., trades=True)``): a broker that can hand off no single
leadership gives one partition's leadership to a follower and takes one the follower leads.

Checked by hand on two brokers (a trade where every single handoff only mirrors the imbalance, one where
the leader-count goal's band refuses every single handoff, and a ``--leadership-only`` plan, whose last
tightening follows the count goals), and on seeded random clusters: replicas never
change, leader counts never change in a trade, every leader may lead and holds a replica, the two brokers'
squared deviation on CPU and network-out falls, and no goal that held breaks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kafka_balancer.model.snapshot import CPU, NW_OUT, Snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.constraints import Constraints
from kafka_balancer.planner.count_goals.leader_count import LeaderCountGoal
from kafka_balancer.planner.state import TOL, State
from kafka_balancer.planner.strategies import tighten

RR = [CPU, NW_OUT]


def _snap(reps: list[list[int]], leaders: list[int], lead_cpu: list[float], n_brokers: int,
          cpu_cap: float = 100.0) -> Snapshot:
    """Partitions whose leader carries ``lead_cpu`` CPU and a follower none; disk, network-in and network-out
    the same on every replica."""
    p = len(reps)
    lead = np.array([[c, 10.0, 1.0, 1.0] for c in lead_cpu])
    follow = np.array([[0.0, 10.0, 1.0, 1.0] for _ in lead_cpu])
    cap = np.tile([cpu_cap, 1000.0, 100.0, 100.0], (n_brokers, 1))
    return Snapshot.build(
        broker_ids=list(range(n_brokers)), capacity=cap, topics=["t"], topic_idx=[0] * p,
        partition=list(range(p)), replicas=reps, leader=leaders, leader_load=lead, follower_load=follow,
    )


def _state(snap: Snapshot) -> State:
    return State(snap, 0.8, 0.1, 0.97)


def _spread(st: State) -> float:
    """Squared relative deviation on CPU and network-out, summed over the live brokers."""
    u = st.load[st.alive][:, RR] / st.cap[st.alive][:, RR]
    return float((st.relative_deviation(u, RR) ** 2).sum())


def test_a_trade_where_every_handoff_only_mirrors_the_imbalance() -> None:
    # broker 0 leads CPU 30 and 10 (40), broker 1 leads 25 and 5 (30); both hold every partition
    st = _state(_snap([[0, 1], [0, 1], [1, 0], [1, 0]], [0, 0, 1, 1], [30.0, 10.0, 25.0, 5.0], 2))
    assert st.load[:, CPU].tolist() == [40.0, 30.0]
    # handing over the 10 gives 30 against 40, the 30 gives 10 against 60: no single handoff helps
    assert tighten.tighten(st, max_moves=10, deadline=math.inf) == 0
    assert tighten.tighten(st, max_moves=10, deadline=math.inf, trades=True) == 1
    assert st.ldr.tolist() == [1, 0, 0, 1]  # the 30 for the 25
    assert st.load[:, CPU].tolist() == [35.0, 35.0]
    assert st.lcount.tolist() == [2, 2]
    assert st.rep.tolist() == [[0, 1], [0, 1], [1, 0], [1, 0]]


def test_a_trade_where_the_leader_count_band_refuses_every_handoff() -> None:
    # broker 0 leads 9 partitions of CPU 10, broker 1 leads 11 of CPU 5: mean 10 leaderships, band 9..11
    n0, n1 = 9, 11
    reps = [[0, 1]] * n0 + [[1, 0]] * n1
    st = _state(_snap(reps, [0] * n0 + [1] * n1, [10.0] * n0 + [5.0] * n1, 2, cpu_cap=200.0))
    goal = LeaderCountGoal()
    assert goal.band(st) == (9, 11)
    st.guards = [goal]
    assert st.load[:, CPU].tolist() == [90.0, 55.0]
    # one leadership from 0 to 1 would even CPU out but take 0 below the band and 1 above it
    assert tighten.tighten(st, max_moves=10, deadline=math.inf) == 0
    # each trade moves 10 - 5 = 5 of CPU: 85/60, 80/65, 75/70; a fourth would only mirror 75/70
    assert tighten.tighten(st, max_moves=10, deadline=math.inf, trades=True) == 3
    assert st.load[:, CPU].tolist() == [75.0, 70.0]
    assert st.lcount.tolist() == [n0, n1]
    assert goal.violation(st) == 0


def _random_state(seed: int) -> State:
    rng = np.random.default_rng(seed)
    n_brokers, p = int(rng.integers(3, 9)), int(rng.integers(10, 60))
    reps = [rng.choice(n_brokers, size=int(rng.integers(2, 4)), replace=False).tolist() for _ in range(p)]
    # leaders skewed towards the low broker ids, heavy on CPU
    leaders = [min(r, key=lambda b: (b + rng.uniform(0, 2))) for r in reps]
    lead_cpu = rng.pareto(1.5, size=p) * 5.0 + 1.0
    snap = _snap(reps, leaders, lead_cpu.tolist(), n_brokers, cpu_cap=float(lead_cpu.sum()))
    st = _state(snap)
    if rng.random() < 0.5:
        st.guards = [LeaderCountGoal()]
    return st


@pytest.mark.parametrize("seed", range(30))
def test_every_trade_keeps_counts_and_goals_and_lowers_the_pair(seed: int) -> None:
    st = _random_state(seed)
    reps = st.rep.copy()
    v0 = st.violation_of(st.util())
    for s in np.argsort(-st.load[:, CPU], kind="stable").tolist():
        ldr, lcount, load = st.ldr.copy(), st.lcount.copy(), st.load.copy()
        u0 = st.relative_deviation(load[:, RR] / st.cap[:, RR], RR)
        f = tighten._trade(st, s)
        if f is None:
            assert np.array_equal(st.ldr, ldr)  # a refused trade is undone whole
            continue
        changed = np.nonzero(st.ldr != ldr)[0]
        assert changed.size == 2
        assert sorted(ldr[changed].tolist()) == sorted([s, f])
        assert sorted(st.ldr[changed].tolist()) == sorted([s, f])
        assert np.array_equal(st.lcount, lcount)
        u1 = st.relative_deviation(st.load[:, RR] / st.cap[:, RR], RR)
        pair = [s, f]
        assert (u1[pair] ** 2).sum() < (u0[pair] ** 2).sum() - 1e-12
    # replicas untouched; every leader holds a replica; no goal that held is broken
    assert np.array_equal(st.rep, reps)
    for k in range(st.rep.shape[0]):
        assert st.ldr[k] in st.rep[k].tolist()
    v1 = st.violation_of(st.util())
    assert not np.any((v0 <= TOL) & (v1 > TOL))


@pytest.mark.parametrize("seed", range(30))
def test_tightening_with_trades_never_spreads_more(seed: int) -> None:
    st = _random_state(seed)
    before = _spread(st)
    v0 = st.violation_of(st.util())
    guard_before = [g.violation(st) for g in st.guards]
    tighten.tighten(st, max_moves=200, deadline=math.inf, trades=True)
    assert _spread(st) <= before + 1e-12
    v1 = st.violation_of(st.util())
    assert not np.any((v0 <= TOL) & (v1 > TOL))
    assert all(g.violation(st) <= b for g, b in zip(st.guards, guard_before, strict=True))


def test_a_leadership_only_plan_trades_after_the_count_goals() -> None:
    # no replica may move, so the plan's last tightening follows the count goals; the 40 / 30 of the first
    # case become 35 / 35 by trading the 30 for the 25, and no replica moves
    snap = _snap([[0, 1], [0, 1], [1, 0], [1, 0]], [0, 0, 1, 1], [30.0, 10.0, 25.0, 5.0], 2)
    result = plan(snap, constraints=Constraints(leadership_only=True))
    assert (result.replica_moves, result.leader_moves) == (0, 2)
    assert result.after_snapshot.leader.tolist() == [1, 0, 0, 1]
    assert result.after.resources["cpu"].sigma == 0.0
    assert np.array_equal(result.after_snapshot.replicas, snap.replicas)
