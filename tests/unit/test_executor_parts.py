"""Executor pieces without a cluster: plan validation, throttle configs, journal replay."""

from __future__ import annotations

from kafka_balancer.executor.journal import Journal, replay
from kafka_balancer.executor.machine import Task
from kafka_balancer.executor.throttle import ThrottleConfigs, throttle_configs
from kafka_balancer.executor.validate import plan_problems
from kafka_balancer.executor.view import ClusterView, PartitionState, Reassignment
from kafka_balancer.model.plan_io import Plan, PlanEntry

VIEW = ClusterView(
    alive=frozenset({1, 2, 3}),
    partitions={("a", 0): PartitionState((1, 2), 1, (1, 2)), ("a", 1): PartitionState((2, 4), 2, (2,))},
    reassigning={("a", 1): Reassignment((2, 4, 3), (3,), (4,))},
)


def test_plan_problems_lists_each_fault():
    plan = Plan((
        PlanEntry("a", 0, (3, 1)),  # fine
        PlanEntry("zz", 0, (1, 2)),
        PlanEntry("a", 5, (1, 2)),
        PlanEntry("a", 0, (1, 2, 3)),
        PlanEntry("a", 1, (4, 2)),  # 4 is dead but already a replica; but a reassignment runs
    ))
    problems = plan_problems(plan, VIEW)
    assert any("topic 'zz' does not exist" in p for p in problems)
    assert any("has no partition 5 (it has 2)" in p for p in problems)
    assert any("replication factor would change from 2 to 3" in p for p in problems)
    assert any("a-1: a reassignment is already in progress" in p for p in problems)
    assert plan_problems(Plan((PlanEntry("a", 0, (3, 1)),)), VIEW) == []
    dead_dest = plan_problems(Plan((PlanEntry("a", 0, (4, 1)),)), VIEW)
    assert dead_dest == ["a-0: destination broker 4 is not alive"]
    assert plan_problems(Plan((PlanEntry("a", 0, (9, 1)),)), VIEW) == ["a-0: broker 9 does not exist"]


def test_throttle_lists_current_replicas_as_leaders_and_new_ones_as_followers():
    tasks = [Task(("a", 0), (1, 2), (3, 1), 10), Task(("a", 1), (2, 4), (4, 2), 10),
             Task(("b", 3), (2, 3), (1, 2), 10)]
    cfg = throttle_configs(tasks, 5_000_000)
    assert cfg.topics["a"] == {"leader.replication.throttled.replicas": "0:1,0:2",
                               "follower.replication.throttled.replicas": "0:3"}
    assert cfg.topics["b"]["follower.replication.throttled.replicas"] == "3:1"
    assert sorted(cfg.brokers) == [1, 2, 3]  # the reorder of a-1 touches no broker
    assert cfg.brokers[1]["leader.replication.throttled.rate"] == "5000000"
    assert ThrottleConfigs.from_dict(cfg.to_dict()) == cfg


def test_journal_round_trip_and_torn_last_line(tmp_path):
    j = Journal(tmp_path / "j.jsonl")
    j.append("start", plan=[["a", 0, [3, 1]]], original=[["a", 0, [1, 2]]], sizes=[["a", 0, 7]])
    j.append("throttle_set", throttle={"brokers": {"1": {"x": "1"}}, "topics": {}})
    j.append("submit", tps=[["a", 0]])
    with j.path.open("ab") as f:
        f.write(b'{"e": "moved", "tps": [["a"')  # crash mid-write
    st = j.state()
    assert st.open and st.submitted == {("a", 0)} and st.moved == set()
    assert st.plan == [(("a", 0), (3, 1))] and st.original == {("a", 0): (1, 2)} and st.sizes == {("a", 0): 7}
    assert st.throttle is not None and st.throttle.brokers == {1: {"x": "1"}}


def test_replay_finished_and_cancelled():
    base = [{"e": "start", "plan": [], "original": []}, {"e": "throttle_set",
                                                          "throttle": {"brokers": {}, "topics": {}}}]
    assert not replay([*base, {"e": "throttle_cleared"}, {"e": "finished"}]).open
    st = replay([*base, {"e": "cancelled"}])
    assert st.cancelled and not st.open
    assert replay([*base, {"e": "finished"}, {"e": "start", "plan": [], "original": []}]).open
