"""What one consumer-group simulation runs: workload, consumers, protocol timings, failures."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_balancer.errors import InputError


@dataclass(frozen=True)
class SimConfig:
    """All times in milliseconds unless named ``_s``.

    ``rates`` are per-partition arrival rates (messages/s); ``capacities`` each consumer's service
    rate (messages/s). ``kills`` are ``(time_ms, consumer index)``: the consumer stops dead (no
    LeaveGroup), so the coordinator notices only when its session times out. ``joins`` are
    ``(time_ms, capacity)``: a new consumer sends JoinGroup at that time.
    """

    rates: tuple[float, ...]
    capacities: tuple[float, ...]
    assignor: str = "balanced"
    protocol: str = "eager"
    heartbeat_ms: int = 1000
    session_timeout_ms: int = 6000
    sync_ms: int = 50  # JoinGroup response -> leader assigns -> SyncGroup round trip
    duration_ms: int = 60000
    tick_ms: int = 20
    kills: tuple[tuple[int, int], ...] = ()
    joins: tuple[tuple[int, float], ...] = ()
    lag_horizon_s: float = 30.0  # the leader's load = rate + lag / horizon
    measure_from_ms: int = 0
    start_ms: tuple[int, ...] = field(default_factory=tuple)  # consumer start times (seed 000 ordering)
    seed: int = 0  # Poisson arrivals

    def validate(self) -> None:
        if not self.rates:
            raise InputError("simulation needs at least one partition", hint="--partitions >= 1")
        if not self.capacities:
            raise InputError("simulation needs at least one consumer", hint="--consumers >= 1")
        if any(r < 0 for r in self.rates) or any(c <= 0 for c in self.capacities):
            raise InputError("rates must be >= 0 and capacities > 0", hint="check --rate and --capacity")
        if self.protocol not in ("eager", "cooperative"):
            raise InputError(f"unknown protocol {self.protocol!r}", hint="eager or cooperative")
        if self.session_timeout_ms < self.heartbeat_ms:
            raise InputError("session timeout shorter than the heartbeat interval",
                             hint="session.timeout.ms >= 3 x heartbeat.interval.ms")
        if self.tick_ms <= 0 or self.duration_ms <= 0:
            raise InputError("tick and duration must be > 0", hint="e.g. --tick-ms 20 --duration-s 60")
        for t, c in self.kills:
            if not 0 <= c < len(self.capacities):
                raise InputError(f"kill names consumer {c}, which does not exist",
                                 hint=f"consumers are 0..{len(self.capacities) - 1}")
            if not 0 <= t <= self.duration_ms:
                raise InputError(f"kill at {t} ms is outside the run", hint="kill times within the duration")
