"""The live demo: the balancer service keeping a local cluster balanced through three events.

1. start a local cluster (6 brokers on 3 simulated hosts, plus a spare broker 7, stopped) and the
   balancer service with self-healing on for every anomaly type;
2. a workload skewed by placement (``demo/workload.py``) starts; the goal-violation detector confirms the
   skew and the service rebalances it;
3. broker 6 is killed; after the grace period the service evacuates it;
4. broker 7 starts empty; the service fills it.

Each phase waits for the service's own record of it (anomaly detected -> execution finished, verified),
so the printed timeline is the service's. At the end: the dashboard screenshot (headless Chromium, when
installed), the HTML report, produced = consumed, and the cluster is stopped.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from kafka_balancer.errors import ClusterError

RES = ("cpu", "disk", "nw_in", "nw_out")
# One simulated broker's capacity for this small workload (docs/snapshot-format.md units): the mean
# utilisation stays well below θ and the skew is visible.
DEMO_CAPACITY = {"cpu": 100.0, "disk": 2.5e8, "nw_in": 3.0e5, "nw_out": 6.0e5}
KILLED, SPARE = 6, 7


@dataclass
class StoryOptions:
    out: Path = Path("out/demo")
    scale: float = 1.0
    seed: int = 1
    window_s: float = 20.0
    interval_s: float = 5.0
    grace_s: float = 45.0
    theta: float = 0.8
    eps: float = 0.2
    phase_timeout_s: float = 420.0
    port: int = 0
    screenshot: bool = True


@dataclass
class Phase:
    name: str
    started: float
    ended: float | None = None
    anomaly: dict[str, Any] | None = None
    execution: dict[str, Any] | None = None
    ok: bool = False
    note: str = ""


@dataclass
class StoryResult:
    phases: list[Phase] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    workload: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    screenshot: str | None = None
    report: str | None = None
    dashboard_url: str | None = None

    @property
    def produced_equals_consumed(self) -> bool:
        w = self.workload
        return bool(w) and all(v == w.get("expected", {}).get(g) for g, v in w.get("consumed", {}).items()) \
            and w.get("failed", 1) == 0

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.phases) and self.produced_equals_consumed


def _wait(pred: Callable[[], Any], timeout_s: float, what: str, poll_s: float = 2.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise ClusterError(f"demo: {what} did not happen within {timeout_s:.0f} s",
                               hint="see the service log lines above and out/demo/serve/")
        time.sleep(poll_s)


def _finished_for(svc: Any, atype: str, since: float) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The first anomaly of ``atype`` after ``since`` whose execution finished verified (a failed one is
    retried by the service, so the story waits on)."""
    for a in reversed(svc.anomalies(500)):
        if a["type"] != atype or a["first_seen"] < since - 1 or not a.get("execution"):
            continue
        ex = svc.executions.get(a["execution"])
        if ex and ex.get("state") == "finished" and ex.get("verified") and "sigma_after" in ex:
            return a, ex
    return None


def _filled(svc: Any, broker: int, since: float) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The filling of a new ``broker``: the execution of its new-brokers anomaly or, once the broker holds
    replicas (it held none before ``since``), the first verified execution with replica moves started
    after ``since`` (an empty broker is below the ε band too, so a goal-violation rebalance due at that
    moment fills it, and the new-brokers anomaly clears before it persists)."""
    found = _finished_for(svc, "new_brokers", since)
    if found is not None:
        return found
    if not any(b["id"] == broker and b["replicas"] > 0 for b in svc.load()["brokers"]):
        return None
    for ex in sorted(svc.executions.values(), key=lambda r: float(r.get("started", 0))):
        if (float(ex.get("started", 0)) >= since and ex.get("state") == "finished" and ex.get("verified")
                and "sigma_after" in ex and ex.get("replica_moves", 0) > 0):
            ids = set(ex.get("anomalies") or ())
            return next((a for a in svc.anomalies(500) if a["id"] in ids), {}), ex
    return None


def run_story(opt: StoryOptions, say: Callable[[str], None] | None = None) -> StoryResult:
    from kafka_balancer.demo.workload import balanceable_workload, create_skewed_topics
    from kafka_balancer.localcluster.cluster import LocalCluster
    from kafka_balancer.localcluster.spec import ClusterSpec
    from kafka_balancer.serve.config import ANOMALY_TYPES, ServeConfig
    from kafka_balancer.serve.runtime import Started, start
    from kafka_balancer.sim.workload_run import WorkloadRunner

    say = say or (lambda m: print(m, file=sys.stderr, flush=True))
    res = StoryResult()
    t_all = time.monotonic()
    out = opt.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    serve_dir = out / "serve"
    if serve_dir.exists():
        import shutil

        shutil.rmtree(serve_dir)
    cluster = LocalCluster(out / "local-cluster", ClusterSpec(brokers=7, controllers=3, brokers_per_host=2,
                                                              heap_mb=288), base_port=None)
    runner: WorkloadRunner | None = None
    started: Started | None = None
    spec = balanceable_workload(opt.scale)
    try:
        t0 = time.monotonic()
        say("[1/6] starting a local Kafka cluster: brokers 1-6 on 3 simulated hosts, spare broker 7 stopped")
        cluster.up(fresh=True)
        cluster.kill_broker(SPARE)  # before any topic exists: it joins later as a new, empty broker
        cluster.wait_fenced([SPARE])  # until then, metadata may send a client to it, which refuses
        res.timings["cluster_up_s"] = round(time.monotonic() - t0, 1)

        t0 = time.monotonic()
        say(f"[2/6] skewed workload: {len(spec.topics)} topics placed mostly on brokers 1-2, "
            f"~{spec.bytes_per_s() / 1e3:.0f} kB/s, backlog {sum(t.prefill_mb for t in spec.topics):.0f} MB")
        create_skewed_topics(cluster.running_bootstrap, spec, [1, 2, 3, 4, 5, 6], opt.seed)
        runner = WorkloadRunner(cluster.running_bootstrap, spec, seed=opt.seed, duration_s=24 * 3600, progress=False,
                                connect_timeout_s=60.0)
        runner.start()
        deadline = time.monotonic() + 300
        while not runner.steady.wait(timeout=2):
            runner.wait(timeout_s=0)  # raises at once if the workload thread failed
            if time.monotonic() > deadline:
                raise ClusterError("the workload did not finish writing its backlog within 300 s")
        res.timings["workload_start_s"] = round(time.monotonic() - t0, 1)

        cfg = ServeConfig(local_cluster=cluster.state_dir, state_dir=serve_dir, interval_s=opt.interval_s,
                          window_s=opt.window_s, windows=3, capacity=dict(DEMO_CAPACITY), theta=opt.theta,
                          eps=opt.eps, self_healing=frozenset(ANOMALY_TYPES), grace_s=opt.grace_s,
                          goal_violation_windows=2, new_broker_windows=1, cooldown_s=30.0,
                          max_bytes_per_hour=5e9, throttle=20_000_000, token="demo-token", port=opt.port)
        say(f"[3/6] balancer service: self-healing on ({','.join(ANOMALY_TYPES)}), window {opt.window_s:g} s, "
            f"grace {opt.grace_s:g} s, θ={opt.theta}, ε={opt.eps}")
        started = start(cfg, "pipeline", say=lambda m: say("   " + m))
        svc = started.service
        res.dashboard_url = started.http.url
        say(f"   dashboard: {started.http.url}/")

        t0 = time.monotonic()
        ph = Phase("rebalance the skewed workload", time.time())
        res.phases.append(ph)
        found = _wait(lambda: _finished_for(svc, "goal_violation", ph.started), opt.phase_timeout_s,
                      "a rebalance of the skewed workload")
        ph.anomaly, ph.execution = found
        ph.ended = time.time()
        ph.ok = bool(ph.execution.get("verified"))
        res.timings["phase_rebalance_s"] = round(time.monotonic() - t0, 1)

        t0 = time.monotonic()
        say(f"[4/6] killing broker {KILLED} (SIGKILL); the service waits {opt.grace_s:g} s before it counts")
        ph = Phase(f"evacuate dead broker {KILLED}", time.time())
        res.phases.append(ph)
        cluster.kill_broker(KILLED)
        found = _wait(lambda: _finished_for(svc, "broker_failure", ph.started), opt.phase_timeout_s,
                      f"the evacuation of broker {KILLED}")
        ph.anomaly, ph.execution = found
        ph.ended = time.time()
        obs = svc.obs
        left = sum(1 for p in obs.partitions.values() if KILLED in p.replicas) if obs else -1
        urp = _wait(lambda: (svc.obs is not None and not svc.obs.under_replicated()) or None, 120,
                    "full replication after the evacuation")
        ph.ok = bool(ph.execution.get("verified")) and left == 0 and bool(urp)
        ph.note = f"replicas left on broker {KILLED}: {left}; under-replicated partitions: 0"
        res.timings["phase_evacuate_s"] = round(time.monotonic() - t0, 1)

        t0 = time.monotonic()
        say(f"[5/6] starting broker {SPARE}, new and empty")
        ph = Phase(f"fill new broker {SPARE}", time.time())
        res.phases.append(ph)
        cluster.start_broker(SPARE)
        found = _wait(lambda: _filled(svc, SPARE, ph.started), opt.phase_timeout_s,
                      f"filling broker {SPARE}")
        ph.anomaly, ph.execution = found
        ph.ended = time.time()
        load = svc.load()
        b7 = next(b for b in load["brokers"] if b["id"] == SPARE)
        inside = {r: load["resources"][r]["band_low"] - 1e-9 <= b7["resources"][r]["util"]
                  <= load["resources"][r]["band_high"] + 1e-9 for r in ("disk", "nw_in")}
        ph.ok = bool(ph.execution.get("verified")) and b7["replicas"] > 0
        ph.note = (f"broker {SPARE}: {b7['replicas']} replicas, disk {b7['resources']['disk']['util']:.3f} "
                   f"(band {load['resources']['disk']['band_low']:.3f}-{load['resources']['disk']['band_high']:.3f})"
                   f"; inside the ε band on {', '.join(r for r, v in inside.items() if v) or 'none'}"
                   f" (of {', '.join(inside)})")
        res.timings["phase_fill_s"] = round(time.monotonic() - t0, 1)

        say("[6/6] dashboard screenshot, report")
        if opt.screenshot:
            from kafka_balancer.demo.screenshot import screenshot

            try:
                shot = screenshot(started.http.url + "/", out / "dashboard.png")
                res.screenshot = str(shot)
            except ClusterError as exc:
                say(f"   no screenshot: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
        res.timeline = list(svc.timeline)
    finally:
        if runner is not None:
            try:
                w = runner.stop(timeout_s=240)
                groups = {g.group: g.topics for g in spec.groups}
                res.workload = {
                    "produced": dict(w.produced), "failed": w.failed, "drained": w.drained,
                    "consumed": {g: w.consumed_total(g) for g in groups},
                    "expected": {g: sum(w.produced.get(t, 0) for t in ts) for g, ts in groups.items()},
                }
            except Exception as exc:
                res.workload = {"error": f"{type(exc).__name__}: {exc}"}
        if started is not None:
            res.timeline = list(started.service.timeline)
            started.stop()
        t0 = time.monotonic()
        cluster.down()
        res.timings["cluster_down_s"] = round(time.monotonic() - t0, 1)
        res.timings["total_s"] = round(time.monotonic() - t_all, 1)
        from kafka_balancer.demo.report import write_report

        res.report = str(write_report(res, out))
        from kafka_balancer.files.outputs import write_bytes

        write_bytes(out / "demo-result.json", orjson.dumps(
            {"phases": [p.__dict__ for p in res.phases], "workload": res.workload, "timings": res.timings,
             "screenshot": res.screenshot, "ok": res.ok}, option=orjson.OPT_INDENT_2, default=str), "--out")
    return res


def sigma_line(ex: dict[str, Any]) -> str:
    b, a = ex.get("sigma_before") or {}, ex.get("sigma_after") or {}
    parts = []
    for r in RES:
        if r in b and r in a and not math.isnan(b[r]):
            parts.append(f"{r} {b[r]:.4f}->{a[r]:.4f}")
    return "σ " + ", ".join(parts)
