"""Hot roles: a partition too hot for any broker puts whoever leads it (and, on disk and network-in, whoever
holds it) out of the band, wherever the plan puts it. The exemption follows the role, not the broker that
held it in the snapshot, and a holder is still brought under θ where the role alone does not put it there."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from kafka_balancer.model.snapshot import CPU, DISK, NW_OUT, Snapshot, broker_loads
from kafka_balancer.planner import bounds, plan
from kafka_balancer.planner.goals import CAPACITY_WEIGHT
from kafka_balancer.planner.invariants import hard_violations
from kafka_balancer.planner.state import State

GB = 1e9
BROKERS = 20
OWN = 8  # partitions broker 0 holds besides the hot one
EACH = 10  # partitions every other broker holds


def _hot_holder() -> Snapshot:
    """Twenty brokers of 100 GB. Partition 0 (one replica, on broker 0) holds 60 GB: the disk band tops out
    near 0.58 of a broker, so whoever holds it is out of the band. Broker 0 also holds eight partitions of
    5 GB: 1.0 of its disk, above θ = 0.8; giving four of them away would bring it to θ. Brokers 1-19 hold
    ten such partitions each (0.5, inside the band). Nothing carries CPU or network."""
    holders = [0] * (1 + OWN) + [1 + k // EACH for k in range((BROKERS - 1) * EACH)]
    n = len(holders)
    disk = np.array([60.0] + [5.0] * (n - 1)) * GB
    load = np.stack([np.zeros(n), disk, np.zeros(n), np.zeros(n)], axis=1)
    return Snapshot.build(
        broker_ids=list(range(BROKERS)), capacity=np.tile([100.0, 100 * GB, 100e6, 100.0], (BROKERS, 1)),
        topics=["t"], topic_idx=[0] * n, partition=list(range(n)), replicas=[[b] for b in holders],
        leader=holders, leader_load=load, follower_load=load,
    )


def _hot_leader() -> Snapshot:
    """Four brokers; partition 0 (replicas on brokers 0 and 1, led by 0) puts CPU and network-out 60 of 100
    on its leader and 1 on its follower; twelve light partitions (CPU and network-out 3) round the rest."""
    n = 13
    lead = np.zeros((n, 4))
    lead[:, CPU] = lead[:, NW_OUT] = [60.0] + [3.0] * (n - 1)
    lead[:, DISK] = GB
    follow = lead.copy()
    follow[:, CPU], follow[:, NW_OUT] = 1.0, 0.0
    replicas = [[0, 1]] + [[k % 4, (k + 1) % 4] for k in range(1, n)]
    return Snapshot.build(
        broker_ids=[0, 1, 2, 3], capacity=np.tile([100.0, 100 * GB, 100e6, 100.0], (4, 1)), topics=["t"],
        topic_idx=[0] * n, partition=list(range(n)), replicas=replicas, leader=[r[0] for r in replicas],
        leader_load=lead, follower_load=follow,
    )


def test_the_roles_of_a_hot_partition() -> None:
    lines, roles = bounds.hot_partitions(_hot_leader(), 0.1)
    assert len(lines) == 1 and "cpu 0.600" in lines[0]
    assert set(roles) == {(0, CPU, False), (0, NW_OUT, False)}  # the leader only: its follower is light
    lines, roles = bounds.hot_partitions(_hot_holder(), 0.1)
    assert len(lines) == 1 and roles == ((0, DISK, True),)  # on disk every replica is as heavy


def test_the_exemption_follows_the_leadership() -> None:
    snap = _hot_leader()
    st = State(snap, theta=0.8, eps=0.1, margin=1.0)
    st.exempt_roles(bounds.hot_partitions(snap, 0.1)[1])
    assert st.out_of_reach()[0, CPU] and st.out_of_reach()[0, NW_OUT]
    assert not st.out_of_reach()[1:].any()
    st.move_leadership(0, 1)
    assert st.out_of_reach()[1, CPU] and st.out_of_reach()[1, NW_OUT]
    assert not st.out_of_reach()[0].any()  # broker 0 no longer leads it: chased like any other
    assert st.violations()[0, CPU] > 0 and st.violations()[1, CPU] == 0.0
    st.move_replica(0, 1, 2)  # the leader's replica moves, and the leadership with it
    assert st.out_of_reach()[2, CPU] and not st.out_of_reach()[1].any()


def test_a_holder_above_theta_is_chased_down_to_what_the_role_puts_on_it() -> None:
    snap = _hot_holder()
    st = State(snap, theta=0.8, eps=0.1, margin=1.0)
    st.exempt_roles(bounds.hot_partitions(snap, 0.1)[1])
    assert st.violations()[0, DISK] == 0.0  # the band is not chased there
    v = st.hot_excess()
    assert v[0, DISK] == pytest.approx((1.0 - 0.8) / 0.8 * CAPACITY_WEIGHT)
    assert np.count_nonzero(v) == 1
    # a role heavier than θ: only what lies above the role itself counts
    low = State(snap, theta=0.5, eps=0.1, margin=1.0)
    low.exempt_roles(bounds.hot_partitions(snap, 0.1)[1])
    assert low.hot_excess()[0, DISK] == pytest.approx((1.0 - 0.6) / 0.5 * CAPACITY_WEIGHT)
    st.move_replica(1, 0, 1)
    st.move_replica(2, 0, 1)
    st.move_replica(3, 0, 2)
    st.move_replica(4, 0, 2)
    assert st.hot_excess()[0, DISK] == pytest.approx(0.0, abs=1e-12)  # at θ


def test_the_plan_brings_a_hot_holder_under_theta(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _hot_holder()
    r = plan(snap)
    assert not hard_violations(snap, r.after_snapshot)
    util = broker_loads(r.after_snapshot) / snap.capacity
    assert int(r.after_snapshot.replicas[0, 0]) == 0  # the hot partition itself stays (anywhere it is hot)
    assert util[0, DISK] <= 0.8 + 1e-9
    assert r.unresolved == ()
    # without the chase above θ the holder is never taken up, and the report names what is left
    module = importlib.import_module("kafka_balancer.planner.state")
    monkeypatch.setattr(module.State, "hot_excess", lambda self: np.zeros(self.load.shape))
    r0 = plan(snap)
    assert (broker_loads(r0.after_snapshot) / snap.capacity)[0, DISK] == pytest.approx(1.0)


def test_the_report_names_a_hot_holder_left_above_theta(monkeypatch: pytest.MonkeyPatch) -> None:
    # the move loop cannot take it (no destination may receive): the pair is reported, not hidden
    snap = _hot_holder()
    module = importlib.import_module("kafka_balancer.planner.plan")
    monkeypatch.setattr(module, "_balance", lambda st, *a, **k: [])
    monkeypatch.setattr(module, "_repair", lambda *a: None)
    r = plan(snap, polish_share=0)
    assert r.unresolved == ("broker 0 disk at 1.000 (target 0.525)",)
