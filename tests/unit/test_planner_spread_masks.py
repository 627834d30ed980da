"""The destination masks for many partitions at once (``State.dest_masks``, and ``SpreadGoal.dest_masks`` for
the rack and host goals) must say what the one-pair checks say (``State.spread_ok``, ``SpreadGoal.ok``) for
every partition and destination: the move loop takes the first, the swaps and the undo the second."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.planner.goals import RackSpreadGoal
from kafka_balancer.planner.state import State
from kafka_balancer.sim.cluster import PRESETS, generate


@pytest.mark.parametrize("seed", range(6))
def test_a_spread_goals_masks_are_its_one_pair_checks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_brokers, width = 12, 4
    goal = RackSpreadGoal(rng.integers(-1, 4, size=n_brokers))  # few groups, and brokers in none (-1)
    dests = np.arange(n_brokers)
    alone = clash = 0
    for src in range(n_brokers):
        rows = np.full((40, width), -1, dtype=np.int32)  # partitions with a replica on src, -1 padded
        for row in rows:
            rf = int(rng.integers(1, width + 1))
            row[:rf] = rng.permutation([src, *rng.choice(np.delete(dests, src), size=rf - 1, replace=False)])
        got = goal.dest_masks(rows, src, dests)
        want = np.array([[goal.ok(row, src, int(d)) for d in dests] for row in rows])
        if got is None:
            assert want.all()
        else:
            np.testing.assert_array_equal(got, want)
        alone += sum(goal._banned(row, src) is not None for row in rows)
        clash += int((~want).sum())
    assert 0 < alone < 6 * 40 * n_brokers and clash > 0  # both kinds of rows, and destinations refused


@pytest.mark.parametrize(("preset", "seed"), [("racks48", 1), ("paper", 0), ("dead-broker", 2), ("hetero", 5)])
def test_the_masks_are_the_one_pair_checks(preset: str, seed: int) -> None:
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97)
    rng = np.random.default_rng(seed)
    holders = np.nonzero(st.rcount > 0)[0]
    dests = np.arange(st.snap.n_brokers)
    refused = 0
    for _ in range(30):
        src = int(rng.choice(holders))
        parts = st.members_arr(src)[:24]
        got = st.dest_masks(parts, src, dests)
        for k, p in enumerate(parts.tolist()):
            for d in dests.tolist():
                if d in st.snap.replicas[p].tolist() and d not in st.rep[p].tolist():
                    continue  # a replica may always go back where it was: spread_ok alone allows it
                assert got[k, d] == st.spread_ok(p, src, d), (p, src, d)
        refused += int((~got).sum())
        # move on to another state: one of the allowed moves
        kk, dd = np.nonzero(got)
        if kk.size:
            pick = int(rng.integers(kk.size))
            st.move_replica(int(parts[kk[pick]]), src, int(dests[dd[pick]]))
    assert refused > 0
