"""Read, validate and write snapshots in the format of ``snapshot-format.md`` (version 1).

Every problem is reported as one :class:`InputError` naming the broker, partition and field, e.g.::

    snap.json: partition orders-3: replica 7 is not a known broker (known: 0..5)
      hint: add broker 7 to "brokers" or fix the replica list of orders-3

A leader of ``-1`` or ``null`` means the partition has no leader now (offline); Kafka reports -1.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from kafka_balancer.errors import InputError
from kafka_balancer.model.fileio import read_input_bytes, write_atomic
from kafka_balancer.model.snapshot import NR, RESOURCES, Snapshot, _intern

FORMAT_VERSION = 1
_INT32_MAX = 2**31 - 1


def read_snapshot(path: str | Path) -> Snapshot:
    p = Path(path)
    raw = read_input_bytes(p, "a snapshot JSON file")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"{p}: not valid JSON: {exc}", hint="check the file is a complete snapshot (version 1)"
        ) from None
    return snapshot_from_dict(doc, source=str(p))


def _num(value: Any, where: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where} is {value!r}, not a number", hint="loads and capacities are numbers")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        need = "a positive number" if positive else "a non-negative number"
        raise InputError(f"{where} is {value!r}; it must be {need}")
    return v


def _field(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict):
        raise InputError(f"{where} must be a JSON object, found {type(obj).__name__}")
    if key not in obj:
        raise InputError(f"{where}: field {key!r} is missing", hint="see snapshot-format.md for the fields")
    return obj[key]


def snapshot_from_dict(doc: Any, source: str = "snapshot") -> Snapshot:
    """Validate a parsed snapshot document and turn it into a :class:`Snapshot`."""
    version = _field(doc, "version", source)
    if version != FORMAT_VERSION:
        raise InputError(
            f"{source}: unknown snapshot version {version!r}",
            hint=f"this tool reads version {FORMAT_VERSION}; regenerate the snapshot",
        )
    brokers = _field(doc, "brokers", source)
    parts = _field(doc, "partitions", source)
    if not isinstance(brokers, list) or not brokers:
        raise InputError(f"{source}: 'brokers' must be a non-empty list")
    if not isinstance(parts, list):
        raise InputError(f"{source}: 'partitions' must be a list")

    n = len(brokers)
    ids = np.empty(n, dtype=np.int64)
    cap = np.empty((n, NR), dtype=np.float64)
    alive = np.empty(n, dtype=bool)
    racks: list[str | None] = []
    hosts: list[str | None] = []
    pos: dict[int, int] = {}
    for i, b in enumerate(brokers):
        where = f"{source}: brokers[{i}]"
        bid = _field(b, "id", where)
        if isinstance(bid, bool) or not isinstance(bid, int):
            raise InputError(f"{where}: id {bid!r} is not an integer")
        where = f"{source}: broker {bid}"
        if bid in pos:
            raise InputError(f"{where} is listed twice", hint="each broker id appears once in 'brokers'")
        pos[bid] = i
        ids[i] = bid
        c = b.get("capacity")
        if not isinstance(c, dict):
            raise InputError(f"{where}: capacity is missing", hint="give cpu, disk, nw_in, nw_out capacity")
        for r, res in enumerate(RESOURCES):
            if res not in c:
                raise InputError(f"{where}: capacity.{res} is missing", hint=f"set capacity.{res} > 0")
            cap[i, r] = _num(c[res], f"{where}: capacity.{res}", positive=True)
        rack, host = b.get("rack"), b.get("host")
        for label, val in (("rack", rack), ("host", host)):
            if val is not None and not isinstance(val, str):
                raise InputError(f"{where}: {label} {val!r} must be a string or null")
        racks.append(rack)
        hosts.append(host)
        a = b.get("alive", True)
        if not isinstance(a, bool):
            raise InputError(f"{where}: alive {a!r} must be true or false")
        alive[i] = a

    p_count = len(parts)
    width = 1
    for pr in parts:
        reps = pr.get("replicas") if isinstance(pr, dict) else None
        if isinstance(reps, list):
            width = max(width, len(reps))
    replicas = np.full((p_count, width), -1, dtype=np.int32)
    leader = np.empty(p_count, dtype=np.int32)
    tidx = np.empty(p_count, dtype=np.int32)
    pnum = np.empty(p_count, dtype=np.int32)
    lload = np.empty((p_count, NR), dtype=np.float64)
    fload = np.empty((p_count, NR), dtype=np.float64)
    topics: dict[str, int] = {}
    seen: set[tuple[str, int]] = set()
    known = f"known: {', '.join(str(x) for x in sorted(pos))}" if n <= 12 else f"{n} brokers known"
    for j, pr in enumerate(parts):
        where = f"{source}: partitions[{j}]"
        topic = _field(pr, "topic", where)
        num = _field(pr, "partition", where)
        if not isinstance(topic, str) or not topic:
            raise InputError(f"{where}: topic {topic!r} must be a non-empty string")
        if isinstance(num, bool) or not isinstance(num, int) or not 0 <= num <= _INT32_MAX:
            raise InputError(f"{where}: partition {num!r} must be an integer from 0 to {_INT32_MAX}",
                             hint="Kafka partition numbers are non-negative 32-bit integers")
        label = f"{source}: partition {topic}-{num}"
        key = (topic, num)
        if key in seen:
            raise InputError(f"{label} is listed twice", hint="each (topic, partition) appears once")
        seen.add(key)
        tidx[j] = topics.setdefault(topic, len(topics))
        pnum[j] = num
        reps = _field(pr, "replicas", label)
        if not isinstance(reps, list) or not reps:
            raise InputError(f"{label}: replicas must be a non-empty list of broker ids")
        for k, rb in enumerate(reps):
            bp = pos.get(rb) if isinstance(rb, int) and not isinstance(rb, bool) else None
            if bp is None:
                raise InputError(
                    f"{label}: replica {rb!r} is not a known broker ({known})",
                    hint=f"add broker {rb} to 'brokers' or fix the replica list of {topic}-{num}",
                )
            replicas[j, k] = bp
        if len(set(reps)) != len(reps):
            dup = next(b for b in reps if reps.count(b) > 1)
            raise InputError(
                f"{label}: broker {dup} appears twice in replicas {reps}",
                hint="a partition has at most one replica per broker",
            )
        ld = _field(pr, "leader", label)
        if ld is None or ld == -1:
            leader[j] = -1
        elif isinstance(ld, int) and not isinstance(ld, bool) and ld in reps:
            leader[j] = pos[ld]
        else:
            raise InputError(
                f"{label}: leader {ld!r} is not among its replicas {reps}",
                hint="the leader must be one of the replicas (or -1 when the partition is offline)",
            )
        load = _field(pr, "load", label)
        for role, arr in (("leader", lload), ("follower", fload)):
            rl = _field(load, role, f"{label}: load")
            if not isinstance(rl, dict):
                raise InputError(f"{label}: load.{role} must be an object of cpu, disk, nw_in, nw_out")
            for r, res in enumerate(RESOURCES):
                if res not in rl:
                    raise InputError(f"{label}: load.{role}.{res} is missing")
                arr[j, r] = _num(rl[res], f"{label}: load.{role}.{res}")

    rack_idx, rack_names = _intern(racks)
    host_idx, host_names = _intern(hosts)
    name = doc.get("name")
    if name is not None and not isinstance(name, str):
        raise InputError(f"{source}: name {name!r} must be a string or null")
    return Snapshot(
        broker_ids=ids,
        rack_idx=rack_idx,
        rack_names=rack_names,
        host_idx=host_idx,
        host_names=host_names,
        alive=alive,
        capacity=cap,
        topics=tuple(topics),
        topic_idx=tidx,
        partition=pnum,
        replicas=replicas,
        rf=(replicas >= 0).sum(axis=1).astype(np.int32),
        leader=leader,
        leader_load=lload,
        follower_load=fload,
        name=name,
    )


def _loads_dict(row: np.ndarray) -> dict[str, float]:
    return {res: float(row[r]) for r, res in enumerate(RESOURCES)}


def snapshot_to_dict(snap: Snapshot) -> dict[str, Any]:
    ids = snap.broker_ids.tolist()
    brokers = []
    for i in range(snap.n_brokers):
        ri, hi = int(snap.rack_idx[i]), int(snap.host_idx[i])
        brokers.append(
            {
                "id": ids[i],
                "rack": snap.rack_names[ri] if ri >= 0 else None,
                "host": snap.host_names[hi] if hi >= 0 else None,
                "alive": bool(snap.alive[i]),
                "capacity": _loads_dict(snap.capacity[i]),
            }
        )
    id_arr = snap.broker_ids
    rep_ids = np.where(snap.replicas >= 0, id_arr[np.maximum(snap.replicas, 0)], -1).tolist()
    leaders = np.where(snap.leader >= 0, id_arr[np.maximum(snap.leader, 0)], -1).tolist()
    tnames = [snap.topics[t] for t in snap.topic_idx.tolist()]
    pnums = snap.partition.tolist()
    rfs = snap.rf.tolist()
    ll, fl = snap.leader_load.tolist(), snap.follower_load.tolist()
    parts = []
    for j in range(snap.n_partitions):
        parts.append(
            {
                "topic": tnames[j],
                "partition": pnums[j],
                "replicas": rep_ids[j][: rfs[j]],
                "leader": leaders[j],
                "load": {
                    "leader": dict(zip(RESOURCES, ll[j], strict=True)),
                    "follower": dict(zip(RESOURCES, fl[j], strict=True)),
                },
            }
        )
    doc: dict[str, Any] = {"version": FORMAT_VERSION}
    if snap.name is not None:
        doc["name"] = snap.name
    doc["brokers"] = brokers
    doc["partitions"] = parts
    return doc


def write_snapshot(snap: Snapshot, path: str | Path) -> None:
    """Write as JSON (indented when small, compact when large). Written to a temp file, then renamed."""
    opts = orjson.OPT_INDENT_2 if snap.n_partitions <= 5000 else 0
    data = orjson.dumps(snapshot_to_dict(snap), option=opts)
    write_atomic(path, data + b"\n")
