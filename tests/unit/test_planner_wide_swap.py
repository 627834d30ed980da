"""The wide swap repair (planner/strategies/wide_swap.py), on clusters checked by hand: a pair that no
single move can bring into its band comes in by a swap of two replicas of the same role, counts unchanged;
swaps that only narrow a gap are undone."""

from __future__ import annotations

import math

import numpy as np

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.state import TOL, State
from kafka_balancer.planner.strategies import wide_swap

DISK, NW_IN = 1, 2
CAP = [100.0, 1e12, 1.25e8, 1.25e8]


def _state(parts: list[tuple[int, float, float]]) -> State:
    """Single-replica partitions (broker, disk, network-in as shares of a broker), four brokers; CPU and
    network-out carry nothing, so only disk and network-in have a band."""
    load = np.array([[0.0, d * CAP[DISK], n * CAP[NW_IN], 0.0] for _, d, n in parts])
    snap = Snapshot.build(
        broker_ids=list(range(4)), capacity=np.tile(CAP, (4, 1)), topics=["t"], topic_idx=[0] * len(parts),
        partition=list(range(len(parts))), replicas=[[b] for b, _, _ in parts], leader=[b for b, _, _ in parts],
        leader_load=load, follower_load=load,
    )
    return State(snap, 0.8, 0.1, 0.97)


def _cluster(y_nw_in: float) -> list[tuple[int, float, float]]:
    # broker 0: X (disk 0.05, network-in 0.05) + 0.41 / 0.41 -> disk 0.46, network-in 0.46
    # broker 1: Y (disk 0.05, network-in y) + 0.49 / (0.34 - y) -> disk 0.54, network-in 0.34
    # brokers 2 and 3: 0.50 / 0.40. Ideal disk 0.50 and network-in 0.40; aim bands 0.4515-0.5485 and
    # 0.3612-0.4388: broker 0 is above on network-in and near the bottom on disk, broker 1 below on network-in
    return [(0, 0.05, 0.05), (0, 0.41, 0.41), (1, 0.05, y_nw_in), (1, 0.49, 0.34 - y_nw_in),
            (2, 0.50, 0.40), (3, 0.50, 0.40)]


def test_a_swap_of_the_same_role_brings_both_brokers_into_their_bands() -> None:
    st = _state(_cluster(0.02))
    util = st.util()
    assert math.isclose(util[0, DISK], 0.46) and math.isclose(util[0, NW_IN], 0.46)
    # broker 0 cannot give X away alone: its disk would fall to 0.41, below its band
    assert st.grows_at(0, -st.role_load(0, 0))
    counts = (st.rcount.copy(), st.lcount.copy())
    assert wide_swap.partners(st, 0, NW_IN, above=True)[0] == 1  # room on network-in, disk to spare
    assert wide_swap.repair(st, np.zeros(st.load.shape, dtype=bool), 0.8, 0.1, math.inf) == 1
    # X and Y trade brokers: broker 0 at network-in 0.43 (disk 0.46), broker 1 at 0.37 (disk 0.54)
    assert st.rep[0, 0] == 1 and st.rep[2, 0] == 0
    assert np.allclose(st.util()[:2, NW_IN], [0.43, 0.37]) and np.allclose(st.util()[:2, DISK], [0.46, 0.54])
    assert bool(np.all(st.violations() <= TOL))
    assert np.array_equal(st.rcount, counts[0]) and np.array_equal(st.lcount, counts[1])


def test_swaps_that_only_narrow_the_gap_are_undone() -> None:
    # Y carries network-in 0.049: trading it for X lowers broker 0 to 0.459 only, still above its band,
    # and no second swap is left, so the swap is undone and nothing is copied
    st = _state(_cluster(0.049))
    before = (st.rep.copy(), st.ldr.copy(), st.load.copy(), st.copied)
    assert wide_swap.repair(st, np.zeros(st.load.shape, dtype=bool), 0.8, 0.1, math.inf) == 0
    assert np.array_equal(st.rep, before[0]) and np.array_equal(st.ldr, before[1])
    assert np.allclose(st.load, before[2]) and st.copied == before[3]


def test_pairs_out_of_reach_are_skipped() -> None:
    st = _state(_cluster(0.02))
    skip = np.zeros(st.load.shape, dtype=bool)
    skip[0, NW_IN] = skip[1, NW_IN] = True
    assert wide_swap.repair(st, skip, 0.8, 0.1, math.inf) == 0
    assert st.rep[0, 0] == 0
