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
from kafka_balancer.planner.constraints import DEMOTED_EXEMPT, Constraints, Resolved


def _ids(snap: Snapshot, mask: np.ndarray) -> str:
    return ", ".join(str(int(b)) for b in snap.broker_ids[mask])


def held_back(snap: Snapshot, res: Resolved, outside: np.ndarray) -> list[str]:
    """Lines naming the modes that limit what any plan could balance (for a plan that left something).
    ``outside``: [N, R], the (broker, resource) pairs the plan leaves outside their band."""
    c = res.constraints
    lines = []
    if c.leadership_only:
        lines.append("no replica moves (--leadership-only): only leadership changed; a plan that may move "
                     "replicas would balance further")
    elif c.add_brokers:
        lines.append(f"only brokers {_ids(snap, res.receive)} receive replicas (--add-brokers): load moves onto "
                     "them and nowhere else; a rebalance without it may balance further")
    # only the resources the planner does not hold a demoted broker to are the demotion's doing
    low = res.demoted & snap.alive & ~res.removed & outside[:, list(DEMOTED_EXEMPT)].any(axis=1)
    if low.any():
        lines.append(f"broker(s) {_ids(snap, low)} lead nothing (--demote-brokers): the load only leaders carry "
                     "(network-out, most of cpu) stays off them, below the band, for as long as they are demoted")
    return lines


def unfilled(snap: Snapshot, res: Resolved) -> list[str]:
    """A warning naming live brokers that hold no replica and that the add mode leaves empty: most likely
    new brokers the operator forgot to list."""
    if not res.constraints.add_brokers:  # (with --leadership-only, an add is refused as bad input)
        return []
    holds = np.zeros(snap.n_brokers, dtype=bool)
    held = snap.replicas[snap.replicas >= 0]
    holds[held] = True
    empty = snap.alive & ~res.removed & ~res.receive & ~holds
    if not empty.any():
        return []
    return [f"broker(s) {_ids(snap, empty)} hold no replicas and are not among --add-brokers: they stay empty "
            "(list them in --add-brokers to fill them too)"]


def demote_alone(c: Constraints, replica_moves: int, moved_bytes: float) -> list[str]:
    """A warning for ``plan`` when ``--demote-brokers`` is the only mode and the plan still moves replicas:
    the flag narrows a rebalance, so the plan balances the rest too, while an operator patching a broker
    usually wants leadership moved and nothing else (what the service's demote endpoint does; the service's
    other plans keep its remembered demotions with no such warning)."""
    if not c.demote_brokers or c.leadership_only or c.add_brokers or c.remove_brokers or replica_moves == 0:
        return []
    return [f"--demote-brokers also rebalances: this plan moves {replica_moves} replica(s), {moved_bytes / 1e9:,.1f} "
            "GB; add --leadership-only to move leadership off the demoted brokers and copy no data"]


def budget_spent(c: Constraints, copies: int, copied: float, lower_bound: float, band_missed: bool) -> str:
    """The line for a plan that stopped because its budget ran out: which budget, how much of it the plan
    uses, and, while the ε band is missed, the least any plan must move to reach it (the planner's lower
    bound; the operator's other modes can only raise it).

    >>> budget_spent(Constraints(max_bytes=2e11), 16, 1.998e11, 6.296e11, True)
    'the byte budget is spent (--max-bytes: 199.8 of at most 200.0 GB moved); a larger budget would balance \
further: reaching the ε band moves at least 629.6 GB (lower bound)'
    """
    if c.max_moves is not None and copies >= c.max_moves:
        spent = f"the move budget is spent (--max-moves: {copies} of at most {c.max_moves} replica moves)"
    else:
        top = c.max_bytes if c.max_bytes is not None else float("inf")
        spent = f"the byte budget is spent (--max-bytes: {copied / 1e9:,.1f} of at most {top / 1e9:,.1f} GB moved"
        # what is left is smaller than any replica that could still move
        spent += "; no replica that may move fits in the rest)" if copied < top * 0.999 else ")"
    line = f"{spent}; a larger budget would balance further"
    if band_missed and lower_bound > copied:
        line += f": reaching the ε band moves at least {lower_bound / 1e9:,.1f} GB (lower bound)"
    return line
