"""The end-to-end loop on a throwaway local cluster (``kafka-balancer demo``).

start 6 brokers -> skewed workload -> collect -> snapshot (Spark pipeline) -> plan -> execute ->
collect again -> figure-6 table of σ per resource measured on the live cluster before and after ->
plots + HTML report -> stop the cluster. Everything lands in ``OUT/`` (default ``out/demo``).
"""

from __future__ import annotations

import html
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from kafka_balancer.errors import ClusterError
from kafka_balancer.files.outputs import write_bytes, write_text

PAPER_SIGMA = {"cpu": (0.043, 0.012), "disk": (0.079, 0.011), "nw_in": (0.048, 0.010), "nw_out": (0.036, 0.013)}
RES = ("cpu", "disk", "nw_in", "nw_out")
# Capacities of one simulated broker for this demo's small workload (units of snapshot-format.md):
# chosen so that the mean utilisation is well below θ = 0.8 and the skew is visible.
DEMO_CAPACITY = {"cpu": 100.0, "disk": 4.0e8, "nw_in": 1.0e6, "nw_out": 1.5e6}


@dataclass
class DemoOptions:
    out: Path = Path("out/demo")
    brokers: int = 6
    collect_s: float = 60.0
    interval_s: float = 5.0
    warmup_s: float = 10.0
    settle_s: float = 15.0
    scale: float = 1.0
    seed: int = 1
    throttle: int = 50_000_000
    theta: float = 0.8
    eps: float = 0.1


@dataclass
class DemoResult:
    timings: dict[str, float] = field(default_factory=dict)
    sigma_live: dict[str, tuple[float, float]] = field(default_factory=dict)
    sigma_model: dict[str, tuple[float, float]] = field(default_factory=dict)
    plan_size: int = 0
    exec_report: dict[str, Any] = field(default_factory=dict)
    workload: dict[str, Any] = field(default_factory=dict)


def _sigma(util: list[float]) -> float:
    from kafka_balancer.planner.metrics import resource_metrics

    arr = np.array([u for u in util if not math.isnan(u)], dtype=np.float64)
    return resource_metrics(arr, 0.8, 0.1).sigma if len(arr) else math.nan


def _measure_phase(opt: DemoOptions, cluster: Any, name: str, say: Callable[[str], None]) -> dict[int, Any]:
    """Collect samples for ``collect_s`` and measure broker loads over the same span."""
    from kafka_balancer.collect import measure
    from kafka_balancer.collect.admin import connect_admin, quiet_kafka_logs
    from kafka_balancer.collect.collector import CollectOptions, collect

    urls = cluster.metrics_urls()
    r0 = measure.read(urls)
    collect(CollectOptions(bootstrap=cluster.bootstrap, out_dir=opt.out / f"samples-{name}",
                           interval_s=opt.interval_s, duration_s=opt.collect_s, metrics_urls=urls,
                           hosts=cluster.hosts(), file_format="parquet"), say=lambda m: None)
    r1 = measure.read(urls)
    admin = connect_admin(cluster.bootstrap)
    try:
        disk = measure.broker_disk(admin)
    finally:
        with quiet_kafka_logs():
            admin.close()
    loads = measure.loads(r0, r1, disk)
    say(f"   measured {name}: " + "; ".join(
        f"b{b} cpu {v[0]:.1f}% disk {v[1] / 1e6:.0f}MB in {v[2] / 1e3:.0f}kB/s out {v[3] / 1e3:.0f}kB/s"
        for b, v in loads.items()))
    return loads


def run_demo(opt: DemoOptions, say: Callable[[str], None] | None = None) -> DemoResult:
    from kafka_balancer.executor.journal import Journal
    from kafka_balancer.executor.kafka_adapter import KafkaAdapter
    from kafka_balancer.executor.runner import ExecOptions, Executor
    from kafka_balancer.localcluster.cluster import LocalCluster
    from kafka_balancer.localcluster.spec import ClusterSpec
    from kafka_balancer.model.plan_io import write_plan
    from kafka_balancer.model.snapshot_io import read_snapshot
    from kafka_balancer.planner import plan
    from kafka_balancer.sim.workload import skewed_workload
    from kafka_balancer.sim.workload_run import WorkloadRunner

    say = say or (lambda m: print(m, file=sys.stderr, flush=True))
    res = DemoResult()
    t_all = time.monotonic()
    out = opt.out
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("samples-*/*.jsonl"):
        old.unlink()
    for old in out.glob("samples-*/parquet"):
        shutil.rmtree(old)
    journal = Journal(out / "executor-journal.jsonl")
    journal.rotate()

    def lap(key: str, t0: float) -> None:
        res.timings[key] = round(time.monotonic() - t0, 1)

    cluster = LocalCluster(out / "local-cluster", ClusterSpec(brokers=opt.brokers, controllers=3,
                                                              brokers_per_host=2, heap_mb=320),
                           base_port=None)
    runner: WorkloadRunner | None = None
    try:
        t0 = time.monotonic()
        say(f"[1/9] starting a {opt.brokers}-broker local Kafka cluster (3 hosts x 2 brokers)")
        cluster.up(fresh=True)
        lap("cluster_up_s", t0)
        say(f"   ready in {res.timings['cluster_up_s']} s: {cluster.bootstrap}")

        t0 = time.monotonic()
        spec = skewed_workload(scale=opt.scale, replication=3)
        say(f"[2/9] skewed workload: {len(spec.topics)} topics, ~{spec.bytes_per_s() / 1e3:.0f} kB/s, hot keys, "
            f"backlog {sum(t.prefill_mb for t in spec.topics):.0f} MB, 3 consumer groups (seed {opt.seed})")
        runner = WorkloadRunner(cluster.bootstrap, spec, seed=opt.seed, duration_s=24 * 3600, progress=False)
        runner.start()
        if not runner.steady.wait(timeout=300):
            raise ClusterError("the workload did not finish writing its backlog within 300 s")
        time.sleep(opt.warmup_s)
        lap("workload_start_s", t0)

        t0 = time.monotonic()
        say(f"[3/9] collecting samples for {opt.collect_s:.0f} s every {opt.interval_s:.0f} s")
        before = _measure_phase(opt, cluster, "before", say)
        lap("collect_before_s", t0)

        t0 = time.monotonic()
        cap_file = out / "capacity.json"
        write_bytes(cap_file, orjson.dumps({"default": DEMO_CAPACITY}), "--out")
        say("[4/9] snapshot from the samples with the Spark pipeline")
        windows = max(2, int(opt.collect_s // 20))
        cmd = [sys.executable, "-m", "kafka_balancer.cli.main", "snapshot", "--samples", str(out / "samples-before"),
               "--out", str(out / "snapshot.json"), "--window", "20s", "--windows", str(windows),
               "--capacities", str(cap_file), "--cluster", "local"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ClusterError("the Spark pipeline failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1],
                               hint=f"re-run: {' '.join(cmd)}")
        lap("snapshot_s", t0)

        t0 = time.monotonic()
        snap = read_snapshot(out / "snapshot.json")
        result = plan(snap, opt.theta, opt.eps)
        write_plan(result.plan, out / "plan.json")
        res.plan_size = len(result.plan)
        res.sigma_model = {r: (result.before.resources[r].sigma, result.after.resources[r].sigma) for r in RES}
        lap("plan_s", t0)
        say(f"[5/9] plan: {len(result.plan)} partitions change (θ={opt.theta}, ε={opt.eps})")

        t0 = time.monotonic()
        say("[6/9] executing the plan on the live cluster")
        if len(result.plan):
            adapter = KafkaAdapter.connect(cluster.bootstrap)
            try:
                rep = Executor(adapter, journal, ExecOptions(throttle=opt.throttle), say=say).run(result.plan)
            finally:
                adapter.close()
            res.exec_report = rep.to_dict()
            say(f"   {'verified' if rep.verified else 'NOT verified'}: {rep.replica_moves} replica moves, "
                f"{rep.leader_moves} leader changes, {rep.bytes_moved / 1e6:.1f} MB in {rep.elapsed_s:.1f} s")
        lap("execute_s", t0)
        time.sleep(opt.settle_s)

        t0 = time.monotonic()
        say(f"[7/9] collecting again for {opt.collect_s:.0f} s")
        after = _measure_phase(opt, cluster, "after", say)
        lap("collect_after_s", t0)

        t0 = time.monotonic()
        caps = [DEMO_CAPACITY[r] for r in RES]
        ids = sorted(set(before) & set(after))
        ub = {r: [before[b][i] / caps[i] for b in ids] for i, r in enumerate(RES)}
        ua = {r: [after[b][i] / caps[i] for b in ids] for i, r in enumerate(RES)}
        res.sigma_live = {r: (_sigma(ub[r]), _sigma(ua[r])) for r in RES}
        say("[8/9] writing plots and the HTML report")
        _write_report(opt, res, ids, ub, ua, result)
        lap("report_s", t0)
    finally:
        if runner is not None:
            with_result = runner.stop(timeout_s=240)
            res.workload = {"produced": sum(with_result.produced.values()),
                            "consumed": {g: sum(v.values()) for g, v in with_result.consumed.items()},
                            "failed": with_result.failed, "drained": with_result.drained}
        t0 = time.monotonic()
        say("[9/9] stopping the cluster")
        cluster.down()
        lap("cluster_down_s", t0)
        res.timings["total_s"] = round(time.monotonic() - t_all, 1)
        write_bytes(out / "demo-result.json",
                    orjson.dumps(res.__dict__, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY), "--out")
    return res


def figure6_rows(res: DemoResult) -> list[list[object]]:
    rows: list[list[object]] = []
    for r in RES:
        b, a = res.sigma_live[r]
        mb, ma = res.sigma_model.get(r, (math.nan, math.nan))
        pb, pa = PAPER_SIGMA[r]
        red = f"{100 * (1 - a / b):.1f}%" if b and not math.isnan(b) and not math.isnan(a) else "-"
        rows.append([r, round(b, 4), round(a, 4), red, round(mb, 4), round(ma, 4), pb, pa,
                     f"{100 * (1 - pa / pb):.1f}%"])
    return rows


FIG6_HEADERS = ["resource", "σ before (live)", "σ after (live)", "reduction", "σ before (model)",
                "σ after (model)", "paper before", "paper after", "paper reduction"]


def _write_report(opt: DemoOptions, res: DemoResult, ids: list[int], ub: dict[str, list[float]],
                  ua: dict[str, list[float]], result: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kafka_balancer.report.plots import utilisation_before_after

    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    x = np.arange(len(ids))
    for ax, r in zip(axes.flat, RES, strict=True):
        ax.bar(x - 0.2, ub[r], width=0.4, label="before", color="#c0504d")
        ax.bar(x + 0.2, ua[r], width=0.4, label="after", color="#4f81bd")
        b, a = res.sigma_live[r]
        ax.set_title(f"{r}: σ {b:.4f} → {a:.4f} (measured)")
        ax.set_xticks(x, [str(i) for i in ids])
        ax.set_ylabel("utilisation")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("live cluster: per-broker utilisation measured before and after execution")
    fig.tight_layout()
    from kafka_balancer.report.plots import save_figure

    save_figure(fig, opt.out / "measured.png", "--out")
    plt.close(fig)
    snap_ids = result.before.resources["cpu"].util
    utilisation_before_after(result.before, result.after, list(range(1, len(snap_ids) + 1)),
                             opt.out / "model.png", title="load model (snapshot): before and after the plan")
    rows = figure6_rows(res)
    table = "<table border=1 cellpadding=4><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in FIG6_HEADERS)
    table += "</tr>" + "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                               for row in rows) + "</table>"
    ex = res.exec_report
    facts = [
        f"cluster: {opt.brokers} brokers on 3 simulated hosts (local KRaft, Kafka 4.4.0)",
        f"plan: {res.plan_size} partitions; executed: {ex.get('replica_moves', 0)} replica moves, "
        f"{ex.get('leader_moves', 0)} leader changes, {ex.get('bytes_moved', 0) / 1e6:.1f} MB, "
        f"verified={ex.get('verified')}",
        f"workload: {res.workload}",
        f"timings (s): {res.timings}",
    ]
    doc = (
        "<!doctype html><meta charset=utf-8><title>kafka-balancer demo</title>"
        "<h1>kafka-balancer: end-to-end demo on a local cluster</h1>"
        "<h2>Figure 6: σ per resource, before and after</h2>" + table +
        "<p>Live σ: from each broker's JMX exporter counters (CPU, client+replication bytes) and "
        "describe_log_dirs (disk) over the collection windows, as shares of the cluster total. Model σ: the "
        "planner's prediction on the Spark snapshot.</p>"
        "<h2>Measured</h2><img src=measured.png width=900><h2>Model</h2><img src=model.png width=900>"
        "<h2>Facts</h2><ul>" + "".join(f"<li>{html.escape(f)}</li>" for f in facts) + "</ul>"
    )
    write_text(opt.out / "report.html", doc, "--out")
