"""The swap search's shortcuts give what the long way gives (test_planner_digest.py checks whole plans):

* ``_not_on`` with ``first`` reads a broker's partitions a prefix at a time, and must return the first
  ``first`` positions the whole scan returns, even when the prefix is mostly shared with the other broker;
* ``_polish_gains`` checks the goals only on pairs that pay for their bytes and fit the room, and must score
  every pair as ``State.judge`` in polishing mode followed by those two tests would;
* ``State.member_order`` keeps a broker's replicas ranked by load until a move changes its roles, and must
  always equal the stable sort of the roles as they are.
"""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies import swap


def _shared_snap(shared: int, own: int) -> Snapshot:
    """Three brokers: partitions 0..shared-1 on brokers 0 and 1, then ``own`` partitions on 0 and 2."""
    p = shared + own
    reps = [[0, 1]] * shared + [[0, 2]] * own
    lead = np.tile([1.0, 2.0, 1.0, 1.0], (p, 1))
    return Snapshot.build(
        broker_ids=[0, 1, 2], capacity=np.full((3, 4), 1000.0), topics=["t"], topic_idx=[0] * p,
        partition=list(range(p)), replicas=reps, leader=[0] * p, leader_load=lead, follower_load=lead * 0.5,
    )


def test_a_prefix_mostly_shared_with_the_other_broker_is_read_further() -> None:
    st = State(_shared_snap(shared=50, own=20), 0.8, 0.1, 0.97)
    parts = np.arange(70)  # broker 0's partitions in order: the first 50 also on broker 1
    got = swap._not_on(st, parts, 1, 12)
    assert got.tolist() == list(range(50, 62))  # past the first prefix of 24, and its doubling to 48
    assert swap._not_on(st, parts, 2, 12).tolist() == list(range(12))
    assert swap._not_on(st, parts, 1, 30).tolist() == list(range(50, 70))  # fewer than asked: all there are
    assert swap._not_on(st, parts, 1).tolist() == list(range(50, 70))


@pytest.mark.parametrize("seed", range(8))
def test_the_prefix_scan_returns_the_first_of_the_whole_scan(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_brokers, p = 6, 200
    reps = [rng.choice(n_brokers, size=3, replace=False).tolist() for _ in range(p)]
    lead = rng.uniform(0.0, 5.0, size=(p, 4))
    snap = Snapshot.build(
        broker_ids=list(range(n_brokers)), capacity=np.full((n_brokers, 4), 1000.0), topics=["t"],
        topic_idx=[0] * p, partition=list(range(p)), replicas=reps, leader=[r[0] for r in reps],
        leader_load=lead, follower_load=lead * 0.5,
    )
    st = State(snap, 0.8, 0.1, 0.97)
    for hi in range(n_brokers):
        parts = rng.permutation(st.members_arr(hi))
        for lo in range(n_brokers):
            whole = swap._not_on(st, parts, lo)
            for first in (1, 5, 12, 24, 500):
                assert swap._not_on(st, parts, lo, first).tolist() == whole[:first].tolist()


@pytest.mark.parametrize("seed", range(8))
def test_gains_checked_lazily_score_as_the_judge_does(seed: int) -> None:
    rng = np.random.default_rng(seed)
    st = State(_shared_snap(shared=4, own=4), 0.8, 0.1, 0.97)
    st.polishing, st.min_gain_per_byte = True, float(rng.uniform(0.0, 1e-4))
    m, room = 300, float(rng.uniform(50.0, 150.0))
    # around the target (inside the band or near it), as polishing finds brokers
    u0 = st.target * (1.0 + rng.normal(0.0, 0.1, size=(2, 1, 4)))
    u1 = u0 + st.target * rng.normal(0.0, 0.05, size=(2, m, 4))
    size = rng.uniform(0.0, 200.0, size=m)
    bad, both = st.judge(u0, u1)
    gain = np.where(bad[0] | bad[1], -np.inf, both[0] + both[1])
    counts = (gain > 1e-9) & (size <= room) & (gain >= st.min_gain_per_byte * size)
    got = swap._polish_gains(st, u0, u1, size, room)
    assert np.array_equal(np.where(counts, gain, -np.inf), np.where(counts, got, -np.inf))
    assert np.all(got[~counts] == -np.inf)  # what does not count is never a candidate
    paying = (both[0] + both[1] > 1e-9) & (size <= room) & (both[0] + both[1] >= st.min_gain_per_byte * size)
    assert counts.any() and (paying & ~counts).any()  # some pairs count, some that pay break a goal


def test_member_order_follows_every_move_that_changes_the_roles() -> None:
    rng = np.random.default_rng(3)
    n_brokers, p = 5, 60
    reps = [rng.choice(n_brokers, size=2, replace=False).tolist() for _ in range(p)]
    lead = np.round(rng.uniform(0.0, 4.0, size=(p, 4)))  # whole numbers: ties, which a stable sort keeps in order
    snap = Snapshot.build(
        broker_ids=list(range(n_brokers)), capacity=np.full((n_brokers, 4), 1000.0), topics=["t"],
        topic_idx=[0] * p, partition=list(range(p)), replicas=reps, leader=[r[0] for r in reps],
        leader_load=lead, follower_load=lead * 0.5,
    )
    st = State(snap, 0.8, 0.1, 0.97)

    def check() -> None:
        for b in range(n_brokers):
            la = st.member_roles(b)
            for r in range(4):
                assert st.member_order(b, r, True).tolist() == np.argsort(-la[:, r], kind="stable").tolist()
                assert st.member_order(b, r, False).tolist() == np.argsort(la[:, r], kind="stable").tolist()

    check()
    for _ in range(40):
        q = int(rng.integers(p))
        row = st.rep[q]
        if rng.random() < 0.5:  # a leadership move changes the roles, not the members
            st.move_leadership(q, int(row[1] if st.ldr[q] == row[0] else row[0]))
        else:
            src = int(row[rng.integers(2)])
            dst = int(rng.choice([b for b in range(n_brokers) if b not in row.tolist()]))
            st.move_replica(q, src, dst)
        check()
