"""Disk capacities the brokers report (DescribeLogDirs v4+, Kafka 3.3 and later), and the order in which
the pipeline picks a broker's capacities.

A log dir's answer carries ``total_bytes`` and ``usable_bytes`` of the volume it is on (-1 from a broker
older than 3.3). The capacity Kafka can use on a volume is what it holds there plus what is still free,
capped at the volume's size (``min(total, usable + kafka bytes)``), so a volume shared with other data
counts only the part Kafka can have. Log dirs on the same volume report the same pair at the same moment
and are counted once. The collector writes the result next to the samples as ``broker-capacity.json``.

    >>> dirs = [{"broker": 1, "log_dirs": [
    ...     {"log_dir": "/a", "error_code": 0, "total_bytes": 1000, "usable_bytes": 600,
    ...      "topics": [{"name": "t", "partitions": [{"partition_index": 0, "partition_size": 300}]}]},
    ...     {"log_dir": "/a2", "error_code": 0, "total_bytes": 1000, "usable_bytes": 600, "topics": []}]},
    ...     {"broker": 2, "log_dirs": [{"log_dir": "/b", "error_code": 0, "total_bytes": -1, "usable_bytes": -1}]}]
    >>> disk_capacity(dirs)
    {1: 900.0}

Precedence, per broker and resource (``resolve``): the ``--capacity`` flag, then the ``--capacities`` file
(its broker entry, then its default), then the cluster's report (disk only), then the built-in default.

    >>> cap, per, src = resolve({"cpu": 100.0, "disk": 1e12}, {}, {}, {}, {1: 900.0, 2: 800.0})
    >>> per, src["brokers"]["1"]["disk"], src["default"]["disk"]
    ({1: {'disk': 900.0}, 2: {'disk': 800.0}}, 'cluster', 'default')
    >>> cap, per, src = resolve({"cpu": 100.0, "disk": 1e12}, {"disk": 5e11}, {}, {2: {"disk": 7e11}}, {1: 900.0})
    >>> cap["disk"], per, src["brokers"]["2"]["disk"]
    (500000000000.0, {}, 'flag')
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

FILE_NAME = "broker-capacity.json"


def disk_capacity(entries: Iterable[Mapping[str, Any]]) -> dict[int, float]:
    """Broker -> disk capacity in bytes, for brokers whose every log dir reports its volume."""
    out: dict[int, float] = {}
    for entry in entries:
        volumes: dict[tuple[int, int], float] = {}
        ok = True
        for d in entry.get("log_dirs", []):
            total, usable = int(d.get("total_bytes", -1)), int(d.get("usable_bytes", -1))
            if d.get("error_code", 0) or total < 0 or usable < 0:
                ok = False
                break
            held = sum(int(p["partition_size"]) for t in d.get("topics", []) for p in t["partitions"])
            volumes[(total, usable)] = volumes.get((total, usable), 0.0) + held
        if ok and volumes:
            out[int(entry["broker"])] = float(sum(min(t, u + held) for (t, u), held in volumes.items()))
    return out


def read_disk_capacity(admin: Any, brokers: list[int]) -> tuple[dict[int, float], list[dict[str, Any]]]:
    """Ask every broker for its log dirs; returns capacities and the per-dir figures (for the file). When
    the joint request fails (a broker is down), each broker is asked alone and those that answer count."""
    from kafka.errors import KafkaError

    from kafka_balancer.collect.admin import quiet_kafka_logs

    def ask(ids: list[int]) -> list[Any]:
        try:
            with quiet_kafka_logs():
                return list(admin.describe_log_dirs(None, ids)) if ids else []
        except KafkaError:
            return []

    entries = ask(brokers)
    if not entries and len(brokers) > 1:
        entries = [e for b in brokers for e in ask([b])]
    dirs = [{"broker": int(e["broker"]), "log_dir": d.get("log_dir"), "total_bytes": d.get("total_bytes", -1),
             "usable_bytes": d.get("usable_bytes", -1)} for e in entries for d in e.get("log_dirs", [])]
    return disk_capacity(entries), dirs


def write_capacity_file(out_dir: Path, cluster: str, disk: Mapping[int, float], dirs: list[dict[str, Any]]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FILE_NAME
    doc = {"v": 1, "cluster": cluster, "ts": int(time.time() * 1000), "source": "describe_log_dirs",
           "brokers": {str(b): {"disk": v} for b, v in sorted(disk.items())}, "log_dirs": dirs}
    from kafka_balancer.files.outputs import replacing

    with replacing(path, "--out", suffix=".tmp") as tmp:
        tmp.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return path


def read_capacity_file(samples_dir: Path) -> dict[int, float]:
    """Broker -> disk capacity from ``broker-capacity.json`` next to the samples ({} when absent)."""
    path = Path(samples_dir) / FILE_NAME
    if not path.is_file():
        return {}
    from kafka_balancer.errors import InputError

    try:
        doc = orjson.loads(path.read_bytes())
        return {int(b): float(v["disk"]) for b, v in doc["brokers"].items() if float(v["disk"]) > 0}
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"cannot read {path}: {exc}",
                         hint="the collector writes this file; delete it to use --capacity or the defaults") from None


def resolve(default: Mapping[str, float], flag: Mapping[str, float], file_default: Mapping[str, float],
            file_brokers: Mapping[int, Mapping[str, float]], cluster_disk: Mapping[int, float],
            ) -> tuple[dict[str, float], dict[int, dict[str, float]], dict[str, Any]]:
    """(capacity for every broker, per-broker overrides, where each value came from)."""
    cap = {**default, **file_default, **flag}
    src_default = {r: "flag" if r in flag else "file" if r in file_default else "default" for r in default}
    per: dict[int, dict[str, float]] = {}
    sources: dict[str, dict[str, str]] = {}
    for b in sorted(set(file_brokers) | set(cluster_disk)):
        mine: dict[str, float] = {}
        src = dict(src_default)
        for r in default:
            if r in flag:
                continue
            if r in file_brokers.get(b, {}):
                mine[r] = float(file_brokers[b][r])
                src[r] = "file"
            elif r in file_default:
                continue
            elif r == "disk" and b in cluster_disk:
                mine[r] = float(cluster_disk[b])
                src[r] = "cluster"
        if mine:
            per[b] = mine
        sources[str(b)] = src
    return cap, per, {"default": src_default, "brokers": sources}


def describe_sources(sources: Mapping[str, Any]) -> str:
    """One line: where the disk capacities came from.

        >>> describe_sources({"default": {"disk": "default"}, "brokers": {"1": {"disk": "cluster"},
        ...                   "2": {"disk": "cluster"}}})
        'capacity: disk from the cluster (brokers 1,2), else default'
    """
    by: dict[str, list[str]] = {}
    for b, src in sources.get("brokers", {}).items():
        by.setdefault(src.get("disk", "default"), []).append(b)
    parts = [f"disk from the {'cluster' if s == 'cluster' else s} (brokers {','.join(sorted(ids, key=int))})"
             for s, ids in sorted(by.items()) if s != sources["default"]["disk"]]
    return "capacity: " + ", ".join([*parts, f"else {sources['default']['disk']}"])


def add_to_report(report_path: Path, sources: Mapping[str, Any]) -> None:
    """Adds ``capacity_sources`` to the pipeline's report (the snapshot format has no place for it)."""
    path = Path(report_path)
    if not path.is_file():
        return
    doc = orjson.loads(path.read_bytes())
    doc["capacity_sources"] = sources
    from kafka_balancer.files.outputs import replacing

    with replacing(path, "--report", suffix=".tmp") as tmp:
        tmp.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
