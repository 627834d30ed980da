"""Snapshot documents (``docs/snapshot-format.md``, version 1): bytes or a parsed document to a
:class:`Snapshot`, or one :class:`InputError` naming the broker, partition, field and value::

    snap.json: partition orders-3: replica 7 is not a known broker (known: 0..5)
      hint: add broker 7 to "brokers" or fix the replica list of orders-3

The format is a contract with outside tools: only what it does not allow, or what the planner's arithmetic
cannot use, is refused. Beyond the fields' types:

* broker ids are Kafka's (32-bit integers >= 0), partition numbers too;
* loads are finite numbers >= 0, capacities finite numbers > 0 and not denormal (the planner divides
  by them: a capacity of 5e-324 makes every utilisation infinite);
* per resource, the loads of all replicas must add up to a finite number, and so must the capacities;
  and the worst utilisation any placement could reach (all load on the smallest broker) must stay under
  1e150, since the planner squares utilisations.

A leader of ``-1`` or ``null`` means the partition has no leader now (offline); Kafka reports -1. A UTF-8
byte-order mark is accepted (JSON allows readers to skip it); UTF-16 is not.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import Any, cast

import numpy as np
import orjson

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import NR, RESOURCES, Snapshot, _intern, total_load
from kafka_balancer.validate.jsondoc import (
    INT32_MAX,
    array,
    boolean,
    broker_id,
    default_hint,
    field,
    no_cycle_collection,
    number,
    obj,
    parse_json,
    partition_number,
    shown,
    string,
)

FORMAT_VERSION = 1
MAX_UTILISATION = 1e150
WHAT = "a snapshot (snapshot-format.md, version 1)"
_FIELDS_HINT = "see snapshot-format.md for the fields"


def parse_snapshot(data: bytes, source: str) -> Snapshot:
    """A snapshot file's bytes to a :class:`Snapshot`.

    Large documents are read a slice of the partition list at a time (``_parse_sliced``): peak memory is
    then the file's bytes plus one slice's objects, instead of the whole document's (1.3M replicas: about
    0.7 GB of objects). Anything that does not look like a plain document, and any error at all, goes
    through the whole-document path, so what is accepted and every error message stay the same."""
    with no_cycle_collection():
        if len(data) >= SLICED_MIN_BYTES:
            snap = _parse_sliced(data, source)
            if snap is not None:
                return snap
        return snapshot_from_dict(parse_json(data, source, WHAT), source)


def snapshot_from_dict(doc: Any, source: str = "snapshot") -> Snapshot:
    """Validate a parsed snapshot document and turn it into a :class:`Snapshot`."""
    with default_hint(f"give {WHAT}"):
        return _snapshot(doc, source)


SLICED_MIN_BYTES = 8 << 20  # smaller documents are parsed whole
SLICE_BYTES = 4 << 20  # about 6,000 partitions' JSON per slice
_PARTS_KEY = re.compile(rb'"partitions"[ \t\r\n]*:[ \t\r\n]*\[')
_BETWEEN = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")  # end of one element of a list of objects, start of the next
_WS = b" \t\r\n"
_INF = float("inf")
_LOAD_FIELDS = itemgetter(*RESOURCES)  # a role's four loads, in one call


def _parse_sliced(data: bytes, source: str) -> Snapshot | None:
    """The snapshot, reading the partition list in slices, or None when the whole-document path must decide
    (a document whose top-level ``partitions`` list is not last, a slice that is not JSON, any InputError).

    Why a slice split is safe: the document without the list's contents (``head``) parses as an object
    whose ``partitions`` is ``[]`` only if the matched key is the top-level one; and a slice cut anywhere
    but between two elements of that list (inside a string, or inside a nested value) leaves a string or
    a bracket open, so that slice does not parse and the whole-document path takes over."""
    key = _PARTS_KEY.search(data)
    e = len(data)
    while e > 0 and data[e - 1] in _WS:
        e -= 1
    end = e - 1  # the closing bracket of the list, before the document's last "}"
    while end > 0 and data[end - 1] in _WS:
        end -= 1
    end -= 1
    if key is None or data[e - 1 : e] != b"}" or data[end : end + 1] != b"]" or end < key.end():
        return None
    start, first = key.start(), key.end()  # the list's contents: data[first:end]
    try:
        head = orjson.loads(data[:start] + b'"partitions":[]' + data[end + 1 : e])
        if not isinstance(head, dict) or head.get("partitions") != []:
            return None
        with default_hint(f"give {WHAT}"):
            reader = _head(head, source)
            k, offset = first, 0
            while k < end:
                m = _BETWEEN.search(data, min(k + SLICE_BYTES, end), end)
                stop = m.start() + 1 if m is not None else end
                parts = orjson.loads(b"[" + data[k:stop] + b"]")
                if not isinstance(parts, list):
                    return None
                reader.add(parts, offset)
                offset += len(parts)
                k = m.end() - 1 if m is not None else end
            return reader.finish()
    except (orjson.JSONDecodeError, InputError):
        return None


def _snapshot(doc: Any, source: str = "snapshot") -> Snapshot:
    reader = _head(doc, source)
    reader.add(doc["partitions"], 0)
    return reader.finish()


def _head(doc: Any, source: str) -> _Reader:
    """Everything but the partitions: version, brokers, name; a reader ready for the partitions."""
    doc = obj(doc, source)
    version = field(doc, "version", source, _FIELDS_HINT)
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise InputError(f"{source}: unknown snapshot version {shown(version)}",
                         hint=f"this tool reads version {FORMAT_VERSION}; regenerate the snapshot")
    brokers, parts = field(doc, "brokers", source, _FIELDS_HINT), field(doc, "partitions", source, _FIELDS_HINT)
    brokers = array(brokers, f"{source}: 'brokers'", nonempty=True)
    array(parts, f"{source}: 'partitions'")
    name = doc.get("name")
    if name is not None:
        string(name, f"{source}: name", allow_empty=True)

    n = len(brokers)
    ids = np.empty(n, dtype=np.int64)
    cap = np.empty((n, NR), dtype=np.float64)
    alive = np.empty(n, dtype=bool)
    racks: list[str | None] = []
    hosts: list[str | None] = []
    pos: dict[int, int] = {}
    for i, b in enumerate(brokers):
        where = f"{source}: brokers[{i}]"
        b = obj(b, where)
        bid = broker_id(field(b, "id", where, _FIELDS_HINT), f"{where}: id")
        where = f"{source}: broker {bid}"
        if bid in pos:
            raise InputError(f"{where} is listed twice", hint="each broker id appears once in 'brokers'")
        pos[bid] = i
        ids[i] = bid
        c = b.get("capacity")
        if not isinstance(c, dict):
            raise InputError(f"{where}: capacity is {'missing' if c is None else shown(c)}",
                             hint="give cpu, disk, nw_in, nw_out capacity")
        for r, res in enumerate(RESOURCES):
            if res not in c:
                raise InputError(f"{where}: capacity.{res} is missing", hint=f"set capacity.{res} > 0")
            cap[i, r] = number(c[res], f"{where}: capacity.{res}", positive=True,
                               hint="capacities are positive numbers (snapshot-format.md gives the units)")
        rack, host = b.get("rack"), b.get("host")
        for label, val in (("rack", rack), ("host", host)):
            if val is not None and not isinstance(val, str):
                raise InputError(f"{where}: {label} {shown(val)} must be a string or null")
        racks.append(rack)
        hosts.append(host)
        alive[i] = boolean(b.get("alive", True), f"{where}: alive")
    return _Reader(source, name, ids, cap, alive, racks, hosts, pos)


class _Plain:
    """The plainly valid partitions of one slice, kept in flat lists and stored in the slice's arrays at
    once (one array write per column instead of six per partition)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: list[int] = []
        self.topic: list[int] = []
        self.num: list[int] = []
        self.replicas: list[int] = []  # ``width`` per partition, -1 padded
        self.leader: list[int] = []
        self.loads: list[float] = []  # leader's four, then follower's four, per partition

    def add(self, j: int, topic: int, num: int, rows: list[int], lead: int, lload: list[float],
            fload: list[float]) -> None:
        self.rows.append(j)
        self.topic.append(topic)
        self.num.append(num)
        self.replicas += rows
        self.replicas += [-1] * (self.width - len(rows))
        self.leader.append(lead)
        self.loads += lload
        self.loads += fload

    def store(self, replicas: np.ndarray, leader: np.ndarray, tidx: np.ndarray, pnum: np.ndarray,
              lload: np.ndarray, fload: np.ndarray) -> None:
        if not self.rows:
            return
        at = np.asarray(self.rows, dtype=np.int64)
        replicas[at] = np.asarray(self.replicas, dtype=np.int32).reshape(at.size, self.width)
        leader[at] = np.asarray(self.leader, dtype=np.int32)
        tidx[at] = np.asarray(self.topic, dtype=np.int32)
        pnum[at] = np.asarray(self.num, dtype=np.int32)
        loads = np.asarray(self.loads, dtype=np.float64).reshape(at.size, 2, lload.shape[1])
        lload[at] = loads[:, 0]
        fload[at] = loads[:, 1]


class _Reader:
    """Partitions, validated and turned into arrays one list (or slice of the list) at a time."""

    def __init__(
        self,
        source: str,
        name: str | None,
        ids: np.ndarray,
        cap: np.ndarray,
        alive: np.ndarray,
        racks: list[str | None],
        hosts: list[str | None],
        pos: dict[int, int],
    ) -> None:
        self.source, self.name, self.ids, self.cap, self.alive = source, name, ids, cap, alive
        self.racks, self.hosts, self.pos = racks, hosts, pos
        n = len(pos)
        self.known = f"known: {', '.join(str(x) for x in sorted(pos))}" if n <= 12 else f"{n} brokers known"
        self.topics: dict[str, int] = {}
        self.seen: set[tuple[str, int]] = set()
        self.slices: list[tuple[np.ndarray, ...]] = []

    def add(self, parts: list[Any], offset: int) -> None:
        """Validate and convert ``parts``, the partitions from index ``offset`` on."""
        source, pos, known, topics, seen = self.source, self.pos, self.known, self.topics, self.seen
        n = len(pos)
        p_count = len(parts)
        width = 1
        for pr in parts:
            reps = pr.get("replicas") if isinstance(pr, dict) else None
            if isinstance(reps, list):
                width = max(width, min(len(reps), n + 1))
        replicas = np.full((p_count, width), -1, dtype=np.int32)
        leader = np.empty(p_count, dtype=np.int32)
        tidx = np.empty(p_count, dtype=np.int32)
        pnum = np.empty(p_count, dtype=np.int32)
        lload = np.empty((p_count, NR), dtype=np.float64)
        fload = np.empty((p_count, NR), dtype=np.float64)
        plain = _Plain(width)
        for j, pr in enumerate(parts):
            if self._plain(pr, j, plain):
                continue
            # anything not plain goes through the checks below, which name what is wrong
            where = f"{source}: partitions[{offset + j}]"
            pr = obj(pr, where)
            topic = string(field(pr, "topic", where, _FIELDS_HINT), f"{where}: topic")
            num = partition_number(field(pr, "partition", where, _FIELDS_HINT), f"{where}: partition")
            label = f"{source}: partition {topic}-{num}"
            key = (topic, num)
            if key in seen:
                raise InputError(f"{label} is listed twice", hint="each (topic, partition) appears once")
            seen.add(key)
            tidx[j] = topics.setdefault(topic, len(topics))
            pnum[j] = num
            reps = field(pr, "replicas", label, _FIELDS_HINT)
            if not isinstance(reps, list) or not reps:
                raise InputError(f"{label}: replicas {shown(reps)} must be a non-empty list of broker ids")
            for k, rb in enumerate(reps):
                bp = pos.get(rb) if isinstance(rb, int) and not isinstance(rb, bool) else None
                if bp is None:
                    raise InputError(
                        f"{label}: replicas[{k}] is {shown(rb)}, not a known broker ({known})",
                        hint=f"add broker {shown(rb)} to 'brokers' or fix the replica list of {topic}-{num}",
                    )
                if k >= width:  # more replicas than brokers: one must repeat
                    break
                replicas[j, k] = bp
            if len(set(reps)) != len(reps):
                dup = next(b for b in reps if reps.count(b) > 1)
                raise InputError(f"{label}: broker {dup} appears twice in replicas {shown(reps)}",
                                 hint="a partition has at most one replica per broker")
            ld = field(pr, "leader", label, _FIELDS_HINT)
            if ld is None or (ld == -1 and not isinstance(ld, bool)):
                leader[j] = -1
            elif isinstance(ld, int) and not isinstance(ld, bool) and ld in reps:
                leader[j] = pos[ld]
            else:
                raise InputError(
                    f"{label}: leader {shown(ld)} is not among its replicas {shown(reps)}",
                    hint="the leader must be one of the replicas (or -1 when the partition is offline)",
                )
            load = obj(field(pr, "load", label, _FIELDS_HINT), f"{label}: load")
            for role, arr in (("leader", lload), ("follower", fload)):
                rl = field(load, role, f"{label}: load", _FIELDS_HINT)
                if not isinstance(rl, dict):
                    raise InputError(f"{label}: load.{role} must be an object of cpu, disk, nw_in, nw_out")
                for r, res in enumerate(RESOURCES):
                    if res not in rl:
                        raise InputError(f"{label}: load.{role}.{res} is missing")
                    v = rl[res]
                    if type(v) is float and 0.0 <= v < _INF:  # the common case, without building its label
                        arr[j, r] = v
                        continue
                    arr[j, r] = number(v, f"{label}: load.{role}.{res}",
                                       hint="loads are finite numbers >= 0 (snapshot-format.md gives the units)")
        plain.store(replicas, leader, tidx, pnum, lload, fload)
        self.slices.append((replicas, leader, tidx, pnum, lload, fload))

    def _plain(self, pr: Any, j: int, plain: _Plain) -> bool:
        """Keep partition ``pr`` for row ``j`` in ``plain`` if it is plainly valid (what almost every partition
        is), else change nothing and return False. Plain: every check of ``add`` passes with no conversion
        (ids and the partition number are ints, loads floats in [0, inf)); what is stored is what ``add``
        stores."""
        if type(pr) is not dict:
            return False
        topic, num, reps = pr.get("topic"), pr.get("partition"), pr.get("replicas")
        if not (type(topic) is str and topic and type(num) is int and 0 <= num <= INT32_MAX
                and type(reps) is list and 0 < len(reps) <= plain.width and "leader" in pr):
            return False
        key = (topic, num)
        if key in self.seen:
            return False
        pos = self.pos
        rows = [pos.get(rb) if type(rb) is int else None for rb in reps]
        if None in rows or len(set(reps)) != len(reps):
            return False
        ld = pr["leader"]
        if ld is None or (type(ld) is int and ld == -1):
            lead = -1
        elif type(ld) is int and ld in reps:
            lead = pos[ld]
        else:
            return False
        load = pr.get("load")
        if type(load) is not dict:
            return False
        vals: list[list[float]] = []
        for role in ("leader", "follower"):
            rl = load.get(role)
            if type(rl) is not dict:
                return False
            try:
                row = list(_LOAD_FIELDS(rl))
            except KeyError:
                return False
            for v in row:
                if type(v) is not float or not 0.0 <= v < _INF:
                    return False
            vals.append(row)
        self.seen.add(key)
        t = self.topics.setdefault(topic, len(self.topics))
        plain.add(j, t, num, cast(list[int], rows), lead, vals[0], vals[1])
        return True

    def finish(self) -> Snapshot:
        width = max([1] + [sl[0].shape[1] for sl in self.slices])
        reps = [np.pad(sl[0], ((0, 0), (0, width - sl[0].shape[1])), constant_values=-1) for sl in self.slices]
        replicas = np.concatenate(reps) if reps else np.full((0, width), -1, dtype=np.int32)

        def cat(k: int, shape: tuple[int, ...], dtype: type) -> np.ndarray:
            return np.concatenate([sl[k] for sl in self.slices]) if self.slices else np.empty(shape, dtype=dtype)

        rack_idx, rack_names = _intern(self.racks)
        host_idx, host_names = _intern(self.hosts)
        snap = Snapshot(
            broker_ids=self.ids,
            rack_idx=rack_idx,
            rack_names=rack_names,
            host_idx=host_idx,
            host_names=host_names,
            alive=self.alive,
            capacity=self.cap,
            topics=tuple(self.topics),
            topic_idx=cat(2, (0,), np.int32),
            partition=cat(3, (0,), np.int32),
            replicas=replicas,
            rf=(replicas >= 0).sum(axis=1).astype(np.int32),
            leader=cat(1, (0,), np.int32),
            leader_load=cat(4, (0, NR), np.float64),
            follower_load=cat(5, (0, NR), np.float64),
            name=self.name,
        )
        check_magnitudes(snap, self.source)
        return snap


def check_magnitudes(snap: Snapshot, source: str) -> None:
    """Refuse loads and capacities whose sums, or whose worst utilisation, overflow the planner's doubles."""
    with np.errstate(over="ignore", invalid="ignore"):
        totals = total_load(snap)
        cap_sum = snap.capacity.sum(axis=0)
        smallest = snap.capacity.min(axis=0)
        worst = totals / smallest
    for r, res in enumerate(RESOURCES):
        if not np.isfinite(totals[r]):
            raise InputError(f"{source}: the partitions' {res} loads add up to more than the largest number "
                             f"({np.finfo(np.float64).max:.3g})",
                             hint=f"check the unit of load.*.{res} (snapshot-format.md)")
        if not np.isfinite(cap_sum[r]):
            raise InputError(f"{source}: the brokers' capacity.{res} add up to more than the largest number "
                             f"({np.finfo(np.float64).max:.3g})",
                             hint=f"check the unit of capacity.{res} (snapshot-format.md)")
        if not worst[r] <= MAX_UTILISATION:
            b = int(snap.broker_ids[int(np.argmin(snap.capacity[:, r]))])
            raise InputError(f"{source}: the {res} load ({totals[r]:.3g}) on broker {b} "
                             f"(capacity.{res} {smallest[r]:.3g}) would be a utilisation of {worst[r]:.3g}; "
                             f"the planner works up to {MAX_UTILISATION:.0e}",
                             hint=f"loads and capacity.{res} must be in the same unit (snapshot-format.md)")
