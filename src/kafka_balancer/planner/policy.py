"""The goal policy: an ordered list of goals, highest priority first.

Seed 001's goals come first by default (``capacity``: B(j) ≤ θ; ``distribution``: the ε band), then the
count goals (:mod:`kafka_balancer.planner.count_goals`), then the usage band
(:mod:`kafka_balancer.planner.usage_band`), all soft. The planner works on the goals in order;
a move made for a goal must not make any goal earlier in the order worse (a goal that holds may not break,
a violation may not grow). ``--goals`` gives another order or a subset; the goals left out are neither
pursued nor guarded. The usage band, if listed, comes last and after both resource goals: it only evens
out what they balanced. The hard constraints (replication factor, live brokers, rack and host spread never
lowered, and the operator's modes) are not goals: they hold whatever the policy.

Example::

    >>> parse_goals("capacity,distribution,replica_count")
    ('capacity', 'distribution', 'replica_count')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafka_balancer.errors import InputError

RESOURCE_GOALS = ("capacity", "distribution")
COUNT_GOALS = ("rack_repair", "replica_count", "leader_count", "potential_nw_out", "topic_spread")
USAGE_BAND = "usage_band"
DEFAULT_GOALS: tuple[str, ...] = RESOURCE_GOALS + COUNT_GOALS + (USAGE_BAND,)
DESCRIPTIONS = {
    "capacity": "B(j) ≤ θ on every live broker and resource (seed 001)",
    "distribution": "every live broker within the ε band on every resource (seed 001)",
    "rack_repair": "no partition holds two replicas in one rack while a rack it misses has a broker for it",
    "replica_count": "replicas per broker within ±max(1, 5 %) of the mean, widened to whole counts",
    "leader_count": "leaders per broker within ±max(1, 2 %) of the mean, widened to whole counts",
    "potential_nw_out": "network-out a broker would serve if all its replicas led stays ≤ θ",
    "topic_spread": "each topic's replicas per broker within ±1 of the topic's mean",
    USAGE_BAND: "every live broker within ±7.5 % of the target utilisation on every resource, bytes allowing",
}


def parse_goals(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """Goal names in priority order, from ``a,b,c`` or a sequence; None gives the default policy."""
    if text is None:
        return DEFAULT_GOALS
    names = [s.strip() for s in (text.split(",") if isinstance(text, str) else text)]
    names = [s for s in names if s]
    if not names:
        raise InputError("--goals is empty", hint=f"name goals from: {', '.join(DEFAULT_GOALS)}")
    for s in names:
        if s not in DEFAULT_GOALS:
            raise InputError(f"--goals: unknown goal {s!r}", hint=f"the goals are: {', '.join(DEFAULT_GOALS)}")
    dup = [s for i, s in enumerate(names) if s in names[:i]]
    if dup:
        raise InputError(f"--goals: goal {dup[0]!r} is listed twice", hint="list each goal once, highest first")
    if USAGE_BAND in names and (names[-1] != USAGE_BAND or not set(RESOURCE_GOALS) <= set(names)):
        raise InputError(
            f"--goals: {USAGE_BAND} must come last, after capacity and distribution",
            hint=f"it evens out what the resource goals balanced; list it last, or leave it out "
            f"(e.g. {','.join(DEFAULT_GOALS)})",
        )
    return tuple(names)


@dataclass(frozen=True)
class GoalReport:
    """One goal's standing before and after the plan. ``violation`` is in the goal's own unit (0 = met)."""

    name: str
    priority: int  # 1 = highest
    before: float
    after: float
    met_before: bool
    met_after: bool
    detail: str = ""  # e.g. the measure behind it ("CV 0.058 -> 0.012") or why it cannot be met

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal": self.name,
            "priority": self.priority,
            "description": DESCRIPTIONS[self.name],
            "violation_before": self.before,
            "violation_after": self.after,
            "met_before": self.met_before,
            "met_after": self.met_after,
            "detail": self.detail,
        }
