"""Executor journals (``execute --journal``, ``--resume``, ``cancel``): JSON lines to validated records.

One JSON object per line, each with ``e`` (the event) and ``ts``. Checked, per event, everything the
executor reads back: the plan and the replica lists before it (topics, Kafka partition numbers and
broker ids), the sizes, the throttle that was set (broker ids and config strings), the partitions
submitted, moved, elected or cancelled, the broker ids that went down or up. The ``start`` record carries
the journal format (``v``, 1; journals written before it existed are version 1 too): a journal of another
format, or an event this version does not know, is refused, since resuming or cancelling on a journal
read wrongly would touch the wrong partitions. A last line cut short without its line break (a crash in
the middle of a write) is dropped; anywhere else a line that is not a record is an error.

    >>> [r["e"] for r in parse_journal(b'{"e":"start","v":1,"plan":[],"original":[]}\\n{"e":"resu', "j")]
    ['start']
"""

from __future__ import annotations

from typing import Any

import orjson

from kafka_balancer.errors import InputError
from kafka_balancer.validate.jsondoc import (
    INT32_MAX,
    array,
    boolean,
    broker_id,
    default_hint,
    integer,
    obj,
    partition_number,
    shown,
    string,
    text_of,
)

FORMAT_VERSION = 1
TP_EVENTS = ("submit", "moved", "elect", "cancelled")
PLAIN_EVENTS = ("resume", "throttle_cleared")
KINDS = ("start", "throttle_set", "interrupted", "finished", "broker_down", "broker_up", *TP_EVENTS, *PLAIN_EVENTS)
WHAT = "the JSON-lines journal an execution wrote"
_HINT_OTHER = ("finish or cancel it with the kafka-balancer version that wrote it, or clear the cluster with "
               "`kafka-balancer cancel --all` and move the journal aside")


def parse_journal(data: bytes, source: str) -> list[dict[str, Any]]:
    """The records of a journal file, each checked for the fields its event needs."""
    body, newline, tail = data.rpartition(b"\n")
    lines = text_of(body + newline, source, WHAT).split("\n") if newline else []
    records = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"{source}:{i + 1}"
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{where}: not a journal record ({exc})", hint=f"--journal is {WHAT}") from None
        records.append(check_record(rec, where))
    if tail.strip():  # the last line has no line break: whole, or torn by a crash mid-write (then dropped)
        try:
            rec = orjson.loads(tail)
        except orjson.JSONDecodeError:
            return records
        records.append(check_record(rec, f"{source}:{len(lines) or 1}"))
    return records


def check_record(rec: Any, where: str) -> dict[str, Any]:
    """One journal record (``where``: file and line), returned as it is when valid."""
    with default_hint(f"--journal is {WHAT}"):
        return _record(rec, where)


def _record(rec: Any, where: str) -> dict[str, Any]:
    if not isinstance(rec, dict) or "e" not in rec:
        raise InputError(f"{where}: not a journal record (an object with an 'e' field)", hint=f"--journal is {WHAT}")
    kind = rec["e"]
    if kind not in KINDS:
        raise InputError(f"{where}: unknown journal event {shown(kind)} (another kafka-balancer version?)",
                         hint=_HINT_OTHER)
    where = f"{where}: {kind}"
    if "ts" in rec:
        integer(rec["ts"], f"{where}: ts", 0, 2**63 - 1)
    if kind == "start":
        _start(rec, where)
    elif kind == "throttle_set":
        _throttle(rec.get("throttle"), f"{where}: throttle")
    elif kind in TP_EVENTS:
        for k, tp in enumerate(array(rec.get("tps", []), f"{where}: tps")):
            _tp(tp, f"{where}: tps[{k}]", 2)
    elif kind in ("broker_down", "broker_up"):
        broker_id(rec.get("broker"), f"{where}: broker")
    elif kind == "interrupted" and "reason" in rec:
        string(rec["reason"], f"{where}: reason", allow_empty=True)
    elif kind == "finished" and "verified" in rec:
        boolean(rec["verified"], f"{where}: verified")
    return rec


def _start(rec: dict[str, Any], where: str) -> None:
    version = rec.get("v", FORMAT_VERSION)
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise InputError(f"{where}: journal format {shown(version)}; this version reads format {FORMAT_VERSION}",
                         hint=_HINT_OTHER)
    for key in ("plan", "original"):
        if key not in rec:
            raise InputError(f"{where}: field {key!r} is missing", hint=f"--journal is {WHAT}")
        for k, entry in enumerate(array(rec[key], f"{where}: {key}")):
            topic, part = _tp(entry, f"{where}: {key}[{k}]", 3)
            label = f"{where}: {key} {topic}-{part}"
            reps = array(entry[2], f"{label}: replicas", nonempty=(key == "plan"))
            ids = [broker_id(b, f"{label}: replicas[{j}]") for j, b in enumerate(reps)]
            if len(set(ids)) != len(ids):
                raise InputError(f"{label}: a broker appears twice in replicas {shown(ids)}",
                                 hint=f"--journal is {WHAT}")
    for k, entry in enumerate(array(rec.get("sizes", []), f"{where}: sizes")):
        _tp(entry, f"{where}: sizes[{k}]", 3)
        integer(entry[2], f"{where}: sizes[{k}] bytes", 0, 2**63 - 1)
    obj(rec.get("options", {}), f"{where}: options")


def _tp(value: Any, where: str, width: int) -> tuple[str, int]:
    """``[topic, partition, ...]`` of ``width`` items."""
    if not isinstance(value, list) or len(value) != width:
        shape = "[topic, partition]" if width == 2 else "[topic, partition, value]"
        raise InputError(f"{where} is {shown(value)}; it must be {shape}", hint=f"--journal is {WHAT}")
    return string(value[0], f"{where}: topic"), partition_number(value[1], f"{where}: partition")


def _throttle(value: Any, where: str) -> None:
    d = obj(value, where)
    for key in ("brokers", "topics"):
        if key not in d:
            raise InputError(f"{where}: field {key!r} is missing", hint=f"--journal is {WHAT}")
        for name, configs in obj(d[key], f"{where}: {key}").items():
            if key == "brokers" and not (name.isascii() and name.isdigit() and int(name) <= INT32_MAX):
                raise InputError(f"{where}: broker {shown(name)} is not a Kafka broker id", hint=f"--journal is {WHAT}")
            for ck, cv in obj(configs, f"{where}: {key}.{name}").items():
                string(cv, f"{where}: {key}.{name}.{ck}", allow_empty=True)
