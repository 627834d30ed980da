"""Per-topic replica spread: each topic's replicas per broker within ±1 of the topic's mean."""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.count_goals.base import ROUND, CountGoal, _step_delta
from kafka_balancer.planner.count_goals.swaps import _swap_loop
from kafka_balancer.planner.state import State


class TopicSpreadGoal(CountGoal):
    """Each topic's replicas spread evenly: per broker within ±1 of the topic's mean (replicas ÷ live brokers)."""

    name = "topic_spread"

    def __init__(self) -> None:
        self._cache: tuple[int, np.ndarray, np.ndarray] | None = None

    def _bands(self, st: State) -> tuple[np.ndarray, np.ndarray]:
        """Per topic (lo, hi); a topic's replica total never changes, so they are computed once per state."""
        if self._cache is None or self._cache[0] != id(st):
            n = max(1, int(st.alive.sum()))
            tc = st.topic_count if st.alive.all() else st.topic_count[:, st.alive]
            avg = tc.sum(axis=1) / n
            self._cache = (id(st), np.maximum(0, np.ceil(avg - 1.0)), np.floor(avg + 1.0))
        return self._cache[1], self._cache[2]

    def _excess(self, st: State) -> np.ndarray:
        """[T, live brokers]: how far each count is outside its topic's band (``lo <= hi`` always), as floats;
        a [T, N] grid (2M cells at 1,000 brokers), so in two passes over it rather than five."""
        lo, hi = self._bands(st)
        c = st.topic_count if st.alive.all() else st.topic_count[:, st.alive]
        out = np.clip(c, lo[:, None], hi[:, None]).astype(np.float64, copy=False)
        np.subtract(c, out, out=out)
        return np.abs(out, out=out)

    def violation(self, st: State) -> float:
        return float(self._excess(st).sum())

    def detail(self, st: State) -> str:
        ex = self._excess(st)
        uneven = int((ex.sum(axis=1) > 0).sum())
        return f"{uneven} topic(s) unevenly spread, {int(ex.sum())} replica(s) outside their band"

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        lo, hi = self._bands(st)
        t = st.snap.topic_idx[parts]
        cd = st.topic_count[t[:, None], dests[None, :]]
        cs = st.topic_count[t, src]
        up = np.where(cd < lo[t][:, None], -1, np.where(cd >= hi[t][:, None], 1, 0))
        down = np.where(cs > hi[t], -1, np.where(cs <= lo[t], 1, 0))
        return np.asarray(up + down[:, None] <= 0)

    def replica_ok_one(self, st: State, p: int, src: int, dst: int) -> bool:
        lo, hi = self._bands(st)
        t = int(st.snap.topic_idx[p])
        lo_t, hi_t = float(lo[t]), float(hi[t])
        return _step_delta(int(st.topic_count[t, dst]), lo_t, hi_t, +1) + \
            _step_delta(int(st.topic_count[t, src]), lo_t, hi_t, -1) <= 0

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        return _swap_loop(st, budget, resource_guard, self._pick, self._gain)

    def _pick(self, st: State, stuck: set[int]) -> list[int]:
        ex = self._excess(st).sum(axis=0)
        full = np.zeros(st.snap.n_brokers)
        full[np.nonzero(st.alive)[0]] = ex
        if stuck:
            full[list(stuck)] = 0
        order = np.argsort(-full, kind="stable")[:ROUND]
        return [int(b) for b in order if full[b] > 0]

    def _gain(self, st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        lo_b, hi_b = self._bands(st)

        def viol(c: np.ndarray, t: np.ndarray) -> np.ndarray:
            return np.asarray(np.maximum(0, c - hi_b[t]) + np.maximum(0, lo_b[t] - c))

        ta = st.snap.topic_idx[a]
        tb = np.concatenate([st.snap.topic_idx[b], [-1]])
        gain = np.zeros((a.size, tb.size))
        # a leaves hi for lo
        ga = (
            viol(st.topic_count[ta, hi], ta)
            - viol(st.topic_count[ta, hi] - 1, ta)
            + viol(st.topic_count[ta, lo], ta)
            - viol(st.topic_count[ta, lo] + 1, ta)
        )
        gain += ga[:, None]
        tbv = tb[:-1]
        gb = (
            viol(st.topic_count[tbv, lo], tbv)
            - viol(st.topic_count[tbv, lo] - 1, tbv)
            + viol(st.topic_count[tbv, hi], tbv)
            - viol(st.topic_count[tbv, hi] + 1, tbv)
        )
        gain[:, :-1] += gb[None, :]
        same = ta[:, None] == tb[None, :]
        return np.where(same, 0.0, gain)
