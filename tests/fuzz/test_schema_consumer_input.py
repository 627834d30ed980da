"""The assignors' input (``assign --input``): valid groups are accepted, corrupted ones are one InputError
naming the field (loads in quotes, infinite or overflowing loads, partition numbers past 32 bits, denormal
capacities included); ``assign`` exits 2 with at most two lines and prints no inf/nan."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.validate.consumer_input import parse_consumer_input

from .harness import case
from .mutate import Path as DocPath
from .mutate import corrupt_document, dumps, extra_key, replaced

FN = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def groups(draw: st.DrawFn) -> dict[str, Any]:
    topics = draw(st.lists(st.text(alphabet="abc-_.é", min_size=1, max_size=5), min_size=1, max_size=3, unique=True))
    m = draw(st.integers(1, 4))
    ids = draw(st.lists(st.text(alphabet="cdm0123é", min_size=1, max_size=5), min_size=m, max_size=m, unique=True))
    members: list[dict[str, Any]] = []
    for i, mid in enumerate(ids):
        subs = topics if i == 0 else draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
        mem: dict[str, Any] = {"id": mid, "topics": subs}
        if draw(st.booleans()):
            mem["capacity"] = draw(st.floats(0.01, 100))
        if draw(st.booleans()):
            mem["start_ms"] = draw(st.integers(0, 2**41))
        members.append(mem)
    parts = []
    for t in topics:
        for p in draw(st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=4, unique=True)):
            part: dict[str, Any] = {"topic": t, "partition": p}
            if draw(st.booleans()):
                part["load"] = draw(st.floats(0, 1e12) | st.integers(0, 10**12))
            parts.append(part)
    owner = members[0]  # subscribes to every topic: it may own any partition
    owner["owned"] = [[p["topic"], p["partition"]] for p in parts if draw(st.booleans())]
    return {"members": members, "partitions": parts}


def strict(path: DocPath, value: Any) -> bool:
    return True


def required(path: DocPath) -> bool:
    return path[-1] in ("members", "partitions", "id", "topics", "topic", "partition")


@st.composite
def out_of_range(draw: st.DrawFn, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    j = draw(st.integers(0, len(doc["partitions"]) - 1))
    choices: list[tuple[DocPath, Any, str]] = [
        (("partitions", j, "partition"), draw(st.sampled_from([-1, 2**31, 2**63, 0.5])), "partition"),
        (("partitions", j, "load"), draw(st.sampled_from(["5", "1e3", -1.0, True, None])), "load"),
        (("members", 0, "capacity"), draw(st.sampled_from([0, -2.0, 5e-324, "1"])), "capacity"),
        (("members", 0, "id"), "", "id"),
        (("members", 0, "topics"), [], "topics"),
    ]
    if len(doc["partitions"]) >= 2:
        many = replaced(doc, (), doc)
        for p in many["partitions"]:
            p["load"] = 1e308
        return many, "loads"
    path, value, name = draw(st.sampled_from(choices))
    return replaced(doc, path, value), name


def corrupt(doc: dict[str, Any]) -> st.SearchStrategy[tuple[bytes, str]]:
    return corrupt_document(doc, strict=strict, required=required, out_of_range=out_of_range,
                            file_name="g.json",
                            kinds=("type", "missing", "range", "range", "truncated", "encoding"))


@FN
@given(groups(), st.data())
def test_valid_groups_and_extensions_are_accepted(doc: dict[str, Any], data: st.DataObject) -> None:
    problem = parse_consumer_input(dumps(doc), "g.json")
    assert problem.n_members == len(doc["members"]) and problem.n_partitions == len(doc["partitions"])
    parse_consumer_input(dumps(data.draw(extra_key(doc))), "g.json")


@FN
@given(groups(), st.data())
def test_corrupt_groups_are_one_input_error(doc: dict[str, Any], data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(doc))
    with pytest.raises(InputError) as err:
        parse_consumer_input(raw, "g.json")
    assert name in err.value.render() and len(err.value.render().splitlines()) <= 2


@CLI
@given(groups(), st.data())
def test_assign_refuses_a_corrupt_group(doc: dict[str, Any], data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(doc))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "g.json").write_bytes(raw)
        run = case(["assign", "--input", str(d / "g.json"), "--strategy", "balanced"], 2, name, watch=[d])
        assert "inf" not in run.out and "nan" not in run.out
