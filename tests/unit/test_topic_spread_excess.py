"""The topic-spread goal's excess grid: each (topic, live broker) count's distance outside the topic's band
``[max(0, ceil(mean - 1)), floor(mean + 1)]``, mean = the topic's replicas over the live brokers.

``TopicSpreadGoal._excess`` computes it by clipping (two passes over a grid of 2M cells at 1,000 brokers);
these cases hold it to the definition, written out term by term, on a hand-checked cluster and on seeded
random ones, with every broker live and with one dead.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.count_goals.topic_spread import TopicSpreadGoal
from kafka_balancer.planner.state import State


def _snap(reps: list[list[int]], topics: list[int], n_brokers: int, n_topics: int,
          alive: list[bool] | None = None) -> Snapshot:
    p = len(reps)
    lead = np.tile([1.0, 2.0, 1.0, 1.0], (p, 1))
    return Snapshot.build(
        broker_ids=list(range(n_brokers)), capacity=np.full((n_brokers, 4), 1000.0),
        topics=[f"t{k}" for k in range(n_topics)], topic_idx=topics, partition=list(range(p)), replicas=reps,
        leader=[r[0] for r in reps], leader_load=lead, follower_load=lead * 0.5, alive=alive,
    )


def _by_definition(st: State) -> np.ndarray:
    """The excess cell by cell, in plain Python."""
    live = [b for b in range(st.snap.n_brokers) if st.alive[b]]
    out = np.zeros((st.topic_count.shape[0], len(live)))
    for t in range(st.topic_count.shape[0]):
        mean = sum(int(st.topic_count[t, b]) for b in live) / len(live)
        lo, hi = max(0, math.ceil(mean - 1.0)), math.floor(mean + 1.0)
        for k, b in enumerate(live):
            c = int(st.topic_count[t, b])
            out[t, k] = max(0, c - hi) + max(0, lo - c)
    return out


def test_a_topic_piled_on_one_broker() -> None:
    # topic 0: 7 replicas on 3 brokers, 5 / 1 / 1; mean 7/3, band [2, 3]: excess 2, 1, 1
    reps = [[0, 1], [0, 2], [0], [0], [0]]
    st = State(_snap(reps, [0] * 5, 3, 1), 0.8, 0.1, 0.97)
    goal = TopicSpreadGoal()
    assert goal._excess(st).tolist() == [[2.0, 1.0, 1.0]]
    assert goal.violation(st) == 4.0
    assert goal.detail(st) == "1 topic(s) unevenly spread, 4 replica(s) outside their band"


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("dead", [False, True])
def test_the_excess_is_the_distance_outside_each_topics_band(seed: int, dead: bool) -> None:
    rng = np.random.default_rng(seed)
    n_brokers, n_topics, p = 7, 5, 160
    # skewed on purpose: most replicas of a topic on a few brokers, so counts fall on both sides of the band
    weights = rng.dirichlet(np.full(n_brokers, 0.4), size=n_topics)
    topics = rng.integers(0, n_topics, size=p).tolist()
    reps = [rng.choice(n_brokers, size=int(rng.integers(1, 4)), replace=False, p=weights[t]).tolist()
            for t in topics]
    alive = [b != 3 for b in range(n_brokers)] if dead else None
    st = State(_snap(reps, topics, n_brokers, n_topics, alive), 0.8, 0.1, 0.97)
    want = _by_definition(st)
    assert want.sum() > 0  # the case has counts outside the band
    got = TopicSpreadGoal()._excess(st)
    assert got.dtype == np.float64
    assert np.array_equal(got, want)
    assert TopicSpreadGoal().violation(st) == float(want.sum())
