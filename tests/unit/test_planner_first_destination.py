"""``replica._first_acceptable`` judges the first destinations for every candidate and the rest only for
candidates none of those takes. It must find what judging the whole [candidate, destination] grid finds:
the first acceptable destination of each candidate, and the gain there. Checked on seeded random states."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.planner.ranking import smallest
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies import replica
from kafka_balancer.sim.cluster import PRESETS, generate


def _whole_grid(st: State, src: int, cands: np.ndarray, dests: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    deltas = st.role_loads(cands, src)
    bad_src, gain_src = st.judge(st.load[src] / st.cap[src], (st.load[src] - deltas) / st.cap[src])
    u0 = st.load[dests] / st.cap[dests]
    u1 = (st.load[dests][None, :, :] + deltas[:, None, :]) / st.cap[dests][None, :, :]
    bad_dst, gain_dst = st.judge(u0[None, :, :], u1)
    gain = gain_dst + gain_src[:, None]
    ok = st.dest_masks(cands, src, dests) & ~bad_src[:, None] & ~bad_dst & (gain > 1e-9)
    first = np.where(ok.any(axis=1), np.argmax(ok, axis=1), -1)
    return first, np.where(first >= 0, gain[np.arange(cands.size), np.maximum(first, 0)], 0.0)


@pytest.mark.parametrize(("preset", "seed"), [("overloaded", 3), ("hetero", 0), ("racks48", 1), ("new-brokers", 2)])
def test_the_first_acceptable_destination_is_the_whole_grids(preset: str, seed: int) -> None:
    st = State(generate(PRESETS[preset], seed=seed), 0.8, 0.1, 0.97)
    rng = np.random.default_rng(seed)
    live = np.nonzero(st.alive)[0]
    found = later = 0
    for _ in range(25):
        src = int(rng.choice(live))
        r = int(rng.integers(4))
        cands = st.members_arr(src)[:replica.MAX_CANDIDATES]
        dests = smallest(st.load[:, r] / st.cap[:, r], replica.MAX_DESTINATIONS, st.alive)
        deltas = st.role_loads(cands, src)
        bad_src, gain_src = st.judge(st.load[src] / st.cap[src], (st.load[src] - deltas) / st.cap[src])
        first, gain = replica._first_acceptable(st, src, cands, deltas, gain_src, np.nonzero(~bad_src)[0], dests)
        want_first, want_gain = _whole_grid(st, src, cands, dests)
        np.testing.assert_array_equal(first, want_first)
        np.testing.assert_array_equal(gain, want_gain)
        found += int((first >= 0).sum())
        # candidates judged in the second round: none of the first destinations took them
        later += int(((first < 0) | (first >= replica.FIRST_DESTINATIONS))[~bad_src].sum())
        if (first >= 0).any():  # move on to another state
            k = int(np.nonzero(first >= 0)[0][0])
            st.move_replica(int(cands[k]), src, int(dests[first[k]]))
    assert found > 0 and later > 0  # both rounds had work
