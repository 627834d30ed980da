"""Bad-input sweep: several hundred bad or unusual inputs over every command, run as a new user would.

Independent of ``tests/fuzz``'s table: the commands and their flags come from the CLI's own parsers, each
flag's kind from its parser (integers, numbers, shares, durations, timeouts, seeds, sizes, bootstrap lists,
names, lists, maps, URLs, Spark settings, choices) or, for plain strings, from what the flag names (an input
file, an input folder, an output file, an output folder), and the values from pools of this script, picked
with a seeded random generator. Files are corrupted here too (seeded): truncated, wrong encodings, wrong
types at a random field, numbers at the edge of the float range, another kind of document.

Every case is a new process of the installed console script, with a deadline (a hang is a case that does
not end within it), in a scratch folder of its own as the working directory. Classified:

* ``traceback``: a Python traceback, or the catch-all "internal error";
* ``hang``: no exit within the deadline (the process group is killed);
* ``file lost``: an input file (or any file of the shared fixtures) changed or removed, a special file
  (named pipe) replaced, or a stray file left in the case's folder;
* ``exit 0 on invalid``: an input this script knows is invalid, accepted with exit code 0;
* ``long error``: an error of more than two lines (the command's own progress lines, ``pipeline: …``,
  are not counted), or one that does not start with ``error:``;
* ``no field named``: an exit 2 whose message does not name the flag (or the file) that was wrong;
* ``secret shown``: a password given in a value appears in the output.

Usage::

    .venv/bin/python bench/bad_input_sweep.py [--seed 18] [--per-flag 3] [--jobs 2] [--out DIR] [--only CMD]

Prints the tally and every failure; writes ``DIR/sweep.json`` with each case, its exit code and stderr.
Spark-needing cases are few (they take tens of seconds each); cluster-needing commands get a closed
loopback port (127.0.0.1:1), so no case ever reaches a real cluster or leaves the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXE = Path(sys.executable).with_name("kafka-balancer")
CLOSED = "127.0.0.1:1"  # nothing listens: every cluster command fails fast, on loopback only
SECRET = "s3cr3t-sweep-pw"
WARNINGS_ON = False  # --warnings: run with PYTHONWARNINGS=default, as a developer would
Value = str | bytes


@dataclass
class Case:
    label: str
    argv: list[Value]
    invalid: bool | None  # True: must not exit 0; None: unusual, any exit is fine
    names: list[str]  # at least one of them must be in the error of an exit 2
    watch: list[Path] = field(default_factory=list)  # input files that must stay as they were
    timeout: float = 60.0
    stdin: bytes = b""
    spark: bool = False


@dataclass
class Result:
    case: Case
    code: int | None
    out: str
    err: str
    seconds: float
    failures: list[str]


# ---------------------------------------------------------------- fixtures (valid inputs, made by the CLI)

def _run(argv: list[str], cwd: Path) -> None:
    subprocess.run([str(EXE), *argv], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=600)


def make_fixtures(fx: Path) -> dict[str, Path]:
    """Valid inputs of every kind, under ``fx``."""
    fx.mkdir(parents=True, exist_ok=True)
    f = {k: fx / n for k, n in [("snap", "snap.json"), ("plan", "plan.json"), ("journal", "journal.jsonl"),
                                 ("group", "group.json"), ("props", "consumer.properties"), ("caps", "caps.json"),
                                 ("state", "state"), ("samples", "samples"), ("jsonl", "samples-jsonl"),
                                 ("snaps", "snaps"), ("mapping", "mapping.json"), ("client", "client.properties"),
                                 ("serve", "serve.toml")]}
    _run(["simulate", "cluster", "--preset", "paper", "--topics", "3", "--partitions", "12", "--out", str(f["snap"])],
         fx)
    _run(["plan", "--snapshot", str(f["snap"]), "--out", str(f["plan"]), "--time-limit", "2s"], fx)
    plan = json.loads(f["plan"].read_text())["partitions"]
    keys = [[p["topic"], p["partition"]] for p in plan][:3] or [["t", 0]]
    f["journal"].write_text("\n".join(json.dumps(r) for r in [
        {"e": "start", "ts": 1_700_000_000_000, "v": 1, "plan": [[t, p, [1, 2]] for t, p in keys],
         "original": [[t, p, [2, 3]] for t, p in keys], "sizes": [[t, p, 1000] for t, p in keys],
         "options": {"throttle": 10_000_000}},
        {"e": "submit", "ts": 1_700_000_000_001, "tps": keys}]) + "\n")
    f["group"].write_text(json.dumps({"members": [{"id": "c1", "topics": ["a", "b"]}, {"id": "c2", "topics": ["a"]}],
                                      "partitions": [{"topic": "a", "partition": i, "load": 1 + i} for i in range(4)]
                                      + [{"topic": "b", "partition": 0, "load": 2.5}]}))
    f["props"].write_text("group.id=g\nmax.poll.interval.ms=300000\nsession.timeout.ms=45000\n"
                          "heartbeat.interval.ms=3000\nmax.poll.records=500\n")
    f["caps"].write_text(json.dumps({"default": {"cpu": 100, "disk": 1e12}, "brokers": {"1": {"cpu": 200}}}))
    f["state"].mkdir(exist_ok=True)
    (f["state"] / "cluster.json").write_text(json.dumps({
        "version": 1, "cluster_id": "sweepCluster01", "bootstrap": "127.0.0.1:19092",
        "spec": {"brokers": 1, "controllers": 1, "brokers_per_host": 1, "heap_mb": 256, "overrides": []},
        "nodes": [{"node": {"node_id": 1, "roles": "broker,controller", "rack": "host-0", "broker_port": 19092,
                            "metrics_port": 19192, "controller_port": 19292}, "pid": None}]}))
    from kafka_balancer.sim.cluster import ClusterSpec, generate
    from kafka_balancer.sim.samples import SampleSpec, simulate, write_jsonl, write_parquet

    rounds = simulate(generate(ClusterSpec(brokers=3, racks=0, topics=2, partitions=6, name="sw"), seed=1),
                      SampleSpec(cluster="sw", windows=2), seed=1).rounds
    write_parquet(rounds, f["samples"])
    write_jsonl(rounds, f["jsonl"])
    f["snaps"].mkdir(exist_ok=True)
    shutil.copy(f["snap"], f["snaps"] / "c1.json")
    f["mapping"].write_text("{}\n")
    f["client"].write_text("security.protocol=PLAINTEXT\n")
    f["serve"].write_text(f'bootstrap = "{CLOSED}"\n')
    return f


# ---------------------------------------------------------------- value pools by kind (value, invalid?)

V = list[tuple[Value, bool | None]]
POOLS: dict[str, V] = {
    "integer": [("", True), ("x", True), ("1.5", True), ("1e3", True), ("-1", True), ("99999999999999999999", True),
                ("١٢", True), ("0x10", True), ("nan", True), (" 7", None), ("1_000", None), ("0", None),
                ("+3", None), ("٣", True), ("1,000", True)],
    "number": [("", True), ("x", True), ("nan", True), ("inf", True), ("-inf", True), ("1e309", True),
               ("-1", None), ("1e306", None), ("١.٥", True), ("1,5", True), ("0x1p3", True), ("5e-324", None),
               ("NaN", True), ("--1", True)],
    "fraction": [("1.5", True), ("-0.1", True), ("nan", True), ("x", True), ("", True), ("2", True), ("inf", True),
                 ("0", None), ("1", None), ("1e-320", None)],
    "duration": [("0", None), ("-5s", True), ("1y", True), ("nan", True), ("inf", True), ("1e306", True),
                 ("5 parsecs", True), ("", True), ("١٠s", True), ("1e-9", None), ("10", None), ("2m", None),
                 ("99999d", True), ("s", True), ("1ss", True)],
    "timeout": [("0", True), ("-1", True), ("1e306", True), ("nan", True), ("inf", True), ("x", True),
                ("", True), ("2d", True), ("١s", True)],
    "seed": [("-1", True), ("4294967296", True), ("1e3", True), ("x", True), ("1.5", True), ("١", True),
             ("0", None), ("4294967295", None), ("", True)],
    "size": [("lots", True), ("1e30G", True), ("nan", True), ("-5M", True), ("5Q", True), ("", True),
             ("١M", True), ("inf", True), ("10MiB/s", None), ("0", None)],
    "bootstrap": [("localhost", True), ("localhost:0", True), ("localhost:99999", True),
                  ("127.0.0.1:1,,127.0.0.1:2", True), ("[::1", True), ("127.0.0.1:١٢", True), ("", True),
                  (":9092", True), ("127.0.0.1:-1", True), ("127.0.0.1:9092/x", True), ("a b:9092", True),
                  ("[::1]:1", None), ("127.0.0.1:65536", True), (b"127.0.0.1:\xff", True)],
    "text": [("", True), ("a\nb", True), (b"g\xff", True), ("\t", True), ("x" * 5000, None), ("ok-name", None),
             ("a\x1bb", True)],
    "int_list": [("0,x", True), ("7,7", True), ("-3", True), ("", True), (",", True), ("1,,2", None),
                 ("1.5", True), ("99999999999", True)],
    "floats": [("0.1,x", True), ("nan", True), ("", True), ("2", None), ("0.1,,0.2", True), ("inf", True),
               ("-0.5", True)],
    "map": [("x=http://127.0.0.1:1", True), ("1", True), ("1=ftp://127.0.0.1:1", True), ("=", True),
            ("1=http://127.0.0.1:1,1=http://127.0.0.1:2", True), ("-1=http://127.0.0.1:1", True), ("", True)],
    "url": [("ftp://127.0.0.1:1", True), ("http://", True), (f"http://u:{SECRET}@127.0.0.1:1", True),
            ("localhost:9090", True), ("http://127.0.0.1:99999", True), ("", True), ("http://[::1", True)],
    "master": [("bogus", True), ("local[0]", True), ("local[x]", True), ("spark://", True), ("local[-1]", True),
               ("", True)],
    "memory": [("lots", True), ("0", True), ("-1g", True), ("1e9g", True), ("", True), ("1.5.5g", True)],
    "capacity": [("cpu=x", True), ("cpu", True), ("disk=-1", True), ("nw_in=nan", True), ("bogus=1", True),
                 ("cpu=1e309", True), ("", True)],
    "ratio": [("1.5", True), ("-0.1", True), ("nan", True), ("x", True), ("", True)],
    "choice": [("bogus", True), ("", True), ("-", True)],
    "regex": [("(", True), ("a{2,1}", True), ("[", True), ("*", True), ("(?P<", True), ("a|", None)],
    "names": [("bogus", True), ("", True), (",", True), ("a,,b", True), ("\n", True)],
}
# Plain-string flags whose value is parsed by the command (by flag, or "command flag").
FLAG_KINDS = {"--add-brokers": "int_list", "--remove-brokers": "int_list", "--demote-brokers": "int_list",
              "--exclude-topics": "regex", "--max-moves": "integer", "--max-bytes": "size", "--goals": "names",
              "--self-healing": "names", "--strategies": "names", "fleet --out": "path:out-dir",
              "demo --out": "path:out-dir", "collect --out": "path:out-dir",
              "simulate consumers --out": "path:out-dir",
              # the service keeps its own state there: an existing folder is a fine answer, not a cluster's
              "serve --state-dir": "path:out-dir"}


def kind_of(action: argparse.Action, cmd: str) -> str:
    """The kind of value a flag takes, from its parser."""
    flag = action.option_strings[-1]
    if f"{cmd} {flag}" in FLAG_KINDS or flag in FLAG_KINDS:
        return FLAG_KINDS.get(f"{cmd} {flag}", FLAG_KINDS.get(flag, ""))
    if action.choices is not None and not isinstance(action.choices, dict):
        return "choice"
    t = action.type
    name = getattr(t, "__qualname__", getattr(t, "__name__", "")) if t is not None else ""
    for key, kind in [("timeout", "timeout"), ("duration", "duration"), ("seed", "seed"), ("size", "size"),
                      ("bootstrap", "bootstrap"), ("fraction", "fraction"), ("int_list", "int_list"),
                      ("_floats", "floats"), ("check_master", "master"), ("check_memory", "memory"),
                      ("_capacity_text", "capacity"), ("_ratio", "ratio"), ("integer", "integer"),
                      ("number", "number"), ("text", "text")]:
        if name.startswith(key):
            return kind
    if name.startswith("register"):
        return "url" if flag == "--prometheus" else "map"
    return "path:" + PATH_KINDS.get(flag, "in-file")


# What a plain-string flag names. Output flags are checked against the inputs of the same run.
PATH_KINDS = {"--out": "out-file", "--plot": "out-file", "--report": "out-file", "--tables": "out-dir",
              "--out-dir": "out-dir", "--state": "out-dir", "--samples": "in-dir", "--snapshots": "in-dir",
              "--state-dir": "state-dir", "--local-cluster": "state-dir", "--sim": "choice-ish"}


# ---------------------------------------------------------------- base invocations (valid up to the cluster)

def bases(f: dict[str, Path]) -> dict[str, tuple[list[str], dict[str, str | None], bool]]:
    """command -> (positional words, flags (None: a switch), runs Spark when accepted)."""
    closed = {"--bootstrap": CLOSED, "--timeout": "2s"}
    return {
        "plan": ([], {"--snapshot": str(f["snap"]), "--out": "p.json", "--time-limit": "2s"}, False),
        "assign": ([], {"--input": str(f["group"]), "--strategy": "balanced"}, False),
        "cancel": ([], {**closed, "--journal": str(f["journal"])}, False),
        "collect": ([], {**closed, "--out": "samples", "--rounds": "1"}, False),
        "consumers advise": ([], {"--group": "g", **closed}, False),
        "demo": ([], {"--offline": None, "--out": "demo"}, True),
        "execute": ([], {"--plan": str(f["plan"]), **closed, "--journal": "j.jsonl"}, False),
        "fleet": ([], {"--snapshots": str(f["snaps"]), "--out": "fleet"}, True),
        "group locate": ([], {"--group": "g", **closed}, False),
        "group doctor": ([], {"--config": str(f["props"])}, False),
        "local-cluster": (["status"], {"--state-dir": str(f["state"])}, False),
        "pipeline": ([], {"--samples": str(f["samples"]), "--out": "s.json", "--windows": "2"}, True),
        "snapshot": ([], {"--samples": str(f["samples"]), "--out": "s.json", "--windows": "2"}, True),
        "serve": ([], {"--bootstrap": CLOSED, "--dry-run": None, "--port": "1"}, True),
        "setup-jvm": ([], {"--quiet": None}, False),
        "simulate cluster": ([], {"--preset": "paper", "--out": "c.json"}, False),
        "simulate consumers": ([], {"--duration-s": "60", "--kill-at-s": "20", "--kill-sets": "1",
                                    "--out": "sc.json"}, False),
        "workload": ([], {**closed, "--duration": "1s"}, False),
    }


def parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    from kafka_balancer.cli.main import build_parser

    def walk(p: argparse.ArgumentParser, path: list[str]) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield " ".join(path), p
            return
        for name, sp in subs[0].choices.items():
            yield from walk(sp, [*path, name])

    yield from walk(build_parser(), [])


def argv_of(cmd: str, words: list[str], flags: dict[str, str | None], override: dict[str, Value | None]) -> list[Value]:
    merged: dict[str, Value | None] = {**flags, **override}
    out: list[Value] = [*cmd.split(), *words]
    for k, v in merged.items():
        if k.startswith("#"):
            continue
        out.append(k)
        if v is not None:
            out.append(v)
    return out


# ---------------------------------------------------------------- file corruptions (seeded)

STRUCTURAL = {"empty", "truncated", "utf-16", "latin-1 byte", "NUL", "random bytes", "a JSON list", "deep nesting"}
EDGE = ["5", -3, 2**63, 1e308, 5e-324, None, [], {}, True, "١٢", -1.5, 2**31, "", 1e-320]


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*path, k)
            yield from _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield (*path, i)
            yield from _leaves(v, (*path, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    doc = json.loads(json.dumps(doc))
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    if delete:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return doc


def corruptions(data: bytes, rng: random.Random, n: int) -> list[tuple[str, bytes]]:
    """``n`` corrupted versions of a valid file (JSON, JSON lines or text), seeded."""
    out: list[tuple[str, bytes]] = [
        ("empty", b""), ("truncated", data[: rng.randrange(1, max(2, len(data)))]),
        ("utf-16", data.decode().encode("utf-16")), ("latin-1 byte", data[:5] + b"\xe9" + data[5:]),
        ("NUL", data[:3] + b"\x00" + data[3:]), ("random bytes", bytes(rng.randrange(256) for _ in range(200))),
        ("a JSON list", b"[1, 2, 3]\n"), ("deep nesting", b"[" * 100_000 + b"]" * 100_000),
    ]
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if doc is not None:
        paths = list(_leaves(doc))
        for _ in range(max(0, n - len(out))):
            p = rng.choice(paths)
            if rng.random() < 0.2:
                out.append((f"missing {'.'.join(map(str, p))}", json.dumps(_set(doc, p, None, True)).encode()))
            else:
                v = rng.choice(EDGE)
                out.append((f"{'.'.join(map(str, p))}={v!r}"[:80], json.dumps(_set(doc, p, v)).encode()))
    elif data.count(b"\n") > 1:  # JSON lines: corrupt one line
        lines = data.split(b"\n")
        for _ in range(max(0, n - len(out))):
            i = rng.randrange(len(lines) - 1)
            try:
                rec = json.loads(lines[i])
                p = rng.choice(list(_leaves(rec)))
                v = rng.choice(EDGE)
                bad = json.dumps(_set(rec, p, v)).encode()
                label = f"line {i + 1}: {'.'.join(map(str, p))}={v!r}"[:80]
            except ValueError:
                bad, label = b"{{{", f"line {i + 1} garbage"
            out.append((label, b"\n".join([*lines[:i], bad, *lines[i + 1:]])))
    rng.shuffle(out)
    return out[:n]


# ---------------------------------------------------------------- case generation

def generate(f: dict[str, Path], work: Path, rng: random.Random, per_flag: int) -> list[Case]:
    cases: list[Case] = []
    base = bases(f)
    specials = work / "specials"
    specials.mkdir(parents=True, exist_ok=True)
    fifo = specials / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    parent_file = specials / "a-file"
    parent_file.write_text("x")
    loop = specials / "loop"
    if not loop.is_symlink():
        loop.symlink_to(loop)
    cheap_paths: V = [(str(work / "nope" / "missing.json"), True), (str(specials), True), ("/dev/null", True),
                      (str(fifo), True), (str(parent_file / "x.json"), True), (str(loop), True),
                      ("x" * 5000, True), ("-", None)]
    input_files = {"--snapshot": f["snap"], "--plan": f["plan"], "--journal": f["journal"], "--input": f["group"],
                   "--config": f["props"], "--capacities": f["caps"], "--prometheus-mapping": f["mapping"],
                   "--command-config": f["client"]}

    for cmd, parser in parsers():
        if cmd not in base:
            continue
        words, flags, spark = base[cmd]
        # a mistyped flag, and one given without its value
        value_flags = [a for a in parser._actions if a.option_strings and a.nargs != 0
                       and not isinstance(a, argparse._HelpAction)]
        switches = [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]
        for a in rng.sample(switches, min(2, len(switches))):
            flag = a.option_strings[-1]
            typo = flag[:3] + flag[4:] if len(flag) > 4 else flag + "x"
            cases.append(Case(f"{cmd}: typo {typo}", argv_of(cmd, words, flags, {typo: "1"}), True, [typo]))
            if a.nargs != 0:
                cases.append(Case(f"{cmd}: {flag} without a value", [*argv_of(cmd, words, flags, {}), flag], True,
                                  [flag]))
        for a in value_flags:
            flag = a.option_strings[-1]
            kind = kind_of(a, cmd)
            if kind.startswith("path:"):
                pool = list(cheap_paths)
                if kind in ("path:out-file", "path:out-dir"):
                    # a new path is a fine output (its own, never another case's input); a folder is one for
                    # an output folder
                    pool = [(str(work / "new" / f"{len(cases)}" / "out.json") if "missing" in str(v) else v,
                             None if "missing" in str(v) or (kind == "path:out-dir" and v == str(specials))
                             else bad) for v, bad in pool]
                    inputs = [v for k, v in flags.items() if k in input_files or k in ("--samples", "--snapshots")]
                    # an output that is an input of the run (fleet writes only *.csv/*.png, never *.json: it
                    # may share the snapshots' folder by design)
                    pool += [(v, None if cmd == "fleet" else True) for v in inputs if v]
                    if kind == "path:out-file":
                        pool += [("out.xyz", True)] if flag == "--plot" else []
                if kind == "path:state-dir":  # a folder with no cluster in it may be a fine answer
                    pool = [(v, None if "missing" in str(v) else bad) for v, bad in pool]
            else:
                pool = list(POOLS[kind])
            if spark or cmd in ("demo", "serve"):
                pool = [(v, bad) for v, bad in pool if bad]  # accepted values would run Spark or serve for ever
            for value, bad in rng.sample(pool, min(per_flag, len(pool))):
                watch = [Path(v) for v in flags.values() if v and Path(v).is_absolute() and Path(v).exists()]
                if isinstance(value, str) and Path(value).is_absolute() and Path(value).is_file():
                    watch.append(Path(value))
                named_value = isinstance(value, str) and value.startswith(("--", "/"))
                names = [flag] + ([str(value)] if named_value else [])
                cases.append(Case(f"{cmd}: {flag} {value!r}"[:120], argv_of(cmd, words, flags, {flag: value}), bad,
                                  names, watch, timeout=(300.0 if spark and cmd != "serve" else 40.0),
                                  spark=False))
    # file contents: every input kind, corrupted (seeded)
    content = [("plan", "--snapshot", f["snap"], 14), ("execute", "--plan", f["plan"], 12),
               ("cancel", "--journal", f["journal"], 12), ("assign", "--input", f["group"], 14),
               ("group doctor", "--config", f["props"], 6), ("local-cluster", "--state-dir", f["state"], 12),
               ("plan", "--snapshot", f["snap"], 0)]
    for cmd, flag, src, n in content:
        words, flags, _ = base[cmd]
        data = (src / "cluster.json").read_bytes() if src.is_dir() else src.read_bytes()
        for i, (label, blob) in enumerate(corruptions(data, rng, n)):
            structural = label in STRUCTURAL and (cmd != "group doctor" or label not in ("empty", "truncated",
                                                                                           "a JSON list"))
            d = work / "files" / f"{cmd.replace(' ', '_')}-{i}"
            d.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                (d / "cluster.json").write_bytes(blob)
                path, watch = d, [d / "cluster.json"]
            else:
                path = d / src.name
                path.write_bytes(blob)
                watch = [path]
            cases.append(Case(f"{cmd}: {flag} with {label}", argv_of(cmd, words, flags, {flag: str(path)}),
                              True if structural else None, [path.name, flag, str(path)], watch))
    # execute --resume on a corrupted journal, group doctor from stdin, assign from stdin
    for i, (label, blob) in enumerate(corruptions(f["journal"].read_bytes(), rng, 6)):
        path = work / "files" / f"resume-{i}.jsonl"
        path.write_bytes(blob)
        resume = {k: v for k, v in base["execute"][1].items() if k != "--plan"}
        cases.append(Case(f"execute --resume with {label}", argv_of("execute", [], resume,
                          {"--journal": str(path), "--resume": None}), True if label in STRUCTURAL else None,
                          [path.name, "--journal"], [path]))
    for label, blob in corruptions(f["group"].read_bytes(), rng, 4):
        cases.append(Case(f"assign --input - with {label}", ["assign", "--input", "-", "--strategy", "balanced"],
                          True if label in STRUCTURAL else None, ["--input", "stdin", "<stdin>"], stdin=blob))
    # bare groups and the bare program
    for words in (["consumers"], ["group"], ["simulate"], ["local-cluster"], []):
        cases.append(Case(f"bare {' '.join(words) or 'program'}", list(words), True, [words[0] if words else "kafka"]))
    # a few Spark cases: samples folders that are wrong
    spark_dirs: list[tuple[str, dict[str, bytes]]] = [
        ("all-garbage JSON lines", {"a.jsonl": b"garbage\n" * 20}),
        ("a Parquet file that is not Parquet", {"parquet/broker/x.parquet": b"PAR"}),
        ("no samples at all", {"readme.txt": b"nothing"}),
    ]
    for label, files in spark_dirs:
        d = work / "files" / f"samples-{label.replace(' ', '_')}"
        for name, data in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_bytes(data)
        watch = [p for p in d.rglob("*") if p.is_file()]
        cases.append(Case(f"snapshot --samples ({label})", ["snapshot", "--samples", str(d), "--out", "s.json"], True,
                          ["--samples", d.name, str(d)], watch, timeout=400.0, spark=True))
    # output safety: a user's neighbours survive a real write; the output never replaces the input
    neighbours = work / "files" / "neighbours"
    neighbours.mkdir(parents=True, exist_ok=True)
    for name in ("p.json.tmp", ".p.json.x", "notes.txt"):
        (neighbours / name).write_text("user file")
    cases.append(Case("plan --out next to a user's p.json.tmp", ["plan", "--snapshot", str(f["snap"]), "--out",
                      str(neighbours / "p.json"), "--time-limit", "2s"], None, ["--out"],
                      [neighbours / n for n in ("p.json.tmp", ".p.json.x", "notes.txt")]))
    return cases


# ---------------------------------------------------------------- running and classifying

def _tree(root: Path) -> dict[str, str]:
    state: dict[str, str] = {}
    if not root.exists():
        return state
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            state[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode)
                             else f"mode {stat.S_IFMT(st.st_mode)}")
    return state


def run_case(i: int, case: Case, work: Path, fixtures: Path) -> Result:
    scratch = work / "cases" / f"{i:04d}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    before_watch = {str(p): _tree(p) if p.is_dir() else _tree_file(p) for p in case.watch}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "KAFKA_BALANCER_DEBUG")}
    if WARNINGS_ON:
        env["PYTHONWARNINGS"] = "default"
    t0 = time.monotonic()
    proc = subprocess.Popen([str(EXE), *case.argv], cwd=scratch, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(case.stdin, timeout=case.timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    seconds = time.monotonic() - t0
    so, se = out.decode("utf-8", "backslashreplace"), err.decode("utf-8", "backslashreplace")
    fails: list[str] = []
    if "Traceback (most recent call last)" in so + se or "internal error" in se:
        fails.append("traceback")
    if code is None:
        fails.append("hang")
    for p, st in before_watch.items():  # every entry that was there is still there, unchanged
        now = _tree(Path(p)) if Path(p).is_dir() else _tree_file(Path(p))
        if any(now.get(k) != v for k, v in st.items()):
            fails.append("file lost")
            break
    if code != 0:
        stray = [p for p in _tree(scratch) if not Path(p).name.startswith(".")]
        hidden = [p for p in _tree(scratch) if Path(p).name.startswith(".")]
        if stray or hidden:
            fails.append("file lost")  # a failed run leaves nothing behind
            se += f"\n[sweep: left behind {sorted(stray + hidden)[:5]}]"
    else:
        temps = [p for p in _tree(scratch) if Path(p).name.startswith(".") and ".tmp" in Path(p).name]
        if temps:
            fails.append("file lost")
    if case.invalid and code == 0:
        fails.append("exit 0 on invalid")
    # The command's own progress and notes (``pipeline: …``, ``workload: …``, ``note: …``) are not the error.
    command = str(case.argv[0]) if case.argv else "kafka-balancer"
    progress = (f"{command}: ", "pipeline: ", "note: ", "[sweep")
    lines = [ln for ln in se.splitlines() if ln.strip() and not ln.startswith(progress)]
    if code not in (0, None):
        if len(lines) > 2 or not lines or not lines[0].startswith("error: ") or (
                len(lines) == 2 and not lines[1].startswith("  hint: ")):
            fails.append("long error")
        if code == 2 and not any(n and n in se for n in case.names):
            fails.append("no field named")
    if SECRET in so + se:
        fails.append("secret shown")
    shutil.rmtree(scratch, ignore_errors=True)
    return Result(case, code, so[-400:], se[-1500:], seconds, sorted(set(fails)))


def _tree_file(p: Path) -> dict[str, str]:
    try:
        st = os.lstat(p)
    except OSError:
        return {str(p): "missing"}
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else "special"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--per-flag", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/kb-sweep"))
    ap.add_argument("--only", default=None, help="only cases whose label starts with this")
    ap.add_argument("--no-spark", action="store_true", help="leave out the Spark cases")
    ap.add_argument("--warnings", action="store_true", help="run with PYTHONWARNINGS=default (a developer)")
    args = ap.parse_args()
    global WARNINGS_ON
    WARNINGS_ON = args.warnings
    rng = random.Random(args.seed)
    work = args.out
    for stale in ("cases", "nope", "new", "files"):  # what an earlier run created must not look like an input
        shutil.rmtree(work / stale, ignore_errors=True)
    fixtures = work / "fixtures"
    f = make_fixtures(fixtures)
    cases = generate(f, work, rng, args.per_flag)
    if args.only:
        cases = [c for c in cases if c.label.startswith(args.only)]
    if args.no_spark:
        cases = [c for c in cases if not c.spark]
    fx_before = _tree(fixtures)
    print(f"{len(cases)} cases over {len({c.label.split(':')[0] for c in cases})} commands "
          f"(seed {args.seed}, {args.jobs} at a time)", flush=True)
    t0 = time.monotonic()
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda ic: run_case(ic[0], ic[1], work, fixtures), enumerate(cases)))
    if _tree(fixtures) != fx_before:
        print("FIXTURES CHANGED: a shared input file was modified", flush=True)
    tally = Counter(f for r in results for f in r.failures)
    ok = sum(1 for r in results if not r.failures)
    by_cmd = Counter(r.case.label.split(":")[0].split(" with ")[0] for r in results)
    print(f"\n{len(results)} cases, {ok} kept the promise fully, {len(results) - ok} did not "
          f"({time.monotonic() - t0:.0f} s)")
    for k in ("traceback", "hang", "file lost", "exit 0 on invalid", "long error", "no field named", "secret shown"):
        print(f"  {k:18s} {tally.get(k, 0)}")
    print("exit codes:", dict(Counter(str(r.code) for r in results)))
    print("cases per command:", dict(sorted(by_cmd.items())))
    for r in results:
        if r.failures:
            print(f"\nFAIL {r.failures} rc={r.code} {r.case.label}\n  argv: {r.case.argv}\n  stderr: "
                  + r.err.strip().replace("\n", "\n          ")[:1200])
    (work / "sweep.json").write_text(json.dumps([{
        "label": r.case.label, "argv": [a if isinstance(a, str) else repr(a) for a in r.case.argv],
        "invalid": r.case.invalid, "code": r.code, "failures": r.failures, "stderr": r.err,
        "seconds": round(r.seconds, 2)} for r in results], indent=1))
    return 1 if len(results) - ok else 0


if __name__ == "__main__":
    sys.exit(main())
