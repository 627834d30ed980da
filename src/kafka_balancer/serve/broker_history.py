"""Brokers the operator removed or demoted through the service, remembered so that no later plan undoes it.

Without a memory, the service would undo an operator's decision on its own: a broker drained by
``/api/remove-brokers`` and not yet shut down is a live broker with no replicas, which the new-broker
detector reports and self-healing fills again; a broker demoted for patching leads nothing, which the goal
detector reports as imbalance and a rebalance (or a preferred-leader election) hands leadership back to.
Cruise Control keeps the same two lists ("recently removed" and "recently demoted" brokers, two weeks by
default) and leaves them out of self-healing.

While an entry holds:

* a **removed** broker is outside the cluster for the load model: no plan places a replica on it, its
  emptiness is no imbalance, and the new-broker detector passes it over (replicas still on it, from a
  removal stopped half-way, are moved off by the next plan, as from a dead broker);
* a **demoted** broker is demoted again by every plan, no preferred-leader election makes it leader, and
  the goal detector leaves it out of the resources that only leaders carry.

An entry ends when the operator forgets it (``POST /api/broker-history/forget``) or after the retention
(``broker_history``, 336 h by default). Adding a removed broker back, or demoting it, is refused until then.
The entries are JSON lines in the state directory, so a restart keeps them.

    >>> import tempfile, pathlib
    >>> h = BrokerHistory(pathlib.Path(tempfile.mkdtemp()) / "h.jsonl", retention_s=3600.0)
    >>> h.record("removed", [4], "exec-1", now=0.0)
    >>> sorted(h.removed(now=10.0)), sorted(h.removed(now=4000.0))
    ([4], [])
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka_balancer.serve.store import JsonlStore

KINDS = ("removed", "demoted")
DEFAULT_RETENTION_S = 336 * 3600.0  # two weeks, as Cruise Control's removal and demotion history


def _well_formed(r: dict[str, Any]) -> bool:
    """A line this module wrote (a hand-edited or foreign line is passed over, never a crash of the service)."""
    return (r.get("kind") in KINDS and type(r.get("broker")) is int and isinstance(r.get("since"), int | float)
            and not isinstance(r.get("since"), bool) and isinstance(r.get("forgotten"), int | float | None))


class BrokerHistory:
    def __init__(self, path: Path, retention_s: float = DEFAULT_RETENTION_S) -> None:
        self.store = JsonlStore(path)
        self.retention_s = retention_s
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = {
            k: r for k, r in self.store.latest_by_id().items() if _well_formed(r)
        }

    def _live(self, now: float) -> list[dict[str, Any]]:
        return [r for r in self._entries.values()
                if r.get("forgotten") is None and float(r["since"]) + self.retention_s > now]

    def record(self, kind: str, brokers: Iterable[int], execution: str, now: float) -> None:
        """The operator's ``kind`` (removed or demoted) of ``brokers``, started as ``execution``."""
        if kind not in KINDS:
            raise ValueError(kind)
        with self._lock:
            for b in brokers:
                key = f"{kind}-{int(b)}"
                rec: dict[str, Any] = {"id": key, "kind": kind, "broker": int(b), "since": now,
                                       "execution": execution, "forgotten": None}
                self._entries[key] = rec
                self.store.append(rec)

    def forget(self, brokers: Iterable[int], now: float) -> list[dict[str, Any]]:
        """End every entry of ``brokers``; the entries ended (as :meth:`listing` shows them)."""
        wanted = {int(b) for b in brokers}
        with self._lock:
            ended = [r for r in self._live(now) if int(r["broker"]) in wanted]
            for r in ended:
                rec = {**r, "forgotten": now}
                self._entries[r["id"]] = rec
                self.store.append(rec)
        return [self._shown(r) for r in ended]

    def _brokers(self, kind: str, now: float) -> frozenset[int]:
        with self._lock:
            return frozenset(int(r["broker"]) for r in self._live(now) if r["kind"] == kind)

    def removed(self, now: float) -> frozenset[int]:
        return self._brokers("removed", now)

    def demoted(self, now: float) -> frozenset[int]:
        return self._brokers("demoted", now)

    def listing(self, now: float) -> list[dict[str, Any]]:
        """The entries that hold, oldest first, each with when it expires."""
        with self._lock:
            live = sorted(self._live(now), key=lambda r: (float(r["since"]), r["id"]))
        return [self._shown(r) for r in live]

    def _shown(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"broker": int(r["broker"]), "kind": r["kind"], "since": float(r["since"]),
                "expires": float(r["since"]) + self.retention_s, "execution": r.get("execution")}
