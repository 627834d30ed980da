"""Side by side: our planner, the real Cruise Control (its normal goal optimisation and its fast mode),
Kafka's ``--generate`` placement and a kafka-kit-style storage-only greedy, on the same snapshots, in one
run, every plan judged by the same code.

One command does everything (Cruise Control's jars installed into the local Maven repository when missing,
its harness built, snapshots generated, every planner run, the plans judged, the tables written)::

    .venv/bin/python bench/compare_planners.py --json out/compare/results.json
    .venv/bin/python bench/compare_planners.py --cases paper,hetero --planners ours,cc,cc-fast --no-write

Every planner runs in its own child process, one after another: its planning time (wall and process CPU,
measured inside the child around the planning call only) and its whole-process time (wall, and user +
system CPU from ``wait4``: interpreter or JVM start-up and reading the snapshot included) are both
reported, with its peak resident memory. Plans are read back as kafka-reassign-partitions JSON and judged
by ``kafka_balancer.planner.metrics`` and ``kafka_balancer.model.plan_io.apply_plan``, plus the count
measures Cruise Control's goals balance (replica and leader counts, per-topic spread, potential
network-out, rack repair).

Cruise Control runs through the Java harness in ``bench/peers/cruise_control`` (``bench/peers/cc.py``
installs and builds it). When a hard goal of Cruise Control cannot be met it proposes nothing: that is
recorded as its result (``failed: <its message>``), not as an error of this script.
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
from kafka_balancer.model.snapshot import DISK, NW_OUT, RESOURCES, Snapshot, broker_loads
from kafka_balancer.model.snapshot_io import read_snapshot, write_snapshot
from kafka_balancer.planner.metrics import Metrics, evaluate

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make ``bench.baselines`` and ``bench.peers`` importable
    sys.path.insert(0, str(ROOT))

from bench.peers import cc  # noqa: E402

SECTION = "## Side by side with Cruise Control"
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


def _cv(x: np.ndarray) -> float:
    m = float(x.mean()) if x.size else 0.0
    return float(x.std() / m) if m > 0 else 0.0


def topic_spread(snap: Snapshot) -> tuple[int, int]:
    """Per-topic replica spread over the live brokers (what Cruise Control's TopicReplicaDistributionGoal
    evens): replicas above their topic's even share (Σ over topics and brokers of count − ⌈n_t / B⌉ where
    positive) and the number of topics whose per-broker counts differ by more than one.

    >>> import numpy as np
    >>> s = Snapshot.build(broker_ids=[0, 1, 2], capacity=np.ones((3, 4)), topics=["a", "b"],
    ...     topic_idx=[0, 0, 0, 1], partition=[0, 1, 2, 0], replicas=[[0], [0], [1], [2]], leader=[0, 0, 1, 2],
    ...     leader_load=np.ones((4, 4)), follower_load=np.ones((4, 4)))
    >>> topic_spread(s)  # topic a: 2 / 1 / 0 on three brokers (share 1): one above, spread 2
    (1, 1)
    """
    live = np.nonzero(snap.alive)[0]
    n_topics = len(snap.topics)
    rows, cols = np.nonzero(snap.replicas >= 0)
    brokers = snap.replicas[rows, cols]
    topics = snap.topic_idx[rows].astype(np.int64)
    counts = np.bincount(topics * snap.n_brokers + brokers, minlength=n_topics * snap.n_brokers)
    counts = counts.reshape(n_topics, snap.n_brokers)[:, live]
    per_topic = counts.sum(axis=1)
    present = per_topic > 0
    share = np.ceil(per_topic / max(len(live), 1))[:, None]
    excess = int(np.maximum(counts - share, 0)[present].sum())
    uneven = int(((counts.max(axis=1) - counts.min(axis=1)) > 1)[present].sum()) if live.size else 0
    return excess, uneven


def rack_duplicates(snap: Snapshot) -> int:
    """Partitions with two replicas in one rack although a live rack without one exists (what Cruise
    Control's RackAwareGoal repairs). Brokers without a rack count as racks of their own host, as Cruise
    Control's load monitor places them; 0 when there is a single rack."""
    group = np.where(snap.rack_idx >= 0, snap.rack_idx, len(snap.rack_names) + snap.host_idx)
    n_groups = len(np.unique(group[snap.alive]))
    if n_groups <= 1:
        return 0
    rep = snap.replicas
    g = np.where(rep >= 0, group[np.maximum(rep, 0)], -1 - np.arange(rep.shape[1])[None, :])
    g = np.sort(g, axis=1)
    dup = (g[:, 1:] == g[:, :-1]) & (g[:, 1:] >= 0)
    distinct = (rep >= 0).sum(axis=1) - dup.sum(axis=1)
    rf = (rep >= 0).sum(axis=1)
    return int(((distinct < rf) & (distinct < n_groups)).sum())


def count_balance(snap: Snapshot, theta: float = 0.8) -> dict[str, float]:
    """What Cruise Control's default goals also balance and the seed-001 metrics do not, over live brokers:
    the coefficient of variation of replica counts and of leader counts, the highest *potential*
    network-out utilisation (every replica a broker holds turned leader: Cruise Control's PotentialNwOutGoal)
    and how many brokers that puts over θ, the per-topic spread (:func:`topic_spread`) and the partitions
    a rack repair would fix (:func:`rack_duplicates`).

    >>> import numpy as np
    >>> s = Snapshot.build(broker_ids=[0, 1], capacity=np.full((2, 4), 10.0), topics=["t"], topic_idx=[0, 0],
    ...     partition=[0, 1], replicas=[[0, 1], [0, 1]], leader=[0, 0],
    ...     leader_load=[[1, 1, 1, 4], [1, 1, 1, 2]], follower_load=[[1, 1, 1, 0], [1, 1, 1, 0]])
    >>> c = count_balance(s)
    >>> (c["replica_cv"], c["leader_cv"], c["max_potential_nw_out"], c["potential_nw_out_over_theta"])
    (0.0, 1.0, 0.6, 0.0)
    """
    live = snap.alive
    n = snap.n_brokers
    rep = snap.replicas
    rows, cols = np.nonzero(rep >= 0)
    brokers = rep[rows, cols]
    replicas = np.bincount(brokers, minlength=n)[live].astype(np.float64)
    has = snap.leader >= 0
    leaders = np.bincount(snap.leader[has], minlength=n)[live].astype(np.float64)
    potential = np.bincount(brokers, weights=snap.leader_load[rows, NW_OUT], minlength=n)
    pot_util = potential[live] / snap.capacity[live, NW_OUT]
    excess, uneven = topic_spread(snap)
    return {
        "replica_cv": _cv(replicas),
        "leader_cv": _cv(leaders),
        "max_potential_nw_out": float(pot_util.max()) if pot_util.size else 0.0,
        "potential_nw_out_over_theta": float((pot_util > theta).sum()),
        "topic_excess": float(excess),
        "topics_uneven": float(uneven),
        "rack_duplicates": float(rack_duplicates(snap)),
    }


def brokers_over_theta(snap: Snapshot, theta: float) -> int:
    """Live brokers above θ on at least one resource."""
    util = broker_loads(snap)[snap.alive] / snap.capacity[snap.alive]
    return int((util > theta).any(axis=1).sum())


def state_measures(snap: Snapshot, theta: float, eps: float) -> dict[str, float]:
    """Every per-state measure of the table, flat: σ and max γ per resource, their maximum, (broker,
    resource) pairs and brokers over θ, and :func:`count_balance`."""
    met = evaluate(snap, theta, eps).as_dict()
    out: dict[str, float] = {}
    for r in RESOURCES:
        out[f"sigma_{r}"] = float(met[r]["sigma"])
        out[f"gamma_{r}"] = float(met[r]["gamma"])
    out["max_gamma"] = max(out[f"gamma_{r}"] for r in RESOURCES)
    out["over_theta_pairs"] = float(sum(met[r]["over_theta"] for r in RESOURCES))
    out["over_theta_brokers"] = float(brokers_over_theta(snap, theta))
    out.update(count_balance(snap, theta))
    return out


def plan_measures(before: Snapshot, plan: Plan, theta: float, eps: float) -> tuple[dict[str, float], Violations]:
    """The after-state measures of ``plan`` plus what moved (:func:`moves`), and its violations."""
    valid, structural = split_plan(before, plan)
    after = apply_plan(before, valid)
    v = after_violations(before, after)
    viol = Violations(structural.rf, structural.distinct, structural.unknown, v.live_only, v.rack_spread, v.host_spread)
    out = state_measures(after, theta, eps)
    mv = moves(before, after)
    out.update(replica_moves=float(mv.replica_moves), leader_moves=float(mv.leader_moves), bytes_moved=mv.bytes_moved)
    out["violations"] = float(viol.total())
    return out, viol


def judge(before: Snapshot, plan: Plan, theta: float, eps: float) -> tuple[Moves, Violations, Metrics]:
    """Evaluate one plan against the snapshot it was made for, with the shared metrics code."""
    valid, structural = split_plan(before, plan)
    after = apply_plan(before, valid)
    v = after_violations(before, after)
    viol = Violations(structural.rf, structural.distinct, structural.unknown, v.live_only, v.rack_spread, v.host_spread)
    return moves(before, after), viol, evaluate(after, theta, eps)


@dataclass
class Outcome:
    planner: str
    status: str  # "ok", "failed" (no plan: Cruise Control's hard goals unmet, or a crash), "timeout"
    detail: str = ""
    wall_s: float | None = None  # planning only, inside the process
    cpu_s: float | None = None  # process CPU during planning only (every thread)
    proc_wall_s: float | None = None  # the whole child process: start-up, reading the snapshot, writing the plan
    proc_cpu_s: float | None = None  # its user + system CPU (wait4)
    peak_rss_mb: float | None = None
    peak_heap_mb: float | None = None
    load_avg: tuple[float, float, float] | None = None  # `uptime` load averages when the run started
    plan_entries: int | None = None
    measures: dict[str, float] | None = None
    violations: Violations | None = None
    extra: dict[str, Any] = field(default_factory=dict)


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


def _num(x: float) -> str:
    return f"{round(x):,}"


# (label, key in measures, formatter); "moves" rows have no *before* value
ROWS: tuple[tuple[str, str, Callable[[float], str]], ...] = (
    *((f"σ {r}", f"sigma_{r}", lambda x: f"{x:.3g}") for r in RESOURCES),
    *((f"max γ {r}", f"gamma_{r}", lambda x: f"{x:.3f}") for r in RESOURCES),
    ("max γ (any resource)", "max_gamma", lambda x: f"{x:.3f}"),
    ("(broker, resource) pairs > θ", "over_theta_pairs", _num),
    ("brokers > θ", "over_theta_brokers", _num),
    ("GB moved", "bytes_moved", lambda x: f"{x / 1e9:,.1f}"),
    ("replica moves", "replica_moves", _num),
    ("leader moves", "leader_moves", _num),
    ("replica-count CV", "replica_cv", lambda x: f"{x:.3f}"),
    ("leader-count CV", "leader_cv", lambda x: f"{x:.3f}"),
    ("topic spread: replicas above even share", "topic_excess", _num),
    ("topic spread: topics uneven (max − min > 1)", "topics_uneven", _num),
    ("max potential nw_out", "max_potential_nw_out", lambda x: f"{x:.2f}"),
    ("brokers with potential nw_out > θ", "potential_nw_out_over_theta", _num),
    ("partitions a rack repair would fix", "rack_duplicates", _num),
)


def _violations_cell(v: Violations | None) -> str:
    if v is None:
        return ""
    if v.total() == 0:
        return "0"
    return ", ".join(f"{k} {n}" for k, n in v.as_dict().items() if n)


def _status_cell(o: Outcome) -> str:
    return o.status if not o.detail else f"{o.status}: {cc.short_failure(o.detail)}"


def render_case(case: dict[str, Any], outcomes: Sequence[Outcome]) -> str:
    """Markdown for one snapshot: one row per measure, one column per planner (and the state before)."""
    head = (
        f"#### {case['name']} — {case['brokers']} brokers ({case['alive']} live), {case['partitions']:,} "
        f"partitions, {case['replicas']:,} replicas; η = {case['eta']:.2e}"
    )
    cols = ["measure", "before", *(o.planner for o in outcomes)]
    lines = [head, "", "| " + " | ".join(cols) + " |", "|---|" + "---:|" * (len(cols) - 1)]

    def row(label: str, before: str, cells: Sequence[str]) -> None:
        lines.append(f"| {label} | {before} | " + " | ".join(cells) + " |")

    row("status", "", [_status_cell(o) for o in outcomes])
    before = case["before_measures"]
    for label, key, f in ROWS:
        b = f(before[key]) if key in before else ""
        row(label, b, [f(o.measures[key]) if o.measures is not None else "" for o in outcomes])
    row("hard-constraint violations", "", [_violations_cell(o.violations) for o in outcomes])
    row("plan time s (wall / CPU)", "", [
        f"{_fmt(o.wall_s, '.2f')} / {_fmt(o.cpu_s, '.2f')}" if o.wall_s is not None else "" for o in outcomes
    ])
    row("whole process s, start-up included (wall / CPU)", "", [
        f"{_fmt(o.proc_wall_s, '.2f')} / {_fmt(o.proc_cpu_s, '.2f')}" if o.proc_wall_s is not None else ""
        for o in outcomes
    ])
    row("peak RSS MB (heap MB)", "", [
        _fmt(o.peak_rss_mb, ",.0f") + (f" ({o.peak_heap_mb:,.0f})" if o.peak_heap_mb is not None else "")
        for o in outcomes
    ])
    row("load average at start (1 / 5 / 15 min)", "", [
        " / ".join(f"{x:.1f}" for x in o.load_avg) if o.load_avg else "" for o in outcomes
    ])
    cc_goals = [o for o in outcomes if o.planner in CC_PLANNERS and o.extra.get("violated_goals_after") is not None]
    if cc_goals:
        row("Cruise Control goals violated after", "", [
            (", ".join(o.extra["violated_goals_after"]) or "none") if o in cc_goals else "" for o in outcomes
        ])
    return "\n".join(lines) + "\n"


def _mean_sigma(m: dict[str, float] | None) -> float | None:
    return None if m is None else float(np.mean([m[f"sigma_{r}"] for r in RESOURCES]))


def _pair(a: dict[str, float] | None, b: dict[str, float] | None, key: str, spec: str) -> str:
    return ("–" if a is None else format(a[key], spec)) + " / " + ("–" if b is None else format(b[key], spec))


def render_summary(results: Sequence[dict[str, Any]]) -> str:
    """One line per case and peer: the headline ratios of ours against Cruise Control (normal and fast)."""
    lines = [
        "| case | vs | peer status | σ ours ÷ peer (cpu / disk / nw_in / nw_out) | bytes ours ÷ peer "
        "| replica CV ours / peer | leader CV ours / peer | >θ pairs ours / peer | plan CPU s ours / peer "
        "| whole-process CPU s ours / peer |",
        "|---|---|---|---|---:|---|---|---|---|---|",
    ]
    for res in results:
        outs = {o["planner"]: o for o in res["outcomes"]}
        ours = outs.get("ours")
        if ours is None:
            continue
        om = ours["measures"]
        for peer in CC_PLANNERS:
            p = outs.get(peer)
            if p is None:
                continue
            pm = p["measures"]
            both = om is not None and pm is not None
            sig = " / ".join(ratio(om[f"sigma_{r}"], pm[f"sigma_{r}"]) for r in RESOURCES) if both else "n/a"

            status = p["status"] + (f" ({p['extra'].get('failed_goal', '')})" if p["status"] == "failed" else "")
            lines.append(
                f"| {res['case']['preset']} | {peer} | {status} | {sig} "
                f"| {ratio(om['bytes_moved'], pm['bytes_moved']) if both else 'n/a'} "
                f"| {_pair(om, pm, 'replica_cv', '.3f')} | {_pair(om, pm, 'leader_cv', '.3f')} "
                f"| {_pair(om, pm, 'over_theta_pairs', '.0f')} "
                f"| {_fmt(ours['cpu_s'], '.2f')} / {_fmt(p['cpu_s'], '.2f')} "
                f"| {_fmt(ours['proc_cpu_s'], '.2f')} / {_fmt(p['proc_cpu_s'], '.2f')} |"
            )
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
    cpu_s: float  # user + system CPU of the child (and its waited-for children)
    stderr_tail: str


def run_child(cmd: Sequence[str], timeout_s: float, log: Path) -> ChildResult:
    """Run ``cmd``; its own peak RSS and CPU come from ``wait4``. Killed (its process group) at the timeout."""
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
        None if killed else proc.returncode,
        usage.ru_maxrss / 1024.0,
        time.monotonic() - t0,
        usage.ru_utime + usage.ru_stime,
        " | ".join(tail)[-300:],
    )


def run_planner(
    planner: str, snap_path: Path, n_replicas: int, work: Path, args: argparse.Namespace
) -> tuple[Outcome, Path | None]:
    plan_path = work / f"{planner}.plan.json"
    stats_path = work / f"{planner}.stats.json"
    log = work / f"{planner}.log"
    for p in (plan_path, stats_path):
        p.unlink(missing_ok=True)
    common = ["--snapshot", str(snap_path), "--plan", str(plan_path), "--stats", str(stats_path),
              "--theta", str(args.theta), "--eps", str(args.eps)]
    load = os.getloadavg()
    if planner in CC_PLANNERS:
        xmx = cc.default_xmx(n_replicas) if args.cc_xmx == "auto" else args.cc_xmx
        cmd = ["java", f"-Xmx{xmx}", "-XX:+UseParallelGC", "-jar", str(cc.HARNESS_JAR), *common]
        cmd += ["--fast"] if planner == "cc-fast" else []
        timeout = args.cc_timeout
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "_worker", "--planner", planner, *common]
        cmd += ["--seed", str(args.seed)]
        timeout = args.timeout
    res = run_child(cmd, timeout, log)

    def outcome(status: str, detail: str = "") -> Outcome:
        return Outcome(planner, status, detail, proc_wall_s=res.elapsed_s, proc_cpu_s=res.cpu_s,
                       peak_rss_mb=res.peak_rss_mb, load_avg=load)

    if res.returncode is None:
        return outcome("timeout", f"cut at {timeout:.0f} s"), None
    if res.returncode != 0 or not stats_path.exists():
        return outcome("failed", f"exit {res.returncode}: {res.stderr_tail}".replace("|", "/")), None
    stats = json.loads(stats_path.read_text())
    if planner in CC_PLANNERS:
        s = cc.parse_stats(stats)
        out = outcome(s.status, cc.short_failure(s.failure) if s.status == "failed" else "")
        out.wall_s, out.cpu_s, out.peak_heap_mb = s.wall_s, s.cpu_s, s.peak_heap_mb
        out.extra = {
            "thread_cpu_s": s.thread_cpu_s, "jvm_startup_cpu_s": s.startup_cpu_s, "load_cpu_s": s.load_cpu_s,
            "failed_goal": s.failed_goal, "failure": s.failure, "proposals": s.proposals,
            "violated_goals_before": list(s.violated_before), "goal_seconds": s.goal_seconds, "xmx": xmx,
        }
        if s.status == "ok":
            out.extra["violated_goals_after"] = list(s.violated_after)
        return out, plan_path if s.status == "ok" and plan_path.exists() else None
    if not plan_path.exists():
        return outcome("failed", "no plan written"), None
    out = outcome("ok")
    out.wall_s, out.cpu_s = float(stats["wall_s"]), float(stats["cpu_s"])
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


def _outcome_json(o: Outcome) -> dict[str, Any]:
    d = dict(o.__dict__)
    d["violations"] = None if o.violations is None else o.violations.as_dict()
    return d


def _git_describe() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True, text=True, timeout=10, check=False,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def command_line(argv: Sequence[str]) -> str:
    """The command as a reader would retype it.

    >>> command_line(["--cases", "paper,hetero", "--json", "out/r.json"])
    '.venv/bin/python bench/compare_planners.py --cases paper,hetero --json out/r.json'
    """
    return " ".join([".venv/bin/python", "bench/compare_planners.py", *(shlex.quote(a) for a in argv)])


def outcome_from_json(d: dict[str, Any]) -> Outcome:
    """An :class:`Outcome` back from the results JSON (``--render`` redraws the tables from it)."""
    o = Outcome(**{k: v for k, v in d.items() if k not in ("violations", "load_avg")})
    o.violations = None if d.get("violations") is None else Violations(**d["violations"])
    o.load_avg = None if d.get("load_avg") is None else tuple(d["load_avg"])  # type: ignore[assignment]
    return o


def render_section(results: Sequence[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The whole markdown section: how it was run, the summary against Cruise Control, one table per case."""
    sections = [render_case(r["case"], [outcome_from_json(o) for o in r["outcomes"]]) for r in results]
    load = meta.get("load_start") or [float("nan")]
    load_end = meta.get("load_end") or [float("nan")]
    head = [
        "",
        "Written by `bench/compare_planners.py`; do not edit by hand. Every planner ran in its own process, "
        "one at a time, on the same snapshot; every plan was judged by the same code "
        "(`kafka_balancer.planner.metrics`, `kafka_balancer.model.plan_io.apply_plan`, and the count "
        "measures in `bench/compare_planners.py`). What the numbers mean and why each side wins where it "
        "does: `docs/cruise-control-notes.md`.",
        "",
        f"- command: `{meta['command']}`",
        f"- machine: {meta.get('machine', '?')}, {meta.get('cores', '?')} cores shared with other work (load "
        f"averages per run in each table; {load[0]:.1f} at the start, {load_end[0]:.1f} at the end), "
        f"Python {meta.get('python', '?')}; θ = {meta['theta']}, ε = {meta['eps']}, simulator seed "
        f"{meta['seed']}; last case finished {meta.get('updated', '?')}",
        f"- code: `{meta['code']}` (`-dirty`: uncommitted changes in the tree)",
        *(f"- re-run since, {', '.join(x['planners'])} only (every other planner's outcome as recorded above): "
          f"`{x['command']}` at `{x['code']}`, {x['updated']}" for x in meta.get("reruns", [])),
        f"- Cruise Control: {meta['cruise_control']}; `cc` = its goal optimisation with its default goals, "
        "`cc-fast` = the same with fast mode on; JVM heap `-Xmx` "
        + (
            "by size (2g up to 50k replicas, 6g up to 500k, 12g above)"
            if meta.get("cc_xmx", "auto") == "auto"
            else str(meta["cc_xmx"])
        ),
        "- plan time: wall-clock and process CPU (every thread: for Cruise Control its JVM's GC and JIT "
        "threads too) around the planning call only, **without** interpreter / JVM start-up and snapshot "
        "parsing. Whole process: the child's wall-clock and user + system CPU (`wait4`), **with** start-up, "
        "reading the snapshot and building the model (Cruise Control: JVM start-up, Jackson, ClusterModel). "
        "Peak RSS: that whole process (`ru_maxrss`); Cruise Control's peak heap in brackets.",
        "- σ, max γ: seed 001's formulas (5) and (4) per resource over the live brokers. >θ: (broker, "
        "resource) pairs, and brokers, above θ after the plan.",
        "- replica- / leader-count CV: coefficient of variation of replicas and leaders per live broker. Topic "
        "spread: replicas above their topic's even share ⌈n/B⌉, and topics whose per-broker counts differ by "
        "more than one. Potential nw_out: a broker's network-out if every replica it holds led, ÷ capacity. "
        "Rack repair: partitions with two replicas in one rack (a host, when brokers have no rack) while a "
        "rack without one is live.",
        "- hard-constraint violations: rf / distinct / unknown (malformed plan entries), live_only (replicas on "
        "dead brokers after the plan), rack_spread / host_spread (partitions on fewer racks / hosts than before).",
        "- a Cruise Control `failed` is its own answer: a hard goal cannot be met, so it proposes nothing "
        "(its message is quoted; the cluster stays as *before*).",
        "",
        "### Ours against Cruise Control, per case",
        "",
        render_summary(results),
        "Ratios are ours ÷ Cruise Control: below 1 means ours is more even or moves fewer bytes.",
        "",
        "### Every measure, per case",
        "",
        "",
    ]
    return "\n".join(head) + "\n".join(sections)


def run_meta(args: argparse.Namespace) -> dict[str, Any]:
    """What the section's header says about the run (kept in the results JSON, so ``--render`` can redraw)."""
    return {
        "command": command_line(args.argv),
        "theta": args.theta,
        "eps": args.eps,
        "seed": args.seed,
        "code": _git_describe(),
        "cruise_control": args.cc_status,
        "cc_xmx": args.cc_xmx,
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_start": list(args.load_start),
    }


def write_section(md_path: Path, body: str) -> None:
    doc = md_path.read_text() if md_path.exists() else "# Benchmarks\n"
    if "<!-- COMPARE:BEGIN -->" in doc:  # marked section: other sections' markers stay intact
        head, rest = doc.split("<!-- COMPARE:BEGIN -->", 1)
        tail = rest.split("<!-- COMPARE:END -->", 1)[1]
        doc = head + f"<!-- COMPARE:BEGIN -->\n{SECTION}\n{body.rstrip()}\n<!-- COMPARE:END -->" + tail
    else:
        doc = replace_section(doc, SECTION, body)
    md_path.write_text(doc)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="compare_planners.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES),
                    help="simulator presets, comma-separated (default: all, big ones last)")
    ap.add_argument("--planners", default=",".join(ALL_PLANNERS), help=f"comma-separated from {','.join(ALL_PLANNERS)}")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--theta", type=float, default=0.8)
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per Python planner run")
    ap.add_argument("--cc-timeout", type=float, default=1800.0, help="seconds per Cruise Control run")
    ap.add_argument("--cc-xmx", default="auto", help="heap of the Cruise Control JVM (default: by cluster size)")
    ap.add_argument("--cc-jars", default=None,
                    help="directory of the Cruise Control 2.5.146 jars (default: ../shared/peers/cruise-control)")
    ap.add_argument("--maven-repo", default=str(Path.home() / ".m2" / "repository"),
                    help="the local Maven repository the jars are installed into")
    ap.add_argument("--work", default=str(ROOT / "out" / "compare"), help="snapshots, plans, logs")
    ap.add_argument("--json", default=None, metavar="OUT", help="write every measure of every run here")
    ap.add_argument("--results-md", default=None, metavar="OUT", help="also write the tables to this markdown file")
    ap.add_argument("--md", default=str(ROOT / "docs" / "benchmarks.md"))
    ap.add_argument("--no-write", action="store_true", help="print the markdown, do not edit --md")
    ap.add_argument("--render", default=None, metavar="RESULTS",
                    help="redraw the tables from a results JSON written by --json; run nothing")
    ap.add_argument("--update", default=None, metavar="RESULTS",
                    help="run --planners on the cases of a results JSON written by --json, put their outcomes in "
                    "place of the recorded ones (the other planners' stay as recorded) and write it back")
    args = ap.parse_args(argv)
    args.argv = list(argv)
    unknown = [p for p in args.planners.split(",") if p and p not in ALL_PLANNERS]
    if unknown:
        ap.error(f"unknown planner {unknown[0]!r} in --planners; choose from {','.join(ALL_PLANNERS)}")
    from kafka_balancer.sim.cluster import PRESETS

    bad = [c for c in args.cases.split(",") if c and c not in PRESETS]
    if bad:
        ap.error(f"unknown case {bad[0]!r} in --cases; simulator presets are {','.join(PRESETS)}")
    return args


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

    args = parse_args(argv)
    if args.render:
        return render_main(args)
    args.load_start = os.getloadavg()
    recorded: dict[str, Any] | None = None
    if args.update:
        # the recorded run's cases, seed and goals; a planner that did not change keeps its recorded plan
        recorded = json.loads(Path(args.update).read_text())
        args.seed, args.theta, args.eps = recorded["seed"], recorded["theta"], recorded["eps"]
        args.cases = ",".join(r["case"]["preset"] for r in recorded["results"])
        args.json = args.json or args.update
    cases = [c for c in args.cases.split(",") if c]
    planners = [p for p in args.planners.split(",") if p]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    args.cc_status = "not run"
    if any(p in CC_PLANNERS for p in planners):
        print("preparing Cruise Control (jars, harness build) ...", file=sys.stderr, flush=True)
        try:
            args.cc_status = cc.prepare(ROOT, Path(args.maven_repo), work, args.cc_jars)
        except cc.CcUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"  {args.cc_status}", file=sys.stderr, flush=True)

    meta = run_meta(args)
    results: list[dict[str, Any]] = []
    for case in cases:
        cdir = work / f"{case}-s{args.seed}"
        cdir.mkdir(parents=True, exist_ok=True)
        snap_path = cdir / "snapshot.json"
        snap = make_snapshot(case, args.seed, snap_path)
        info = {
            "name": snap.name or case,
            "preset": case,
            "brokers": snap.n_brokers,
            "alive": int(snap.alive.sum()),
            "partitions": snap.n_partitions,
            "replicas": snap.n_replicas,
            "eta": evaluate(snap, args.theta, args.eps).eta,
            "before_measures": state_measures(snap, args.theta, args.eps),
        }
        outcomes: list[Outcome] = []
        for planner in planners:
            print(f"[{case}] {planner} ... (load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
            out, plan_path = run_planner(planner, snap_path, snap.n_replicas, cdir, args)
            if plan_path is not None:
                try:
                    plan = read_plan(plan_path)
                    out.measures, out.violations = plan_measures(snap, plan, args.theta, args.eps)
                    out.plan_entries = len(plan)
                except Exception as exc:  # a plan our own reader refuses is a result too
                    out.status, out.detail = "invalid plan", str(exc)[:200]
            print(
                f"[{case}] {planner}: {out.status} {out.detail[:160]} plan {_fmt(out.wall_s, '.2f')} s wall, "
                f"{_fmt(out.cpu_s, '.2f')} s CPU; process {_fmt(out.proc_cpu_s, '.2f')} s CPU, "
                f"{_fmt(out.peak_rss_mb, '.0f')} MB",
                file=sys.stderr,
                flush=True,
            )
            outcomes.append(out)
        results.append({"case": info, "outcomes": [_outcome_json(o) for o in outcomes]})
        if recorded is None:
            _write_results(args, meta, results, done=False)
    if recorded is not None:
        meta, results = merge_rerun(recorded, meta, results)
    _write_results(args, meta, results, done=True)
    return _publish(args, render_section(results, meta))


def merge_rerun(
    recorded: dict[str, Any], meta: dict[str, Any], fresh: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The recorded run with the fresh outcomes in place of the same planners' (same case, same snapshot:
    the simulator is seeded), and the re-run named in the header (an earlier re-run of no other planner is
    superseded, and dropped)."""
    by_case = {r["case"]["preset"]: {o["planner"]: o for o in r["outcomes"]} for r in fresh}
    results = []
    for r in recorded["results"]:
        new = by_case.get(r["case"]["preset"], {})
        known = {o["planner"] for o in r["outcomes"]}
        outcomes = [new.get(o["planner"], o) for o in r["outcomes"]] + [o for p, o in new.items() if p not in known]
        results.append({**r, "outcomes": outcomes})
    old = {k: v for k, v in recorded.items() if k != "results"}
    rerun = {"command": meta["command"], "code": meta["code"],
             "updated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "planners": sorted({o["planner"] for r in fresh for o in r["outcomes"]})}
    kept = [x for x in old.get("reruns", []) if not set(x["planners"]) <= set(rerun["planners"])]
    return {**old, "reruns": [*kept, rerun]}, results


def _publish(args: argparse.Namespace, md: str) -> int:
    if args.no_write:
        print(md)
    else:
        write_section(Path(args.md), md)
        print(f"wrote {SECTION!r} in {args.md}", file=sys.stderr)
    return 0


def _write_results(args: argparse.Namespace, meta: dict[str, Any], results: list[dict[str, Any]], done: bool) -> None:
    """After every case: the JSON results (``--json`` and the work folder), and ``--results-md`` so far."""
    meta["load_end"] = list(os.getloadavg())
    meta["updated"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = json.dumps({**meta, "results": results}, indent=1)
    (Path(args.work) / "results.json").write_text(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text)
    if args.results_md:
        write_results_md(Path(args.results_md), meta, results, done)


def write_results_md(path: Path, meta: dict[str, Any], results: Sequence[dict[str, Any]], done: bool) -> None:
    title = "Ours against Cruise Control: measured results" + ("" if done else " (run in progress)")
    hint = (
        "\nA subset: add `--cases paper,new-brokers,hetero` (simulator presets) and `--planners ours,cc,cc-fast`. "
        "Redraw these tables from the JSON without running anything: "
        "`.venv/bin/python bench/compare_planners.py --render out/compare/results.json --no-write`.\n"
    )
    path.write_text(f"# {title}\n\nRerun: `{meta['command']}`\n{hint}" + render_section(results, meta))


def render_main(args: argparse.Namespace) -> int:
    """``--render RESULTS``: redraw the tables from a results JSON without running anything."""
    doc = json.loads(Path(args.render).read_text())
    meta = {k: v for k, v in doc.items() if k != "results"}
    if args.results_md:
        write_results_md(Path(args.results_md), meta, doc["results"], done=True)
    return _publish(args, render_section(doc["results"], meta))


if __name__ == "__main__":
    sys.exit(main())
