"""Detectors and the anomaly book: pure functions over observations and metrics, checked by hand."""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.metrics import Metrics, resource_metrics
from kafka_balancer.serve.anomaly import Anomaly, AnomalyState, Finding
from kafka_balancer.serve.book import AnomalyBook
from kafka_balancer.serve.detectors import broker_failure, disk, goal_violation, leaders, new_brokers
from kafka_balancer.serve.observation import Observation, Replicas

S = AnomalyState


def obs(alive: set[int], parts: dict[tuple[str, int], tuple[tuple[int, ...], int, tuple[int, ...]]],
        ts: float = 0.0) -> Observation:
    return Observation(ts, frozenset(alive), {b: f"r{b}" for b in alive},
                       {tp: Replicas(*v) for tp, v in parts.items()})


def test_dead_broker_with_replicas_is_found_and_evacuated_one_is_not() -> None:
    o = obs({1, 2}, {("t", 0): ((3, 1), 1, (1,)), ("t", 1): ((3, 2), -1, ())})
    f = broker_failure.detect(o, frozenset({1, 2, 3, 4}), {3: 5.0})
    assert [x.key for x in f] == ["broker-3"]  # broker 4 is dead too but holds nothing
    assert f[0].evidence["replicas"] == 2 and f[0].evidence["offline_count"] == 1 and f[0].since == 5.0


def test_new_broker_only_when_others_hold_replicas() -> None:
    assert [x.key for x in new_brokers.detect(obs({1, 2, 3}, {("t", 0): ((1, 2), 1, (1, 2))}))] == ["broker-3"]
    assert new_brokers.detect(obs({1, 2, 3}, {})) == []


def test_goal_violation_names_the_resources_and_why() -> None:
    ok = resource_metrics(np.array([0.5, 0.5]), 0.8, 0.1)
    bad = resource_metrics(np.array([0.2, 0.9]), 0.8, 0.1)
    f = goal_violation.detect(Metrics(2, 0.8, 0.1, 0.05, {"cpu": ok, "disk": bad}))
    assert f[0].evidence["resources"] == ["disk"]
    assert "above θ" in f[0].evidence["why"]["disk"] and "max γ" in f[0].evidence["why"]["disk"]
    assert goal_violation.detect(Metrics(2, 0.8, 0.1, 0.05, {"cpu": ok})) == []


def test_disk_above_theta_per_broker() -> None:
    assert [x.evidence["broker"] for x in disk.detect([4, 5, 6], np.array([0.81, 0.8, 0.95]), 0.8)] == [4, 6]


def test_preferred_leader_lost_only_when_preferred_is_alive_and_in_sync() -> None:
    o = obs({1, 2, 3}, {("t", 0): ((1, 2), 2, (1, 2)),    # lost: 1 is alive and in sync
                        ("t", 1): ((1, 2), 2, (2,)),      # 1 not in sync: an election would fail
                        ("t", 2): ((4, 2), 2, (2,)),      # 4 dead
                        ("t", 3): ((3, 1), 3, (3, 1))})   # fine
    assert leaders.lost(o) == [("t", 0)]


def test_flapping_broker_is_ignored_and_a_dead_one_confirmed_after_grace() -> None:
    book = AnomalyBook({"broker_failure": 60.0})
    f = Finding("broker_failure", "broker-3", {"broker": 3}, since=0.0)
    assert [a.state for a in book.update(["broker_failure"], [f], 0.0)] == [S.WAITING]
    book.update(["broker_failure"], [f], 30.0)
    (a,) = book.update(["broker_failure"], [], 40.0)  # back after 40 s < 60 s
    assert a.state is S.IGNORED and "flapping" in a.reason and not a.open
    # dies again: a new anomaly; this time it stays dead past the grace period
    book.update(["broker_failure"], [Finding("broker_failure", "broker-3", {"broker": 3}, since=100.0)], 100.0)
    (b,) = book.update(["broker_failure"], [Finding("broker_failure", "broker-3", {"broker": 3}, since=100.0)],
                       160.5)
    assert b.state is S.DETECTED and b.id != a.id
    assert [x.id for x in book.open()] == [b.id]


def test_book_only_clears_the_types_evaluated_and_leaves_fixing_to_the_execution() -> None:
    book = AnomalyBook({})
    book.update(["disk"], [Finding("disk", "broker-1", {"broker": 1})], 0.0)
    a = book.open()[0]
    assert a.state is S.DETECTED
    assert book.update(["leaders"], [], 1.0) == []  # another detector's evaluation clears nothing
    book.move(a.id, S.FIXING, 2.0, "execution e1", execution="e1")
    assert book.update(["disk"], [], 3.0) == []  # its execution decides
    book.move(a.id, S.FIXED, 4.0, "execution e1 verified")
    assert book.open() == []


def test_transition_table_refuses_nonsense() -> None:
    a = Anomaly.new("disk", "broker-1", {}, 0.0)
    fixed = a.moved(S.FIXED, 1.0, "cleared")
    try:
        fixed.moved(S.FIXING, 2.0, "again")
    except ValueError as exc:
        assert "fixed -> fixing" in str(exc)
    else:
        raise AssertionError("a fixed anomaly went back to fixing")
    assert Anomaly.from_dict(fixed.to_dict()) == fixed


def test_goal_violation_must_persist_n_windows() -> None:
    window, n = 60.0, 3
    book = AnomalyBook({"goal_violation": (n - 1) * window - 1})
    f = Finding("goal_violation", "cluster", {"resources": ["cpu"]})
    states = [book.update(["goal_violation"], [f], w * window) for w in range(n)]
    assert [s[0].state for s in states if s] == [S.WAITING, S.DETECTED]
    assert book.open()[0].state is S.DETECTED
