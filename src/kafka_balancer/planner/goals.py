"""Goals, one class per invariant.

Soft goals (seed 001, definitions 3 and 4), judged on utilisation ``u = load / capacity`` per resource:

* :class:`CapacityGoal` — ``u ≤ θ`` on every live broker;
* :class:`DistributionGoal` — ``|u − ū| ≤ ε·ū`` on every live broker (max γ ≤ ε, hence σ ≤ η).

The planner steers by a *violation* per broker and resource (0 when both goals hold). It accepts a move
only if no (broker, resource) that satisfies its goals stops doing so, and the total violation drops.
That is the paper's rule "break no constraint already satisfied", and the strict drop rules out thrashing.

Hard goals are never traded: :class:`RackSpreadGoal` and :class:`HostSpreadGoal` forbid any move that
lowers the number of distinct racks (hosts) a partition's replicas span. Replication factor, distinct
brokers and live destinations are kept by construction in the strategies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kafka_balancer.model.snapshot import FloatArr, IntArr

CAPACITY_WEIGHT = 10.0  # a point of utilisation above θ weighs this much more than one outside the ε band
# in the planner's θ-first mode (State.judge) the capacity term counts this many times over again, so that a
# point above θ outweighs any band term by far
THETA_FIRST = 1e3
NO_GROUP = -(10**6)  # SpreadGoal: the group of a replica slot that does not count (none there, or the one leaving)


@dataclass(frozen=True)
class CapacityGoal:
    theta: float

    def violation(self, util: FloatArr) -> FloatArr:
        return np.maximum(0.0, util - self.theta) / self.theta * CAPACITY_WEIGHT


@dataclass(frozen=True)
class DistributionGoal:
    """The ε band around the ideal utilisation ``target`` (total load ÷ total live capacity).

    The planner aims inside a slightly narrower band (``eps * margin``) so that the paper's γ, measured
    around the *arithmetic* mean of utilisations, also ends within ε when capacities differ.
    """

    target: FloatArr  # per resource
    lo: FloatArr
    hi: FloatArr
    active: bool = True  # False when the goal policy leaves it out: no band at all
    inv_scale: FloatArr = field(init=False, repr=False)  # 1 / target (0 where the target is 0)

    @staticmethod
    def around(target: FloatArr, eps: float, theta: float, margin: float, active: bool = True) -> DistributionGoal:
        e = eps * margin
        hi = (1.0 + e) * target
        # Where the band's top lies above θ but the target does not, θ is the tighter ceiling.
        hi = np.where((hi > theta) & (target <= theta), np.maximum(theta, target), hi)
        if not active:
            return DistributionGoal(target=target, lo=np.full_like(target, -np.inf), hi=np.full_like(target, np.inf),
                                    active=False)
        return DistributionGoal(target=target, lo=(1.0 - e) * target, hi=hi)

    def towards_mean(self, mean: FloatArr, e: float, where: np.ndarray) -> DistributionGoal:
        """This band, cut on the resources ``where`` to ``mean`` × (1 ± e) (``mean``: the arithmetic mean
        of the live brokers' utilisations, around which γ is measured; with brokers of one size it is the
        target). Where the two do not overlap, the cut band alone.

        >>> g = DistributionGoal.around(np.array([0.5]), 0.1, 0.8, 1.0)
        >>> c = g.towards_mean(np.array([0.52]), 0.1, np.array([True]))
        >>> [round(float(c.lo[0]), 3), round(float(c.hi[0]), 3)]
        [0.468, 0.55]
        """
        lo = np.where(where, np.maximum(self.lo, (1.0 - e) * mean), self.lo)
        hi = np.where(where, np.minimum(self.hi, (1.0 + e) * mean), self.hi)
        apart = lo > hi
        lo = np.where(apart, (1.0 - e) * mean, lo)
        hi = np.where(apart, (1.0 + e) * mean, hi)
        return DistributionGoal(target=self.target, lo=lo, hi=hi, active=self.active)

    def violation(self, util: FloatArr) -> FloatArr:
        if not self.active:
            return np.zeros_like(util)
        # (max(0, u - hi) + max(0, lo - u)) / target, 0 where the target is 0; the band never inverts, so
        # the two terms are never both positive and their sum is max(u - hi, lo - u, 0)
        v = np.maximum(util - self.hi, self.lo - util)
        np.maximum(v, 0.0, out=v)
        v *= self.inv_scale
        return v

    def __post_init__(self) -> None:
        inv = np.where(self.target > 0, 1.0 / np.where(self.target > 0, self.target, 1.0), 0.0)
        object.__setattr__(self, "inv_scale", inv)


@dataclass(frozen=True)
class SpreadGoal:
    """Never lower the number of distinct groups (racks or hosts) a partition spans."""

    group_of: IntArr  # broker position -> group index, -1 = unknown
    active: bool = field(init=False)
    _groups: list[int] = field(init=False, repr=False, compare=False)
    _slot_group: IntArr = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "active", bool((self.group_of >= 0).any()))
        # the same as Python ints: the one-pair checks below read a few entries per call
        object.__setattr__(self, "_groups", [int(x) for x in self.group_of.tolist()])
        # the group of a replica slot: a -1 slot (no replica) reads the last entry, in no group
        object.__setattr__(self, "_slot_group", np.append(self.group_of, NO_GROUP))

    def _banned(self, replicas: IntArr, src: int) -> set[int] | None:
        """The groups the partition's other replicas span when its replica on ``src`` is the only one in its
        group (a move must then reach a new group), or None when any group is fine."""
        g = self._groups
        members = [b for b in replicas.tolist() if b >= 0]
        rest = {g[b] for b in members if b != src}
        return None if len(rest) >= len({g[b] for b in members}) else rest

    def allowed_destinations(self, replicas: IntArr, src: int) -> IntArr | None:
        """Groups a replica leaving ``src`` may *not* go to, or None when any group is fine."""
        banned = self._banned(replicas, src)
        return None if banned is None else np.fromiter(banned, dtype=np.int32)

    def dest_mask(self, replicas: IntArr, src: int) -> np.ndarray | None:
        banned = self.allowed_destinations(replicas, src)
        if banned is None:
            return None
        return ~np.isin(self.group_of, banned)

    def ok(self, replicas: IntArr, src: int, dst: int) -> bool:
        banned = self._banned(replicas, src)
        return banned is None or self._groups[dst] not in banned

    def dest_masks(self, rows: IntArr, src: int, dests: IntArr) -> np.ndarray | None:
        """[K, D]: :meth:`ok` for partitions with replica rows ``rows`` ([K, R], -1 padded) leaving ``src``, for
        each of ``dests``; None where every partition may go anywhere."""
        others = self._slot_group[rows]
        others[rows == src] = NO_GROUP
        # the spread shrinks only if src's group holds no other replica of the partition
        alone = (others != self._slot_group[src]).all(axis=1)
        if not alone.any():
            return None
        others[~alone] = NO_GROUP
        # a [K, R, D] comparison reduced over R (not the last axis): one pass, where R passes over [K, D] cost more
        return np.asarray((others[:, :, None] != self.group_of[dests][None, None, :]).all(axis=1))


class RackSpreadGoal(SpreadGoal):
    """Rack awareness: a move never puts a partition on fewer racks."""


class HostSpreadGoal(SpreadGoal):
    """Host awareness (several brokers per host): a move never puts a partition on fewer hosts."""
