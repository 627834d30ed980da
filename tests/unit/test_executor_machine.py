"""Pure executor decisions: transition tables, observations, batching, elections, verification."""

from __future__ import annotations

import pytest

from kafka_balancer.executor.machine import (
    PHASE_TRANSITIONS,
    TASK_TRANSITIONS,
    Event,
    IllegalTransition,
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
from kafka_balancer.executor.view import ClusterView, PartitionState, Reassignment

ALL = frozenset({1, 2, 3, 4})


def view(parts, reassigning=None, alive=ALL, sizes=None):
    return ClusterView(alive, {tp: PartitionState(*v) for tp, v in parts.items()}, reassigning or {},
                       sizes or {})


def test_every_task_transition_in_the_table_is_reachable_and_others_raise():
    for (state, event), nxt in TASK_TRANSITIONS.items():
        assert step(state, event) is nxt
    with pytest.raises(IllegalTransition):
        step(TaskState.DONE, Event.SUBMIT)
    with pytest.raises(IllegalTransition):
        step(TaskState.CANCELLED, Event.REPLICAS_MATCH)


def test_phase_machine_happy_path_and_interrupt_resume():
    p = Phase.VALIDATING
    for ev in (PhaseEvent.VALID, PhaseEvent.ALL_MOVED, PhaseEvent.ELECTED, PhaseEvent.VERIFIED):
        p = phase_step(p, ev)
    assert p is Phase.FINISHED
    assert phase_step(phase_step(Phase.MOVING, PhaseEvent.INTERRUPT), PhaseEvent.RESUME) is Phase.VALIDATING
    with pytest.raises(IllegalTransition):
        phase_step(Phase.FINISHED, PhaseEvent.RESUME)
    assert all(dst in Phase for dst in PHASE_TRANSITIONS.values())


def test_observe_follows_a_move_to_done():
    t = Task(("t", 0), current=(1, 2), target=(3, 1), size=10)
    st = step(TaskState.PENDING, Event.SUBMIT)
    running = view({("t", 0): ((1, 2, 3), 1, (1, 2))}, {("t", 0): Reassignment((3, 1, 2), (3,), (2,))})
    assert observe(t, st, running) is None
    moved = view({("t", 0): ((3, 1), 1, (1, 3))})
    st = step(st, observe(t, st, moved))
    assert st is TaskState.MOVED
    assert observe(t, st, moved) is None  # leader 1 is not preferred 3 yet
    led = view({("t", 0): ((3, 1), 3, (1, 3))})
    st = step(st, observe(t, st, led))
    assert st is TaskState.DONE
    assert observe(t, st, view({("t", 0): ((3, 1), 1, (1,))})) is Event.LEADER_LOST


def test_observe_reports_a_lost_reassignment():
    t = Task(("t", 0), (1, 2), (3, 1), 10)
    assert observe(t, TaskState.IN_FLIGHT, view({("t", 0): ((1, 2), 1, (1, 2))})) is Event.LOST
    assert observe(t, TaskState.PENDING, view({("t", 0): ((1, 2), 1, (1, 2))})) is None


def test_next_batch_respects_the_per_broker_cap_and_in_flight_limit():
    tasks = [Task(("t", i), (1, 2), (3, 2), 10) for i in range(4)]  # each adds 3, removes 1
    states = {t.tp: TaskState.PENDING for t in tasks}
    b = next_batch(tasks, states, ALL, max_per_broker=2, max_in_flight=10)
    assert [t.tp[1] for t in b] == [0, 1]
    states[("t", 0)] = TaskState.IN_FLIGHT
    assert [t.tp[1] for t in next_batch(tasks, states, ALL, 2, 10)] == [1]
    assert next_batch(tasks, states, ALL, 5, 1) == []  # one already in flight
    other = Task(("u", 0), (2, 4), (4, 2), 10)  # pure reorder: no budget used
    st2 = {**{t.tp: TaskState.IN_FLIGHT for t in tasks}, other.tp: TaskState.PENDING}
    assert next_batch([*tasks, other], st2, ALL, 1, 10) == [other]


def test_next_batch_holds_tasks_whose_destination_is_dead():
    tasks = [Task(("t", 0), (1, 2), (4, 2), 10), Task(("t", 1), (1, 2), (3, 2), 10)]
    states = {t.tp: TaskState.PENDING for t in tasks}
    alive = frozenset({1, 2, 3})
    assert [t.tp for t in next_batch(tasks, states, alive, 5, 10)] == [("t", 1)]
    assert waiting_on_dead(tasks, states, alive) == {4}


def test_needs_election_only_where_preferred_is_in_isr():
    tasks = [Task(("t", 0), (1, 2), (2, 1), 0), Task(("t", 1), (1, 2), (2, 1), 0)]
    states = {t.tp: TaskState.MOVED for t in tasks}
    v = view({("t", 0): ((2, 1), 1, (1, 2)), ("t", 1): ((2, 1), 1, (1,))})
    assert needs_election(tasks, states, v) == [("t", 0)]


def test_verify_names_every_problem():
    t = Task(("t", 0), (1, 2), (3, 1), 0)
    assert verify([t], view({("t", 0): ((3, 1), 3, (3, 1))})) == []
    problems = verify([t], view({("t", 0): ((3, 1), 1, (1,))}))
    assert len(problems) == 2
    assert "ISR is [1]" in problems[0] and "leader is 1, preferred is 3" in problems[1]


def test_moved_bytes_counts_partial_copies():
    t = Task(("t", 0), (1, 2), (3, 4), 100)  # two new replicas: 200 bytes to copy
    v = view({("t", 0): ((1, 2, 3, 4), 1, (1, 2))}, sizes={("t", 0, 3): 60, ("t", 0, 4): 500})
    assert moved_bytes([t], {t.tp: TaskState.IN_FLIGHT}, v) == 160
    assert moved_bytes([t], {t.tp: TaskState.MOVED}, v) == 200
