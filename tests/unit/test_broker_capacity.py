"""Disk capacity from DescribeLogDirs answers and the capacity precedence (flag, file, cluster, default)."""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson
import pytest

from kafka_balancer.collect.capacity import disk_capacity, read_capacity_file, write_capacity_file
from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.cli_common import capacities_from_args


def _dir(name: str, total: int, usable: int, sizes: list[int], error: int = 0) -> dict[str, object]:
    return {"log_dir": name, "error_code": error, "total_bytes": total, "usable_bytes": usable,
            "topics": [{"name": "t", "partitions": [{"partition_index": i, "partition_size": s}
                                                    for i, s in enumerate(sizes)]}]}


def test_disk_capacity_per_volume() -> None:
    entries = [
        {"broker": 1, "log_dirs": [_dir("/v1", 1000, 500, [100, 100]), _dir("/v2", 2000, 1900, [50])]},
        {"broker": 2, "log_dirs": [_dir("/shared-a", 1000, 10, [300]), _dir("/shared-b", 1000, 10, [200])]},
        {"broker": 3, "log_dirs": [_dir("/old", -1, -1, [10])]},  # a broker before 3.3: no figures
        {"broker": 4, "log_dirs": [_dir("/ok", 1000, 900, []), _dir("/bad", 1000, 900, [], error=57)]},
        {"broker": 5, "log_dirs": [_dir("/full", 1000, 900, [400])]},  # usable + held > total: capped
    ]
    assert disk_capacity(entries) == {1: 700.0 + 1950.0, 2: 510.0, 5: 1000.0}


def _args(tmp_path: Path, capacity: str = "", capacities: dict[str, object] | None = None) -> argparse.Namespace:
    path = None
    if capacities is not None:
        path = tmp_path / "caps.json"
        path.write_bytes(orjson.dumps(capacities))
    return argparse.Namespace(capacity=capacity, capacities=str(path) if path else None, samples=str(tmp_path))


def test_precedence_flag_file_cluster_default(tmp_path: Path) -> None:
    write_capacity_file(tmp_path, "c", {1: 3e11, 2: 4e11, 3: 5e11}, [])
    assert read_capacity_file(tmp_path) == {1: 3e11, 2: 4e11, 3: 5e11}
    # cluster only: disk from the cluster, the rest default
    cap, per, src = capacities_from_args(_args(tmp_path))
    assert cap["disk"] == 1e12 and per == {1: {"disk": 3e11}, 2: {"disk": 4e11}, 3: {"disk": 5e11}}
    assert src["brokers"]["2"] == {"cpu": "default", "disk": "cluster", "nw_in": "default", "nw_out": "default"}
    # the file's broker entry beats the cluster, its default too
    cap, per, src = capacities_from_args(_args(tmp_path, "", {"brokers": {"2": {"disk": 9e11}}}))
    assert per[2] == {"disk": 9e11} and per[1] == {"disk": 3e11} and src["brokers"]["2"]["disk"] == "file"
    cap, per, src = capacities_from_args(_args(tmp_path, "", {"default": {"disk": 8e11}}))
    assert cap["disk"] == 8e11 and per == {} and src["brokers"]["1"]["disk"] == "file"
    # the flag beats everything (the file's default for cpu as well)
    cap, per, src = capacities_from_args(_args(tmp_path, "disk=2e11,cpu=200",
                                               {"default": {"cpu": 50}, "brokers": {"2": {"disk": 9e11}}}))
    assert cap["disk"] == 2e11 and cap["cpu"] == 200 and per == {}
    assert src["default"] == {"cpu": "flag", "disk": "flag", "nw_in": "default", "nw_out": "default"}


def test_a_broken_capacity_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "broker-capacity.json").write_text('{"brokers": {"1": 5}}')
    with pytest.raises(InputError, match=r"broker-capacity\.json"):
        read_capacity_file(tmp_path)
