"""The executor's state machines, as explicit transition tables, and the pure decisions around them.

Two machines, in the manner of Cruise Control's executor:

* the **execution** moves through phases ``VALIDATING -> MOVING -> ELECTING -> VERIFYING -> FINISHED``
  (or ``INTERRUPTED`` / ``CANCELLED`` / ``FAILED``);
* each **partition task** moves through ``PENDING -> IN_FLIGHT -> MOVED -> DONE`` where ``MOVED`` means
  the replica set matches the plan and ``DONE`` that the leader is the plan's ``replicas[0]`` too.

Any transition not in a table is a bug and raises. Observations of the cluster become events through
:func:`observe`; the batch to submit next is :func:`next_batch`. Example::

    >>> t = Task(("t", 0), current=(1, 2), target=(3, 2), size=100)
    >>> st = TaskState.PENDING
    >>> st = step(st, Event.SUBMIT); st
    <TaskState.IN_FLIGHT: 'in_flight'>
    >>> from kafka_balancer.executor.view import ClusterView, PartitionState
    >>> v = ClusterView(frozenset({1, 2, 3}), {("t", 0): PartitionState((3, 2), 2, (3, 2))})
    >>> observe(t, st, v)
    <Event.REPLICAS_MATCH: 'replicas_match'>
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafka_balancer.executor.view import TP, ClusterView, tp_label


class Phase(enum.Enum):
    VALIDATING = "validating"
    MOVING = "moving"
    ELECTING = "electing"
    VERIFYING = "verifying"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"
    FAILED = "failed"


class PhaseEvent(enum.Enum):
    VALID = "valid"
    ALL_MOVED = "all_moved"
    ELECTED = "elected"
    VERIFIED = "verified"
    INTERRUPT = "interrupt"
    CANCEL = "cancel"
    ERROR = "error"
    RESUME = "resume"


PHASE_TRANSITIONS: dict[tuple[Phase, PhaseEvent], Phase] = {
    (Phase.VALIDATING, PhaseEvent.VALID): Phase.MOVING,
    (Phase.MOVING, PhaseEvent.ALL_MOVED): Phase.ELECTING,
    (Phase.ELECTING, PhaseEvent.ELECTED): Phase.VERIFYING,
    (Phase.VERIFYING, PhaseEvent.VERIFIED): Phase.FINISHED,
    (Phase.INTERRUPTED, PhaseEvent.RESUME): Phase.VALIDATING,
    (Phase.FAILED, PhaseEvent.RESUME): Phase.VALIDATING,
}
for _p in (Phase.VALIDATING, Phase.MOVING, Phase.ELECTING, Phase.VERIFYING):
    PHASE_TRANSITIONS[(_p, PhaseEvent.INTERRUPT)] = Phase.INTERRUPTED
    PHASE_TRANSITIONS[(_p, PhaseEvent.CANCEL)] = Phase.CANCELLED
    PHASE_TRANSITIONS[(_p, PhaseEvent.ERROR)] = Phase.FAILED
PHASE_TRANSITIONS[(Phase.INTERRUPTED, PhaseEvent.CANCEL)] = Phase.CANCELLED
PHASE_TRANSITIONS[(Phase.FAILED, PhaseEvent.CANCEL)] = Phase.CANCELLED


class TaskState(enum.Enum):
    PENDING = "pending"
    IN_FLIGHT = "in_flight"
    MOVED = "moved"
    DONE = "done"
    CANCELLED = "cancelled"


class Event(enum.Enum):
    SUBMIT = "submit"  # we asked the controller to reassign
    REPLICAS_MATCH = "replicas_match"  # replica list equals the plan, no reassignment running
    LEADER_OK = "leader_ok"  # and the leader is replicas[0]
    LEADER_LOST = "leader_lost"  # leader moved away again (e.g. its broker died)
    LOST = "lost"  # not reassigning and replicas differ: submit again
    CANCEL = "cancel"


TASK_TRANSITIONS: dict[tuple[TaskState, Event], TaskState] = {
    (TaskState.PENDING, Event.SUBMIT): TaskState.IN_FLIGHT,
    (TaskState.PENDING, Event.REPLICAS_MATCH): TaskState.MOVED,
    (TaskState.IN_FLIGHT, Event.REPLICAS_MATCH): TaskState.MOVED,
    (TaskState.IN_FLIGHT, Event.LOST): TaskState.PENDING,
    (TaskState.MOVED, Event.LEADER_OK): TaskState.DONE,
    (TaskState.DONE, Event.LEADER_LOST): TaskState.MOVED,
    (TaskState.MOVED, Event.LOST): TaskState.PENDING,
    (TaskState.DONE, Event.LOST): TaskState.PENDING,
    (TaskState.PENDING, Event.CANCEL): TaskState.CANCELLED,
    (TaskState.IN_FLIGHT, Event.CANCEL): TaskState.CANCELLED,
}


class IllegalTransition(RuntimeError):
    pass


def step(state: TaskState, event: Event) -> TaskState:
    """The next task state; raises IllegalTransition for a pair not in the table."""
    try:
        return TASK_TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTransition(f"task: no transition from {state.value} on {event.value}") from None


def phase_step(phase: Phase, event: PhaseEvent) -> Phase:
    try:
        return PHASE_TRANSITIONS[(phase, event)]
    except KeyError:
        raise IllegalTransition(f"execution: no transition from {phase.value} on {event.value}") from None


@dataclass(frozen=True)
class Task:
    """One plan entry: move ``tp`` from ``current`` to ``target`` replicas (``target[0]`` leads)."""

    tp: TP
    current: tuple[int, ...]
    target: tuple[int, ...]
    size: int  # bytes of the partition (largest replica) when the plan started

    @property
    def adding(self) -> tuple[int, ...]:
        return tuple(b for b in self.target if b not in self.current)

    @property
    def removing(self) -> tuple[int, ...]:
        return tuple(b for b in self.current if b not in self.target)

    @property
    def moves_data(self) -> bool:
        return bool(self.adding)

    @property
    def bytes_to_move(self) -> int:
        return self.size * len(self.adding)

    def involved(self) -> frozenset[int]:
        """Brokers whose concurrent-move budget this task uses: the ones that gain or lose a replica.
        A pure reorder (leadership move) uses none."""
        return frozenset(self.adding) | frozenset(self.removing)

    @property
    def label(self) -> str:
        return tp_label(self.tp)


def build_tasks(entries: Iterable[tuple[TP, tuple[int, ...]]], view: ClusterView) -> list[Task]:
    """Tasks for plan entries ``(tp, target)`` against the cluster as it is now."""
    return [
        Task(tp, view.partitions[tp].replicas, tuple(target), view.partition_bytes(tp))
        for tp, target in entries
    ]


def observe(task: Task, state: TaskState, view: ClusterView) -> Event | None:
    """The event the cluster's state implies for a task, or None when nothing changed."""
    ps = view.partitions.get(task.tp)
    if ps is None or state is TaskState.CANCELLED:
        return None
    matches = ps.replicas == task.target and task.tp not in view.reassigning
    if state in (TaskState.PENDING, TaskState.IN_FLIGHT):
        if matches:
            return Event.REPLICAS_MATCH
        if state is TaskState.IN_FLIGHT and task.tp not in view.reassigning:
            return Event.LOST
        return None
    if not matches:
        return Event.LOST
    if state is TaskState.MOVED and ps.leader == task.target[0]:
        return Event.LEADER_OK
    if state is TaskState.DONE and ps.leader != task.target[0]:
        return Event.LEADER_LOST
    return None


def next_batch(
    tasks: Sequence[Task],
    states: Mapping[TP, TaskState],
    alive: frozenset[int],
    max_per_broker: int,
    max_in_flight: int,
) -> list[Task]:
    """Pending tasks to submit now, in plan order, such that no broker takes part in more than
    ``max_per_broker`` concurrent replica moves and at most ``max_in_flight`` tasks run at once.

    Tasks that touch a dead broker wait (Kafka could not complete them). Pure reorders use no
    per-broker budget.

        >>> ts = [Task(("t", i), (1, 2), (3, 2), 10) for i in range(3)]
        >>> st = {t.tp: TaskState.PENDING for t in ts}
        >>> [t.tp[1] for t in next_batch(ts, st, frozenset({1, 2, 3}), max_per_broker=2, max_in_flight=10)]
        [0, 1]
    """
    load: Counter[int] = Counter()
    in_flight = 0
    for t in tasks:
        if states[t.tp] is TaskState.IN_FLIGHT:
            in_flight += 1
            load.update(t.involved())
    batch: list[Task] = []
    for t in tasks:
        if states[t.tp] is not TaskState.PENDING:
            continue
        if in_flight + len(batch) >= max_in_flight:
            break
        if not set(t.target) <= alive:
            continue
        inv = t.involved()
        if any(load[b] >= max_per_broker for b in inv):
            continue
        load.update(inv)
        batch.append(t)
    return batch


def waiting_on_dead(tasks: Sequence[Task], states: Mapping[TP, TaskState], alive: frozenset[int]) -> set[int]:
    """Dead brokers that unfinished tasks need."""
    dead: set[int] = set()
    for t in tasks:
        if states[t.tp] in (TaskState.PENDING, TaskState.IN_FLIGHT):
            dead |= {b for b in t.target if b not in alive}
    return dead


def needs_election(tasks: Sequence[Task], states: Mapping[TP, TaskState], view: ClusterView) -> list[TP]:
    """Moved partitions whose leader is not ``replicas[0]`` but could be (it is alive and in the ISR)."""
    out = []
    for t in tasks:
        if states[t.tp] is not TaskState.MOVED:
            continue
        ps = view.partitions.get(t.tp)
        pref = t.target[0]
        if ps is not None and ps.leader != pref and pref in view.alive and pref in ps.isr:
            out.append(t.tp)
    return out


def verify(tasks: Sequence[Task], view: ClusterView) -> list[str]:
    """Final check: replicas as planned, ISR full, leader preferred. Empty list = verified."""
    problems = []
    for t in tasks:
        ps = view.partitions.get(t.tp)
        if ps is None:
            problems.append(f"{t.label}: partition is gone")
            continue
        if ps.replicas != t.target:
            problems.append(f"{t.label}: replicas are {list(ps.replicas)}, plan says {list(t.target)}")
        if set(ps.isr) != set(t.target):
            problems.append(f"{t.label}: ISR is {sorted(ps.isr)}, not all of {sorted(t.target)}")
        if ps.leader != t.target[0]:
            problems.append(f"{t.label}: leader is {ps.leader}, preferred is {t.target[0]}")
    return problems


def moved_bytes(tasks: Sequence[Task], states: Mapping[TP, TaskState], view: ClusterView) -> int:
    """Bytes copied so far: full size for moved tasks, the new replicas' current sizes for in-flight ones."""
    total = 0
    for t in tasks:
        st = states[t.tp]
        if st in (TaskState.MOVED, TaskState.DONE):
            total += t.bytes_to_move
        elif st is TaskState.IN_FLIGHT:
            got = sum(min(view.replica_bytes.get((t.tp[0], t.tp[1], b), 0), t.size) for b in t.adding)
            total += got
    return total
