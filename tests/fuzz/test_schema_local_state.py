"""The local cluster's state file (``<state-dir>/cluster.json``): files as ``local-cluster up`` writes them
are accepted, corrupted ones are one InputError naming the field; ``local-cluster status`` and ``down``
refuse them with exit 2, touch no process and leave the state folder as it was."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.validate.local_state import parse_local_state

from .harness import case
from .mutate import Path as DocPath
from .mutate import corrupt_document, dumps, replaced

FN = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def states(draw: st.DrawFn) -> dict[str, Any]:
    brokers = draw(st.integers(1, 4))
    controllers = draw(st.integers(1, brokers))
    port = draw(st.integers(1024, 60000))
    nodes = [{"node": {"node_id": i + 1, "roles": "broker,controller" if i < controllers else "broker",
                       "rack": f"host-{i // 2}", "broker_port": port + i, "metrics_port": port + 100 + i,
                       "controller_port": port + 200 + i if i < controllers else None},
              "pid": draw(st.none() | st.integers(1, 2**22))} for i in range(brokers)]
    return {"version": 1, "cluster_id": draw(st.text(alphabet="abcXYZ09-_", min_size=4, max_size=22)),
            "spec": {"brokers": brokers, "controllers": controllers, "brokers_per_host": 2, "heap_mb": 320,
                     "overrides": draw(st.lists(st.tuples(st.sampled_from(["num.io.threads", "a.b"]),
                                                          st.sampled_from(["4", ""])).map(list), max_size=2))},
            "bootstrap": ",".join(f"127.0.0.1:{port + i}" for i in range(brokers)), "nodes": nodes}


def strict(path: DocPath, value: Any) -> bool:
    return path[-1] not in ("pid", "controller_port", "bootstrap")


def required(path: DocPath) -> bool:
    return path[-1] not in ("pid", "controller_port", "bootstrap", "overrides") and "overrides" not in path


@st.composite
def out_of_range(draw: st.DrawFn, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    i = draw(st.integers(0, len(doc["nodes"]) - 1))
    path, value, name = draw(st.sampled_from([
        (("nodes", i, "pid"), draw(st.sampled_from([0, -1, 2**40, "123", 1.5])), "pid"),
        (("nodes", i, "node", "node_id"), draw(st.sampled_from([-1, 2**31])), "node_id"),
        (("nodes", i, "node", "broker_port"), draw(st.sampled_from([0, 65536, -5])), "broker_port"),
        (("nodes", i, "node", "roles"), "controller", "roles"),
        (("spec", "heap_mb"), 16, "heap_mb"),
        (("version",), 2, "version"),
    ]))
    return replaced(doc, path, value), name


def corrupt(doc: dict[str, Any]) -> st.SearchStrategy[tuple[bytes, str]]:
    return corrupt_document(doc, strict=strict, required=required, out_of_range=out_of_range,
                            file_name="cluster.json")


@FN
@given(states())
def test_state_files_are_accepted(doc: dict[str, Any]) -> None:
    state = parse_local_state(dumps(doc), "cluster.json")
    assert [n.node_id for n in state.nodes] == [n["node"]["node_id"] for n in doc["nodes"]]


@FN
@given(states(), st.data())
def test_corrupt_state_files_are_one_input_error(doc: dict[str, Any], data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(doc))
    with pytest.raises(InputError) as err:
        parse_local_state(raw, "cluster.json")
    assert name in err.value.render() and len(err.value.render().splitlines()) <= 2


@CLI
@given(states(), st.data())
def test_status_and_down_refuse_a_corrupt_state_file(doc: dict[str, Any], data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(doc))
    action = data.draw(st.sampled_from(["status", "down"]))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "cluster.json").write_bytes(raw)
        case(["local-cluster", action, "--state-dir", str(d)], 2, name, watch=[d])
