"""The swap strategy remembers its dead ends (``State.swap_misses``): a swap between two brokers that found
nothing is not searched again until a move touches one of them or the judge's settings change. The memo
must never change a plan, only skip work whose answer is known (test_planner_digest.py checks the plans
with the memo off)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies import swap


def _snap() -> Snapshot:
    """Four equal brokers, one replica per partition: partitions 0-2 on broker 0, 3 on 1, 4 on 2, 5 on 3."""
    p = 6
    lead = np.tile([5.0, 10.0, 5.0, 5.0], (p, 1))
    return Snapshot.build(
        broker_ids=[0, 1, 2, 3], capacity=np.tile([100.0, 100.0, 100.0, 100.0], (4, 1)), topics=["t"],
        topic_idx=[0] * p, partition=list(range(p)), replicas=[[0], [0], [0], [1], [2], [3]],
        leader=[0, 0, 0, 1, 2, 3], leader_load=lead, follower_load=lead * 0.5,
    )


def _ctx(st: State, hi: int, lo: int) -> tuple[object, ...]:
    return swap._context(st, hi, lo, min(float(st.byte_budget), float(st.max_bytes - st.copied)))


def test_a_dead_end_is_kept_until_a_move_touches_one_of_its_brokers() -> None:
    st = State(_snap(), 0.8, 0.1, 0.97)
    before = _ctx(st, 0, 1)
    st.move_replica(4, 2, 3)  # neither broker 0 nor 1
    assert _ctx(st, 0, 1) == before
    st.move_replica(3, 1, 2)  # broker 1 loses its replica
    assert _ctx(st, 0, 1) != before
    before = _ctx(st, 0, 1)
    st.move_replica(0, 0, 2)  # broker 0 loses a replica
    assert _ctx(st, 0, 1) != before


def test_a_dead_end_is_forgotten_when_the_judge_changes() -> None:
    st = State(_snap(), 0.8, 0.1, 0.97)
    before = _ctx(st, 0, 1)
    st.polishing = True
    assert _ctx(st, 0, 1) != before
    st.polishing = False
    st.min_gain_per_byte = 1e-9
    assert _ctx(st, 0, 1) != before
    st.min_gain_per_byte = 0.0
    st.byte_budget = 1.0
    assert _ctx(st, 0, 1) != before


def test_a_remembered_dead_end_is_not_searched_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(swap, "_cannot_gain", lambda *args: False)  # every search reaches the candidates
    st = State(_snap(), 0.8, 0.1, 0.97)
    miss = next(
        (hi, lo, r) for hi, lo in itertools.permutations(range(4), 2) for r in range(4)
        if not swap.swap_between(st, hi, lo, r)
    )
    assert miss in st.swap_misses
    hi, lo, r = miss

    def searched(*args: object) -> object:
        raise AssertionError("searched again")

    monkeypatch.setattr(swap, "_givers", searched)
    assert swap.swap_between(st, hi, lo, r) is False  # answered from the memo
    other = next(p for p in range(st.snap.n_partitions) if st.rep[p, 0] not in (hi, lo))
    st.move_replica(other, int(st.rep[other, 0]), hi)  # hi changes: the dead end may have opened
    with pytest.raises(AssertionError, match="searched again"):
        swap.swap_between(st, hi, lo, r)
