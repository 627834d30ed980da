"""The planner mode that fits each action, on the live model. Pure: a snapshot in, a proposal out.

* ``evacuate``: dead brokers are marked not alive and healed: every replica leaves them and nothing else is
  copied (docs/planner.md, "Healing"); ``remove_brokers``: live brokers being decommissioned: every replica
  leaves them and the rest is balanced;
* ``add_brokers``: the planner fills brokers below their band (new, empty brokers pull load);
* ``demote``: leadership leaves the given brokers: each partition they lead (or prefer) gets the first
  other in-sync replica first; no data moves;
* ``rebalance``: the planner on the goals θ and ε;
* ``elect_leaders``: preferred-leader election where a restart left leadership on another replica.

The planner's operator constraints (``planner/constraints.py``) narrow each plan: only the added brokers
receive replicas, every replica leaves the removed (or dead) ones, demoted brokers keep no leadership.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kafka_balancer.model.plan_io import Plan, PlanEntry, plan_to_dict
from kafka_balancer.model.snapshot import DISK, Snapshot
from kafka_balancer.planner.constraints import Constraints, compile_topics
from kafka_balancer.planner.metrics import Metrics, evaluate
from kafka_balancer.serve.observation import TP, Observation
from kafka_balancer.serve.wording import api_words
from kafka_balancer.validate.values import Polish

NO_LIMITS = Constraints()  # no excluded topics, no budget
MODES = ("evacuate", "remove_brokers", "add_brokers", "demote", "rebalance", "elect_leaders")


@dataclass(frozen=True)
class Proposal:
    mode: str
    plan: Plan
    entry_bytes: tuple[float, ...]
    before: Metrics
    after: Metrics
    brokers: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    current: tuple[tuple[int, ...], ...] = ()  # each entry's replicas before the plan

    @property
    def bytes(self) -> float:
        return float(sum(self.entry_bytes))

    def cut(self, n: int, why: str) -> Proposal:
        """The first ``n`` entries only (the byte cap)."""
        if n >= len(self.plan):
            return self
        return replace(self, plan=Plan(self.plan.entries[:n]), entry_bytes=self.entry_bytes[:n],
                       current=self.current[:n], notes=(*self.notes, why))

    def summary(self, snap: Snapshot | None = None, moves_shown: int = 200) -> dict[str, Any]:
        moves = []
        for i, (e, b) in enumerate(zip(self.plan.entries[:moves_shown], self.entry_bytes, strict=False)):
            moves.append({"topic": e.topic, "partition": e.partition,
                          "from": list(self.current[i]) if i < len(self.current) else [],
                          "to": list(e.replicas), "bytes": b})
        return {
            "mode": self.mode, "brokers": list(self.brokers), "partitions": len(self.plan),
            "replica_moves": int(self.extra.get("replica_moves", 0)),
            "leader_moves": int(self.extra.get("leader_moves", 0)),
            "bytes": self.bytes, "balanced_before": self.before.balanced(), "balanced_after": self.after.balanced(),
            "before": self.before.as_dict(), "after": self.after.as_dict(), "notes": list(self.notes),
            "constraints": self.extra.get("constraints"),
            "goals": self.extra.get("goals"),
            "moves": moves, "plan": plan_to_dict(self.plan) if len(self.plan) <= moves_shown else None,
        }


def _current(snap: Snapshot) -> dict[TP, tuple[int, ...]]:
    ids = snap.broker_ids
    out = {}
    for p in range(snap.n_partitions):
        row = [int(ids[b]) for b in snap.replicas[p] if b >= 0]
        out[(snap.topics[int(snap.topic_idx[p])], int(snap.partition[p]))] = tuple(row)
    return out


def entry_bytes(snap: Snapshot, plan: Plan) -> tuple[tuple[float, ...], tuple[tuple[int, ...], ...]]:
    """Bytes each entry copies (the partition's size, its leader disk load, per replica it adds), and each
    entry's replicas before the plan."""
    cur = _current(snap)
    index = {(snap.topics[int(snap.topic_idx[p])], int(snap.partition[p])): p for p in range(snap.n_partitions)}
    out = []
    before = []
    for e in plan.entries:
        tp = (e.topic, e.partition)
        was = cur.get(tp, ())
        before.append(was)
        added = len(set(e.replicas) - set(was))
        p = index.get(tp)
        out.append(float(snap.leader_load[p, DISK]) * added if p is not None else 0.0)
    return tuple(out), tuple(before)


def _with_dead(snap: Snapshot, brokers: Sequence[int]) -> Snapshot:
    alive = snap.alive.copy()
    pos = snap.broker_pos()
    for b in brokers:
        if b in pos:
            alive[pos[b]] = False
    return replace(snap, alive=alive)


def _planner(snap: Snapshot, theta: float, eps: float, time_limit: float, polish: Polish | None,
             constraints: Constraints | None, goals: tuple[str, ...] | None) -> Any:
    from kafka_balancer.planner import plan

    kw: dict[str, Any] = {"time_limit": time_limit, "constraints": constraints, "goals": goals}
    share, nbytes = polish if polish is not None else (None, None)
    if share is not None:
        kw["polish_share"] = share
    if nbytes is not None:
        kw["polish_bytes"] = nbytes
    return plan(snap, theta, eps, **kw)


def propose(mode: str, snap: Snapshot, theta: float, eps: float, *, brokers: Sequence[int] = (),
            obs: Observation | None = None, time_limit: float = 60.0, polish: Polish | None = None,
            goals: tuple[str, ...] | None = None, limits: Constraints = NO_LIMITS) -> Proposal:
    """A proposal for ``mode`` on ``snap`` (``brokers``: the ones to evacuate, remove, add or demote).
    ``limits``: excluded topics and budgets (``exclude_topics``, ``max_moves``, ``max_bytes``), as the
    ``plan`` flags; the mode's brokers are added to them."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    before = evaluate(snap, theta, eps)
    if mode == "elect_leaders":
        return _elect(snap, theta, eps, obs, before, limits.demote_brokers)
    if mode == "demote":
        return _demote(snap, theta, eps, brokers, obs, before, limits.exclude_topics)
    work = snap
    chosen = frozenset(int(b) for b in brokers)
    c: Constraints | None = None if limits.default else limits
    if mode in ("evacuate", "remove_brokers"):
        work = _with_dead(snap, brokers)  # the planner's dead-broker step moves every replica off them
    # an evacuation needs no constraint: the planner heals (a dead broker's replicas are copied and nothing
    # else, while partitions are under-replicated; the goal detector balances the rest once they are in sync)
    if mode == "remove_brokers":
        c = replace(limits, remove_brokers=chosen)
    elif mode == "add_brokers":
        c = replace(limits, add_brokers=chosen)
    res = _planner(work, theta, eps, time_limit, polish, c, goals)
    # in the service's words: everything that shows a proposal's notes (the API, executions, anomaly reasons)
    notes = tuple(api_words(n) for n in (*res.warnings, *res.infeasible, *res.unresolved, *res.remaining))
    nbytes, current = entry_bytes(snap, res.plan)
    return Proposal(mode, res.plan, nbytes, evaluate(work, theta, eps), res.after,
                    tuple(brokers), notes, {"replica_moves": res.replica_moves, "leader_moves": res.leader_moves,
                                            "moved_bytes_model": res.moved_bytes,
                                            "constraints": c.as_dict() if c else None,
                                            "goals": [g.as_dict() for g in res.goals]}, current)


def _demote(snap: Snapshot, theta: float, eps: float, brokers: Sequence[int], obs: Observation | None,
            before: Metrics, exclude_topics: str | None = None) -> Proposal:
    gone = set(brokers)
    excluded = compile_topics(exclude_topics) if exclude_topics is not None else None
    kept = 0  # partitions of excluded topics that keep their leader on a demoted broker
    ids = snap.broker_ids
    entries = []
    rep = snap.replicas.copy()
    ldr = snap.leader.copy()
    pos = snap.broker_pos()
    for p in range(snap.n_partitions):
        row = [int(ids[b]) for b in snap.replicas[p] if b >= 0]
        if not row or row[0] not in gone:
            continue
        tp = (snap.topics[int(snap.topic_idx[p])], int(snap.partition[p]))
        if excluded is not None and excluded.fullmatch(tp[0]):
            kept += 1
            continue
        isr = set(obs.partitions[tp].isr) if obs is not None and tp in obs.partitions else set(row)
        cand = [b for b in row if b not in gone and b in isr and snap.alive[pos[b]]]
        if not cand:
            continue
        new = [cand[0]] + [b for b in row if b != cand[0]]
        entries.append(PlanEntry(tp[0], tp[1], tuple(new)))
        rep[p, : len(new)] = [pos[b] for b in new]
        ldr[p] = pos[cand[0]]
    plan = Plan(tuple(entries))
    after = evaluate(snap, theta, eps, rep, ldr)
    notes = (f"{kept} partition(s) keep their leader on a demoted broker: their topics are excluded",) if kept else ()
    return Proposal("demote", plan, tuple(0.0 for _ in entries), before, after, tuple(brokers), notes,
                    {"replica_moves": 0, "leader_moves": len(entries),
                     "constraints": Constraints(demote_brokers=frozenset(gone), leadership_only=True,
                                                exclude_topics=exclude_topics).as_dict()},
                    entry_bytes(snap, plan)[1])


def _elect(snap: Snapshot, theta: float, eps: float, obs: Observation | None, before: Metrics,
           demoted: frozenset[int] = frozenset()) -> Proposal:
    """Preferred-leader election where the preferred replica is alive, in sync and not ``demoted``."""
    from kafka_balancer.serve.detectors.leaders import lost

    if obs is None:
        return Proposal("elect_leaders", Plan(()), (), before, before)
    tps = lost(obs, demoted)
    entries = tuple(PlanEntry(t, p, obs.partitions[(t, p)].replicas) for t, p in tps)
    pos = snap.broker_pos()
    index = {(snap.topics[int(snap.topic_idx[p])], int(snap.partition[p])): p for p in range(snap.n_partitions)}
    ldr = snap.leader.copy()
    for t, p in tps:
        if (t, p) in index:
            ldr[index[(t, p)]] = pos[obs.partitions[(t, p)].replicas[0]]
    after = evaluate(snap, theta, eps, None, ldr)
    return Proposal("elect_leaders", Plan(entries), tuple(0.0 for _ in entries), before, after, (), (),
                    {"replica_moves": 0, "leader_moves": len(entries)}, tuple(e.replicas for e in entries))


def no_moves_reason(p: Proposal) -> str:
    said = [n for n in p.notes if n.startswith("nothing to move")]  # the planner's own word for it
    if said:
        return said[0]
    return "the planner found nothing to move" + (f" ({'; '.join(p.notes[:3])})" if p.notes else "")


__all__ = ["MODES", "Proposal", "entry_bytes", "no_moves_reason", "propose"]
