"""Count goals never break seed 001's goals as measured: a step that does is undone, its partitions are
kept out of the goal's later steps, and the goal goes on (planner/step_log.py)."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner import PlanResult, plan
from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.goals import DistributionGoal
from kafka_balancer.planner.metrics import evaluate
from kafka_balancer.planner.state import State
from kafka_balancer.planner.step_log import StepLog, run_holding
from kafka_balancer.sim.cluster import PRESETS, generate


def _snap() -> Snapshot:
    """Three equal brokers; partitions 0-3 with one replica each: 0 and 1 on broker 0, 2 on 1, 3 on 2."""
    p = 4
    lead = np.tile([1.0, 10.0, 1.0, 1.0], (p, 1))
    return Snapshot.build(
        broker_ids=[0, 1, 2], capacity=np.tile([100.0, 100.0, 100.0, 100.0], (3, 1)), topics=["t"],
        topic_idx=[0] * p, partition=list(range(p)), replicas=[[0], [0], [1], [2]], leader=[0, 0, 1, 2],
        leader_load=lead, follower_load=lead * 0.5,
    )


def test_a_step_that_breaks_the_check_is_undone_and_its_partitions_are_frozen_for_the_goal() -> None:
    st = State(_snap(), 0.8, 0.1, 0.97)
    before = (st.rep.copy(), st.ldr.copy(), st.load.copy())
    frozen = st.frozen
    seen_frozen: list[bool] = []

    def improve(share: Budget) -> int:
        # step 1: partition 0 from broker 0 to 1 (allowed); step 2: partition 2 from 1 to 2 (breaks the
        # check below); step 3: was partition 2 frozen for the goal after step 2 was undone?
        assert share.take()
        st.move_replica(0, 0, 1)
        assert share.take()
        st.move_replica(2, 1, 2)
        assert share.take()
        seen_frozen.append(bool(st.frozen[2]))
        return 2

    def holds() -> bool:
        return int(st.rep[2, 0]) != 2  # "partition 2 may not end on broker 2"

    kept, dropped = run_holding(StepLog(10, float("inf"), st, holds), improve)
    assert (kept, dropped) == (1, 1)
    assert st.rep[:, 0].tolist() == [1, 0, 1, 2]  # step 1 stays, step 2 is undone
    assert st.ldr.tolist() == [1, 0, 1, 2]
    assert seen_frozen == [True]
    assert st.frozen is frozen and not st.frozen.any()  # the goal's freezes end with it, the shared mask untouched
    assert st.journal is None
    # the loads follow the assignment
    np.testing.assert_allclose(st.load[0], before[2][0] - st.L[0])
    np.testing.assert_allclose(st.load[1], before[2][1] + st.L[0])
    np.testing.assert_allclose(st.load[2], before[2][2])


def test_steps_that_hold_are_all_kept() -> None:
    st = State(_snap(), 0.8, 0.1, 0.97)

    def improve(share: Budget) -> int:
        assert share.take()
        st.move_replica(1, 0, 2)
        return 1

    assert run_holding(StepLog(10, float("inf"), st, lambda: True), improve) == (1, 0)
    assert st.rep[1, 0] == 2


def test_the_band_towards_the_mean_is_cut_only_where_asked() -> None:
    g = DistributionGoal.around(np.array([0.5, 0.5]), 0.1, 0.8, 1.0)
    c = g.towards_mean(np.array([0.52, 0.52]), 0.1, np.array([True, False]))
    np.testing.assert_allclose(c.lo, [0.468, 0.45])
    np.testing.assert_allclose(c.hi, [0.55, 0.55])
    # no overlap: the band around the mean alone
    far = g.towards_mean(np.array([0.7, 0.5]), 0.1, np.array([True, True]))
    np.testing.assert_allclose([far.lo[0], far.hi[0]], [0.63, 0.77])


def _cv(counts: np.ndarray) -> float:
    return float(counts.std() / counts.mean())


@pytest.mark.parametrize("seed", [2, 3])
def test_hetero_count_goals_keep_their_steps_and_the_balance(seed: int) -> None:
    # brokers of unequal size: before step_log, a count goal whose steps took a measured γ just above ε had
    # all of its steps undone, and the counts ended far more uneven than they began (replica-count CV 0.172
    # and 0.207, leader-count CV 0.173 and 0.232 on seeds 2 and 3; the snapshots' are 0.037-0.068 and
    # 0.058-0.157). Now the plan stays balanced and both CVs end under 0.07 (seed 2: both bands met).
    snap = generate(PRESETS["hetero"], seed=seed)
    res = plan(snap)
    after = res.after_snapshot
    assert evaluate(after).balanced()
    met = {g.name: g.met_after for g in res.goals}
    assert met["capacity"] and met["distribution"]
    rep = after.replicas[after.replicas >= 0]
    assert _cv(np.bincount(rep, minlength=after.n_brokers)) < 0.07
    assert _cv(np.bincount(after.leader[after.leader >= 0], minlength=after.n_brokers)) < 0.07
    if seed == 2:
        assert met["replica_count"] and met["leader_count"]


def test_hetero_out_of_reach_count_goals_take_no_pair_out_of_the_band() -> None:
    # seed 0: balance is proven out of reach (a rack-spread bound), so seed 001's goals never hold and the
    # balanced-or-not check above does not apply. The count goals then ran on the state's bands alone, and
    # with brokers of unequal size the pairs outside ε as measured (γ around the mean utilisation) went
    # from 47 after balancing to 55 after the count goals. Now a step that takes a pair that was within θ
    # and ε out of them is undone: the count goals leave the 47 as they are.
    snap = generate(PRESETS["hetero"], seed=0)
    balanced_only = plan(snap, goals="capacity,distribution")
    full = plan(snap)

    def outside(res: PlanResult) -> np.ndarray:
        met = evaluate(res.after_snapshot)
        return np.stack([met.resources[r].gamma > 0.1 + 1e-12 for r in met.resources], axis=1)

    before, after = outside(balanced_only), outside(full)
    assert int(before.sum()) == 47
    assert not np.any(after & ~before)  # no pair newly outside
    assert any(g.name == "leader_count" and "dropped" in g.detail for g in full.goals)


def _snap_rf2() -> Snapshot:
    """Three equal brokers; partition 0 on broker 0 alone, partition 1 on brokers 0 and 1 (led by 0)."""
    lead = np.tile([1.0, 10.0, 1.0, 1.0], (2, 1))
    return Snapshot.build(
        broker_ids=[0, 1, 2], capacity=np.tile([100.0, 100.0, 100.0, 100.0], (3, 1)), topics=["t"],
        topic_idx=[0, 0], partition=[0, 1], replicas=[[0, -1], [0, 1]], leader=[0, 0],
        leader_load=lead, follower_load=lead * 0.5,
    )


def test_move_replicas_is_all_or_none_and_leaves_budget_and_journal_as_they_were() -> None:
    st = State(_snap_rf2(), 0.8, 0.1, 0.97)
    st.journal = [(1, 0, 0, 0)]  # an earlier change, kept
    rep, ldr, load = st.rep.copy(), st.ldr.copy(), st.load.copy()
    copied, budget, counts = st.copied, st.byte_budget, st.rcount.copy()
    # the second step is refused only because the first put a replica of partition 1 on broker 2
    assert not st.move_replicas([(1, 0, 2), (1, 1, 2)])
    assert (st.rep == rep).all() and (st.ldr == ldr).all() and (st.rcount == counts).all()
    np.testing.assert_allclose(st.load, load)
    assert (st.copied, st.byte_budget) == (copied, budget)
    assert st.journal == [(1, 0, 0, 0)]
    # steps that all pass are all made, and journalled
    assert st.move_replicas([(1, 0, 2), (0, 0, 1)])
    assert st.rep[1].tolist() == [2, 1] and st.rep[0, 0] == 1
    assert st.journal == [(1, 0, 0, 0), (0, 1, 0, 2), (0, 0, 0, 1)]
