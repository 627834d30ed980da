"""What the operator's modes hold back, said where the plan reports what it left unbalanced.

A plan made under ``--add-brokers`` or ``--leadership-only`` can stop short of balance for no other reason
than the mode itself: only the listed brokers receive replicas, or no replica moves at all. Without a line
saying so, the summary's "remains unbalanced" reads as a planner that gave up.

Example: brokers 48-53 were added to a 48-broker cluster, and the operator lists only 48, 49 and 50. The plan
fills those three; brokers 51-53 stay empty and the old brokers stay above their band, so the plan warns
``broker(s) 51, 52, 53 hold no replicas and are not among --add-brokers: ...`` and its remaining lines begin
with ``only brokers 48, 49, 50 receive replicas (--add-brokers): ...``.
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.constraints import Resolved


def _ids(snap: Snapshot, mask: np.ndarray) -> str:
    return ", ".join(str(int(b)) for b in snap.broker_ids[mask])


def held_back(snap: Snapshot, res: Resolved) -> list[str]:
    """Lines naming the modes that limit what any plan could balance (for a plan that left something)."""
    c = res.constraints
    if c.leadership_only:
        return ["no replica moves (--leadership-only): only leadership changed; a plan that may move replicas "
                "would balance further"]
    if c.add_brokers:
        return [f"only brokers {_ids(snap, res.receive)} receive replicas (--add-brokers): load moves onto them "
                "and nowhere else; a rebalance without it may balance further"]
    return []


def unfilled(snap: Snapshot, res: Resolved) -> list[str]:
    """A warning naming live brokers that hold no replica and that the add mode leaves empty: most likely
    new brokers the operator forgot to list."""
    if not res.constraints.add_brokers or res.leadership_only:
        return []
    holds = np.zeros(snap.n_brokers, dtype=bool)
    held = snap.replicas[snap.replicas >= 0]
    holds[held] = True
    empty = snap.alive & ~res.removed & ~res.receive & ~holds
    if not empty.any():
        return []
    return [f"broker(s) {_ids(snap, empty)} hold no replicas and are not among --add-brokers: they stay empty "
            "(list them in --add-brokers to fill them too)"]
