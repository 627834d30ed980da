"""Executor journals (``execute --resume``, ``cancel``): journals as the executor writes them are accepted,
corrupted ones are one InputError naming the line and field; a journal of another format or with an event
this version does not know is refused; a last line cut short by a crash is dropped. On the CLI, ``cancel``
and ``execute --resume`` refuse such a journal with exit 2 before they connect, and leave it as it was."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.executor.journal import replay
from kafka_balancer.validate.journal import parse_journal

from .harness import case
from .mutate import Path as DocPath
from .mutate import bad_encoding, replaced, type_swap

FN = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLOSED = "127.0.0.1:1"
TOPIC = st.text(alphabet="abc-_.é", min_size=1, max_size=5)
BROKER = st.integers(0, 2**31 - 1)


@st.composite
def journals(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A journal as ``Executor.run`` writes it: start, then throttle and progress events."""
    keys = draw(st.lists(st.tuples(TOPIC, st.integers(0, 2**31 - 1)), min_size=1, max_size=4, unique=True))
    brokers = draw(st.lists(BROKER, min_size=3, max_size=5, unique=True))
    plan = [[t, p, draw(st.permutations(brokers))[:2]] for t, p in keys]
    original = [[t, p, draw(st.permutations(brokers))[:2]] for t, p in keys]
    ts = 1_700_000_000_000
    recs: list[dict[str, Any]] = [{"e": "start", "ts": ts, "v": 1, "plan": plan, "original": original,
                                   "sizes": [[t, p, draw(st.integers(0, 2**40))] for t, p in keys],
                                   "options": {"throttle": 10_000_000, "max_per_broker": 2}}]
    tps = [[t, p] for t, p in keys]
    events = draw(st.lists(st.sampled_from(["throttle_set", "submit", "moved", "elect", "broker_down", "broker_up",
                                            "interrupted", "resume", "throttle_cleared"]), max_size=6))
    for e in events:
        rec: dict[str, Any] = {"e": e, "ts": ts}
        if e == "throttle_set":
            rec["throttle"] = {"brokers": {str(b): {"leader.replication.throttled.rate": "1000"} for b in brokers},
                               "topics": {t: {"leader.replication.throttled.replicas": f"{p}:{brokers[0]}"}
                                          for t, p in keys}}
        elif e in ("submit", "moved", "elect"):
            rec["tps"] = tps
        elif e in ("broker_down", "broker_up"):
            rec["broker"] = brokers[0]
        elif e == "interrupted":
            rec["reason"] = "Ctrl-C"
        recs.append(rec)
    if draw(st.booleans()):
        recs.append({"e": draw(st.sampled_from(["finished", "cancelled"])), "ts": ts, "verified": True, "tps": tps})
    return recs


def encode(recs: list[Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in recs)


def strict(path: DocPath, value: Any) -> bool:
    """Fields the executor reads back (options and reasons are free-form)."""
    return "options" not in path and path[-1] not in ("reason",) and not (
        "throttle" in path and len(path) > 3)


@st.composite
def corrupt(draw: st.DrawFn, recs: list[dict[str, Any]]) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["type", "event", "version", "range", "line", "encoding"]))
    if kind == "type":
        i = draw(st.integers(0, len(recs) - 1))
        bad, name = draw(type_swap(recs[i], strict))
        return encode([*recs[:i], bad, *recs[i + 1:]]), name or "j.jsonl"
    if kind == "event":
        bad = draw(st.sampled_from(["rebalance", "START", "", 5]))
        return encode([*recs, {"e": bad, "ts": 1}]), "j.jsonl:"
    if kind == "version":
        return encode([replaced(recs[0], ("v",), draw(st.sampled_from([2, 0, "1", None])))]), "format"
    if kind == "range":
        path, value = draw(st.sampled_from([(("plan", 0, 1), -1), (("plan", 0, 2, 0), -3), (("plan", 0, 2, 0), 2**31),
                                            (("original", 0, 1), 2**63), (("plan", 0, 2), []),
                                            (("sizes", 0, 2), -1)]))
        return encode([replaced(recs[0], path, value), *recs[1:]]), str(path[0])
    if kind == "line":  # a damaged line in the middle (a torn one at the end is allowed)
        data = encode(recs)
        return data + b'{"e": "submit", "tps": [[\n' + encode(recs[:1]), "j.jsonl:"
    return draw(bad_encoding(encode(recs)))


@FN
@given(journals())
def test_executor_journals_are_accepted_and_replayed(recs: list[dict[str, Any]]) -> None:
    parsed = parse_journal(encode(recs), "j.jsonl")
    st_ = replay(parsed)
    assert st_.started and len(st_.plan) == len(recs[0]["plan"])


@FN
@given(journals(), st.data())
def test_a_torn_last_line_is_dropped(recs: list[dict[str, Any]], data: st.DataObject) -> None:
    full = encode(recs)
    last = orjson.dumps(recs[-1])
    cut = data.draw(st.integers(1, len(last) - 1))
    parsed = parse_journal(full[: len(full) - len(last) - 1] + last[:cut], "j.jsonl")
    assert len(parsed) in (len(recs) - 1, len(recs))  # a cut that still parses is a whole record


@FN
@given(journals(), st.data())
def test_corrupt_journals_are_one_input_error(recs: list[dict[str, Any]], data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(recs))
    with pytest.raises(InputError) as err:
        parse_journal(raw, "j.jsonl")
    assert name in err.value.render() and len(err.value.render().splitlines()) <= 2


@CLI
@given(journals(), st.data())
def test_cancel_and_resume_refuse_a_corrupt_journal_before_connecting(recs: list[dict[str, Any]],
                                                                     data: st.DataObject) -> None:
    raw, name = data.draw(corrupt(recs))
    command = data.draw(st.sampled_from([["cancel"], ["execute", "--resume", "--yes"]]))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "j.jsonl").write_bytes(raw)
        case([*command, "--bootstrap", CLOSED, "--timeout", "1", "--journal", str(d / "j.jsonl")], 2, name,
             watch=[d])
