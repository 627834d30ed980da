"""Rack repair: a partition with two replicas in one rack is fixed when a rack it misses has a broker that
may receive it."""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.count_goals.base import CountGoal, _dev_cost
from kafka_balancer.planner.state import State


class RackRepairGoal(CountGoal):
    name = "rack_repair"

    def _repairable(self, st: State) -> list[tuple[int, list[int]]]:
        """(partition, racks it misses that have a receiving broker) for partitions with two replicas in
        one rack."""
        racks = st.snap.rack_idx
        if not (racks >= 0).any():
            return []
        rep = st.rep
        g = np.where(rep >= 0, racks[np.maximum(rep, 0)], -1)
        srt = np.sort(g, axis=1)
        dup = ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)).any(axis=1)
        recv_racks = set(np.unique(racks[st.receive & (racks >= 0)]).tolist())
        out: list[tuple[int, list[int]]] = []
        for p in np.nonzero(dup)[0].tolist():
            have = {int(x) for x in g[p] if x >= 0}
            missing = sorted(recv_racks - have)
            if missing:
                out.append((p, missing))
        return out

    def violation(self, st: State) -> float:
        return float(len(self._repairable(st)))

    def detail(self, st: State) -> str:
        return f"{len(self._repairable(st))} partition(s) with two replicas in one rack that can be spread"

    def improve(self, st: State, budget: Budget, resource_guard: bool) -> int:
        racks = st.snap.rack_idx
        moves = 0
        for p, missing in self._repairable(st):
            if not budget.take():
                break
            if st.frozen[p]:
                continue
            row = [int(b) for b in st.rep[p] if b >= 0]
            seen: dict[int, list[int]] = {}
            for b in row:
                seen.setdefault(int(racks[b]), []).append(b)
            srcs = [b for bs in seen.values() if len(bs) > 1 for b in bs]
            srcs.sort(key=lambda b: (st.ldr[p] == b, -float((st.load[b] / st.cap[b]).max())))
            dests = np.nonzero(st.receive & np.isin(racks, missing))[0]
            for src in srcs:
                if _move_one_of(st, p, src, dests, resource_guard):
                    moves += 1
                    break
        return moves


def _move_one_of(st: State, p: int, src: int, dests: np.ndarray, resource_guard: bool) -> bool:
    if dests.size == 0:
        return False
    delta = st.role_load(p, src)
    load_d, cap_d = st.load[dests], st.cap[dests]
    ok = st.dest_masks(np.array([p]), src, dests)[0]
    if resource_guard:
        # the source's violation may not grow either: then no destination will do
        if st.grows_at(src, -delta):
            return False
        ok &= ~st.violation_grows(load_d / cap_d, (load_d + delta) / cap_d)
    if not ok.any():
        return False
    cost = np.where(ok, _dev_cost(st, load_d + delta, cap_d) - _dev_cost(st, load_d, cap_d), np.inf)
    dst = int(dests[int(np.argmin(cost))])
    st.move_replica(p, src, dst)
    return True
