"""The balancer service: sampling, the load model, the detectors, self-healing and the executor, in
threads around one lock-protected state.

* **liveness** (every second, at most every ``interval``): a TCP probe of each broker (serve/liveness.py),
  which dates the first sign of a dead broker sooner than the round can;
* **sampler** (every ``interval``): one collector round; the topology detectors (dead broker, new
  brokers, lost preferred leaders) on it; the live model rebuilt; at each window boundary the Parquet
  files are flushed and the model thread is woken;
* **model** (every window): the pipeline over the last closed windows (or replica sizes only, with
  ``model = "sizes"``), the goals evaluated on the model, the goal and disk detectors;
* **healer** (woken by any detection): picks the most urgent confirmed anomaly whose type has
  self-healing on, checks the guards, plans with the mode that fits, and starts the executor;
* **executor**: one execution at a time (``serve/executions.py``); after a crash the journal's open
  execution is resumed at start.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_balancer.errors import BalancerError, InputError
from kafka_balancer.executor.runner import ExecOptions
from kafka_balancer.model.plan_io import apply_plan
from kafka_balancer.model.snapshot import RESOURCES, Snapshot
from kafka_balancer.planner.constraints import Constraints
from kafka_balancer.planner.metrics import Metrics, goals_missed
from kafka_balancer.serve import guards, liveness
from kafka_balancer.serve.anomaly import Anomaly, AnomalyState, Finding
from kafka_balancer.serve.book import AnomalyBook
from kafka_balancer.serve.broker_history import BrokerHistory
from kafka_balancer.serve.config import ServeConfig
from kafka_balancer.serve.detectors import broker_failure, disk, goal_violation, leaders, new_brokers
from kafka_balancer.serve.executions import ExecutionRunner
from kafka_balancer.serve.model import PartitionLoads, goal_metrics, live_snapshot, load_view, model_metrics
from kafka_balancer.serve.modes import Proposal, no_moves_reason, propose
from kafka_balancer.serve.observation import TP, Observation
from kafka_balancer.serve.store import JsonlStore
from kafka_balancer.validate.values import Polish

S = AnomalyState
# most urgent first: (anomaly type, planner mode)
PRIORITY: tuple[tuple[str, str], ...] = (
    ("broker_failure", "evacuate"), ("disk", "rebalance"), ("new_brokers", "add_brokers"),
    ("goal_violation", "rebalance"), ("leaders", "elect_leaders"),
)
TOPOLOGY_TYPES = ("broker_failure", "new_brokers", "leaders")
MODEL_TYPES = ("goal_violation", "disk")


class Conflict(BalancerError):
    """A write request that a guard refuses now (HTTP 409)."""

    exit_code = 1


@dataclass
class ModelState:
    snap: Snapshot | None = None
    metrics: Metrics | None = None
    fingerprint: str = ""
    status: str = "waiting for the first sampling round"
    loads_at: float | None = None
    pipeline_seconds: float | None = None


class Service:
    def __init__(self, cfg: ServeConfig, *, metrics_urls: Mapping[int, str] | None = None,
                 hosts: Mapping[int, str] | None = None, say: Callable[[str], None] | None = None,
                 model_source: str = "pipeline", security: Any = None) -> None:
        self.cfg = cfg
        self.security = security  # SecuritySettings of --command-config (None: plaintext); never logged
        self.say = say or (lambda m: None)
        self.model_source = model_source
        self.lock = threading.RLock()
        self.started_at = time.time()
        self.obs: Observation | None = None
        self.sizes: dict[TP, int] = {}
        self.known: set[int] = set()
        self.racks: dict[int, str | None] = {}
        self.dead_since: dict[int, float] = {}
        self.listeners: dict[int, tuple[str, int]] = {}  # the last host and port describe_cluster gave per broker
        self.liveness = liveness.LivenessProbe(period_s=min(liveness.PERIOD_S, cfg.interval_s))
        # a bare connection to a TLS or SASL listener could leave an authentication failure in the broker's log
        self._probe_listeners = security is None or getattr(security, "protocol", "PLAINTEXT") == "PLAINTEXT"
        self.loads: PartitionLoads | None = None
        self.model = ModelState()
        self.sigma_history: deque[dict[str, Any]] = deque(maxlen=720)
        self.timeline: deque[dict[str, Any]] = deque(maxlen=2000)
        self.paused = False
        self.last_end: float | None = None
        self.last_failed = False
        self.rounds = 0
        self.sample_errors = 0
        self.last_error: str | None = None
        state = cfg.state_dir
        self.anomaly_store = JsonlStore(state / "anomalies.jsonl")
        self.exec_store = JsonlStore(state / "executions.jsonl")
        self.history = BrokerHistory(state / "broker_history.jsonl", cfg.broker_history_s)
        self.switch_store = JsonlStore(state / "switches.jsonl")  # the pause switch, kept across restarts
        hold = {"broker_failure": cfg.grace_s, "new_brokers": cfg.new_broker_windows * cfg.window_s,
                "goal_violation": max(0.0, (cfg.goal_violation_windows - 1) * cfg.window_s - 1.0),
                "disk": 0.0, "leaders": cfg.window_s}
        self.book = AnomalyBook(hold, on_change=self._anomaly_changed)
        self.executions: dict[str, dict[str, Any]] = {}
        self.bootstrap = cfg.bootstrap or ""
        self.runner = ExecutionRunner(self.bootstrap, cfg.journal_path,
                                      ExecOptions(throttle=cfg.throttle, progress=False, poll_s=1.0),
                                      on_done=self._execution_done, say=lambda m: self._event("executor", m),
                                      security=security)
        self._metrics_urls = dict(metrics_urls or {})
        self._hosts = dict(hosts or {})
        self._stop = threading.Event()
        self._wake_model = threading.Event()
        self._wake_healer = threading.Event()
        self._threads: list[threading.Thread] = []
        self._proposal_cache: dict[tuple[Any, ...], tuple[Proposal, Snapshot]] = {}
        self._proposal_lock = threading.Lock()
        self._json_cache: dict[tuple[str, Any], bytes] = {}
        self._retry_after: dict[str, float] = {}  # anomaly id -> no new plan for it before then
        self._sigma_after_due: list[str] = []  # executions whose σ after is taken at the next round
        self._restore()

    # ---- history ------------------------------------------------------------------------------
    def _restore(self) -> None:
        switch = self.switch_store.latest_by_id().get("pause")
        if switch is not None and switch.get("paused") is True:  # an operator's pause outlives a restart
            self.paused = True
            ts = switch.get("ts")
            try:
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
            except (TypeError, ValueError, OverflowError, OSError):  # a hand-edited line
                when = "?"
            self._event("operator", f"self-healing stays paused: paused by the operator before the restart ({when})")
        recs = self.anomaly_store.latest_by_id()
        self.book.restore(Anomaly.from_dict(r) for r in recs.values())
        for eid, rec in self.exec_store.latest_by_id().items():
            self.executions[eid] = rec
            if rec.get("ended"):
                self.last_end = max(self.last_end or 0.0, float(rec["ended"]))

    def _anomaly_changed(self, a: Anomaly) -> None:
        self.anomaly_store.append(a.to_dict())
        last = a.history[-1] if a.history else {}
        if last.get("ts") == a.updated:
            self._event("anomaly", f"{a.type} {a.key}: {a.state.value}" + (f" ({a.reason})" if a.reason else ""))

    def _event(self, kind: str, text: str) -> None:
        self.timeline.append({"ts": time.time(), "kind": kind, "text": text})
        self.say(f"[{kind}] {text}")

    def _save_execution(self, rec: dict[str, Any]) -> None:
        self.executions[rec["id"]] = {**self.executions.get(rec["id"], {}), **rec}
        self.exec_store.append(rec)

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self, sampler: Any = None, pipeline: Any = None) -> None:
        """Start the threads. ``sampler``/``pipeline``: objects with the interfaces of
        :class:`~.sampling.Sampler` and :class:`~.pipeline_model.PipelineModel` (built from the config if
        None)."""
        from kafka_balancer.serve.pipeline_model import PipelineModel
        from kafka_balancer.serve.sampling import Sampler

        self.cfg.state_dir.mkdir(parents=True, exist_ok=True)
        self.sampler = sampler or Sampler(self.bootstrap, self.cfg.state_dir / "samples", self._metrics_urls,
                                          self._hosts, security=self.security)
        self.pipeline = pipeline if pipeline is not None else (
            PipelineModel(self.cfg.state_dir / "samples", self.cfg.window_s, self.cfg.windows, self.cfg.capacity)
            if self.model_source == "pipeline" else None)
        if self.runner.unfinished():
            rec = next((r for r in reversed(self.executions.values()) if r.get("state") == "running"), None)
            eid = rec["id"] if rec else f"exec-{int(time.time())}-resumed"
            self._save_execution({"id": eid, "state": "running", "resumed": time.time(),
                                  "resumes": int((rec or {}).get("resumes", 0)) + 1})
            self._event("execution", f"{eid}: resuming the unfinished execution from the journal")
            self.runner.start(eid, None)
        loops: tuple[tuple[str, Callable[[], None]], ...] = (
            ("sampler", self._sample_loop), ("model", self._model_loop), ("healer", self._heal_loop),
            ("liveness", lambda: self.liveness.run(self._stop)),
        )
        for name, fn in loops:
            t = threading.Thread(target=fn, name=f"serve-{name}", daemon=True)
            t.start()
            self._threads.append(t)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop the loops (a running execution is left to finish in its thread or resume next start)."""
        self._stop.set()
        self._wake_model.set()
        self._wake_healer.set()
        for t in self._threads:
            t.join(timeout)
        if getattr(self, "sampler", None) is not None:
            self.sampler.close()
        pipeline = getattr(self, "pipeline", None)
        if pipeline is not None:
            pipeline.close()

    # ---- sampler ------------------------------------------------------------------------------
    def _sample_loop(self) -> None:
        window = self.cfg.window_s
        last_window = int(time.time() // window)
        while not self._stop.is_set():
            t0 = time.time()
            try:
                obs, sizes = self.sampler.round()
            except Exception as exc:  # the cluster away for a moment: report and try again
                self.sample_errors += 1
                self.last_error = f"sampling failed: {getattr(exc, 'message', None) or type(exc).__name__}"
                obs = None
            if obs is not None:
                self.on_round(obs, sizes)
                if self.sampler.failed:
                    self.last_error = f"sampling: the round is without {', '.join(self.sampler.failed)}"
            w = int(time.time() // window)
            if w != last_window:
                last_window = w
                try:
                    self.sampler.flush()
                except Exception as exc:
                    self.last_error = f"writing samples failed: {exc}"
                self._wake_model.set()
            self._stop.wait(max(0.0, self.cfg.interval_s - (time.time() - t0)))

    def on_round(self, obs: Observation, sizes: Mapping[TP, int]) -> None:
        """One sampling round's topology: detectors, model."""
        with self.lock:
            self.rounds += 1
            if self.rounds == 1 and self.loads is None:
                self.model.status = ("disk from replica sizes until the pipeline's first snapshot"
                                     if self.model_source == "pipeline" else "loads: replica sizes only")
            self.obs = obs
            # a round whose describe_log_dirs failed (a broker starting) keeps the sizes seen before
            self.sizes = {tp: sizes.get(tp, self.sizes.get(tp, 0)) for tp in obs.partitions}
            self.known |= obs.brokers()
            self.listeners.update(obs.listeners)
            self.liveness.aim(liveness.targets(sorted(self.known), self.listeners, self._metrics_urls,
                                               self._probe_listeners))
            refused = self.liveness.down_since()
            for b in obs.alive:
                self.racks[b] = obs.racks.get(b)
            for b in self.known:  # the clock of the grace period starts at the first sign
                sign = liveness.first_sign(obs.ts, b in obs.alive, b in obs.unreachable, b in obs.answered,
                                           refused.get(b))
                if sign is None:
                    self.dead_since.pop(b, None)
                else:
                    self.dead_since[b] = min(self.dead_since.get(b, sign), sign)
            findings: list[Finding] = []
            findings += broker_failure.detect(obs, frozenset(self.known), self.dead_since)
            findings += new_brokers.detect(obs, self.history.removed(obs.ts))
            findings += leaders.detect(obs, self.history.demoted(obs.ts))
            changed = self.book.update(TOPOLOGY_TYPES, findings, obs.ts)
            self._rebuild_model()
            m = self.model.metrics
            while self._sigma_after_due and m is not None:
                eid = self._sigma_after_due.pop()
                self._save_execution({"id": eid, "sigma_after": {r: m.resources[r].sigma for r in RESOURCES},
                                      "balanced_after": m.balanced()})
        if changed or self._actionable():
            self._wake_healer.set()

    def _rebuild_model(self) -> None:
        obs = self.obs
        if obs is None:
            return
        loads = self._loads_with_sizes()
        snap = live_snapshot(loads, obs, self.known, self.cfg.capacity, self.racks,
                             removed=self.history.removed(time.time()))
        self.model.snap = snap
        self.model.metrics = model_metrics(snap, self.cfg.theta, self.cfg.eps)
        h = hashlib.sha256()
        h.update(snap.replicas.tobytes())
        h.update(snap.leader.tobytes())
        h.update(snap.alive.tobytes())
        h.update(snap.leader_load.tobytes())
        self.model.fingerprint = h.hexdigest()[:16]

    def _loads_with_sizes(self) -> PartitionLoads:
        """The pipeline's loads; partitions it has not measured get their disk from the last round."""
        import numpy as np

        from kafka_balancer.model.snapshot import DISK

        base = self.loads or PartitionLoads()
        lead = dict(base.leader)
        foll = dict(base.follower)
        for tp, size in self.sizes.items():
            if tp not in lead:
                v = np.zeros(4)
                v[DISK] = float(size)
                lead[tp] = v
                foll[tp] = v.copy()
        return PartitionLoads(lead, foll, base.capacity, base.built_at, base.windows)

    def set_model(self, snap: Snapshot) -> None:
        """Serve a fixed model (a snapshot file, a benchmark) instead of a sampled cluster."""
        from kafka_balancer.serve.observation import Replicas

        ids = [int(b) for b in snap.broker_ids]
        parts = {}
        for p in range(snap.n_partitions):
            reps = tuple(ids[b] for b in snap.replicas[p] if b >= 0)
            lead = ids[snap.leader[p]] if snap.leader[p] >= 0 else -1
            parts[(snap.topics[int(snap.topic_idx[p])], int(snap.partition[p]))] = Replicas(
                reps, lead, reps)
        alive = frozenset(b for i, b in enumerate(ids) if snap.alive[i])
        racks = {b: (snap.rack_names[snap.rack_idx[i]] if snap.rack_idx[i] >= 0 else None) for i, b in enumerate(ids)}
        with self.lock:
            self.obs = Observation(time.time(), alive, racks, parts)
            self.known = set(ids)
            self.model.snap = snap
            self.model.metrics = model_metrics(snap, self.cfg.theta, self.cfg.eps)
            self.model.fingerprint = "static"
            self.model.status = f"fixed model {snap.name or ''}".strip()
            m = self.model.metrics
            self.sigma_history.append({"ts": time.time(), "sigma": {r: m.resources[r].sigma for r in RESOURCES},
                                       "eta": m.eta, "balanced": m.balanced()})

    # ---- model --------------------------------------------------------------------------------
    def _model_loop(self) -> None:
        while not self._stop.is_set():
            self._wake_model.wait()
            self._wake_model.clear()
            if self._stop.is_set():
                return
            self.evaluate_window()

    def evaluate_window(self) -> None:
        """Refresh the loads with the pipeline (if used), evaluate the goals, run the model detectors."""
        try:  # here, not in the sampler: never while the pipeline reads the files
            self.sampler.prune(int((time.time() - (self.cfg.windows + 6) * self.cfg.window_s) * 1000))
        except OSError as exc:
            self.last_error = f"pruning samples failed: {exc}"
        if self.pipeline is not None:
            try:
                loads = self.pipeline.refresh()
                with self.lock:
                    self.loads = loads
                    self.model.loads_at = loads.built_at
                    self.model.pipeline_seconds = round(self.pipeline.last_seconds, 2)
                    self.model.status = (f"loads from the pipeline ({len(loads.leader)} partitions, "
                                         f"{self.model.pipeline_seconds} s)")
            except BalancerError as exc:
                with self.lock:
                    kept = (f"; the loads built at {time.strftime('%H:%M:%S', time.localtime(self.loads.built_at))} "
                            "are kept" if self.loads else "; disk from replica sizes meanwhile")
                    self.model.status = f"pipeline: {exc.message}{kept}"
            except Exception as exc:
                with self.lock:
                    self.model.status = f"pipeline failed: {type(exc).__name__}: {str(exc)[:200]}"
        else:
            with self.lock:
                self.model.status = "loads: replica sizes only (model = sizes)"
        with self.lock:
            self._rebuild_model()
            m, snap = self.model.metrics, self.model.snap
            if m is None or snap is None:
                return
            if self.pipeline is not None and self.loads is None:
                return  # the goals are judged on measured loads only, not on the sizes-only stand-in
            now = time.time()
            self.sigma_history.append({"ts": now, "sigma": {r: m.resources[r].sigma for r in RESOURCES},
                                       "eta": m.eta, "balanced": m.balanced()})
            findings = goal_violation.detect(goal_metrics(snap, self.cfg.theta, self.cfg.eps,
                                                          self.history.demoted(now)))
            live = [int(b) for i, b in enumerate(snap.broker_ids) if snap.alive[i]]
            findings += disk.detect(live, m.resources["disk"].util, self.cfg.theta)
            self.book.update(MODEL_TYPES, findings, now)
        self._wake_healer.set()

    # ---- healing ------------------------------------------------------------------------------
    def _actionable(self) -> bool:
        return any(a.state in (S.DETECTED, S.WAITING) and self.book.confirmed(a) for a in self.book.open())

    def _heal_loop(self) -> None:
        while not self._stop.is_set():
            self._wake_healer.wait(timeout=max(1.0, self.cfg.interval_s))
            self._wake_healer.clear()
            if self._stop.is_set():
                return
            try:
                self.heal()
            except Exception as exc:  # a planning failure must not end the service
                msg = f"self-healing failed: {type(exc).__name__}: {exc}"
                if msg != self.last_error:  # said once, not every round
                    self._event("healer", msg)
                self.last_error = msg

    def guard_context(self, now: float) -> guards.GuardContext:
        started = [(float(r.get("started", 0)), float(r.get("bytes_planned", 0))) for r in self.executions.values()
                   if r.get("state") not in ("proposed",)]
        obs = self.obs
        return guards.GuardContext(
            now=now, paused=self.paused, executing=self.runner.busy, last_end=self.last_end,
            cooldown_s=self.cfg.cooldown_s, under_replicated=len(obs.under_replicated()) if obs else 0,
            moved_last_hour=guards.moved_in_window(started, now), max_bytes_per_hour=self.cfg.max_bytes_per_hour,
            last_failed=self.last_failed)

    def heal(self) -> None:
        with self.lock:
            now = time.time()
            pending = [a for a in self.book.open() if a.state in (S.DETECTED, S.WAITING) and self.book.confirmed(a)
                       and self._retry_after.get(a.id, 0.0) <= now]
            if not pending or self.model.snap is None:
                return
            chosen: tuple[str, list[Anomaly]] | None = None
            for atype, mode in PRIORITY:
                group = [a for a in pending if a.type == atype]
                if not group:
                    continue
                if atype not in self.cfg.self_healing:
                    for a in group:
                        self.book.move(a.id, S.IGNORED, now, f"self-healing for {atype} is off")
                    continue
                chosen = (mode, group)
                break
            if chosen is None:
                return
            mode, group = chosen
            why = guards.hold_reason("evacuate" if mode == "evacuate" else mode, self.guard_context(now))
            if why is not None:
                for a in group:
                    self.book.move(a.id, S.WAITING, now, why)
                return
            brokers = tuple(sorted(int(a.evidence.get("broker", -1)) for a in group if "broker" in a.evidence))
            snap, obs = self.model.snap, self.obs
        proposal = propose(mode, snap, self.cfg.theta, self.cfg.eps, brokers=brokers, obs=obs,
                           time_limit=self.cfg.plan_time_limit_s, goals=self.cfg.goals, limits=self.limits())
        with self.lock:
            now = time.time()
            group = [self.book.get(a.id) for a in group]
            group = [a for a in group if a.open and a.state in (S.DETECTED, S.WAITING)]
            if not group:
                return
            unfixed = self._leaves_goals_missed(group[0].type, snap, proposal)
            if not len(proposal.plan) or unfixed:  # tried again next window: the model may change (loads, sizes)
                for a in group:
                    self.book.move(a.id, S.WAITING, now, (unfixed or no_moves_reason(proposal))
                                   + "; tried again next window")
                    self._retry_after[a.id] = now + self.cfg.window_s
                return
            ctx = self.guard_context(now)
            why = guards.hold_reason(mode, ctx)
            if why is not None:
                for a in group:
                    self.book.move(a.id, S.WAITING, now, why)
                return
            n = guards.fit_budget(proposal.entry_bytes, ctx.budget)
            if n == 0:
                for a in group:
                    self.book.move(a.id, S.WAITING, now, f"byte cap: the first move alone exceeds the "
                                                         f"{ctx.budget / 1e6:.1f} MB left this hour")
                return
            proposal = proposal.cut(n, f"cut to {n} of {len(proposal.plan)} partitions by the byte cap")
            eid = self._new_execution(proposal, snap, reason=f"self-healing {group[0].type}",
                                      anomalies=[a.id for a in group])
            if self.cfg.dry_run:
                for a in group:
                    self.book.move(a.id, S.IGNORED, now, f"dry-run: proposed {eid} ({len(proposal.plan)} "
                                                         f"partitions, {proposal.bytes / 1e6:.1f} MB), not executed",
                                   execution=eid)
                return
            for a in group:
                self.book.move(a.id, S.FIXING, now, f"execution {eid}: {mode}", execution=eid)
            self.runner.start(eid, proposal.plan)

    def _leaves_goals_missed(self, kind: str, snap: Snapshot, p: Proposal) -> str | None:
        """For a goal violation: why the plan found is not executed, when it would leave as many of seed 001's
        goals missed as now, measured as the detector measures them (None when it meets more of them, and
        for every other anomaly). Where balance is out of reach, each new plan still finds a little to
        tighten: executed every cooldown, it moved hundreds of GB a round for nothing the detector sees."""
        if kind != goal_violation.TYPE or not len(p.plan):
            return None
        demoted = self.history.demoted(time.time())
        before = goals_missed(goal_metrics(snap, self.cfg.theta, self.cfg.eps, demoted))
        after = goals_missed(goal_metrics(apply_plan(snap, p.plan), self.cfg.theta, self.cfg.eps, demoted))
        if after < before:
            return None
        return (f"the plan found ({len(p.plan)} partitions, {p.bytes / 1e9:,.1f} GB) would leave {after} of seed "
                f"001's goals missed against {before} now (pairs above θ or outside the ε band, σ above η): not "
                "executed")

    def _new_execution(self, p: Proposal, snap: Snapshot, reason: str, anomalies: list[str],
                       dry_run: bool | None = None) -> str:
        dry = self.cfg.dry_run if dry_run is None else dry_run
        eid = f"exec-{int(time.time() * 1000)}"
        while eid in self.executions:
            eid += "x"
        s = p.summary(snap, moves_shown=50)
        rec = {"id": eid, "mode": p.mode, "reason": reason, "anomalies": anomalies, "started": time.time(),
               "state": "proposed" if dry else "running", "partitions": len(p.plan),
               "replica_moves": s["replica_moves"], "leader_moves": s["leader_moves"], "bytes_planned": p.bytes,
               "brokers": list(p.brokers), "notes": list(p.notes),
               "sigma_before": {r: p.before.resources[r].sigma for r in RESOURCES},
               "sigma_after_planned": {r: p.after.resources[r].sigma for r in RESOURCES},
               "balanced_after_planned": p.after.balanced(), "moves": s["moves"]}
        self._save_execution(rec)
        self._event("execution", f"{eid}: {'proposed (dry-run)' if dry else 'started'} {p.mode}, "
                    f"{len(p.plan)} partitions, {p.bytes / 1e6:.1f} MB ({reason})")
        return eid

    def _execution_done(self, eid: str, result: dict[str, Any]) -> None:
        with self.lock:
            now = time.time()
            self.last_end = now
            self.last_failed = not result.get("verified")
            rec = {"id": eid, **result, "ended": now}
            self._sigma_after_due.append(eid)
            self._save_execution(rec)
            self._event("execution", f"{eid}: {result['state']}" + (", verified" if result.get("verified") else "")
                        + (f" ({'; '.join(result.get('problems', [])[:2])})" if result.get("problems") else ""))
            for a in self.book.open():
                if a.execution == eid and a.state is S.FIXING:
                    if result.get("verified"):
                        self.book.move(a.id, S.FIXED, now, f"execution {eid} verified")
                    else:
                        self.book.move(a.id, S.DETECTED, now, f"execution {eid} {result['state']}")
        self._wake_healer.set()

    # ---- operator actions (the API) -----------------------------------------------------------
    def check_brokers(self, mode: str, brokers: list[int]) -> None:
        with self.lock:
            obs = self.obs
            alive = set(obs.alive) if obs else set()
            known = self.known | alive
        if mode in ("add_brokers", "remove_brokers", "demote") and not brokers:
            raise InputError("brokers: give at least one broker id")
        for b in brokers:
            if b not in known:
                raise InputError(f"brokers: broker {b} is not part of the cluster",
                                 hint=f"known brokers: {sorted(known)}")
            if mode in ("add_brokers", "demote") and b not in alive:
                raise InputError(f"brokers: broker {b} is not alive")
            if mode in ("add_brokers", "demote") and b in self.history.removed(time.time()):
                raise InputError(f"brokers: broker {b} was removed through the service and every plan keeps it "
                                 "empty (GET /api/broker-history)",
                                 hint=f'forget it first: POST /api/broker-history/forget {{"brokers": [{b}]}}')

    def limits(self) -> Constraints:
        """What every plan of the service keeps to: the excluded topics (unless a request gives its own) and
        the demotions the broker history holds (of brokers alive in the model)."""
        with self.lock:
            snap = self.model.snap
        live = frozenset() if snap is None else frozenset(int(b) for b in snap.broker_ids[snap.alive])
        demoted = self.history.demoted(time.time()) & live
        return Constraints(exclude_topics=self.cfg.exclude_topics, demote_brokers=demoted)

    def proposal(self, mode: str = "rebalance", brokers: tuple[int, ...] = (), theta: float | None = None,
                 eps: float | None = None, polish: Polish | None = None,
                 limits: Constraints | None = None, goals: tuple[str, ...] | None = None) -> tuple[Proposal, Snapshot]:
        """A dry-run proposal on the current model (cached until the model changes). ``limits``: excluded
        topics and budgets (:meth:`limits` when None); ``goals``: the goal policy (the service's when None)."""
        with self.lock:
            snap, obs, fp = self.model.snap, self.obs, self.model.fingerprint
        if snap is None:
            raise Conflict("no model yet: the first sampling round has not completed")
        th = self.cfg.theta if theta is None else theta
        ep = self.cfg.eps if eps is None else eps
        lim = self.limits() if limits is None else limits
        policy = self.cfg.goals if goals is None else goals
        key = (fp, mode, brokers, th, ep, polish, lim, policy)
        with self._proposal_lock:
            hit = self._proposal_cache.get(key)
            if hit is not None:
                return hit
            p = propose(mode, snap, th, ep, brokers=brokers, obs=obs, time_limit=self.cfg.plan_time_limit_s,
                        polish=polish, goals=policy, limits=lim)
            if len(self._proposal_cache) > 32:
                self._proposal_cache.clear()
            self._proposal_cache[key] = (p, snap)
            return p, snap

    def request(self, mode: str, brokers: list[int], dry_run: bool, theta: float | None = None,
                eps: float | None = None, limits: Constraints | None = None,
                goals: tuple[str, ...] | None = None) -> dict[str, Any]:
        """An operator's rebalance / add / remove / demote: a proposal, executed unless ``dry_run``.
        ``limits``: the request's excluded topics and budgets (the service's :meth:`limits` when None);
        ``goals``: the request's goal policy (the service's when None)."""
        self.check_brokers(mode, brokers)
        p, snap = self.proposal(mode, tuple(sorted(brokers)), theta, eps, limits=limits, goals=goals)
        out: dict[str, Any] = {"dry_run": dry_run, "proposal": p.summary(snap), "execution": None}
        if dry_run:
            return out
        if self.cfg.dry_run:
            raise Conflict("not started: the service runs in dry-run mode (it only proposes)",
                           hint="restart it without --dry-run to execute")
        if not len(p.plan):
            raise Conflict(no_moves_reason(p))
        with self.lock:
            ctx = self.guard_context(time.time())
            why = guards.hold_reason("evacuate" if mode == "remove_brokers" else mode, ctx, operator=True)
            if why is not None:
                raise Conflict(f"not started: {why}")
            n = guards.fit_budget(p.entry_bytes, ctx.budget)
            if n < len(p.plan):
                raise Conflict(f"not started: the plan moves {p.bytes / 1e6:.1f} MB and the byte cap leaves "
                               f"{ctx.budget / 1e6:.1f} MB this hour")
            eid = self._new_execution(p, snap, reason=f"operator: {mode}", anomalies=[], dry_run=False)
            kind = {"remove_brokers": "removed", "demote": "demoted"}.get(mode)
            if kind is not None:  # remembered from the start: a stopped execution is still the operator's intent
                self.history.record(kind, brokers, eid, time.time())
                self._event("operator", f"broker(s) {', '.join(map(str, sorted(brokers)))} {kind}: kept so by "
                            f"every plan for {self.cfg.broker_history_s / 3600:g} h, or until forgotten")
            self.runner.start(eid, p.plan)
        out["execution"] = eid
        return out

    def forget_brokers(self, brokers: list[int]) -> list[dict[str, Any]]:
        """End the broker history's entries of ``brokers`` (each must have one); the entries ended."""
        now = time.time()
        held = {e["broker"] for e in self.history.listing(now)}
        missing = [b for b in brokers if b not in held]
        if not brokers or missing:
            raise InputError(f"brokers: broker {missing[0]} has no entry in the broker history" if missing
                             else "brokers: give at least one broker id",
                             hint=f"brokers with one: {sorted(held)}" if held else "the broker history is empty")
        ended = self.history.forget(brokers, now)
        with self.lock:
            self._rebuild_model()  # a removed broker is part of the cluster again
            self._event("operator", "broker history: forgot " + ", ".join(f"broker {e['broker']} ({e['kind']})"
                                                                          for e in ended))
        self._wake_healer.set()
        return ended

    def after_forget(self, ended: list[dict[str, Any]]) -> list[str]:
        """What happens next to the forgotten removed brokers that are live and empty: filled by self-healing,
        or by the operator."""
        with self.lock:
            obs = self.obs
        if obs is None:
            return []
        counts = obs.replica_counts()
        out = []
        for e in ended:
            b = e["broker"]
            if e["kind"] != "removed" or b not in obs.alive or counts.get(b, 0):
                continue
            out.append(f"broker {b} is live and holds no replica: " + (
                "new_brokers self-healing will fill it once it is confirmed" if "new_brokers" in self.cfg.self_healing
                else f'self-healing for new_brokers is off: POST /api/add-brokers {{"brokers": [{b}]}} fills it'))
        return out

    def set_paused(self, paused: bool) -> None:
        with self.lock:
            if self.paused != paused:
                self.paused = paused
                self.switch_store.append({"id": "pause", "paused": paused, "ts": time.time()})
                self._event("operator", "paused self-healing" if paused else "resumed self-healing")
        self._wake_healer.set()

    def stop_execution(self) -> bool:
        """Stop the running execution and pause self-healing, which would otherwise start the same fix again
        once the cooldown ends: an operator who stops an execution resumes self-healing when ready."""
        stopped = self.runner.stop()
        if stopped:
            self._event("operator", "stop requested for the running execution; self-healing paused until "
                        "POST /api/resume")
            self.set_paused(True)
        return stopped

    # ---- views (the API) ----------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        with self.lock:
            obs = self.obs
            cur = self.runner.current
            running = self.runner.busy
            return {
                "started_at": self.started_at, "now": time.time(), "paused": self.paused,
                "dry_run": self.cfg.dry_run, "self_healing": sorted(self.cfg.self_healing),
                "rounds": self.rounds, "sample_errors": self.sample_errors, "last_error": self.last_error,
                "brokers_alive": sorted(obs.alive) if obs else [], "brokers_known": sorted(self.known),
                "partitions": len(obs.partitions) if obs else 0,
                "under_replicated": len(obs.under_replicated()) if obs else 0,
                "offline": len(obs.offline()) if obs else 0,
                "model": {"status": self.model.status, "loads_at": self.model.loads_at,
                          "pipeline_seconds": self.model.pipeline_seconds, "source": self.model_source,
                          "balanced": self.model.metrics.balanced() if self.model.metrics else None},
                "execution": ({"id": cur.id, "running": running, **self.runner.progress()}
                              if cur is not None and running else None),
                "cooldown_left_s": max(0.0, self.cfg.cooldown_s - (time.time() - self.last_end))
                if self.last_end else 0.0,
                "open_anomalies": len(self.book.open()),
                "broker_history": self.history.listing(time.time()),
                "config": self.cfg.public(),
            }

    def load(self) -> dict[str, Any]:
        with self.lock:
            snap, m, fp = self.model.snap, self.model.metrics, self.model.fingerprint
        if snap is None or m is None:
            raise Conflict("no model yet: the first sampling round has not completed")
        out = load_view(snap, m)
        out["fingerprint"] = fp
        return out

    def load_json(self, history: int) -> bytes:
        """``GET /api/load`` as JSON bytes, built once per model and σ history (a 1,000-broker view is
        half a megabyte: building and validating it per request would cap the API at a few requests/s)."""
        import orjson

        with self.lock:
            key = (self.model.fingerprint, id(self.model.metrics), len(self.sigma_history),
                   self.sigma_history[-1]["ts"] if self.sigma_history else 0.0, history)
            hit = self._json_cache.get(("load", key))
            if hit is not None:
                return hit
            hist = list(self.sigma_history)[-history:] if history else []
        out = self.load()
        out["sigma_history"] = hist
        body = orjson.dumps(out, option=orjson.OPT_SERIALIZE_NUMPY)
        with self.lock:
            self._json_cache = {k: v for k, v in self._json_cache.items() if k[0] != "load"}
            self._json_cache[("load", key)] = body
        return body

    def proposal_json(self, theta: float | None, eps: float | None, polish: Polish | None, moves: int) -> bytes:
        """``GET /api/proposal`` as JSON bytes, cached with the proposal."""
        import orjson

        p, snap = self.proposal("rebalance", (), theta, eps, polish)
        key = ("proposal", (id(p), moves))
        with self.lock:
            hit = self._json_cache.get(key)
        if hit is not None:
            return hit
        body = orjson.dumps(p.summary(snap, moves_shown=moves), option=orjson.OPT_SERIALIZE_NUMPY)
        with self.lock:
            if len(self._json_cache) > 64:
                self._json_cache.clear()
            self._json_cache[key] = body
        return body

    def anomalies(self, limit: int = 200) -> list[dict[str, Any]]:
        with self.lock:
            return [a.to_dict() for a in self.book.listing(limit)]

    def execution_list(self, limit: int = 100) -> list[dict[str, Any]]:
        with self.lock:
            items = sorted(self.executions.values(), key=lambda r: float(r.get("started", 0)), reverse=True)
            cur = self.runner.current
            running = self.runner.busy
        out = []
        for r in items[:limit]:
            r = dict(r)
            if cur is not None and running and r["id"] == cur.id:
                r["progress"] = self.runner.progress()
            out.append(r)
        return out
