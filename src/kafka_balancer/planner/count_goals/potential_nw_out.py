"""Potential network-out: the network-out a broker would serve if every replica it holds led stays ≤ θ
(failover headroom)."""

from __future__ import annotations

import numpy as np

from kafka_balancer.model.snapshot import NW_OUT
from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.count_goals.base import ROUND, CountGoal
from kafka_balancer.planner.count_goals.swaps import _swap_loop
from kafka_balancer.planner.state import TOL, State


class PotentialNwOutGoal(CountGoal):
    """Failover headroom: what a broker would serve on network-out if all its replicas led, ≤ θ."""

    name = "potential_nw_out"

    def __init__(self, theta: float) -> None:
        self.theta = theta

    def util(self, st: State) -> np.ndarray:
        return st.potential / st.cap[:, NW_OUT]

    def violation(self, st: State) -> float:
        return float(np.maximum(0.0, self.util(st)[st.alive] - self.theta).sum())

    def detail(self, st: State) -> str:
        u = self.util(st)[st.alive]
        n_over = int((u > self.theta + TOL).sum())
        return f"max {float(u.max()) if u.size else 0.0:.3f}, {n_over} broker(s) above θ"

    def proof(self, st: State) -> str | None:
        live = st.alive
        mean = float(st.potential[live].sum() / st.cap[live, NW_OUT].sum()) if live.any() else 0.0
        if mean > self.theta:
            return (
                f"potential network-out averages {mean:.3f} of capacity over the live brokers, above θ={self.theta}: "
                "no placement keeps every broker under θ"
            )
        return None

    def replica_ok(self, st: State, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        cap = st.cap[dests, NW_OUT]
        u0 = st.potential[dests] / cap
        u1 = (st.potential[dests][None, :] + st.L[parts, NW_OUT][:, None]) / cap[None, :]
        grow = np.maximum(0.0, u1 - self.theta) - np.maximum(0.0, u0 - self.theta)[None, :]
        s0 = st.potential[src] / st.cap[src, NW_OUT]
        s1 = (st.potential[src] - st.L[parts, NW_OUT]) / st.cap[src, NW_OUT]
        shrink = np.maximum(0.0, s0 - self.theta) - np.maximum(0.0, s1 - self.theta)
        return grow <= shrink[:, None] + 1e-12

    def replica_ok_one(self, st: State, p: int, src: int, dst: int) -> bool:
        lead = float(st.L[p, NW_OUT])
        cap, pot = float(st.cap[dst, NW_OUT]), float(st.potential[dst])
        grow = max(0.0, (pot + lead) / cap - self.theta) - max(0.0, pot / cap - self.theta)
        cap_s, pot_s = float(st.cap[src, NW_OUT]), float(st.potential[src])
        shrink = max(0.0, pot_s / cap_s - self.theta) - max(0.0, (pot_s - lead) / cap_s - self.theta)
        return grow <= shrink + 1e-12

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        return _swap_loop(st, budget, resource_guard, self._pick, self._gain)

    def _pick(self, st: State, stuck: set[int]) -> list[int]:
        u = np.where(st.alive, self.util(st), -np.inf)
        if stuck:
            u[list(stuck)] = -np.inf
        order = np.argsort(-u, kind="stable")[:ROUND]
        return [int(b) for b in order if u[b] > self.theta + TOL]

    def _gain(self, st: State, hi: int, lo: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        cap_h, cap_l = st.cap[hi, NW_OUT], st.cap[lo, NW_OUT]
        net = st.L[a, NW_OUT][:, None] - np.concatenate([st.L[b, NW_OUT], [0.0]])[None, :]
        before = max(0.0, st.potential[hi] / cap_h - self.theta) + max(0.0, st.potential[lo] / cap_l - self.theta)
        after = np.maximum(0.0, (st.potential[hi] - net) / cap_h - self.theta) + np.maximum(
            0.0, (st.potential[lo] + net) / cap_l - self.theta
        )
        return np.asarray(before - after)
