"""``kafka-balancer assign``: the documented input/output and clear errors for bad input."""

from __future__ import annotations

import doctest
import importlib
import json
from pathlib import Path

import pytest

from kafka_balancer.cli.main import main

GOOD = {
    "members": [
        {"id": "c1", "topics": ["t1"], "start_ms": 1700000000000, "capacity": 1.0, "owned": [["t1", 0]]},
        {"id": "c2", "topics": ["t1"]},
    ],
    "partitions": [
        {"topic": "t1", "partition": 0, "load": 12.5},
        {"topic": "t1", "partition": 1, "load": 2.5},
        {"topic": "t1", "partition": 2, "load": 8.0},
    ],
}


def _write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_balanced_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["assign", "--input", _write(tmp_path, GOOD), "--strategy", "balanced", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["assignment"] == {"c1": [["t1", 0]], "c2": [["t1", 1], ["t1", 2]]}
    assert out["max_load"] == 12.5 and out["lower_bound"] == 12.5 and out["moved"] == 0


def test_cooperative_reports_round_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = {**GOOD, "members": [{"id": "c1", "topics": ["t1"], "owned": [["t1", 0], ["t1", 1], ["t1", 2]]},
                               {"id": "c2", "topics": ["t1"]}]}
    rc = main(["assign", "--input", _write(tmp_path, doc), "--strategy", "cooperative-sticky", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["protocol"] == "cooperative"
    assert out["moved"] == out["revoked_in_round1"] == 1
    assert sum(len(v) for v in out["round1"].values()) == 2


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["members"].append({"id": "c1", "topics": ["t1"]}), "duplicate member id 'c1'"),
        (lambda d: d["members"][1]["topics"].append("nope"), "unknown topic 'nope'"),
        (lambda d: d["partitions"][1].update(load=-3), "partition t1-1: load is -3"),
        (lambda d: d["partitions"].append({"topic": "t1", "partition": 0, "load": 1}), "listed twice"),
        (lambda d: d["members"][0].update(capacity=0), "capacity is 0"),
        (lambda d: d["members"][1].update(owned=[["t1", 0]]), "owned by both"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    mutate: object, message: str) -> None:
    doc = json.loads(json.dumps(GOOD))
    mutate(doc)  # type: ignore[operator]
    rc = main(["assign", "--input", _write(tmp_path, doc), "--strategy", "paper"])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and "hint:" in err and "Traceback" not in err


def test_options_only_for_balanced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["assign", "--input", _write(tmp_path, GOOD), "--strategy", "range", "--max-moves", "1"])
    assert rc == 2 and "--max-moves" in capsys.readouterr().err


@pytest.mark.parametrize("module", [
    "kafka_balancer.consumer.problem", "kafka_balancer.consumer.result", "kafka_balancer.consumer.invariants",
    "kafka_balancer.consumer.workloads", "kafka_balancer.consumer.assignors",
    "kafka_balancer.consumer.assignors.balanced", "kafka_balancer.consumer.assignors.balanced_fill",
    "kafka_balancer.consumer.assignors.balanced_improve", "kafka_balancer.consumer.assignors.paper",
    "kafka_balancer.consumer.assignors.range", "kafka_balancer.consumer.assignors.roundrobin",
    "kafka_balancer.consumer.assignors.sticky", "kafka_balancer.consumer.assignors.cooperative_sticky",
])
def test_docstring_examples(module: str) -> None:
    failures, tried = doctest.testmod(importlib.import_module(module))
    assert tried > 0 and failures == 0
