"""Anomalies: what a detector found, with evidence and a state that only moves along a transition table.

States, in the manner of Cruise Control's anomaly notifier:

* ``waiting``: seen but not yet actionable (a broker dead for less than the grace period, or a fix held
  back by a guard: cooldown, byte cap, under-replicated partitions, pause, another execution);
* ``detected``: confirmed and actionable;
* ``fixing``: an execution for it is running;
* ``fixed``: the execution finished verified, or the condition went away;
* ``ignored``: nothing will be done (self-healing off for its type, dry-run, a flapping broker).

    >>> a = Anomaly.new("broker_failure", "broker-3", {"broker": 3}, now=10.0, state=AnomalyState.WAITING)
    >>> a = a.moved(AnomalyState.DETECTED, 130.0, "dead for 120 s")
    >>> a.state.value, [h["state"] for h in a.history]
    ('detected', ['waiting', 'detected'])
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass, field, replace
from typing import Any


class AnomalyState(enum.Enum):
    WAITING = "waiting"
    DETECTED = "detected"
    FIXING = "fixing"
    FIXED = "fixed"
    IGNORED = "ignored"


S = AnomalyState
TRANSITIONS: frozenset[tuple[AnomalyState, AnomalyState]] = frozenset({
    (S.WAITING, S.DETECTED), (S.WAITING, S.IGNORED), (S.WAITING, S.FIXED), (S.WAITING, S.FIXING),
    (S.DETECTED, S.WAITING), (S.DETECTED, S.FIXING), (S.DETECTED, S.IGNORED), (S.DETECTED, S.FIXED),
    (S.FIXING, S.FIXED), (S.FIXING, S.DETECTED), (S.FIXING, S.WAITING),
    (S.IGNORED, S.FIXED), (S.IGNORED, S.DETECTED),
})
TERMINAL = frozenset({S.FIXED})
_ids = itertools.count(1)


@dataclass(frozen=True)
class Anomaly:
    id: str
    type: str
    key: str  # what makes two findings the same anomaly (e.g. "broker-3")
    first_seen: float
    state: AnomalyState
    evidence: dict[str, Any]
    updated: float
    reason: str = ""
    execution: str | None = None
    closed: bool = False  # ignored and gone: no longer open although not fixed
    history: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @staticmethod
    def new(atype: str, key: str, evidence: dict[str, Any], now: float,
            state: AnomalyState = AnomalyState.DETECTED, reason: str = "") -> Anomaly:
        aid = f"{atype}-{int(now * 1000)}-{next(_ids)}"
        return Anomaly(aid, atype, key, now, state, dict(evidence), now, reason,
                       history=({"ts": now, "state": state.value, "reason": reason},))

    def moved(self, state: AnomalyState, now: float, reason: str, **changes: Any) -> Anomaly:
        """A copy in ``state``; a transition outside :data:`TRANSITIONS` raises ``ValueError``."""
        if state is self.state:
            return replace(self, reason=reason, updated=now, **changes) if reason != self.reason or changes else self
        if (self.state, state) not in TRANSITIONS:
            raise ValueError(f"anomaly {self.id}: no transition {self.state.value} -> {state.value}")
        hist = (*self.history, {"ts": now, "state": state.value, "reason": reason})
        return replace(self, state=state, updated=now, reason=reason, history=hist, **changes)

    @property
    def open(self) -> bool:
        return self.state not in TERMINAL and not self.closed

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "key": self.key, "first_seen": self.first_seen,
                "state": self.state.value, "evidence": self.evidence, "updated": self.updated,
                "reason": self.reason, "execution": self.execution, "closed": self.closed,
                "history": list(self.history)}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Anomaly:
        return Anomaly(str(d["id"]), str(d["type"]), str(d["key"]), float(d["first_seen"]),
                       AnomalyState(d["state"]), dict(d.get("evidence") or {}), float(d["updated"]),
                       str(d.get("reason") or ""), d.get("execution"), bool(d.get("closed", False)),
                       tuple(d.get("history") or ()))


@dataclass(frozen=True)
class Finding:
    """A detector's output for one window: the condition holds now (``confirmed``) or is only suspected."""

    type: str
    key: str
    evidence: dict[str, Any]
    reason: str = ""
    since: float | None = None  # when the condition began, if the detector knows better than the book
