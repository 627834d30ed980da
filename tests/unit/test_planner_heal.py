"""Healing: with replicas on dead brokers and no brokers named to add or remove, a plan copies only what the
failure forces, places it where it balances best, and balances the rest by leadership alone."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kafka_balancer.model.snapshot import DISK, NW_IN, Snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.bounds import heal_sigma_floor
from kafka_balancer.planner.constraints import Constraints
from kafka_balancer.planner.invariants import hard_violations, mode_violations
from kafka_balancer.planner.metrics import evaluate
from kafka_balancer.planner.plan import heals
from kafka_balancer.report.table import plan_table
from kafka_balancer.sim.cluster import PRESETS, generate

GB = 1e9


def _snap(replicas: list[list[int]], disk: list[float], alive: list[bool], cap_disk: float = 100 * GB) -> Snapshot:
    """Equal brokers, one topic, leader = first replica; ``disk`` in GB per replica."""
    p, n = len(replicas), len(alive)
    d = np.asarray(disk) * GB
    lead = np.stack([np.full(p, 0.1), d, np.full(p, 1e3), np.full(p, 3e3)], axis=1)
    fol = np.stack([np.full(p, 0.05), d, np.full(p, 1e3), np.zeros(p)], axis=1)
    return Snapshot.build(
        broker_ids=list(range(n)), capacity=np.tile([100.0, cap_disk, 1.25e8, 1.25e8], (n, 1)), topics=["t"],
        topic_idx=[0] * p, partition=list(range(p)), replicas=replicas, leader=[r[0] for r in replicas],
        leader_load=lead, follower_load=fol, alive=alive,
    )


def test_heal_moves_only_the_dead_brokers_replicas_to_the_emptiest_brokers() -> None:
    # Broker 3 is dead and holds a replica of partitions 0 (20 GB) and 1 (4 GB). The live brokers hold
    # 34, 20 and 10 GB. Hand-checked: the larger copy goes first; broker 0 holds partition 0 already, and
    # broker 2 (10 -> 30 GB) is closer to the ideal than broker 1 (20 -> 40 GB). The 4 GB copy of partition 1
    # may go to broker 0 (34 -> 38 GB) or broker 2 (30 -> 34 GB): broker 2. Nothing else is copied.
    snap = _snap(
        [[0, 3], [1, 3], [0], [1], [2]],
        disk=[20, 4, 14, 16, 10],
        alive=[True, True, True, False],
    )
    assert heals(snap, Constraints())
    r = plan(snap)
    after = r.after_snapshot
    assert r.mode == "heal" and r.summary["mode"] == "heal"
    assert sorted(after.replicas[0].tolist()) == [0, 2]
    assert sorted(after.replicas[1].tolist()) == [1, 2]
    assert [sorted(x for x in row if x >= 0) for row in after.replicas[2:].tolist()] == [[0], [1], [2]]
    assert r.moved_bytes == pytest.approx(24 * GB)
    assert any("healing only" in w and "--remove-brokers 3" in w for w in r.warnings)
    assert "mode heal" in plan_table(r)
    assert "the failure forces 24.0 GB (1.00× the bound)" in plan_table(r)  # not a bound "to balance"
    assert mode_violations(snap, after, Constraints(), heal=True) == []


def test_the_heal_names_only_the_dead_brokers_it_copies_from() -> None:
    # broker 3 died holding replicas; broker 4 is dead too but long empty (decommissioned, or kept removed by
    # the service): the heal's warning names broker 3 alone
    snap = _snap([[0, 3], [1, 3], [0], [1], [2]], disk=[20, 4, 14, 16, 10], alive=[True, True, True, False, False])
    r = plan(snap)
    (line,) = [w for w in r.warnings if w.startswith("healing only")]
    assert line.startswith("healing only: the replicas on dead broker(s) 3 move") and "--remove-brokers 3 " in line


def test_no_heal_when_brokers_are_named_or_none_is_dead() -> None:
    snap = _snap([[0, 3], [1, 2]], disk=[5, 5], alive=[True, True, True, False])
    assert not heals(snap, Constraints(remove_brokers=frozenset({3})))
    assert not heals(snap, Constraints(add_brokers=frozenset({2})))
    assert not heals(snap, Constraints(leadership_only=True))
    assert not heals(_snap([[0, 1]], disk=[5], alive=[True, True]), Constraints())
    # a dead broker that holds nothing needs no heal
    assert not heals(_snap([[0, 1]], disk=[5], alive=[True, True, False]), Constraints())
    r = plan(snap, constraints=Constraints(remove_brokers=frozenset({3})))
    assert r.mode == "remove-brokers"


def test_heal_that_would_leave_a_broker_above_theta_balances_too() -> None:
    # brokers 0 and 1 hold 75 GB of 100 in 5 GB replicas, broker 2 holds 65 GB and partition X = [2, 3]
    # (10 GB); broker 3 is dead. X's copy can only go to 0 or 1: 85 GB > θ = 0.8. Moving a 5 GB replica
    # to broker 2 first makes room, so the plan is not a heal but a rebalance, and nothing ends above θ.
    reps = [[2, 3]] + [[0]] * 15 + [[1]] * 15 + [[2]] * 11
    snap = _snap(reps, disk=[10] + [5] * 41, alive=[True, True, True, False])
    assert heals(snap, Constraints())
    r = plan(snap)
    assert r.mode == "full"
    assert r.after.resources["disk"].over_theta == 0
    assert hard_violations(snap, r.after_snapshot) == []


@pytest.mark.parametrize("seed", range(4))
def test_heal_on_the_dead_broker_preset(seed: int) -> None:
    """48 brokers, one dead: the plan copies exactly the dead broker's replicas, nothing else, and leaves
    every resource and the replica counts no less even than before."""
    snap = generate(PRESETS["dead-broker"], seed=seed)
    r = plan(snap)
    assert r.mode == "heal"
    after = r.after_snapshot
    dead = np.nonzero(~snap.alive)[0]
    assert not np.isin(after.replicas, dead).any()
    disk = np.maximum(snap.leader_load[:, 1], snap.follower_load[:, 1])
    forced = float((np.isin(snap.replicas, dead).sum(axis=1) * disk).sum())
    assert r.moved_bytes == pytest.approx(forced)
    assert r.moved_bytes_lower_bound == pytest.approx(forced)  # a heal's floor: what the failure forces
    assert mode_violations(snap, after, Constraints(), heal=True) == []
    assert hard_violations(snap, after) == []
    for k, m in r.after.resources.items():
        assert m.sigma <= r.before.resources[k].sigma + 1e-12, k
        assert m.over_theta == 0
    # the heal's σ floor holds on the plan, and the plan says so when it is above η
    floor = heal_sigma_floor(snap, np.isin(snap.replicas, dead).sum(axis=1))
    assert set(floor) == {DISK, NW_IN}
    for res, key in ((DISK, "disk"), (NW_IN, "nw_in")):
        assert r.after.resources[key].sigma >= floor[res] - 1e-12
    said = [w for w in r.warnings if w.startswith("no heal can bring σ within η")]
    assert bool(said) == any(s > r.after.eta for s in floor.values())


def test_heal_under_a_byte_budget_copies_the_smallest_first_and_says_the_rest_in_one_line() -> None:
    snap = generate(PRESETS["dead-broker"], seed=1)
    dead = np.nonzero(~snap.alive)[0]
    disk = np.maximum(snap.leader_load[:, 1], snap.follower_load[:, 1])
    sizes = np.sort(disk[np.isin(snap.replicas, dead).any(axis=1)])
    budget = float(sizes[:20].sum()) + 1.0  # exactly the 20 smallest fit
    c = Constraints(max_bytes=budget)
    r = plan(snap, constraints=c)
    assert r.mode == "heal" and r.replica_moves == 20
    assert r.moved_bytes <= budget
    assert mode_violations(snap, r.after_snapshot, c, heal=True) == []
    lines = [w for w in r.warnings if "budget is spent" in w]
    assert len(lines) == 1 and lines[0].startswith(f"{sizes.size - 20} partition(s) keep replicas")
    assert len(r.extra["stranded"]) == sizes.size - 20


def test_heal_sigma_floor_pours_the_copies_into_the_emptiest_brokers() -> None:
    # live brokers hold 30, 50 and 70 GB of 100; the dead one holds a 30 GB replica of partition 0. Poured,
    # 20 GB lift broker 0 to 50 and the other 10 GB lift brokers 0 and 1 to 55: σ of 0.55, 0.55, 0.70
    snap = _snap([[0, 3], [1], [2]], disk=[30, 50, 70], alive=[True, True, True, False])
    floor = heal_sigma_floor(snap, np.array([1, 0, 0]))
    util = np.array([0.55, 0.55, 0.70])
    assert floor[DISK] == pytest.approx(util.std() / util.sum(), rel=1e-9)
    # the real heals cannot beat it: the copy can only go to broker 1 or 2 (broker 0 holds the partition)
    for b in (1, 2):
        healed = snap.with_assignment(np.array([[0, b], [1, -1], [2, -1]]), snap.leader)
        assert evaluate(healed).resources["disk"].sigma > floor[DISK]
    assert heal_sigma_floor(snap, np.zeros(3, dtype=np.int64)) == {}


@pytest.mark.parametrize("seed", range(12))
def test_heal_sigma_floor_is_below_every_heal(seed: int) -> None:
    """Small random clusters, one dead broker: every way to place its replicas on live brokers that hold
    none of the partition ends at or above the floor, on disk and on network-in."""
    rng = np.random.default_rng(seed)
    n, p = 5, 7
    reps = [sorted(rng.choice(n, size=2, replace=False).tolist()) for _ in range(p)]
    snap = _snap(reps, disk=rng.uniform(1, 20, p).round(2).tolist(), alive=[True] * (n - 1) + [False])
    dead = n - 1
    stranded = [i for i, row in enumerate(reps) if dead in row]
    floor = heal_sigma_floor(snap, np.array([int(dead in row) for row in reps]))
    if not stranded:
        assert floor == {}
        return
    choices = [[b for b in range(n - 1) if b not in reps[i]] for i in stranded]
    lowest = {"disk": np.inf, "nw_in": np.inf}
    for pick in itertools.product(*choices):
        rows = [list(row) for row in reps]
        for i, b in zip(stranded, pick, strict=True):
            rows[i] = [b if x == dead else x for x in rows[i]]
        m = evaluate(snap.with_assignment(np.array(rows), snap.leader))
        for key in lowest:
            lowest[key] = min(lowest[key], m.resources[key].sigma)
    assert lowest["disk"] >= floor[DISK] - 1e-12
    assert lowest["nw_in"] >= floor[NW_IN] - 1e-12
