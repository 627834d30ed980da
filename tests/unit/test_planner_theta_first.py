"""θ before the band, where a hot role puts the band out of reach.

A hot role's holder is out of its band for good, so the band's rule (no goal that holds may break) no longer
keeps it under θ: the combined violation there is never zero. Two rules close that gap. While the move loop
brings such a holder under θ it judges in θ-first mode (only θ may break, and a point above θ outweighs any
band term), so a holder pinned at the bottom of another band can still give up what keeps it above θ. And
no move may take a pair whose band is out of reach above θ, or further above it, so the band's chase cannot
undo that work."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from kafka_balancer.model.snapshot import DISK, NW_IN, Snapshot, broker_loads
from kafka_balancer.planner import bounds, plan
from kafka_balancer.planner.invariants import hard_violations
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies import replica, swap

GB, MB = 1e9, 1e6
BROKERS = 20
EACH = 10


def _pinned_holder() -> Snapshot:
    """Twenty brokers of 100 GB disk and 100 MB/s network-in. Partition 0 (one replica, on broker 0) holds
    60 GB and no traffic: above the disk band top (0.569) wherever it is. Broker 0 also holds partition 1:
    25 GB and 38 MB/s, so broker 0 sits at disk 0.85, above θ = 0.8, and at network-in 0.38, just inside the
    band (0.36-0.44). Brokers 1-19 hold ten partitions of 5 GB and 4 MB/s each (disk 0.5, network-in 0.4).

    Giving partition 1 away is the only way under θ, and it breaks two bands: broker 0's network-in, and the
    disk of whichever broker takes 25 GB."""
    holders = [0, 0] + [1 + k // EACH for k in range((BROKERS - 1) * EACH)]
    n = len(holders)
    disk = np.array([60.0, 25.0] + [5.0] * (n - 2)) * GB
    nw_in = np.array([0.0, 38.0] + [4.0] * (n - 2)) * MB
    load = np.stack([np.zeros(n), disk, nw_in, np.zeros(n)], axis=1)
    return Snapshot.build(
        broker_ids=list(range(BROKERS)), capacity=np.tile([100.0, 100 * GB, 100 * MB, 100.0], (BROKERS, 1)),
        topics=["t"], topic_idx=[0] * n, partition=list(range(n)), replicas=[[b] for b in holders],
        leader=holders, leader_load=load, follower_load=load,
    )


def _state(snap: Snapshot) -> State:
    st = State(snap, theta=0.8, eps=0.1, margin=1.0)
    st.exempt_roles(bounds.hot_partitions(snap, 0.1)[1])
    return st


def test_theta_first_lets_the_band_give_way_and_only_theta_count() -> None:
    st = _state(_pinned_holder())
    u0 = st.load[0] / st.cap[0]
    u_off = (st.load[0] - st.role_load(1, 0)) / st.cap[0]  # broker 0 without partition 1: disk 0.60, nw_in 0
    u1 = st.load[1] / st.cap[1]
    u_on = (st.load[1] + st.role_load(1, 0)) / st.cap[1]  # broker 1 with it: disk 0.75, nw_in 0.78
    bad_src, _ = st.judge(u0, u_off)
    bad_dst, _ = st.judge(u1, u_on)
    assert bool(bad_src) and bool(bad_dst)  # normal mode: each side breaks a band that held
    assert st.accept([(0, -st.role_load(1, 0)), (1, st.role_load(1, 0))]) is None
    st.theta_first = True
    bad_src, gain_src = st.judge(u0, u_off)
    bad_dst, gain_dst = st.judge(u1, u_on)
    assert not bad_src and not bad_dst
    assert float(gain_src + gain_dst) > 0  # 0.05 above θ outweighs both bands
    # a destination pushed above θ is still refused, and the scalar path agrees with the numpy one
    heavy = np.array([0.0, 35 * GB, 0.0, 0.0])
    assert bool(st.judge(u1, (st.load[1] + heavy) / st.cap[1])[0])
    assert st.accept([(0, -heavy), (1, heavy)]) is None
    assert st.accept([(0, -st.role_load(1, 0)), (1, st.role_load(1, 0))]) is not None


def test_no_move_lifts_a_pair_whose_band_is_out_of_reach_above_theta() -> None:
    st = _state(_pinned_holder())
    st.move_replica(1, 0, 1)  # broker 0: disk 0.60, network-in 0 (far below its band)
    assert st.out_of_reach()[0, DISK] and not st.out_of_reach()[0, NW_IN]
    back = st.role_load(1, 1)  # bringing partition 1 back fixes two bands, and takes broker 0 to 0.85
    u0, u_back = st.load[0] / st.cap[0], (st.load[0] + back) / st.cap[0]
    bad, gain = st.judge(u0, u_back)
    assert not bool(bad) and float(gain) + float(st.judge(st.load[1] / st.cap[1],
                                                         (st.load[1] - back) / st.cap[1])[1]) > 0
    assert bool(st.judge(u0, u_back, rows=0)[0])  # what the band alone would take, θ refuses
    assert st.accept([(1, -back), (0, back)]) is None
    small = st.role_load(2, 1)  # 5 GB: broker 0 to disk 0.65, still under θ
    assert not bool(st.judge(u0, (st.load[0] + small) / st.cap[0], rows=0)[0])
    # the mask follows the partition: once the hot replica moves, broker 0 is held to nothing more than any
    st.move_replica(0, 0, 2)
    assert not st.out_of_reach()[0].any() and st.out_of_reach()[2, DISK]


def test_the_plan_brings_a_pinned_holder_under_theta_and_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _pinned_holder()
    module = importlib.import_module("kafka_balancer.planner.state")
    moves: list[int] = []
    move = module.State.move_replica

    def counted(self: State, p: int, src: int, dst: int) -> None:
        moves.append(p)
        move(self, p, src, dst)

    monkeypatch.setattr(module.State, "move_replica", counted)
    r = plan(snap, time_limit=20)
    assert not hard_violations(snap, r.after_snapshot)
    util = broker_loads(r.after_snapshot) / snap.capacity
    assert util.max() <= 0.8 + 1e-9  # nothing above θ, the holder included
    assert int(r.after_snapshot.replicas[0, 0]) == 0
    # the band's chase does not bring partition 1 back (without the θ rule it did, thousands of times over,
    # until the time limit)
    assert moves.count(1) <= 4 and len(moves) < 200
    # in normal mode the holder cannot give partition 1 away, and stays above θ
    monkeypatch.setattr(module.State, "theta_first", property(lambda self: False, lambda self, v: None), raising=False)
    r0 = plan(snap, time_limit=20)
    assert (broker_loads(r0.after_snapshot) / snap.capacity)[0, DISK] == pytest.approx(0.85)


@pytest.mark.parametrize("strategy", ["shed", "attract", "swap"])
def test_replica_moves_keep_a_pinned_holder_under_theta(strategy: str) -> None:
    # partition 1 has gone to broker 1 (network-in 0.78, above its band; broker 0 at network-in 0, below)
    st = _state(_pinned_holder())
    st.move_replica(1, 0, 1)
    if strategy == "shed":  # broker 1 sheds network-in: broker 0 is the least loaded destination there
        moved = replica.shed(st, 1, NW_IN)
    elif strategy == "attract":  # broker 0 attracts network-in: broker 1 is the most loaded source there
        moved = replica.attract(st, 0, NW_IN)
    else:  # a swap (or a single move) between broker 1 and its partners, broker 0 first
        moved = swap.shed(st, 1, NW_IN)
    assert moved
    assert 0 not in st.rep[1]  # partition 1 would take broker 0 back to disk 0.85
    assert st.load[0, DISK] / st.cap[0, DISK] <= 0.8 + 1e-9
