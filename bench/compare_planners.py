"""Side by side: our planner, Cruise Control (normal and fast mode), Kafka's ``--generate`` placement and a
kafka-kit-style storage-only greedy, on the same snapshots, in one run, evaluated by the same code.

One command does everything (snapshot generation, every planner, evaluation, the markdown table)::

    .venv/bin/python bench/compare_planners.py                      # all cases, table into docs/benchmarks.md
    .venv/bin/python bench/compare_planners.py --cases paper,racks48 --no-write

Every planner runs in its own child process, so that its wall time (planning only, measured inside the
child) and its peak resident memory (the child's ``ru_maxrss`` from ``wait4``) are its own. Every plan is
then read back as kafka-reassign-partitions JSON and judged by ``kafka_balancer.planner.metrics`` and
``kafka_balancer.model.plan_io.apply_plan``: σ and max γ per resource, brokers over θ, hard-constraint
violations, replica moves, leader moves, bytes moved.

Cruise Control runs through the Java harness in ``bench/peers/cruise_control`` (built here with
``mvn -q package`` when its jar is missing). When the build fails, the Cruise Control rows say so, with
Maven's own error line, and the ratios against it are ``n/a``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kafka_balancer.model.plan_io import Plan, PlanEntry, apply_plan, partition_index, read_plan, write_plan
from kafka_balancer.model.snapshot import DISK, RESOURCES, Snapshot
from kafka_balancer.model.snapshot_io import read_snapshot, write_snapshot
from kafka_balancer.planner.metrics import Metrics, evaluate

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make ``bench.baselines`` importable
    sys.path.insert(0, str(ROOT))

SECTION = "## Side by side with Cruise Control"
CC_DIR = ROOT / "bench" / "peers" / "cruise_control"
CC_JAR = CC_DIR / "target" / "cc-harness.jar"
PY_PLANNERS = ("ours", "kafka-generate", "storage-greedy")
CC_PLANNERS = ("cc", "cc-fast")
ALL_PLANNERS = ("ours", "cc", "cc-fast", "kafka-generate", "storage-greedy")
# Simulator presets (kafka_balancer.sim.cluster.PRESETS), smallest first; the big two run last.
DEFAULT_CASES = ("paper", "racks48", "new-brokers", "dead-broker", "hetero", "overloaded", "large", "huge")


# --------------------------------------------------------------------------------------------- pure parts


@dataclass(frozen=True)
class Moves:
    replica_moves: int  # replicas placed on a broker that did not hold the partition
    leader_moves: int  # partitions whose leader after the plan differs from the leader before
    bytes_moved: float  # disk bytes of every added replica


@dataclass(frozen=True)
class Violations:
    rf: int = 0  # plan entries that change the replication factor
    distinct: int = 0  # plan entries naming a broker twice
    unknown: int = 0  # plan entries naming a partition or broker the cluster lacks
    live_only: int = 0  # replicas on dead brokers after the plan (moved there, or left there)
    rack_spread: int = 0  # partitions on fewer racks than before
    host_spread: int = 0  # partitions on fewer hosts than before

    def total(self) -> int:
        return self.rf + self.distinct + self.unknown + self.live_only + self.rack_spread + self.host_spread

    def as_dict(self) -> dict[str, int]:
        return {
            "rf": self.rf,
            "distinct": self.distinct,
            "unknown": self.unknown,
            "live_only": self.live_only,
            "rack_spread": self.rack_spread,
            "host_spread": self.host_spread,
        }


def split_plan(snap: Snapshot, plan: Plan) -> tuple[Plan, Violations]:
    """The plan's structurally valid entries, and counts of the invalid ones (RF, duplicates, unknown)."""
    index = partition_index(snap)
    pos = snap.broker_pos()
    ok: list[PlanEntry] = []
    rf = distinct = unknown = 0
    for e in plan.entries:
        j = index.get((e.topic, e.partition))
        if j is None or any(b not in pos for b in e.replicas):
            unknown += 1
        elif len(set(e.replicas)) != len(e.replicas):
            distinct += 1
        elif len(e.replicas) != int(snap.rf[j]):
            rf += 1
        else:
            ok.append(e)
    return Plan(tuple(ok)), Violations(rf=rf, distinct=distinct, unknown=unknown)


def _distinct_groups(group_of: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """Distinct groups (racks or hosts; -1 counts as one group) per partition row of broker positions."""
    g = np.where(replicas >= 0, group_of[np.maximum(replicas, 0)], np.iinfo(np.int32).min)
    g = np.sort(g, axis=1)
    valid = g != np.iinfo(np.int32).min
    new = np.ones_like(valid)
    new[:, 1:] = g[:, 1:] != g[:, :-1]
    return np.asarray((new & valid).sum(axis=1))


def after_violations(before: Snapshot, after: Snapshot) -> Violations:
    """Hard-constraint violations visible in the after-state (live-only, rack and host spread)."""
    rep = after.replicas
    on_dead = (rep >= 0) & ~after.alive[np.maximum(rep, 0)]
    rack = _distinct_groups(after.rack_idx, rep) < _distinct_groups(before.rack_idx, before.replicas)
    host = _distinct_groups(after.host_idx, rep) < _distinct_groups(before.host_idx, before.replicas)
    return Violations(live_only=int(on_dead.sum()), rack_spread=int(rack.sum()), host_spread=int(host.sum()))


def moves(before: Snapshot, after: Snapshot) -> Moves:
    """Replica moves, leader moves and bytes moved between two assignments of the same partitions.

    >>> import numpy as np
    >>> s = Snapshot.build(broker_ids=[0, 1, 2], capacity=np.ones((3, 4)), topics=["t"], topic_idx=[0],
    ...     partition=[0], replicas=[[0, 1]], leader=[0], leader_load=[[1, 5, 1, 1]],
    ...     follower_load=[[1, 5, 1, 0]])
    >>> moves(s, s.with_assignment(np.array([[2, 1]], dtype=np.int32), np.array([2], dtype=np.int32)))
    Moves(replica_moves=1, leader_moves=1, bytes_moved=5.0)
    """
    b, a = before.replicas, after.replicas
    width = b.shape[1]
    added = np.zeros(a.shape, dtype=bool)
    for k in range(a.shape[1]):
        col = a[:, k : k + 1]
        added[:, k] = (a[:, k] >= 0) & ~(b[:, :width] == col).any(axis=1)
    per_partition = added.sum(axis=1)
    size = before.follower_load[:, DISK]
    lead = (after.leader != before.leader) & (after.leader >= 0)
    return Moves(int(per_partition.sum()), int(lead.sum()), float((per_partition * size).sum()))


def kafka_generate(snap: Snapshot, seed: int = 0) -> Plan:
    """What ``kafka-reassign-partitions --generate`` proposes: every topic placed afresh by Kafka's own
    AdminUtils assignment over the live brokers, keeping each partition's replication factor.
    Partitions whose replica list comes out unchanged are left out of the plan."""
    from kafka_balancer.placement.kafka_default import assign

    rng = np.random.default_rng(seed)
    live = [int(b) for b in snap.broker_ids[snap.alive]]
    pos_live = np.nonzero(snap.alive)[0]
    have_racks = bool((snap.rack_idx[pos_live] >= 0).all())
    racks: dict[int, str | None] | None = None
    if have_racks:
        racks = {int(snap.broker_ids[i]): snap.rack_names[int(snap.rack_idx[i])] for i in pos_live}
    ids = snap.broker_ids
    entries: list[PlanEntry] = []
    order = np.lexsort((snap.partition, snap.topic_idx))
    bounds = np.flatnonzero(np.diff(snap.topic_idx[order])) + 1
    for rows in np.split(order, bounds):
        if rows.size == 0:
            continue
        topic = snap.topics[int(snap.topic_idx[rows[0]])]
        rf = int(snap.rf[rows].max())
        lists = assign(live, racks, int(rows.size), min(rf, len(live)), rng)
        for j, new in zip(rows.tolist(), lists, strict=True):
            want = tuple(new[: int(snap.rf[j])])
            old = tuple(int(ids[b]) for b in snap.replicas[j] if b >= 0)
            if want != old:
                entries.append(PlanEntry(topic, int(snap.partition[j]), want))
    return Plan(tuple(entries))


@dataclass
class Outcome:
    planner: str
    status: str  # "ok", "timeout", "failed", "blocked"
    detail: str = ""
    wall_s: float | None = None
    cpu_s: float | None = None
    peak_rss_mb: float | None = None
    peak_heap_mb: float | None = None
    plan_entries: int | None = None
    moves: Moves | None = None
    violations: Violations | None = None
    metrics: dict[str, dict[str, float]] | None = None
    counts: dict[str, float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def judge(before: Snapshot, plan: Plan, theta: float, eps: float) -> tuple[Moves, Violations, Metrics]:
    """Evaluate one plan against the snapshot it was made for, with the shared metrics code."""
    valid, structural = split_plan(before, plan)
    after = apply_plan(before, valid)
    v = after_violations(before, after)
    viol = Violations(structural.rf, structural.distinct, structural.unknown, v.live_only, v.rack_spread, v.host_spread)
    return moves(before, after), viol, evaluate(after, theta, eps)


def count_balance(snap: Snapshot) -> dict[str, float]:
    """What Cruise Control's default goals also balance and the seed-001 metrics do not, over live brokers:
    the coefficient of variation of replica counts and of leader counts, and the highest *potential*
    network-out utilisation (every replica a broker holds turned leader: Cruise Control's PotentialNwOutGoal).

    >>> import numpy as np
    >>> s = Snapshot.build(broker_ids=[0, 1], capacity=np.full((2, 4), 10.0), topics=["t"], topic_idx=[0, 0],
    ...     partition=[0, 1], replicas=[[0, 1], [0, 1]], leader=[0, 0],
    ...     leader_load=[[1, 1, 1, 4], [1, 1, 1, 2]], follower_load=[[1, 1, 1, 0], [1, 1, 1, 0]])
    >>> count_balance(s)
    {'replica_cv': 0.0, 'leader_cv': 1.0, 'max_potential_nw_out': 0.6}
    """
    live = snap.alive
    n = snap.n_brokers
    rep = snap.replicas
    rows, cols = np.nonzero(rep >= 0)
    brokers = rep[rows, cols]
    replicas = np.bincount(brokers, minlength=n)[live].astype(np.float64)
    has = snap.leader >= 0
    leaders = np.bincount(snap.leader[has], minlength=n)[live].astype(np.float64)
    potential = np.bincount(brokers, weights=snap.leader_load[rows, 3], minlength=n)
    pot_util = potential[live] / snap.capacity[live, 3]

    def cv(x: np.ndarray) -> float:
        m = float(x.mean()) if x.size else 0.0
        return float(x.std() / m) if m > 0 else 0.0

    return {
        "replica_cv": cv(replicas),
        "leader_cv": cv(leaders),
        "max_potential_nw_out": float(pot_util.max()) if pot_util.size else 0.0,
    }


def ratio(ours: float | None, theirs: float | None) -> str:
    """``ours ÷ theirs`` for the table; ``n/a`` when either side is missing, ``0÷0`` reads 1."""
    if ours is None or theirs is None:
        return "n/a"
    if theirs == 0:
        return "1.00" if ours == 0 else "∞"
    return f"{ours / theirs:.2f}"


def replace_section(doc: str, heading: str, body: str) -> str:
    """``doc`` with the section under ``heading`` (up to the next ``## `` heading) replaced by ``body``.

    >>> replace_section("# T\\n\\n## A\\nold\\n\\n## B\\nkeep\\n", "## A", "new\\n")
    '# T\\n\\n## A\\nnew\\n\\n## B\\nkeep\\n'
    """
    block = f"{heading}\n{body.rstrip()}\n"
    start = doc.find(heading + "\n")
    if start < 0:
        sep = "" if doc.endswith("\n\n") or not doc else ("\n" if doc.endswith("\n") else "\n\n")
        return doc + sep + block
    nxt = re.search(r"^## ", doc[start + len(heading) + 1 :], flags=re.MULTILINE)
    end = len(doc) if nxt is None else start + len(heading) + 1 + nxt.start()
    tail = doc[end:]
    return doc[:start] + block + ("\n" + tail if tail else "")


def _fmt(x: float | None, spec: str = ".3g") -> str:
    return "–" if x is None else format(x, spec)


def _counts_cells(c: dict[str, float] | None) -> str:
    if c is None:
        return " | "
    return f"{c['replica_cv']:.3f} / {c['leader_cv']:.3f} | {c['max_potential_nw_out']:.2f}"


def _mean_sigma(o: Outcome) -> float | None:
    if o.metrics is None:
        return None
    return float(np.mean([o.metrics[r]["sigma"] for r in RESOURCES]))


def render_case(case: dict[str, Any], outcomes: Sequence[Outcome]) -> str:
    """Markdown for one snapshot: one row per planner, then ours ÷ each other planner."""
    lines = [
        f"#### {case['name']} — {case['brokers']} brokers ({case['alive']} live), {case['partitions']:,} "
        f"partitions, {case['replicas']:,} replicas; η = {case['eta']:.2e}",
        "",
        "| planner | status | time s | CPU s | peak RSS MB | replica moves | leader moves | GB moved "
        "| σ cpu / disk / in / out | max γ cpu / disk / in / out | >θ | violations "
        "| CV replicas / leaders | max potential nw_out |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|---:|",
    ]
    before = case["before"]
    lines.append(
        "| *before* | | | | | | | | "
        + " / ".join(_fmt(before[r]["sigma"]) for r in RESOURCES)
        + " | "
        + " / ".join(_fmt(before[r]["gamma"], ".2f") for r in RESOURCES)
        + " | "
        + str(int(sum(before[r]["over_theta"] for r in RESOURCES)))
        + " | | "
        + _counts_cells(case.get("before_counts"))
        + " |"
    )
    for o in outcomes:
        status = o.status if not o.detail else f"{o.status}: {o.detail}"
        if o.metrics is None or o.moves is None or o.violations is None:
            lines.append(
                f"| {o.planner} | {status} | {_fmt(o.wall_s, '.2f')} | {_fmt(o.cpu_s, '.2f')} "
                f"| {_fmt(o.peak_rss_mb, '.0f')} | | | | | | | | | |"
            )
            continue
        v = o.violations
        viol = "0" if v.total() == 0 else ", ".join(f"{k} {n}" for k, n in v.as_dict().items() if n)
        over = int(sum(o.metrics[r]["over_theta"] for r in RESOURCES))
        lines.append(
            f"| {o.planner} | {status} | {_fmt(o.wall_s, '.2f')} | {_fmt(o.cpu_s, '.2f')} "
            f"| {_fmt(o.peak_rss_mb, '.0f')} "
            f"| {o.moves.replica_moves:,} | {o.moves.leader_moves:,} | {o.moves.bytes_moved / 1e9:,.1f} | "
            + " / ".join(_fmt(o.metrics[r]["sigma"]) for r in RESOURCES)
            + " | "
            + " / ".join(_fmt(o.metrics[r]["gamma"], ".2f") for r in RESOURCES)
            + f" | {over} | {viol} | {_counts_cells(o.counts)} |"
        )
    ours = next((o for o in outcomes if o.planner == "ours"), None)
    if ours is not None:
        lines += [
            "",
            "| ours ÷ | time | CPU time | bytes moved | σ cpu | σ disk | σ nw_in | σ nw_out | mean σ |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for o in outcomes:
            if o.planner == "ours":
                continue
            ok = o.metrics is not None and ours.metrics is not None
            cells = [
                ratio(ours.wall_s, o.wall_s) if o.status == "ok" and ours.status == "ok" else "n/a",
                ratio(ours.cpu_s, o.cpu_s) if o.status == "ok" and ours.status == "ok" else "n/a",
                ratio(ours.moves.bytes_moved if ours.moves else None, o.moves.bytes_moved if o.moves else None),
            ]
            for r in RESOURCES:
                cells.append(
                    ratio(ours.metrics[r]["sigma"], o.metrics[r]["sigma"])  # type: ignore[index]
                    if ok
                    else "n/a"
                )
            cells.append(ratio(_mean_sigma(ours), _mean_sigma(o)))
            lines.append(f"| {o.planner} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------- the workers


def _plan_ours(snap: Snapshot, theta: float, eps: float, seed: int) -> Plan:
    from kafka_balancer.planner import plan as plan_fn

    result: Plan = plan_fn(snap, theta=theta, eps=eps).plan
    return result


def _plan_generate(snap: Snapshot, theta: float, eps: float, seed: int) -> Plan:
    return kafka_generate(snap, seed)


def _plan_greedy(snap: Snapshot, theta: float, eps: float, seed: int) -> Plan:
    from bench.baselines.storage_greedy import storage_greedy

    return storage_greedy(snap, tolerance=eps, theta=theta).plan


WORKERS: dict[str, Callable[[Snapshot, float, float, int], Plan]] = {
    "ours": _plan_ours,
    "kafka-generate": _plan_generate,
    "storage-greedy": _plan_greedy,
}


def worker_main(args: argparse.Namespace) -> int:
    snap = read_snapshot(args.snapshot)
    t0, c0 = time.perf_counter(), time.process_time()
    plan = WORKERS[args.planner](snap, args.theta, args.eps, args.seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    write_plan(plan, args.plan)
    Path(args.stats).write_text(json.dumps({"wall_s": wall, "cpu_s": cpu, "entries": len(plan)}))
    return 0


@dataclass(frozen=True)
class ChildResult:
    returncode: int | None  # None = killed at the timeout
    peak_rss_mb: float
    elapsed_s: float
    stderr_tail: str


def run_child(cmd: Sequence[str], timeout_s: float, log: Path) -> ChildResult:
    """Run ``cmd``; its own peak RSS comes from ``wait4``. Killed (its process group) at the timeout."""
    t0 = time.monotonic()
    with log.open("wb") as err:
        proc = subprocess.Popen(list(cmd), stdout=err, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = t0 + timeout_s
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline and not killed:
                os.killpg(proc.pid, 9)
                killed = True
            time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = log.read_text(errors="replace").strip().splitlines()[-3:]
    return ChildResult(
        None if killed else proc.returncode, usage.ru_maxrss / 1024.0, time.monotonic() - t0, " | ".join(tail)[-300:]
    )


def build_cc_harness(log: Path) -> tuple[bool, str]:
    """Build the Cruise Control harness once (``mvn -q package``); (ok, first Maven error line)."""
    if CC_JAR.exists():
        return True, ""
    cmd = ["mvn", "-q", "-B", "-U", "-f", str(CC_DIR / "pom.xml"), "package", "-DskipTests"]
    res = run_child(cmd, 1200, log)
    if res.returncode == 0 and CC_JAR.exists():
        return True, ""
    text = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace"))
    errors = [ln.removeprefix("[ERROR]").strip() for ln in text.splitlines() if ln.startswith("[ERROR]")]
    errors = [e for e in errors if e] or [text.strip()[-300:]]
    first = next((e for e in errors if "Could not" in e or "Failed" in e), errors[0])
    return False, first.split(" -> [Help")[0].replace("|", "/")[:700]


def run_planner(
    planner: str, snap_path: Path, work: Path, args: argparse.Namespace, cc_state: tuple[bool, str]
) -> tuple[Outcome, Path | None]:
    plan_path = work / f"{planner}.plan.json"
    stats_path = work / f"{planner}.stats.json"
    log = work / f"{planner}.log"
    for p in (plan_path, stats_path):
        p.unlink(missing_ok=True)
    common = ["--snapshot", str(snap_path), "--plan", str(plan_path), "--stats", str(stats_path),
              "--theta", str(args.theta), "--eps", str(args.eps)]
    if planner in CC_PLANNERS:
        ok = cc_state[0]
        if not ok:
            return Outcome(planner, "blocked", "harness not built (Maven's error above)"), None
        cmd = ["java", f"-Xmx{args.cc_xmx}", "-jar", str(CC_JAR), *common]
        cmd += ["--fast"] if planner == "cc-fast" else []
        timeout = args.cc_timeout
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "_worker", "--planner", planner, *common]
        cmd += ["--seed", str(args.seed)]
        timeout = args.timeout
    res = run_child(cmd, timeout, log)
    if res.returncode is None:
        return Outcome(
            planner, "timeout", f"cut at {timeout:.0f} s", wall_s=res.elapsed_s, peak_rss_mb=res.peak_rss_mb
        ), None
    if res.returncode != 0 or not plan_path.exists():
        return Outcome(
            planner,
            "failed",
            f"exit {res.returncode}: {res.stderr_tail}".replace("|", "/"),
            peak_rss_mb=res.peak_rss_mb,
        ), None
    stats = json.loads(stats_path.read_text())
    heap = stats.get("peak_heap_bytes")
    cpu = stats.get("cpu_s")
    out = Outcome(
        planner,
        "ok",
        wall_s=float(stats["wall_s"]),
        cpu_s=None if cpu is None else float(cpu),
        peak_rss_mb=res.peak_rss_mb,
        peak_heap_mb=None if heap is None else heap / 2**20,
        extra={k: v for k, v in stats.items() if k not in ("wall_s", "cpu_s", "peak_heap_bytes")},
    )
    return out, plan_path


def simulate_command(case: str, seed: int, path: Path) -> list[str]:
    """The simulator command line that makes one case's snapshot."""
    cli = Path(sys.executable).with_name("kafka-balancer")
    return [str(cli), "simulate", "cluster", "--preset", case, "--seed", str(seed), "--out", str(path)]


def make_snapshot(case: str, seed: int, path: Path) -> Snapshot:
    """Generate one case with ``kafka-balancer simulate cluster`` (cached on disk), and read it back."""
    if not path.exists():
        cmd = simulate_command(case, seed, path)
        if Path(cmd[0]).exists():
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        else:  # no console script (package not installed): the same generator, in-process
            from kafka_balancer.sim.cluster import PRESETS, generate

            write_snapshot(generate(PRESETS[case], seed=seed), path)
    return read_snapshot(path)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_worker"]:
        wp = argparse.ArgumentParser(prog="compare_planners.py _worker")
        wp.add_argument("--planner", choices=sorted(WORKERS), required=True)
        for name in ("--snapshot", "--plan", "--stats"):
            wp.add_argument(name, required=True)
        wp.add_argument("--theta", type=float, default=0.8)
        wp.add_argument("--eps", type=float, default=0.1)
        wp.add_argument("--seed", type=int, default=1)
        return worker_main(wp.parse_args(argv[1:]))

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument(
        "--cases",
        default=",".join(DEFAULT_CASES),
        help="simulator presets, comma-separated (default: all, big ones last)",
    )
    ap.add_argument("--planners", default=",".join(ALL_PLANNERS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--theta", type=float, default=0.8)
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per Python planner run")
    ap.add_argument("--cc-timeout", type=float, default=1800.0, help="seconds per Cruise Control run")
    ap.add_argument("--cc-xmx", default="6g", help="heap of the Cruise Control JVM")
    ap.add_argument("--work", default=str(ROOT / "out" / "compare"), help="snapshots, plans, logs")
    ap.add_argument("--md", default=str(ROOT / "docs" / "benchmarks.md"))
    ap.add_argument("--no-write", action="store_true", help="print the markdown, do not edit --md")
    args = ap.parse_args(argv)
    args.load_start = os.getloadavg()[0]
    cases = [c for c in args.cases.split(",") if c]
    planners = [p for p in args.planners.split(",") if p]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    cc_state = (False, "not requested")
    if any(p in CC_PLANNERS for p in planners):
        print("building the Cruise Control harness (mvn -q package) ...", file=sys.stderr, flush=True)
        cc_state = build_cc_harness(work / "cc-build.log")
        print(f"  {'ok' if cc_state[0] else 'FAILED: ' + cc_state[1]}", file=sys.stderr, flush=True)

    sections: list[str] = []
    results: list[dict[str, Any]] = []
    for case in cases:
        cdir = work / f"{case}-s{args.seed}"
        cdir.mkdir(parents=True, exist_ok=True)
        snap_path = cdir / "snapshot.json"
        snap = make_snapshot(case, args.seed, snap_path)
        m0 = evaluate(snap, args.theta, args.eps)
        info = {
            "name": snap.name or case,
            "preset": case,
            "brokers": snap.n_brokers,
            "alive": int(snap.alive.sum()),
            "partitions": snap.n_partitions,
            "replicas": snap.n_replicas,
            "eta": m0.eta,
            "before": m0.as_dict(),
            "before_counts": count_balance(snap),
        }
        outcomes: list[Outcome] = []
        for planner in planners:
            print(f"[{case}] {planner} ...", file=sys.stderr, flush=True)
            out, plan_path = run_planner(planner, snap_path, cdir, args, cc_state)
            if plan_path is not None:
                try:
                    plan = read_plan(plan_path)
                    mv, viol, met = judge(snap, plan, args.theta, args.eps)
                    out.moves, out.violations, out.metrics = mv, viol, met.as_dict()
                    out.plan_entries = len(plan)
                    out.counts = count_balance(apply_plan(snap, split_plan(snap, plan)[0]))
                except Exception as exc:  # a plan our own reader refuses is a result too
                    out.status, out.detail = "invalid plan", str(exc)[:200]
            print(
                f"[{case}] {planner}: {out.status} {out.detail} wall={_fmt(out.wall_s, '.2f')}s",
                file=sys.stderr,
                flush=True,
            )
            outcomes.append(out)
        sections.append(render_case(info, outcomes))
        results.append({"case": info, "outcomes": [_outcome_json(o) for o in outcomes]})
        (work / "results.json").write_text(json.dumps(results, indent=1))

    md = render_section(sections, args, cc_state)
    if args.no_write:
        print(md)
    else:
        path = Path(args.md)
        doc = path.read_text() if path.exists() else "# Benchmarks\n"
        if "<!-- COMPARE:BEGIN -->" in doc:  # marked section: other sections' markers stay intact
            head, rest = doc.split("<!-- COMPARE:BEGIN -->", 1)
            doc = (
                head
                + f"<!-- COMPARE:BEGIN -->\n{SECTION}\n{md.rstrip()}\n"
                + "<!-- COMPARE:END -->"
                + rest.split("<!-- COMPARE:END -->", 1)[1]
            )
            path.write_text(doc)
        else:
            path.write_text(replace_section(doc, SECTION, md))
        print(f"wrote {SECTION!r} in {path}", file=sys.stderr)
    return 0


def _outcome_json(o: Outcome) -> dict[str, Any]:
    d = dict(o.__dict__)
    d["moves"] = None if o.moves is None else o.moves.__dict__
    d["violations"] = None if o.violations is None else o.violations.as_dict()
    return d


def _git_describe() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def render_section(sections: Sequence[str], args: argparse.Namespace, cc_state: tuple[bool, str]) -> str:
    cmd = (
        "bench/compare_planners.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        if sys.argv and sys.argv[0].endswith("compare_planners.py")
        else "bench/compare_planners.py"
    )
    cc_line = "built" if cc_state[0] else f"**not available** — {cc_state[1]}"
    head = [
        "",
        "Written by `bench/compare_planners.py`; do not edit by hand. Every planner ran in its own process "
        "on the same snapshot; every plan was judged by the same code (`kafka_balancer.planner.metrics`, "
        "`kafka_balancer.model.plan_io.apply_plan`).",
        "",
        f"- command: `.venv/bin/python {cmd.strip()}`",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores shared with other work (load average "
        f"{args.load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end), Python "
        f"{platform.python_version()}; θ = {args.theta}, ε = {args.eps}, simulator seed {args.seed}",
        f"- code: `{_git_describe()}` (`-dirty`: uncommitted changes in the tree, e.g. the planner in progress)",
        f"- Cruise Control harness (`bench/peers/cruise_control`): {cc_line}",
        "- time / CPU s = wall-clock / CPU time of planning only (snapshot parsing excluded), measured inside "
        "the planner's process (CPU time is the fairer one on a shared machine); "
        "peak RSS = that whole process (`wait4` ru_maxrss), interpreter or JVM included.",
        "- σ, max γ: seed 001's formulas (5) and (4) per resource over the live brokers; >θ: (broker, "
        "resource) pairs above θ after the plan, all four resources counted.",
        "- violations: rf / distinct / unknown (malformed plan entries), live_only (replicas on dead brokers "
        "after the plan), rack_spread / host_spread (partitions on fewer racks / hosts than before).",
        "- CV replicas / leaders: coefficient of variation of replica and leader counts per live broker; max "
        "potential nw_out: highest network-out utilisation a broker would reach if all its replicas led "
        "(Cruise Control balances these three; seed 001's metrics do not).",
        "- snapshots: `.venv/bin/kafka-balancer simulate cluster --preset <case> --seed "
        f"{args.seed} --out snapshot.json` (the headings name the preset's cluster).",
        "- ratios are ours ÷ that planner: below 1 means ours is faster, moves fewer bytes, or is more even.",
        "- why Cruise Control wins where it does: `docs/cruise-control-notes.md`.",
        "",
        "",
    ]
    return "\n".join(head) + "\n".join(sections)


if __name__ == "__main__":
    sys.exit(main())
