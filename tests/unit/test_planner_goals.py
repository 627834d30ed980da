"""Count goals and the goal policy (issue 13 §3): each goal's measure by hand, each goal's strategy on a
small case it alone must fix, and the policy's order and guards."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import Derived, Snapshot, broker_loads, replica_counts, total_load
from kafka_balancer.planner import plan
from kafka_balancer.planner.constraints import Constraints
from kafka_balancer.planner.count_goals import make_goal
from kafka_balancer.planner.invariants import hard_violations
from kafka_balancer.planner.policy import DEFAULT_GOALS, parse_goals
from kafka_balancer.planner.state import State
from kafka_balancer.sim.cluster import PRESETS, generate


def _snap(replicas: list[list[int]], n: int, *, racks: list[str | None] | None = None,
          nw_out: float = 1e5, topics: list[str] | None = None) -> Snapshot:
    p = len(replicas)
    lead = np.tile([1.0, 1e9, 1e5, nw_out], (p, 1))
    fol = np.tile([0.5, 1e9, 1e5, 0.0], (p, 1))
    names = topics if topics is not None else ["t"] * p
    uniq = sorted(set(names))
    return Snapshot.build(
        broker_ids=list(range(n)), capacity=np.tile([100.0, 1e12, 1.25e8, 1.25e8], (n, 1)), topics=uniq,
        topic_idx=[uniq.index(t) for t in names], partition=list(range(p)), replicas=replicas,
        leader=[r[0] for r in replicas], leader_load=lead, follower_load=fol, racks=racks,
    )


def test_replica_count_goal_evens_counts() -> None:
    # 12, 8 and 4 replicas (mean 8, band 7..9): the goal alone moves three replicas from 0 to 2, and stops
    # there (replicas cost bytes; inside the band is enough)
    reps = [[0]] * 12 + [[1]] * 8 + [[2]] * 4
    r = plan(_snap(reps, 3), goals="replica_count")
    assert np.bincount(r.after_snapshot.replicas.ravel(), minlength=3).tolist() == [9, 8, 7]
    assert r.replica_moves == 3
    g = r.goals[0]
    assert (g.name, g.before, g.after, g.met_after) == ("replica_count", 6.0, 0.0, True)  # 12-9 + 7-4


def test_leader_count_goal_moves_only_leadership() -> None:
    reps = [[0, 1, 2]] * 9  # broker 0 leads all nine
    r = plan(_snap(reps, 3), goals="leader_count")
    assert np.bincount(r.after_snapshot.leader, minlength=3).tolist() == [3, 3, 3]
    assert r.replica_moves == 0 and r.leader_moves == 6


def test_rack_repair_moves_a_replica_to_the_missing_rack() -> None:
    # t-0 has both replicas in rack a while rack b has a broker that holds none
    snap = _snap([[0, 1], [2, 0]], 3, racks=["a", "a", "b"])
    r = plan(snap, goals="rack_repair")
    racks = [snap.rack_names[snap.rack_idx[b]] for b in r.after_snapshot.replicas[0]]
    assert sorted(racks) == ["a", "b"]
    assert r.goals[0].before == 1.0 and r.goals[0].after == 0.0
    assert hard_violations(snap, r.after_snapshot) == []


def test_rack_repair_under_the_default_policy_runs_guarded() -> None:
    # rack repair below seed 001's goals runs with the resource guard on; combining the source's guard with
    # the destinations' mask once crashed every default plan that had a partition to repair. Here the only
    # repair (onto broker 2) would push it out of its distribution band, so the guard must refuse it.
    snap = _snap([[0, 1], [2, 0], [1, 2]], 3, racks=["a", "a", "b"])
    r = plan(snap)
    rr = next(g for g in r.goals if g.name == "rack_repair")
    assert rr.before == 1.0 and rr.after == 1.0
    assert hard_violations(snap, r.after_snapshot) == []
    unguarded = plan(snap, goals="rack_repair")  # alone, nothing guards it and it repairs
    assert unguarded.goals[0].after == 0.0


def test_potential_nw_out_by_hand() -> None:
    # 2 brokers of 1.25e8 B/s; one partition whose leader serves 1.0e8 B/s, replicas on both:
    # either broker would serve 0.8 of its capacity if it led everything -> at θ = 0.8 exactly met;
    # a second such partition makes it 1.6 each: violation (1.6 - 0.8) × 2 = 1.6
    snap = _snap([[0, 1], [1, 0]], 2, nw_out=1.0e8)
    st = State(snap, 0.8, 0.1, 0.97)
    goal = make_goal("potential_nw_out", 0.8)
    assert goal.violation(st) == pytest.approx(1.6)
    assert "potential network-out averages 1.600" in (goal.proof(st) or "")


def test_topic_spread_by_hand_and_fixed_by_swaps() -> None:
    # topic x: 4 replicas all on broker 0 of 4 (mean 1, band 0..2: two too many); topic y: 4 on broker 1..3
    snap = _snap([[0]] * 4 + [[1], [2], [3], [1]], 4, topics=["x"] * 4 + ["y"] * 4)
    st = State(snap, 0.8, 0.1, 0.97)
    assert make_goal("topic_spread", 0.8).violation(st) == 2.0
    r = plan(snap, goals="replica_count,topic_spread")
    # replica counts stay inside their band (the higher goal) and topic x spreads out
    assert r.goals[0].met_after
    assert r.goals[1].after < r.goals[1].before


def test_policy_parsing() -> None:
    assert parse_goals(None) == DEFAULT_GOALS
    assert parse_goals("leader_count, capacity") == ("leader_count", "capacity")
    for bad, msg in (("", "--goals is empty"), ("capacity,foo", "unknown goal 'foo'"),
                     ("capacity,capacity", "listed twice")):
        with pytest.raises(InputError, match=msg):
            parse_goals(bad)


def test_every_goal_reported_in_policy_order() -> None:
    snap = generate(PRESETS["racks48"], seed=0)
    r = plan(snap)
    assert [g.name for g in r.goals] == list(DEFAULT_GOALS)
    assert [g.priority for g in r.goals] == list(range(1, len(DEFAULT_GOALS) + 1))
    assert [g["goal"] for g in r.summary["goals"]] == list(DEFAULT_GOALS)


@pytest.mark.parametrize("preset", ["racks48", "new-brokers", "dead-broker"])
def test_lower_goals_never_break_seed_001_goals(preset: str) -> None:
    """The count goals come after seed 001's: where seed 001's goals are met without them, they are met with
    them too, and the counts end more even than they start."""
    snap = generate(PRESETS[preset], seed=0)
    dead = frozenset(int(b) for b in snap.broker_ids[~snap.alive])
    heal_and_balance = Constraints(remove_brokers=dead) if dead else None  # not a heal: balance too
    alone = plan(snap, goals="capacity,distribution", constraints=heal_and_balance)
    full = plan(snap, constraints=heal_and_balance)
    assert alone.after.balanced() and full.after.balanced()
    assert hard_violations(snap, full.after_snapshot) == []
    by = {g.name: g for g in full.goals}
    if snap.alive.all():  # with a dead broker, 'before' counts exclude the replicas that must move in
        assert by["replica_count"].after <= by["replica_count"].before
        assert by["leader_count"].after <= by["leader_count"].before
    counts = replica_counts(full.after_snapshot)[snap.alive]
    alone_counts = replica_counts(alone.after_snapshot)[snap.alive]
    assert counts.std() <= alone_counts.std()


def test_a_count_goal_placed_first_guards_the_resource_loop() -> None:
    # replica counts first: the resource goals may not unbalance them again
    snap = generate(PRESETS["racks48"], seed=1)
    r = plan(snap, goals="replica_count,capacity,distribution")
    assert r.goals[0].name == "replica_count"
    assert r.goals[0].after <= r.goals[0].before
    assert hard_violations(snap, r.after_snapshot) == []


def test_derived_view_matches_the_functions() -> None:
    snap = generate(PRESETS["dead-broker"], seed=2)
    v = Derived(snap)
    assert np.allclose(v.loads, broker_loads(snap))
    assert np.allclose(v.totals, total_load(snap))
    assert np.array_equal(v.replica_counts, replica_counts(snap))
    assert sum(len(r) for r in v.rows_by_broker) == snap.n_replicas
    assert v.topic_counts.sum() == snap.n_replicas
    lead = snap.leader_load[:, 3]
    assert np.isclose(v.potential_nw_out.sum(), float((lead * snap.rf).sum()))


def test_a_count_goal_raised_by_the_goals_above_it_says_so() -> None:
    # two brokers, broker 1 three times broker 0 on every resource; twelve equal partitions, six on each.
    # Distribution (above replica_count) moves replicas to broker 1 until both are equally used: 3 against 9
    # replicas, so the replica-count goal starts its turn worse than the snapshot, and cannot undo that
    # without breaking the band
    p = 12
    lead = np.tile([1.0, 10e9, 1e5, 1e5], (p, 1))
    fol = np.tile([0.5, 10e9, 1e5, 0.0], (p, 1))
    cap = np.array([[100.0, 1000e9, 1.25e8, 1.25e8], [300.0, 3000e9, 3.75e8, 3.75e8]])
    snap = Snapshot.build(broker_ids=[0, 1], capacity=cap, topics=["t"], topic_idx=[0] * p,
                          partition=list(range(p)), replicas=[[i % 2] for i in range(p)],
                          leader=[i % 2 for i in range(p)], leader_load=lead, follower_load=fol)
    r = plan(snap, goals=("capacity", "distribution", "replica_count"))
    counts = replica_counts(r.after_snapshot)
    assert sorted(counts.tolist()) == [3, 9]
    rc = next(g for g in r.goals if g.name == "replica_count")
    assert rc.before == 0 and rc.after > 0
    assert f"; {rc.after:g} when its turn came, raised by the moves before it" in rc.detail, rc.detail
    # a goal its predecessors did not raise says nothing of the kind
    dist = next(g for g in r.goals if g.name == "distribution")
    assert "when its turn came" not in dist.detail
