"""Snapshots (``docs/snapshot-format.md``): valid documents are accepted, corrupted ones are one InputError
naming the field, never another exception; on the CLI (``plan --snapshot``) exit 2, at most two lines, the
field named, the inputs unchanged and nothing left behind."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.validate.snapshot import parse_snapshot

from .harness import case
from .mutate import Path as DocPath
from .mutate import bad_encoding, drop_key, dumps, extra_key, replaced, truncated, type_swap

RES = ("cpu", "disk", "nw_in", "nw_out")
TOPIC = st.text(alphabet="abcxyz-_.é日", min_size=1, max_size=6)
FN = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def snapshots(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 5))
    ids = draw(st.lists(st.integers(0, 2**31 - 1), min_size=n, max_size=n, unique=True))
    cap = st.floats(1e-3, 1e12)
    load = st.floats(0, 1e9) | st.integers(0, 10**9)
    brokers = [{"id": i, "rack": draw(st.none() | st.sampled_from(["r0", "r1"])),
                "host": draw(st.none() | st.sampled_from(["h0", "h1"])), "alive": draw(st.booleans()),
                "capacity": {r: draw(cap) for r in RES}} for i in ids]
    keys = draw(st.lists(st.tuples(TOPIC, st.integers(0, 2**31 - 1)), max_size=6, unique=True))
    parts = []
    for topic, num in keys:
        reps = draw(st.permutations(ids))[: draw(st.integers(1, n))]
        parts.append({"topic": topic, "partition": num, "replicas": reps,
                      "leader": draw(st.sampled_from([*reps, -1, None])),
                      "load": {role: {r: draw(load) for r in RES} for role in ("leader", "follower")}})
    doc: dict[str, Any] = {"version": 1, "brokers": brokers, "partitions": parts}
    if draw(st.booleans()):
        doc["name"] = draw(TOPIC)
    return doc


def strict(path: DocPath, value: Any) -> bool:
    """Leaves whose type is fixed (rack, host and name may be null; a leader may be null)."""
    return path[-1] not in ("rack", "host", "name", "leader")


def required(path: DocPath) -> bool:
    """Keys a snapshot must have (rack, host, alive and name are optional)."""
    return path[-1] not in ("rack", "host", "alive", "name")


@st.composite
def out_of_range(draw: st.DrawFn, doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A value of the right type that the format or the planner's arithmetic cannot take."""
    choices: list[tuple[DocPath, Any, str]] = []
    for i in range(len(doc["brokers"])):
        choices += [(("brokers", i, "id"), draw(st.sampled_from([-3, -1, 2**31, 2**63])), "id")]
        r = draw(st.sampled_from(RES))
        choices += [(("brokers", i, "capacity", r), draw(st.sampled_from([0, 0.0, -1.0, 5e-324, 1e-310])), r)]
    for j, p in enumerate(doc["partitions"]):
        choices += [(("partitions", j, "partition"), draw(st.sampled_from([-1, 2**31, 2**63, 1.5])), "partition")]
        r = draw(st.sampled_from(RES))
        choices += [(("partitions", j, "load", "leader", r), -1.0, r)]
        choices += [(("partitions", j, "replicas"), [*p["replicas"], p["replicas"][0]], "replicas")]
    path, value, name = draw(st.sampled_from(choices))
    return replaced(doc, path, value), name


def overflowing(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Every leader load of one resource at 1e308: two or more partitions overflow the sum."""
    if len(doc["partitions"]) < 2:
        return None
    out: dict[str, Any] = replaced(doc, (), doc)
    for p in out["partitions"]:
        p["load"]["leader"]["nw_in"] = 1e308
    return out


@FN
@given(snapshots())
def test_valid_snapshots_are_accepted(doc: dict[str, Any]) -> None:
    snap = parse_snapshot(dumps(doc), "s.json")
    assert snap.n_brokers == len(doc["brokers"]) and snap.n_partitions == len(doc["partitions"])


@FN
@given(snapshots(), st.data())
def test_extensions_and_a_utf8_bom_are_accepted(doc: dict[str, Any], data: st.DataObject) -> None:
    parse_snapshot(dumps(data.draw(extra_key(doc))), "s.json")
    parse_snapshot(b"\xef\xbb\xbf" + dumps(doc), "s.json")


@FN
@given(snapshots(), st.data())
def test_corrupt_snapshots_are_one_input_error(doc: dict[str, Any], data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["type", "missing", "range", "truncated", "encoding", "overflow"]))
    if kind == "overflow" and overflowing(doc) is None:
        kind = "type"
    if kind == "type":
        bad, name = data.draw(type_swap(doc, strict))
        raw = dumps(bad)
    elif kind == "missing":
        bad, name = data.draw(drop_key(doc, required))
        raw = dumps(bad)
    elif kind == "range":
        bad, name = data.draw(out_of_range(doc))
        raw = dumps(bad)
    elif kind == "overflow":
        raw, name = dumps(overflowing(doc)), "nw_in"
    elif kind == "truncated":
        raw, name = data.draw(truncated(dumps(doc))), "s.json"
    else:
        raw, name = data.draw(bad_encoding(dumps(doc)))
    with pytest.raises(InputError) as err:
        parse_snapshot(raw, "s.json")
    assert name in err.value.render()
    assert len(err.value.render().splitlines()) <= 2


@CLI
@given(snapshots(), st.data())
def test_plan_refuses_a_corrupt_snapshot(doc: dict[str, Any], data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["type", "range", "truncated", "encoding"]))
    if kind == "type":
        bad, name = data.draw(type_swap(doc, strict))
        raw = dumps(bad)
    elif kind == "range":
        bad, name = data.draw(out_of_range(doc))
        raw = dumps(bad)
    elif kind == "truncated":
        raw, name = data.draw(truncated(dumps(doc))), "s.json"
    else:
        raw, name = data.draw(bad_encoding(dumps(doc)))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "s.json").write_bytes(raw)
        case(["plan", "--snapshot", str(d / "s.json"), "--out", str(d / "p.json")], 2, name, watch=[d])
