"""The consumer-group simulator: determinism, failure detection, eager vs cooperative pauses."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kafka_balancer.sim import consumer_cli
from kafka_balancer.sim.consumer.config import SimConfig
from kafka_balancer.sim.consumer.events import EventQueue
from kafka_balancer.sim.consumer.run import simulate

BASE = SimConfig(rates=(50.0, 30.0, 20.0, 10.0, 10.0, 5.0), capacities=(100.0,) * 3, duration_ms=20000,
                 heartbeat_ms=1000, session_timeout_ms=6000, kills=((5000, 2),), measure_from_ms=5000)


def test_same_config_same_result() -> None:
    a, b = simulate(BASE), simulate(BASE)
    assert a.summary() == b.summary()
    assert a.lag_series == b.lag_series


def test_event_order_is_time_then_priority_then_insertion() -> None:
    q = EventQueue()
    for t, prio, name in [(5, 1, "x"), (5, 0, "y"), (1, 9, "z"), (5, 1, "w")]:
        q.push(t, prio, name)
    assert [q.pop()[2] for _ in range(4)] == ["z", "y", "x", "w"]
    with pytest.raises(ValueError):
        q.push(0, 0, "past")


def test_kill_detected_after_session_timeout_then_recovered() -> None:
    r = simulate(BASE)
    [reb] = r.rebalances
    # consumer 2 heartbeats at phase 2*1000/3 = 666 ms: last heartbeat before 5000 is 4666
    assert reb["trigger_ms"] == 4666 + 6000
    assert reb["cause"] == "member c2 expired"
    assert r.keeps_up and r.final_lag < 50
    assert r.latency_p99_s > 5.0  # messages of the dead member waited for the session timeout


def test_eager_pauses_everything_cooperative_only_what_moves() -> None:
    join = {"kills": (), "joins": ((5000, 100.0),), "measure_from_ms": 4000, "rates": (20.0,) * 6}
    eager = simulate(SimConfig(**{**BASE.__dict__, **join, "assignor": "balanced", "protocol": "eager"}))
    coop = simulate(SimConfig(**{**BASE.__dict__, **join, "assignor": "balanced", "protocol": "cooperative"}))
    assert eager.rebalances[0]["rounds"] == 1
    assert coop.rebalances[0]["rounds"] == 2  # revoke, then assign
    assert coop.paused_partition_s < eager.paused_partition_s


def test_paper_overloads_last_consumer_under_skew() -> None:
    slow = {"kills": (), "capacities": (70.0,) * 3, "duration_ms": 60000}
    paper = simulate(SimConfig(**{**BASE.__dict__, **slow, "assignor": "paper"}))
    balanced = simulate(SimConfig(**{**BASE.__dict__, **slow, "assignor": "balanced"}))
    assert paper.max_member_util > 1.0 >= balanced.max_member_util
    assert not paper.keeps_up and balanced.keeps_up


def test_cli_writes_table_json_and_plot(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    consumer_cli.add_arguments(parser)
    args = parser.parse_args(["--kills", "0,1", "--strategies", "balanced/eager,range/eager", "--kill-sets", "1",
                              "--duration-s", "12", "--kill-at-s", "4", "--partitions", "6", "--out", str(tmp_path)])
    assert consumer_cli.run(args) == 0
    assert (tmp_path / "consumers.png").stat().st_size > 1000
    table = (tmp_path / "table.md").read_text()
    assert table.count("\n") == 6 and "balanced/eager" in table
