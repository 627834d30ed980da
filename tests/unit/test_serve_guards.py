"""Guards and settings: pure functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.serve.config import ServeConfig, check, load_config, parse_duration, parse_self_healing
from kafka_balancer.serve.guards import GuardContext, fit_budget, hold_reason, moved_in_window


def ctx(**kw: object) -> GuardContext:
    base: dict[str, object] = {"now": 1000.0, "paused": False, "executing": False, "last_end": None,
                               "cooldown_s": 300.0, "under_replicated": 0, "moved_last_hour": 0.0,
                               "max_bytes_per_hour": 1e9}
    base.update(kw)
    return GuardContext(**base)  # type: ignore[arg-type]


def test_nothing_holds_a_quiet_cluster() -> None:
    assert hold_reason("rebalance", ctx()) is None


def test_one_execution_at_a_time_even_for_evacuation_and_operators() -> None:
    for mode in ("rebalance", "evacuate"):
        assert hold_reason(mode, ctx(executing=True)) == "another execution is running"
    assert hold_reason("rebalance", ctx(executing=True), operator=True) == "another execution is running"


def test_cooldown_counts_from_the_last_end_and_not_for_operators() -> None:
    assert "cooldown: 100 s left" in (hold_reason("rebalance", ctx(last_end=800.0)) or "")
    assert hold_reason("rebalance", ctx(last_end=700.0)) is None
    assert hold_reason("rebalance", ctx(last_end=800.0), operator=True) is None
    # a dead broker's evacuation cannot wait, unless the last execution failed (no tight retry loop)
    assert hold_reason("evacuate", ctx(last_end=800.0)) is None
    assert "cooldown" in (hold_reason("evacuate", ctx(last_end=800.0, last_failed=True)) or "")


def test_under_replicated_holds_all_but_evacuation() -> None:
    assert "under-replicated" in (hold_reason("rebalance", ctx(under_replicated=3)) or "")
    assert "under-replicated" in (hold_reason("add_brokers", ctx(under_replicated=3)) or "")
    assert hold_reason("evacuate", ctx(under_replicated=3)) is None


def test_pause_holds_self_healing_not_the_operator() -> None:
    assert hold_reason("evacuate", ctx(paused=True)) == "paused"
    assert hold_reason("rebalance", ctx(paused=True), operator=True) is None


def test_byte_cap_over_a_sliding_hour() -> None:
    assert moved_in_window([(0.0, 5e8), (2700.0, 3e8), (3500.0, 1e8)], now=3700.0) == 4e8
    assert "byte cap" in (hold_reason("rebalance", ctx(moved_last_hour=1e9)) or "")
    assert fit_budget([4e8, 0.0, 5e8, 2e8], 1e9 - 1e8) == 3
    assert fit_budget([2e9], 1e9) == 0
    assert fit_budget([], 0.0) == 0


def test_durations_and_self_healing_lists() -> None:
    assert parse_duration("2m", "--grace") == 120.0
    assert parse_duration("500ms", "x") == 0.5
    assert parse_self_healing("all") == parse_self_healing("broker_failure,new_brokers,goal_violation,disk,leaders")
    assert parse_self_healing("") == frozenset()
    with pytest.raises(InputError, match="unknown anomaly type 'disks'"):
        parse_self_healing("broker_failure,disks")
    with pytest.raises(InputError, match=r"--grace .*is not a duration"):
        parse_duration("2 minutes", "--grace")


def test_config_file_keys_and_errors_name_the_key(tmp_path: Path) -> None:
    f = tmp_path / "b.toml"
    f.write_text('bootstrap = "h:9092"\nself_healing = "all"\ngrace = "90s"\n[http]\ntoken = "t0p"\n'
                 '[capacity]\ndisk = 5e11\n[guards]\ncooldown = "10m"\nmax_bytes_per_hour = "20GB"\n')
    cfg = check(load_config(f))
    assert (cfg.bootstrap, cfg.grace_s, cfg.token, cfg.capacity["disk"], cfg.cooldown_s,
            cfg.max_bytes_per_hour) == ("h:9092", 90.0, "t0p", 5e11, 600.0, 2e10)
    assert len(cfg.self_healing) == 5
    assert cfg.public()["token"] == "***" and "t0p" not in repr(cfg)
    f.write_text('bootstrap = "h:9092"\n[guards]\ncooldwn = "1m"\n')
    with pytest.raises(InputError, match=r"guards.cooldwn: unknown setting"):
        load_config(f)
    f.write_text("port = 'x'\n")
    with pytest.raises(InputError, match="port must be an integer"):
        load_config(f)
    f.write_text("port = [\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_config(f)
    with pytest.raises(InputError, match="serve needs a cluster"):
        check(ServeConfig())
