"""Drive a plan through the state machines of :mod:`.machine` against a live cluster.

One loop per phase: poll the cluster (:class:`~.kafka_adapter.KafkaAdapter`), turn what changed into
task events, submit the next batch within the per-broker cap, show progress, sleep. The throttle is set
before the first submission and cleared in a ``finally`` (also on errors and Ctrl-C); the journal gets
every step so ``--resume`` can continue and ``cancel`` can undo.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_balancer.errors import ClusterError, InputError
from kafka_balancer.executor.journal import Journal, JournalState
from kafka_balancer.executor.kafka_adapter import KafkaAdapter
from kafka_balancer.executor.machine import (
    Event,
    Phase,
    PhaseEvent,
    Task,
    TaskState,
    moved_bytes,
    needs_election,
    next_batch,
    observe,
    phase_step,
    step,
    verify,
    waiting_on_dead,
)
from kafka_balancer.executor.throttle import ThrottleConfigs, throttle_configs
from kafka_balancer.executor.validate import require_valid
from kafka_balancer.executor.view import TP, ClusterView, tp_label
from kafka_balancer.model.plan_io import Plan

MAX_REFUSALS = 3


@dataclass(frozen=True)
class ExecOptions:
    throttle: int = 50_000_000  # bytes/s per broker; 0 = no throttle
    max_per_broker: int = 5
    max_in_flight: int = 50
    poll_s: float = 1.0
    stall_timeout_s: float = 600.0
    verify_timeout_s: float = 90.0
    progress: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("throttle", "max_per_broker", "max_in_flight", "poll_s",
                                              "stall_timeout_s", "verify_timeout_s")}


@dataclass
class ExecReport:
    partitions: int
    replica_moves: int
    leader_moves: int
    bytes_planned: int
    bytes_moved: int = 0
    elapsed_s: float = 0.0
    verified: bool = False
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    phase: str = Phase.VALIDATING.value

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def describe_plan(tasks: Sequence[Task]) -> list[str]:
    """Human lines for a dry run."""
    lines = []
    for t in tasks:
        if t.moves_data:
            what = f"move +{list(t.adding)} -{list(t.removing)}, {t.size * len(t.adding) / 1e6:.2f} MB"
        elif t.current != t.target:
            what = "reorder (leadership)"
        else:
            what = "unchanged"
        lines.append(f"{t.label}: {list(t.current)} -> {list(t.target)}  {what}")
    return lines


class Executor:
    """Runs (or resumes) one plan; ``say`` receives one-line status messages."""

    def __init__(self, adapter: KafkaAdapter, journal: Journal, options: ExecOptions,
                 say: Callable[[str], None] | None = None) -> None:
        self.adapter = adapter
        self.journal = journal
        self.opt = options
        self.say = say or (lambda m: print(m, file=sys.stderr))
        self.phase = Phase.VALIDATING

    # ---- entry points -------------------------------------------------------------------------
    def prepare(self, plan: Plan) -> tuple[list[Task], ClusterView]:
        """Validate ``plan`` against the cluster; the tasks it implies. Submits nothing."""
        topics = {e.topic for e in plan.entries}
        view = self.adapter.view(topics)
        require_valid(plan, view)
        from kafka_balancer.executor.machine import build_tasks

        return build_tasks([((e.topic, e.partition), e.replicas) for e in plan.entries], view), view

    def run(self, plan: Plan) -> ExecReport:
        st = self.journal.state()
        if st.open:
            raise InputError(
                f"an unfinished execution is recorded in {self.journal.path}",
                hint="continue it with `execute --resume`, or undo it with `kafka-balancer cancel`",
            )
        tasks, _view = self.prepare(plan)
        self.journal.rotate()
        self.journal.append(
            "start",
            plan=[[t.tp[0], t.tp[1], list(t.target)] for t in tasks],
            original=[[t.tp[0], t.tp[1], list(t.current)] for t in tasks],
            sizes=[[t.tp[0], t.tp[1], t.size] for t in tasks],
            options=self.opt.to_dict(),
        )
        return self._execute(tasks, JournalState())

    def resume(self) -> ExecReport:
        st = self.journal.state()
        if not st.started:
            raise InputError(f"no execution recorded in {self.journal.path}",
                             hint="start one with `execute --plan PLAN.json --yes`")
        if not st.open:
            raise InputError(f"the execution in {self.journal.path} already "
                             f"{'finished' if st.finished else 'was cancelled'}; nothing to resume")
        view = self.adapter.view({tp[0] for tp, _ in st.plan})
        missing = [tp_label(tp) for tp, _ in st.plan if tp not in view.partitions]
        if missing:
            raise InputError(f"cannot resume: partitions are gone: {', '.join(missing[:10])}",
                             hint="`kafka-balancer cancel` clears what the execution left behind")
        tasks = [Task(tp, st.original.get(tp, view.partitions[tp].replicas), target, st.sizes.get(tp, 0))
                 for tp, target in st.plan]
        self.journal.append("resume")
        self.say(f"resuming {len(tasks)} partitions from {self.journal.path}")
        self.phase = phase_step(Phase.INTERRUPTED, PhaseEvent.RESUME)
        return self._execute(tasks, st)

    # ---- the loop -----------------------------------------------------------------------------
    def _execute(self, tasks: list[Task], prior: JournalState) -> ExecReport:
        t0 = time.monotonic()
        topics = {t.tp[0] for t in tasks}
        report = ExecReport(
            partitions=len(tasks),
            replica_moves=sum(len(t.adding) for t in tasks),
            leader_moves=sum(1 for t in tasks if t.current[0] != t.target[0]),
            bytes_planned=sum(t.bytes_to_move for t in tasks),
        )
        states: dict[TP, TaskState] = {t.tp: TaskState.PENDING for t in tasks}
        view = self.adapter.view(topics)
        for t in tasks:  # reconcile with the cluster: it is the truth about replicas
            r = view.reassigning.get(t.tp)
            if r is not None and t.tp in prior.submitted and tuple(r.replicas) == t.target:
                states[t.tp] = step(states[t.tp], Event.SUBMIT)
        self._apply_observations(tasks, states, view)
        self.phase = phase_step(self.phase, PhaseEvent.VALID)

        throttle = prior.throttle
        todo = [t for t in tasks if states[t.tp] in (TaskState.PENDING, TaskState.IN_FLIGHT)]
        if self.opt.throttle > 0 and todo:
            cfg = throttle_configs(todo, self.opt.throttle)
            # a dead broker takes no config (UnknownBrokerId): throttle the live ones (evacuations)
            cfg = ThrottleConfigs({b: c for b, c in cfg.brokers.items() if b in view.alive}, cfg.topics)
            if not cfg.empty:
                self.journal.append("throttle_set", throttle=cfg.to_dict())
                self.adapter.set_throttle(cfg)
                throttle = cfg
                self.say(f"replication throttle {self.opt.throttle / 1e6:g} MB/s on brokers "
                         f"{sorted(cfg.brokers)}")
        try:
            self._move(tasks, states, report)
            self.phase = phase_step(self.phase, PhaseEvent.ALL_MOVED)
            self._elect(tasks, states)
            self.phase = phase_step(self.phase, PhaseEvent.ELECTED)
        except KeyboardInterrupt:
            self.phase = phase_step(self.phase, PhaseEvent.INTERRUPT)
            self.journal.append("interrupted", reason="Ctrl-C")
            raise
        except BaseException as exc:
            self.phase = phase_step(self.phase, PhaseEvent.ERROR)
            self.journal.append("interrupted", reason=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            if throttle is not None and not throttle.empty:
                try:
                    self.adapter.clear_throttle(throttle)
                    self.journal.append("throttle_cleared")
                    self.say("replication throttle cleared")
                except ClusterError as exc:
                    self.say(f"could not clear the replication throttle ({exc.message}); "
                             "run `kafka-balancer cancel` once the cluster is reachable")
        report.problems = self._verify(tasks)
        report.verified = not report.problems
        self.phase = phase_step(self.phase, PhaseEvent.VERIFIED) if report.verified else self.phase
        report.phase = self.phase.value
        report.elapsed_s = time.monotonic() - t0
        report.bytes_moved = sum(t.bytes_to_move for t in tasks
                                 if states[t.tp] in (TaskState.MOVED, TaskState.DONE))
        self.journal.append("finished", verified=report.verified, problems=report.problems[:50],
                            elapsed_s=round(report.elapsed_s, 3), bytes_moved=report.bytes_moved)
        return report

    def _poll(self, topics: set[str], with_sizes: bool = True) -> ClusterView:
        """A view of the cluster, retrying while it does not answer (a broker restarting, a controller
        election) for up to ``stall_timeout_s``."""
        deadline = time.monotonic() + self.opt.stall_timeout_s
        warned = False
        while True:
            try:
                return self.adapter.view(topics, with_sizes=with_sizes)
            except ClusterError as exc:
                if time.monotonic() > deadline:
                    raise
                if not warned:
                    self.say(f"cluster did not answer ({exc.message}); retrying")
                    warned = True
                time.sleep(max(self.opt.poll_s, 1.0))

    def _apply_observations(self, tasks: Sequence[Task], states: dict[TP, TaskState],
                            view: ClusterView) -> list[TP]:
        newly_moved: list[TP] = []
        for t in tasks:
            ev = observe(t, states[t.tp], view)
            if ev is None:
                continue
            states[t.tp] = step(states[t.tp], ev)
            if ev is Event.REPLICAS_MATCH:
                newly_moved.append(t.tp)
            if ev is Event.LOST:
                self.say(f"{t.label}: reassignment is no longer running and replicas are "
                         f"{list(view.partitions[t.tp].replicas)}; submitting again")
        if newly_moved:
            self.journal.append("moved", tps=[list(tp) for tp in newly_moved])
        return newly_moved

    def _move(self, tasks: list[Task], states: dict[TP, TaskState], report: ExecReport) -> None:
        topics = {t.tp[0] for t in tasks}
        refusals: dict[TP, int] = {}
        total = report.bytes_planned
        unit_bytes = total > 0
        bar = _progress(self.opt.progress, total if unit_bytes else len(tasks), unit_bytes)
        dead_before: set[int] = set()
        last_progress = (time.monotonic(), -1, -1)
        try:
            while True:
                view = self._poll(topics)
                self._apply_observations(tasks, states, view)
                dead = waiting_on_dead(tasks, states, view.alive)
                for b in sorted(dead - dead_before):
                    msg = f"broker {b} is down: moves to it wait until it returns"
                    self.say(msg)
                    report.notes.append(msg)
                    self.journal.append("broker_down", broker=b)
                for b in sorted(dead_before - dead):
                    msg = f"broker {b} is back: its moves continue"
                    self.say(msg)
                    report.notes.append(msg)
                    self.journal.append("broker_up", broker=b)
                dead_before = dead
                batch = next_batch(tasks, states, view.alive, self.opt.max_per_broker, self.opt.max_in_flight)
                if batch:
                    self.journal.append("submit", tps=[list(t.tp) for t in batch])
                    try:
                        refused = self.adapter.submit({t.tp: t.target for t in batch})
                    except ClusterError as exc:  # controller busy or moving: the next poll retries
                        self.say(f"submitting {len(batch)} reassignment(s) failed ({exc.message}); retrying")
                        batch, refused = [], {}
                    for t in batch:
                        if t.tp in refused:
                            refusals[t.tp] = refusals.get(t.tp, 0) + 1
                            self.say(f"{t.label}: controller refused the reassignment ({refused[t.tp]})")
                            if refusals[t.tp] >= MAX_REFUSALS:
                                raise ClusterError(
                                    f"{t.label}: the controller refused the reassignment {MAX_REFUSALS} times "
                                    f"({refused[t.tp]})",
                                    hint="check the broker logs; `execute --resume` retries, "
                                    "`kafka-balancer cancel` undoes")
                        else:
                            states[t.tp] = step(states[t.tp], Event.SUBMIT)
                done = sum(1 for s in states.values() if s in (TaskState.MOVED, TaskState.DONE))
                in_flight = sum(1 for s in states.values() if s is TaskState.IN_FLIGHT)
                got = moved_bytes(tasks, states, view)
                if bar is not None:
                    bar.n = min(got, total) if unit_bytes else done
                    post = f"partitions {done}/{len(tasks)}, in flight {in_flight}"
                    if dead:
                        post += f", waiting for broker {','.join(map(str, sorted(dead)))}"
                    bar.set_postfix_str(post, refresh=False)
                    bar.refresh()
                if done == len(tasks):
                    return
                now = time.monotonic()
                if (got, done) != last_progress[1:]:
                    last_progress = (now, got, done)
                elif now - last_progress[0] > self.opt.stall_timeout_s:
                    raise ClusterError(
                        f"no progress for {self.opt.stall_timeout_s:.0f} s ({done}/{len(tasks)} partitions "
                        "moved" + (f"; waiting for broker(s) {sorted(dead)}" if dead else "") + ")",
                        hint="bring the brokers back and run `execute --resume`, or `kafka-balancer cancel`")
                time.sleep(self.opt.poll_s)
        finally:
            if bar is not None:
                bar.close()

    def _elect(self, tasks: list[Task], states: dict[TP, TaskState]) -> None:
        topics = {t.tp[0] for t in tasks}
        deadline = time.monotonic() + self.opt.verify_timeout_s
        elected_once = False
        while True:
            view = self._poll(topics, with_sizes=False)
            self._apply_observations(tasks, states, view)
            want = needs_election(tasks, states, view)
            if want and not elected_once:
                self.say(f"preferred-leader election on {len(want)} partition(s)")
            if want:
                try:
                    self.adapter.elect_preferred(want)
                except ClusterError as exc:
                    self.say(f"leader election failed ({exc.message}); retrying")
                self.journal.append("elect", tps=[list(tp) for tp in want])
                elected_once = True
            if all(states[t.tp] is TaskState.DONE for t in tasks) or time.monotonic() > deadline:
                return
            time.sleep(min(self.opt.poll_s, 1.0))

    def _verify(self, tasks: list[Task]) -> list[str]:
        topics = {t.tp[0] for t in tasks}
        deadline = time.monotonic() + self.opt.verify_timeout_s
        while True:
            problems = verify(tasks, self._poll(topics, with_sizes=False))
            if not problems or time.monotonic() > deadline:
                return problems
            time.sleep(min(self.opt.poll_s, 1.0))


def _progress(enabled: bool, total: int, unit_bytes: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    if unit_bytes:
        return tqdm(total=total, desc="moving", unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr)
    return tqdm(total=total, desc="moving", unit=" partitions", file=sys.stderr)
