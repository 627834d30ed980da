"""The repair pass: a broker above the band on one resource but at the bottom of it on another cannot give up
its heaviest replicas, so the move loop gives it up; the repair pass weighs the replicas it can give up."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.invariants import hard_violations
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies import replica

GB = 1e9
HEAVY, LIGHT = 30, 24  # on broker 0: heavy replicas (2 GB, 2 MB/s in) and light ones (1 MB, 1 MB/s in)


def _pinned() -> Snapshot:
    """Broker 0 holds 60.02 GB and 84 MB/s of network-in; brokers 1-3 one 67.9 GB, 50 MB/s partition each.
    Means: disk 65.9 GB, network-in 58.5 MB/s. At the planner's 0.97 aim the disk band's floor is 0.903 ×
    65.9 = 59.5 GB, so broker 0 cannot give up a heavy replica (58.0 GB after) but can give up every light
    one; its network-in is far above the band's top (64.2 MB/s), which 20 light replicas leaving would meet.
    Every partition has one replica; CPU is the same on every broker and light replicas carry none; nothing
    serves network-out."""
    disk = [2.0] * HEAVY + [0.001] * LIGHT + [67.9] * 3
    nw_in = [2.0] * HEAVY + [1.0] * LIGHT + [50.0] * 3
    p = len(disk)
    cpu = [10.0 / HEAVY] * HEAVY + [0.0] * LIGHT + [10.0] * 3
    load = np.stack([cpu, np.asarray(disk) * GB, np.asarray(nw_in) * 1e6, np.zeros(p)], axis=1)
    replicas = [[0]] * (HEAVY + LIGHT) + [[1], [2], [3]]
    return Snapshot.build(
        broker_ids=[0, 1, 2, 3], capacity=np.tile([100.0, 100 * GB, 125e6, 125e6], (4, 1)), topics=["t"],
        topic_idx=[0] * p, partition=list(range(p)), replicas=replicas, leader=[r[0] for r in replicas],
        leader_load=load, follower_load=load,
    )


def test_a_second_round_weighs_only_what_the_source_can_give_up() -> None:
    snap = _pinned()
    st = State(snap, theta=0.8, eps=0.1, margin=0.97)
    lo_disk = float(st.distribution_goal.lo[1]) * 100 * GB
    assert 58.1 * GB < lo_disk < 59.99 * GB  # the premise: heavy replicas are pinned, light ones are free
    assert not replica.shed(st, 0, 2)  # the 24 candidates weighed are all heavy: the source refuses each
    st.sift = True
    assert replica.shed(st, 0, 2)
    moved = [p for p in range(snap.n_partitions) if st.rep[p, 0] != snap.replicas[p, 0]]
    assert len(moved) == 1 and moved[0] >= HEAVY  # a light replica
    assert st.load[0, 1] >= lo_disk


def test_the_plan_repairs_what_the_move_loop_gave_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each attempt moves some light replicas (brokers 1-3 attract them) and then gives broker 0's network-in
    # up. The last one wins: its narrowest aim already counts broker 0's disk as below the band, so it also
    # moved two heavy replicas. The repair pass then sheds light replicas until network-in is in the band.
    snap = _pinned()
    r = plan(snap)
    assert not any(u.startswith("broker 0 nw_in") for u in r.unresolved)
    assert r.after.resources["nw_in"].max_gamma <= 0.1 + 1e-9
    assert hard_violations(snap, r.after_snapshot) == []
    monkeypatch.setattr(importlib.import_module("kafka_balancer.planner.plan"), "_repair", lambda *a: None)
    left = plan(snap)
    assert any(u.startswith("broker 0 nw_in") for u in left.unresolved)
    light_moved = [int((x.after_snapshot.replicas[HEAVY : HEAVY + LIGHT, 0] != 0).sum()) for x in (r, left)]
    assert light_moved[0] > light_moved[1]


def test_count_goals_ranked_above_the_resources_guard_the_repair(monkeypatch: pytest.MonkeyPatch) -> None:
    # With replica count first, that goal evens the counts (54 / 1 / 1 / 1 -> 13..16 each) before any
    # resource move, and then guards every later move: the repair, with twelve pairs left outside the band
    # to work on, may not take a broker's count out of its band either
    module = importlib.import_module("kafka_balancer.planner.plan")
    seen: list[tuple[float, float]] = []
    real = module._repair

    def watched(st: State, cfg: object, deadline: float) -> None:
        goal = module.make_goal("replica_count", 0.8)
        before = goal.violation(st)
        real(st, cfg, deadline)
        seen.append((before, goal.violation(st)))
        assert st.guards == [] and not st.sift

    monkeypatch.setattr(module, "_repair", watched)
    r = plan(_pinned(), goals="replica_count,capacity,distribution")
    assert len(seen) == 1 and seen[0] == (0.0, 0.0)
    assert r.unresolved  # what the repair had to work on
    counts = next(g for g in r.goals if g.name == "replica_count")
    assert counts.after == 0.0
