"""Plans (``execute --plan``, kafka-reassign-partitions JSON): valid plans are accepted, corrupted ones are
one InputError naming the field; ``execute --plan`` refuses them (exit 2) before it connects to a cluster."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.validate.plan import parse_plan

from .harness import case
from .mutate import Path as DocPath
from .mutate import corrupt_document, dumps, extra_key, replaced

FN = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLOSED = "127.0.0.1:1"  # nothing listens: a case that got as far as connecting would fail with exit 1


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.tuples(st.text(alphabet="abc-_.é", min_size=1, max_size=6), st.integers(0, 2**31 - 1)),
                         min_size=1, max_size=6, unique=True))
    parts = [{"topic": t, "partition": p,
              "replicas": draw(st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=4, unique=True))}
             for t, p in keys]
    if draw(st.booleans()):
        parts[0]["log_dirs"] = ["any"] * len(parts[0]["replicas"])
    return {"version": 1, "partitions": parts}


def strict(path: DocPath, value: Any) -> bool:
    return "log_dirs" not in path


def required(path: DocPath) -> bool:
    return "log_dirs" not in path


@st.composite
def out_of_range(draw: st.DrawFn, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    j = draw(st.integers(0, len(doc["partitions"]) - 1))
    p = doc["partitions"][j]
    choices: list[tuple[DocPath, Any, str]] = [
        (("partitions", j, "partition"), draw(st.sampled_from([-1, 2**31, 2**63, 2.5])), "partition"),
        (("partitions", j, "replicas", 0), draw(st.sampled_from([-3, -1, 2**31, 2**63, 1.0])), "replicas"),
        (("partitions", j, "replicas"), [], "replicas"),
        (("partitions", j, "replicas"), [*p["replicas"], p["replicas"][0]], "replicas"),
        (("partitions", j, "topic"), "", "topic"),
        (("version",), draw(st.sampled_from([0, 2, "1", True])), "version"),
    ]
    path, value, name = draw(st.sampled_from(choices))
    return replaced(doc, path, value), name


def corrupt(doc: dict[str, Any]) -> st.SearchStrategy[tuple[bytes, str]]:
    return corrupt_document(doc, strict=strict, required=required, out_of_range=out_of_range,
                            file_name="p.json")


@FN
@given(plans(), st.data())
def test_valid_plans_and_extensions_are_accepted(doc: dict[str, Any], data: st.DataObject) -> None:
    plan = parse_plan(dumps(doc), "p.json")
    assert [e.replicas for e in plan.entries] == [tuple(p["replicas"]) for p in doc["partitions"]]
    parse_plan(dumps(data.draw(extra_key(doc))), "p.json")


@FN
@given(plans(), st.data())
def test_corrupt_plans_are_one_input_error(doc: dict[str, Any], data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(doc))
    with pytest.raises(InputError) as err:
        parse_plan(raw, "p.json")
    assert name in err.value.render() and len(err.value.render().splitlines()) <= 2


@CLI
@given(plans(), st.data())
def test_execute_refuses_a_corrupt_plan_before_connecting(doc: dict[str, Any], data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(doc))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "p.json").write_bytes(raw)
        case(["execute", "--plan", str(d / "p.json"), "--bootstrap", CLOSED, "--timeout", "1",
              "--journal", str(d / "j.jsonl")], 2, name, watch=[d])
