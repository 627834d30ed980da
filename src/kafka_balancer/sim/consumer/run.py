"""One deterministic simulation of a consumer group under failures and joins.

The group follows Kafka's classic protocol as seed 002/004 describe it:
  * members heartbeat every ``heartbeat_ms`` (member ``i`` at phase ``i × hb / n``);
  * a killed member stops dead; the coordinator removes it when ``session_timeout_ms`` passes
    after its last heartbeat, and starts a rebalance;
  * live members learn of a rebalance from their next heartbeat response and send JoinGroup; the
    join phase ends when every known member has joined or expired; ``sync_ms`` later every member
    has its assignment (the leader ran the assignor on partition loads = rate + lag ÷ horizon);
  * eager: a member stops consuming everything when it sends JoinGroup, and resumes with the new
    assignment after SyncGroup (stop the world);
  * cooperative: members keep consuming during the join; after SyncGroup a member drops only the
    partitions it lost; if any were lost, a second round follows at once and hands them to their
    new owners.

Example:
    >>> cfg = SimConfig(rates=(10.0,) * 4, capacities=(30.0,) * 2, duration_ms=4000,
    ...                 kills=((1000, 1),), heartbeat_ms=500, session_timeout_ms=1500)
    >>> r = simulate(cfg)
    >>> r.rebalances[0]["cause"], r.keeps_up, r.recovery_s()
    ('member c1 expired', True, 1.55)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kafka_balancer.consumer.assignors import run as run_assignor
from kafka_balancer.consumer.problem import problem_from_arrays
from kafka_balancer.consumer.result import COOPERATIVE
from kafka_balancer.sim.consumer.config import SimConfig
from kafka_balancer.sim.consumer.events import EventQueue
from kafka_balancer.sim.consumer.flow import Flow, weighted_percentile

# event priorities at equal times: state changes before flow
KILL, JOIN, EXPIRE, LEARN, SYNC, TICK = range(6)
MAX_COOP_ROUNDS = 6


@dataclass
class _Member:
    idx: int
    capacity: float
    start_ms: int
    alive: bool = True
    in_group: bool = False
    owned: set[int] = field(default_factory=set)
    paused: bool = False  # eager: between JoinGroup and SyncGroup
    learned: bool = False


@dataclass
class SimResult:
    config: SimConfig
    throughput: float  # messages/s consumed in the measurement window
    arrival_rate: float
    latency_p50_s: float
    latency_p99_s: float
    max_lag: float
    final_lag: float
    keeps_up: bool
    rebalances: list[dict[str, Any]]
    paused_partition_s: float
    max_member_util: float  # after the last rebalance: max assigned rate / capacity
    lag_series: list[tuple[float, float]]

    def recovery_s(self) -> float:
        """From the first kill to the end of the last rebalance (0 without kills)."""
        if not self.config.kills or not self.rebalances:
            return 0.0
        done = max(r.get("done_ms", self.config.duration_ms) for r in self.rebalances)
        return (done - min(t for t, _ in self.config.kills)) / 1000.0

    def downtime_per_rebalance_s(self) -> float:
        if not self.rebalances:
            return 0.0
        return float(np.mean([r["downtime_s"] for r in self.rebalances]))

    def summary(self) -> dict[str, Any]:
        return {
            "assignor": self.config.assignor, "protocol": self.config.protocol,
            "throughput": self.throughput, "arrival_rate": self.arrival_rate,
            "latency_p50_s": self.latency_p50_s, "latency_p99_s": self.latency_p99_s,
            "max_lag": self.max_lag, "final_lag": self.final_lag, "keeps_up": self.keeps_up,
            "rebalances": len(self.rebalances), "downtime_per_rebalance_s": self.downtime_per_rebalance_s(),
            "recovery_s": self.recovery_s(),
            "paused_partition_s": self.paused_partition_s, "max_member_util": self.max_member_util,
        }


class _Sim:
    def __init__(self, cfg: SimConfig) -> None:
        cfg.validate()
        self.cfg = cfg
        self.q = EventQueue()
        self.flow = Flow(cfg.rates, cfg.tick_ms, seed=cfg.seed)
        starts = cfg.start_ms or tuple(range(len(cfg.capacities)))
        self.members = [_Member(i, c, int(starts[i])) for i, c in enumerate(cfg.capacities)]
        self.n0 = len(self.members)
        self.rebalancing = False
        self.generation = 0
        self.rebalances: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self.coop_rounds = 0
        self.paused_ps = 0.0
        self.last_hb: dict[int, int] = {}

    # --- heartbeats -------------------------------------------------------------------------------
    def _phase(self, i: int) -> int:
        return (i * self.cfg.heartbeat_ms) // max(self.n0, 1)

    def _next_hb(self, i: int, t: int) -> int:
        ph, hb = self._phase(i), self.cfg.heartbeat_ms
        k = max(0, -(-(t - ph) // hb))
        return ph + k * hb

    def _last_hb(self, i: int, t: int) -> int:
        ph, hb = self._phase(i), self.cfg.heartbeat_ms
        return ph + max(0, (t - ph) // hb) * hb

    # --- protocol ---------------------------------------------------------------------------------
    def _trigger(self, now: int, cause: str) -> None:
        if self.current is None:
            self.current = {"trigger_ms": now, "cause": cause, "rounds": 0, "moved": 0, "first_pause_ms": None}
            self.rebalances.append(self.current)
        if self.rebalancing:
            return
        self.rebalancing = True
        self.generation += 1
        for m in self.members:
            if m.in_group:
                m.learned = False
                if m.alive:
                    self.q.push(self._next_hb(m.idx, now), LEARN, ("learn", m.idx, self.generation))

    def _maybe_complete_join(self, now: int) -> None:
        if not self.rebalancing:
            return
        if all(m.learned for m in self.members if m.in_group):
            self.q.push(now + self.cfg.sync_ms, SYNC, ("sync", -1, self.generation))

    def _learn(self, now: int, i: int, gen: int) -> None:
        m = self.members[i]
        if gen != self.generation or not m.alive or not m.in_group or m.learned:
            return
        m.learned = True
        if self.cfg.protocol == "eager":
            m.paused = True
            if self.current is not None and self.current["first_pause_ms"] is None:
                self.current["first_pause_ms"] = now
        self._maybe_complete_join(now)

    def _loads(self) -> np.ndarray:
        rates = np.asarray(self.cfg.rates, dtype=np.float64)
        lag = np.asarray(self.flow.lag, dtype=np.float64)
        return rates + lag / self.cfg.lag_horizon_s

    def _sync(self, now: int, gen: int) -> None:
        if gen != self.generation or not self.rebalancing:
            return
        group = [m for m in self.members if m.in_group and m.alive]
        self.rebalancing = False
        if not group:
            return
        P = len(self.cfg.rates)
        prev = np.full(P, -1, dtype=np.int64)
        for pos, m in enumerate(group):
            for p in m.owned:
                prev[p] = pos
        problem = problem_from_arrays(
            len(group), self._loads(), prev_owner=prev,
            capacity=[m.capacity for m in group], start_ms=[m.start_ms for m in group],
        )
        res = run_assignor(self.cfg.assignor, problem, protocol=self.cfg.protocol)
        give = res.round1 if self.cfg.protocol == COOPERATIVE else res.owner
        moved = int(((prev >= 0) & (prev != res.owner)).sum())
        for pos, m in enumerate(group):
            m.owned = set(np.flatnonzero(give == pos).tolist())
            m.paused = False
        assert self.current is not None
        self.current["rounds"] += 1
        self.current["moved"] += moved
        withheld = bool((give < 0).any())
        if withheld and self.coop_rounds < MAX_COOP_ROUNDS:
            self.coop_rounds += 1
            # members that revoked rejoin at once; the others at their next heartbeat
            self.rebalancing = True
            self.generation += 1
            revokers = {int(prev[p]) for p in np.flatnonzero((give < 0) & (prev >= 0)).tolist()}
            for pos, m in enumerate(group):
                m.learned = False
                t = now if pos in revokers else self._next_hb(m.idx, now)
                self.q.push(t, LEARN, ("learn", m.idx, self.generation))
            return
        self.coop_rounds = 0
        cur = self.current
        cur["done_ms"] = now
        cur["downtime_s"] = (now - cur["trigger_ms"]) / 1000.0
        self.current = None
        self.assigned_util = self._util(group, res.owner)

    def _util(self, group: list[_Member], owner: np.ndarray) -> float:
        rates = np.asarray(self.cfg.rates)
        load = np.bincount(owner[owner >= 0], weights=rates[owner >= 0], minlength=len(group))
        return float(np.max(load / np.asarray([m.capacity for m in group])))

    # --- main loop --------------------------------------------------------------------------------
    def run(self) -> SimResult:
        cfg = self.cfg
        for m in self.members:  # initial group: everyone joined before t=0 with range-like order
            m.in_group = True
        self.assigned_util = 0.0
        self.current = {"trigger_ms": 0, "cause": "initial", "rounds": 0, "moved": 0, "first_pause_ms": None}
        self.rebalancing = True
        self.generation += 1
        self._sync(0, self.generation)
        self.rebalances.clear()
        self.current = None
        self.coop_rounds = 0
        while self.rebalancing:  # cooperative initial rounds settle before t=0
            self.rebalancing = False
            self._sync(0, self.generation)
        self.q = EventQueue()
        for t, c in cfg.kills:
            self.q.push(t, KILL, ("kill", c, 0))
        for t, cap in cfg.joins:
            self.q.push(t, JOIN, ("join", -1, cap))
        for t in range(0, cfg.duration_ms + 1, cfg.tick_ms):
            self.q.push(t, TICK, ("tick", -1, 0))
        max_lag = 0.0
        series: list[tuple[float, float]] = []
        measured_from_consumed = None
        self.flow.recording = cfg.measure_from_ms <= 0
        while len(self.q):
            now, _prio, (kind, i, arg) = self.q.pop()
            if kind == "kill":
                m = self.members[i]
                if m.alive:
                    m.alive = False
                    self.q.push(self._last_hb(i, now) + cfg.session_timeout_ms, EXPIRE, ("expire", i, 0))
            elif kind == "expire":
                m = self.members[i]
                if m.in_group:
                    m.in_group = False
                    m.owned = set()
                    self._trigger(now, f"member c{i} expired")
                    self._maybe_complete_join(now)
            elif kind == "join":
                idx = len(self.members)
                self.members.append(_Member(idx, float(arg), now, in_group=True))
                self._trigger(now, f"member c{idx} joined")
                self.q.push(now, LEARN, ("learn", idx, self.generation))
            elif kind == "learn":
                self._learn(now, i, int(arg))
            elif kind == "sync":
                self._sync(now, int(arg))
            elif kind == "tick":
                if now == cfg.measure_from_ms:
                    self.flow.recording = True
                if now >= cfg.measure_from_ms and measured_from_consumed is None:
                    measured_from_consumed = (self.flow.consumed, now)
                self.flow.arrive(now)
                active = {m.idx: sorted(m.owned) for m in self.members if m.alive and not m.paused and m.owned}
                n_active = sum(len(v) for v in active.values())
                self.flow.serve(now, active, [m.capacity for m in self.members])
                if now >= cfg.measure_from_ms:
                    self.paused_ps += (len(cfg.rates) - n_active) * cfg.tick_ms / 1000.0
                    max_lag = max(max_lag, self.flow.backlog())
                if now % 500 == 0:
                    series.append((now / 1000.0, self.flow.backlog()))
        c0, t0 = measured_from_consumed or (0.0, 0)
        window = max((cfg.duration_ms - t0) / 1000.0, 1e-9)
        lat, amt = self.flow.latencies()
        total_rate = float(sum(cfg.rates))
        final = self.flow.backlog()
        for r in self.rebalances:
            r.setdefault("downtime_s", (cfg.duration_ms - r["trigger_ms"]) / 1000.0)
        return SimResult(
            config=cfg, throughput=(self.flow.consumed - c0) / window, arrival_rate=total_rate,
            latency_p50_s=weighted_percentile(lat, amt, 50), latency_p99_s=weighted_percentile(lat, amt, 99),
            max_lag=max_lag, final_lag=final, keeps_up=final <= max(2.0 * total_rate, 1.0),
            rebalances=list(self.rebalances), paused_partition_s=self.paused_ps,
            max_member_util=self.assigned_util, lag_series=series,
        )


def simulate(cfg: SimConfig) -> SimResult:
    """Run one simulation; the same config always gives the same result."""
    return _Sim(cfg).run()
