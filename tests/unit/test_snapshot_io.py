"""Snapshot and plan I/O: round trips, and every kind of bad input gets one clear line, exit 2."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.model.plan_io import Plan, PlanEntry, apply_plan, plan_from_dict, read_plan, write_plan
from kafka_balancer.model.snapshot_io import read_snapshot, snapshot_from_dict, snapshot_to_dict, write_snapshot
from kafka_balancer.sim.cluster import PRESETS, generate

GOOD: dict[str, Any] = {
    "version": 1,
    "name": "tiny",
    "brokers": [
        {
            "id": i,
            "rack": f"r{i % 2}",
            "host": f"h{i // 2}",
            "alive": True,
            "capacity": {"cpu": 100.0, "disk": 5.0e11, "nw_in": 1.25e8, "nw_out": 1.25e8},
        }
        for i in range(4)
    ],
    "partitions": [
        {
            "topic": "orders",
            "partition": p,
            "replicas": [p % 4, (p + 1) % 4, (p + 2) % 4],
            "leader": p % 4,
            "load": {
                "leader": {"cpu": 1.2, "disk": 1.0e9, "nw_in": 2.0e6, "nw_out": 6.0e6},
                "follower": {"cpu": 0.3, "disk": 1.0e9, "nw_in": 2.0e6, "nw_out": 0.0},
            },
        }
        for p in range(6)
    ],
}


def test_round_trip_is_exact(tmp_path: Path) -> None:
    snap = snapshot_from_dict(GOOD)
    assert snapshot_to_dict(snap) == GOOD
    write_snapshot(snap, tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text()) == GOOD


def test_round_trip_of_generated_cluster(tmp_path: Path) -> None:
    snap = generate(PRESETS["dead-broker"], seed=4)
    write_snapshot(snap, tmp_path / "s.json")
    back = read_snapshot(tmp_path / "s.json")
    assert np.array_equal(back.replicas, snap.replicas) and np.array_equal(back.leader, snap.leader)
    assert np.allclose(back.leader_load, snap.leader_load) and np.array_equal(back.alive, snap.alive)


def _bad(mutate: Any) -> dict[str, Any]:
    doc = copy.deepcopy(GOOD)
    mutate(doc)
    return doc


BAD_CASES = [
    ("unknown version", lambda d: d.update(version=2), "unknown snapshot version 2"),
    (
        "unknown broker",
        lambda d: d["partitions"][1].update(replicas=[1, 2, 7]),
        "orders-1: replicas[2] is 7, not a known broker",
    ),
    ("duplicate replica", lambda d: d["partitions"][2].update(replicas=[2, 2, 3]), "orders-2: broker 2 appears twice"),
    (
        "leader not replica",
        lambda d: d["partitions"][0].update(leader=3),
        "orders-0: leader 3 is not among its replicas",
    ),
    ("negative load", lambda d: d["partitions"][3]["load"]["leader"].update(cpu=-1), "orders-3: load.leader.cpu is -1"),
    (
        "text load",
        lambda d: d["partitions"][3]["load"]["follower"].update(disk="big"),
        "orders-3: load.follower.disk is 'big', not a number",
    ),
    ("zero capacity", lambda d: d["brokers"][2]["capacity"].update(disk=0), "broker 2: capacity.disk is 0"),
    ("missing capacity", lambda d: d["brokers"][1]["capacity"].pop("nw_in"), "broker 1: capacity.nw_in is missing"),
    (
        "duplicate partition",
        lambda d: d["partitions"].append(copy.deepcopy(d["partitions"][0])),
        "orders-0 is listed twice",
    ),
    ("duplicate broker", lambda d: d["brokers"].append(copy.deepcopy(d["brokers"][0])), "broker 0 is listed twice"),
    ("missing field", lambda d: d["partitions"][4].pop("load"), "orders-4: field 'load' is missing"),
]


@pytest.mark.parametrize(("case", "mutate", "message"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_snapshot_is_named(case: str, mutate: Any, message: str) -> None:
    with pytest.raises(InputError) as err:
        snapshot_from_dict(_bad(mutate))
    assert message in err.value.message


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_balancer.cli.main", *args], capture_output=True, text=True)


def test_cli_bad_input_exit_2_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"version": 1, "brokers": [')
    (tmp_path / "bad.json").write_text(json.dumps(_bad(lambda d: d["partitions"][1].update(replicas=[1, 9, 2]))))
    for name, needle in (
        ("broken.json", "not valid JSON"),
        ("bad.json", "replicas[1] is 9, not a known broker"),
        ("missing.json", "no such file"),
    ):
        r = _cli("plan", "--snapshot", str(tmp_path / name), "--out", str(tmp_path / "p.json"))
        assert r.returncode == 2, r.stderr
        assert needle in r.stderr and "Traceback" not in r.stderr
        assert not (tmp_path / "p.json").exists()
    r = _cli("plan", "--snapshot", "x", "--out", "y", "--theta", "1.5")
    assert r.returncode == 2 and "--theta must be in (0, 1]" in r.stderr


def test_plan_io_and_apply(tmp_path: Path) -> None:
    snap = snapshot_from_dict(GOOD)
    plan = Plan((PlanEntry("orders", 0, (3, 1, 2)),))
    write_plan(plan, tmp_path / "p.json")
    assert read_plan(tmp_path / "p.json") == plan
    after = apply_plan(snap, plan)
    assert after.replicas[0].tolist() == [3, 1, 2] and int(after.leader[0]) == 3
    assert snap.replicas[0].tolist() == [0, 1, 2]  # the input is not modified
    with pytest.raises(InputError, match="plan has 2 replicas, the partition has 3"):
        apply_plan(snap, Plan((PlanEntry("orders", 0, (3, 1)),)))
    with pytest.raises(InputError, match="orders-9 does not exist"):
        apply_plan(snap, Plan((PlanEntry("orders", 9, (0, 1, 2)),)))
    with pytest.raises(InputError, match="listed twice"):
        plan_from_dict({"version": 1, "partitions": [{"topic": "a", "partition": 0, "replicas": [1]}] * 2})


@pytest.mark.parametrize("collector_on", [True, False])
def test_parsing_restores_the_cycle_collector(tmp_path: Path, collector_on: bool) -> None:
    """Parsing pauses the cycle collector (see ``no_cycle_collection``); it comes back as it was, after a good
    document and after a bad one."""
    import gc

    good = tmp_path / "good.json"
    good.write_bytes(json.dumps(GOOD).encode())
    bad = copy.deepcopy(GOOD)
    bad["partitions"][1]["replicas"] = [0, 9]
    (tmp_path / "bad.json").write_bytes(json.dumps(bad).encode())
    was = gc.isenabled()
    try:
        gc.enable() if collector_on else gc.disable()
        assert read_snapshot(good).n_partitions == len(GOOD["partitions"])
        assert gc.isenabled() is collector_on
        with pytest.raises(InputError, match="not a known broker"):
            read_snapshot(tmp_path / "bad.json")
        assert gc.isenabled() is collector_on
    finally:
        gc.enable() if was else gc.disable()
