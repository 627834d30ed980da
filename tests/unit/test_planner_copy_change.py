"""What a replica move adds to the plan's copies: ``State.copy_change`` (one move, Python integers, used by
``move_replica``, the budget check of a swap and the replica counts' last pass) against ``State.copy_delta``
(many moves at once, numpy), and the state's running totals against a count from scratch.

A move is +1 copy when it lands on a broker that did not hold the partition in the snapshot and leaves one
that did, 0 when the copy moves on (from a broker that did not hold it to another that did not) or comes
home from a first move, -1 when it goes back home from a broker that did not hold it.
"""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.state import State


def _snap(reps: list[list[int]], n_brokers: int, disk: list[float]) -> Snapshot:
    p = len(reps)
    lead = np.array([[1.0, d, 1.0, 1.0] for d in disk])
    return Snapshot.build(
        broker_ids=list(range(n_brokers)), capacity=np.full((n_brokers, 4), 1000.0), topics=["t"],
        topic_idx=[0] * p, partition=list(range(p)), replicas=reps, leader=[r[0] for r in reps],
        leader_load=lead, follower_load=lead,
    )


def test_a_copy_made_moved_on_and_sent_home() -> None:
    st = State(_snap([[0, 1]], 4, [10.0]), 0.8, 0.1, 0.97)
    assert st.copy_change(0, 1, 2) == 1  # a new copy on 2
    st.move_replica(0, 1, 2)
    assert (st.copies, st.copied) == (1, 10.0)
    assert st.copy_change(0, 2, 3) == 0  # the copy moves on: still one
    st.move_replica(0, 2, 3)
    assert (st.copies, st.copied) == (1, 10.0)
    assert st.copy_change(0, 3, 1) == -1  # back home
    st.move_replica(0, 3, 1)
    assert (st.copies, st.copied) == (0, 0.0)


@pytest.mark.parametrize("seed", range(6))
def test_one_move_counts_as_the_many_moves_grid_and_the_totals_follow(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_brokers, p = 7, 60
    reps = [rng.choice(n_brokers, size=int(rng.integers(1, 4)), replace=False).tolist() for _ in range(p)]
    disk = rng.uniform(1.0, 50.0, size=p).tolist()
    snap = _snap(reps, n_brokers, disk)
    st = State(snap, 0.8, 0.1, 0.97)
    for _ in range(80):
        q = int(rng.integers(p))
        row = [int(b) for b in st.rep[q] if b >= 0]
        src = int(rng.choice(row))
        free = [b for b in range(n_brokers) if b not in row]
        if not free:
            continue
        grid = st.copy_delta(np.array([q]), src, np.arange(n_brokers))[0]
        for dst in free:
            assert st.copy_change(q, src, dst) == int(grid[dst])
        st.move_replica(q, src, int(rng.choice(free)))
        # from scratch: a replica on a broker that did not hold its partition in the snapshot is a copy
        added = [[b for b in st.rep[k] if b >= 0 and b not in snap.replicas[k]] for k in range(p)]
        assert st.copies == sum(len(a) for a in added)
        assert st.copied == pytest.approx(sum(len(a) * disk[k] for k, a in enumerate(added)), rel=1e-12)
