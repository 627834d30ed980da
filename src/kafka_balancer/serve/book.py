"""The anomaly book: turns each evaluation's findings into anomalies and moves them through their states.

A finding of a (type, key) that has no open anomaly opens one: ``waiting`` until it has persisted for
its type's hold time (the grace period of a dead broker, N windows of a goal violation), then
``detected``. A finding that disappears closes its anomaly: ``ignored`` when it never persisted long
enough (a flapping broker), ``fixed`` otherwise. Anomalies being fixed are left to their execution.
Every change is handed to ``on_change`` (the service appends it to the history file).

    >>> book = AnomalyBook({"broker_failure": 60.0})
    >>> f = Finding("broker_failure", "broker-3", {"broker": 3})
    >>> [a.state.value for a in book.update(["broker_failure"], [f], now=0.0)]
    ['waiting']
    >>> [a.state.value for a in book.update(["broker_failure"], [], now=20.0)]   # back within grace
    ['ignored']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from kafka_balancer.serve.anomaly import Anomaly, AnomalyState, Finding

S = AnomalyState


class AnomalyBook:
    def __init__(self, hold_s: Mapping[str, float], on_change: Callable[[Anomaly], None] | None = None,
                 keep: int = 500) -> None:
        self.hold_s = dict(hold_s)
        self.on_change = on_change or (lambda a: None)
        self.keep = keep
        self.by_id: dict[str, Anomaly] = {}
        self.active: dict[tuple[str, str], str] = {}  # (type, key) -> id of the open anomaly

    # ---- restore ------------------------------------------------------------------------------
    def restore(self, anomalies: Iterable[Anomaly]) -> None:
        for a in anomalies:
            self.by_id[a.id] = a
            if a.open:
                self.active[(a.type, a.key)] = a.id

    # ---- reading ------------------------------------------------------------------------------
    def get(self, aid: str) -> Anomaly:
        return self.by_id[aid]

    def open(self) -> list[Anomaly]:
        return [self.by_id[i] for i in self.active.values()]

    def confirmed(self, a: Anomaly) -> bool:
        return any(h["state"] in ("detected", "fixing") for h in a.history)

    def listing(self, limit: int = 200) -> list[Anomaly]:
        items = sorted(self.by_id.values(), key=lambda a: a.updated, reverse=True)
        return items[:limit]

    # ---- changing -----------------------------------------------------------------------------
    def set(self, a: Anomaly) -> Anomaly:
        old = self.by_id.get(a.id)
        self.by_id[a.id] = a
        if a.open:
            self.active[(a.type, a.key)] = a.id
        elif self.active.get((a.type, a.key)) == a.id:
            del self.active[(a.type, a.key)]
        if old is None or old != a:
            self.on_change(a)
        if len(self.by_id) > self.keep:
            closed = sorted((x for x in self.by_id.values() if not x.open), key=lambda x: x.updated)
            for x in closed[: len(self.by_id) - self.keep]:
                del self.by_id[x.id]
        return a

    def move(self, aid: str, state: AnomalyState, now: float, reason: str, **changes: object) -> Anomaly:
        return self.set(self.by_id[aid].moved(state, now, reason, **changes))

    def update(self, types: Iterable[str], findings: Iterable[Finding], now: float) -> list[Anomaly]:
        """Apply one evaluation of the detectors of ``types``; returns the anomalies that changed."""
        types = set(types)
        changed: list[Anomaly] = []
        seen: set[tuple[str, str]] = set()
        for f in findings:
            k = (f.type, f.key)
            seen.add(k)
            hold = self.hold_s.get(f.type, 0.0)
            aid = self.active.get(k)
            if aid is None:
                first = f.since if f.since is not None else now
                state = S.DETECTED if now - first >= hold - 1e-6 else S.WAITING
                reason = f.reason or ("" if state is S.DETECTED else f"must persist {hold:g} s before it counts")
                a = Anomaly.new(f.type, f.key, f.evidence, now, state, reason)
                changed.append(self.set(replace(a, first_seen=first)))
                continue
            a = self.by_id[aid]
            if a.evidence != f.evidence:
                a = self.set(a.moved(a.state, now, a.reason, evidence=dict(f.evidence)))
            if a.state is S.WAITING and not self.confirmed(a):
                if now - a.first_seen >= hold - 1e-6:
                    changed.append(self.set(a.moved(S.DETECTED, now, f"persisted {now - a.first_seen:.0f} s")))
                else:
                    a = self.set(a.moved(S.WAITING, now, f"seen for {now - a.first_seen:.0f} s of the "
                                                         f"{hold:g} s it must persist"))
        for k, aid in list(self.active.items()):
            if k[0] not in types or k in seen:
                continue
            a = self.by_id[aid]
            if a.state is S.FIXING:
                continue  # its execution decides
            if a.state is S.IGNORED:
                changed.append(self.set(a.moved(S.IGNORED, now, a.reason + "; condition cleared", closed=True)))
                continue
            age = now - a.first_seen
            if not self.confirmed(a) and a.state is S.WAITING:
                why = (f"broker came back after {age:.0f} s, within the grace period "
                       f"({self.hold_s.get(a.type, 0):g} s): flapping, nothing done"
                       if a.type == "broker_failure" else f"cleared after {age:.0f} s, before it persisted")
                changed.append(self.set(a.moved(S.IGNORED, now, why, closed=True)))
            else:
                why = "condition cleared" + (f" after execution {a.execution}" if a.execution else "")
                changed.append(self.set(a.moved(S.FIXED, now, why)))
        return changed
