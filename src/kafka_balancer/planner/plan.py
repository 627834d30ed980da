"""The planner: a snapshot in, a plan out (seed 001, §2–3.1, extended).

Order of work:

1. replicas on dead brokers move to live ones (forced);
2. leaders that a failure moved away go back to ``replicas[0]`` where no goal suffers;
3. until no (broker, resource) violates its goals, or none that is left can be fixed: take the worst one;
   for CPU and network-out try a leadership move first (cheap, logical), then for every resource a
   replica move, then a swap. A move must not break any goal already met and must lower the total
   violation, so the loop cannot thrash;
4. if violations remain (the goals cannot all be met), the same loop runs relaxed: a move may push a
   broker slightly outside its band (never above θ) if it lowers the sum of squared violations, so an
   excess that cannot vanish is spread over many brokers instead of sitting on one.

The plan lists only partitions whose replica list or leader changes, each with the intended leader
first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kafka_balancer.model.plan_io import Plan, PlanEntry
from kafka_balancer.model.snapshot import CPU, NW_OUT, RESOURCES, Snapshot
from kafka_balancer.planner import bounds
from kafka_balancer.planner.metrics import Metrics, evaluate
from kafka_balancer.planner.state import TOL, State
from kafka_balancer.planner.strategies import evacuate, leadership, replica, swap, tighten

# Attempts, in order, until one ends balanced: (share of the ε band aimed at, choose replicas by violation
# removed per byte). Choosing by bytes moves least data but can corner itself; first-acceptable (the
# paper's order) is the fallback. A narrower aim helps where capacities differ and γ is measured around
# the arithmetic mean of utilisations.
ATTEMPTS = ((0.97, True), (0.97, False), (0.9, True), (0.9, False), (0.75, False))


@dataclass(frozen=True)
class PlanResult:
    plan: Plan
    before: Metrics
    after: Metrics
    after_snapshot: Snapshot
    replica_moves: int
    leader_moves: int
    moved_bytes: float
    moved_bytes_lower_bound: float
    add_brokers: int
    seconds: float
    warnings: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()
    infeasible: tuple[str, ...] = ()  # proofs that the goals cannot all be met under the hard constraints
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, Any]:
        return {
            "before": self.before.as_dict(),
            "after": self.after.as_dict(),
            "eta": self.after.eta,
            "theta": self.after.theta,
            "eps": self.after.eps,
            "balanced_before": self.before.balanced(),
            "balanced_after": self.after.balanced(),
            "partitions_changed": len(self.plan),
            "replica_moves": self.replica_moves,
            "leader_moves": self.leader_moves,
            "moved_bytes": self.moved_bytes,
            "moved_bytes_lower_bound": self.moved_bytes_lower_bound,
            "add_brokers": self.add_brokers,
            "seconds": round(self.seconds, 3),
            "warnings": list(self.warnings),
            "unresolved": list(self.unresolved),
            "infeasible": list(self.infeasible),
        }


def _balance(
    st: State, deadline: float, progress: Callable[[int], None] | None, max_moves: int | None = None
) -> list[tuple[int, int]]:
    # A violation no strategy could fix waits before it is tried again: 8 moves, then twice as long after
    # each further failure. Never retried while nothing has moved since it failed.
    failed: dict[tuple[int, int], tuple[int, int]] = {}  # (broker, resource) -> (moves at failure, wait)
    moves = 0
    while time.monotonic() < deadline and (max_moves is None or moves < max_moves):
        v = st.violations()
        fresh = v.copy()
        for (b, r), (at, wait) in failed.items():
            if moves - at < wait:
                fresh[b, r] = 0.0
            if at == moves:
                v[b, r] = 0.0
        pick = fresh if fresh.max() > TOL else v
        flat = int(np.argmax(pick))
        b, r = divmod(flat, v.shape[1])
        if pick[b, r] <= TOL:
            break
        u = st.load[b, r] / st.cap[b, r]
        high = u > st.target[r]
        done = False
        if r in (CPU, NW_OUT):
            done = leadership.shed(st, b, r) if high else leadership.attract(st, b, r)
        if not done:
            done = replica.shed(st, b, r) if high else replica.attract(st, b, r)
        if not done:
            done = swap.shed(st, b, r) if high else swap.attract(st, b, r)
        if done:
            moves += 1
            failed.pop((b, r), None)
            if progress is not None:
                progress(moves)
        else:
            prev = failed.get((b, r))
            failed[(b, r)] = (moves, 8 if prev is None else prev[1] * 2)
    v = st.violations()
    return [(int(b), int(r)) for b, r in zip(*np.nonzero(v > TOL), strict=True)]


def plan(
    snap: Snapshot,
    theta: float = 0.8,
    eps: float = 0.1,
    *,
    margin: float | None = None,
    tighten_leaders: bool = True,
    time_limit: float = 600.0,
    progress: Callable[[int], None] | None = None,
) -> PlanResult:
    """Plan a rebalance of ``snap`` towards the capacity goal θ and the distribution goal ε."""
    t0 = time.monotonic()
    before = evaluate(snap, theta, eps)
    best: PlanResult | None = None
    attempts = ATTEMPTS if margin is None else ((margin, True), (margin, False))
    for m, by_bytes in attempts:
        result = _plan_once(snap, theta, eps, m, by_bytes, False, tighten_leaders, t0, time_limit, before, progress)
        if best is None or _residual(result) < _residual(best) - 1e-12:
            best = result
        if result.after.balanced() or result.infeasible or result.add_brokers or time.monotonic() > t0 + time_limit:
            break
    assert best is not None
    # Relaxed pass (see _plan_once) on the best attempt, when balance was missed and spreading can help:
    # not when single partitions are too hot for any broker. It may take as long again as planning did.
    if not best.after.balanced() and not best.extra["hot_partitions"] and time.monotonic() < t0 + time_limit:
        m, by_bytes = best.extra["margin"], best.extra["by_gain_per_byte"]
        spent = time.monotonic() - t0
        relaxed = _plan_once(
            snap,
            theta,
            eps,
            m,
            by_bytes,
            True,
            tighten_leaders,
            time.monotonic(),
            min(spent + 1.0, time_limit),
            before,
            progress,
        )
        if _residual(relaxed) < _residual(best) - 1e-12:
            best = relaxed
    return best


def _residual(result: PlanResult) -> float:
    """How far a plan's outcome is from meeting every goal (0 when balanced): brokers over θ first, then
    the excess of max γ over ε, summed over resources."""
    a = result.after
    return sum(max(0.0, m.max_gamma - a.eps) + 10.0 * m.over_theta for m in a.resources.values())


def _plan_once(
    snap: Snapshot,
    theta: float,
    eps: float,
    margin: float,
    by_gain_per_byte: bool,
    relax: bool,
    tighten_leaders: bool,
    t0: float,
    time_limit: float,
    before: Metrics,
    progress: Callable[[int], None] | None,
) -> PlanResult:
    st = State(snap, theta, eps, margin, by_gain_per_byte)
    warnings: list[str] = []
    _, stranded = evacuate.evacuate(st)
    for p in stranded:
        warnings.append(
            f"partition {snap.partition_label(p)} has no live replica: it cannot be copied until one of "
            f"its brokers returns; left in place"
        )
    leadership.restore_preferred(st)
    left = _balance(st, t0 + time_limit, progress)
    if left and relax:  # what the paper's rule cannot fix: spread it out rather than leave it on a few brokers
        st.relaxed = True
        left = _balance(st, t0 + time_limit, progress, max_moves=max(100, 4 * snap.n_brokers))
        st.relaxed = False
    if tighten_leaders:
        tighten.tighten(st, max_moves=max(100, snap.n_brokers * 4), deadline=t0 + time_limit)
    hot = bounds.partition_infeasibility(snap, eps)
    infeasible = bounds.rack_infeasibility(snap, eps) + hot
    for line in infeasible:
        warnings.append(f"balance is out of reach: {line}")
    add = bounds.brokers_to_add(snap, theta)
    if add:
        warnings.append(f"the cluster as a whole is above θ={theta}: add {add} broker(s) of the present size")
    entries, replica_moves, leader_moves, moved = _diff(snap, st)
    after_snap = snap.with_assignment(st.rep, st.ldr)
    after = evaluate(after_snap, theta, eps)
    unresolved = tuple(
        f"broker {int(snap.broker_ids[b])} {RESOURCES[r]} at {st.load[b, r] / st.cap[b, r]:.3f} "
        f"(target {st.target[r]:.3f})"
        for b, r in left
    )
    return PlanResult(
        plan=Plan(tuple(entries)),
        before=before,
        after=after,
        after_snapshot=after_snap,
        replica_moves=replica_moves,
        leader_moves=leader_moves,
        moved_bytes=moved,
        moved_bytes_lower_bound=bounds.moved_bytes_lower_bound(snap, eps),
        add_brokers=add,
        seconds=time.monotonic() - t0,
        warnings=tuple(warnings),
        unresolved=unresolved,
        infeasible=tuple(infeasible),
        extra={"margin": margin, "by_gain_per_byte": by_gain_per_byte, "relaxed": relax, "hot_partitions": bool(hot)},
    )


def _diff(snap: Snapshot, st: State) -> tuple[list[PlanEntry], int, int, float]:
    ids = snap.broker_ids
    old, new = snap.replicas, st.rep
    changed_set = np.any(np.sort(old, axis=1) != np.sort(new, axis=1), axis=1)
    first_old = old[:, 0]
    changed = changed_set | (st.ldr != snap.leader) | ((st.ldr != first_old) & (st.ldr >= 0))
    entries: list[PlanEntry] = []
    replica_moves = 0
    moved = 0.0
    disk = np.maximum(snap.leader_load[:, 1], snap.follower_load[:, 1])
    for p in np.nonzero(changed)[0].tolist():
        row = [int(b) for b in new[p] if b >= 0]
        lead = int(st.ldr[p])
        ordered = ([lead] if lead >= 0 else []) + [b for b in row if b != lead]
        added = len(set(row) - {int(b) for b in old[p] if b >= 0})
        replica_moves += added
        moved += added * float(disk[p])
        entries.append(
            PlanEntry(
                snap.topics[int(snap.topic_idx[p])],
                int(snap.partition[p]),
                tuple(int(ids[b]) for b in ordered),
            )
        )
    leader_moves = int(np.sum((st.ldr != snap.leader) & (st.ldr >= 0)))
    return entries, replica_moves, leader_moves, moved
