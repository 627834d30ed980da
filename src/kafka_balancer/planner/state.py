"""The planner's working state: an assignment being changed move by move, with loads kept current.

Private to one :func:`kafka_balancer.planner.plan` call; the caller's snapshot is never modified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kafka_balancer.model.snapshot import NW_OUT, Derived, FloatArr, Snapshot
from kafka_balancer.planner import edges, scalar_judge
from kafka_balancer.planner.constraints import Constraints, Resolved, resolve
from kafka_balancer.planner.goals import (
    CAPACITY_WEIGHT,
    THETA_FIRST,
    CapacityGoal,
    DistributionGoal,
    HostSpreadGoal,
    RackSpreadGoal,
)

if TYPE_CHECKING:
    from kafka_balancer.planner.count_goals import CountGoal

TOL = 1e-12
MAX_BAND_ROWS = 1 << 16  # State._band_rows keeps the band repeated on up to this many rows (6 MB)
Change = tuple[int, int, int, int]  # (0: a replica moves, 1: leadership moves; partition, from, to)


def _rises(k0: FloatArr, k1: FloatArr) -> np.ndarray:
    """Per resource: does a capacity violation appear or grow from ``k0`` to ``k1``?"""
    return np.asarray(k1 > np.maximum(k0, TOL) + TOL)


def _sum_last(x: FloatArr) -> FloatArr:
    """``x.sum(axis=-1)`` over the four resources, added column by column from the first: the order numpy's
    reduction takes on four elements, bit for bit, in three strided additions (a reduction over a last axis
    this short runs one tiny loop per row)."""
    if x.shape[-1] != 4:
        return np.asarray(np.add.reduce(x, axis=-1))
    s = x[..., 0] + x[..., 1]
    s += x[..., 2]
    s += x[..., 3]
    return s


def _any_last(b: np.ndarray) -> np.ndarray:
    """``b.any(axis=-1)`` over the four resources, column by column (see :func:`_sum_last`)."""
    if b.shape[-1] != 4:
        return np.asarray(np.logical_or.reduce(b, axis=-1))
    a = b[..., 0] | b[..., 1]
    a |= b[..., 2]
    a |= b[..., 3]
    return a


class State:
    def __init__(
        self,
        snap: Snapshot,
        theta: float,
        eps: float,
        margin: float,
        by_gain_per_byte: bool = True,
        res: Resolved | None = None,
        view: Derived | None = None,
        distribution: bool = True,
    ) -> None:
        view = view if view is not None else Derived(snap)
        res = res if res is not None else resolve(Constraints(), snap)
        self.view = view
        # the operator's modes, as masks (see constraints.py); removed brokers arrive here as not alive
        self.receive = res.receive & snap.alive  # may receive a replica
        self.may_lead = res.lead & snap.alive
        self.frozen = res.frozen  # excluded partitions: nothing of theirs moves (except off dead brokers)
        self.max_moves, self.max_bytes = res.max_moves, res.max_bytes
        self.budgeted = bool(np.isfinite(self.max_moves) or np.isfinite(self.max_bytes))
        self.copies = 0  # replicas placed on a broker that did not hold the partition, net of undos
        self.copied = 0.0  # their bytes
        self._min_bytes: float | None = None
        self.swap_allowance = float("inf")  # bytes the swap-based count goals may still copy
        self.guards: list[CountGoal] = []  # count goals of higher priority that a move may not worsen
        # (broker, resource) pairs out of reach whatever the plan (a too-hot partition's leader, a demoted
        # broker's network-out, disk on a leadership-only plan): never chased; added to by exempt_pairs()
        self.exempt = np.zeros((snap.n_brokers, snap.leader_load.shape[1]), dtype=bool)
        # roles that put their holder out of reach (bounds.hot_partitions): exempt wherever they are now
        self.hot_lead: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.hot_held: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.by_gain_per_byte = by_gain_per_byte  # replica choice: most violation removed per byte, or first
        self.relaxed = False  # see judge()
        self.polishing = False  # see judge()
        self.sift = False  # the repair pass: replica.shed weighs a second round when the source refuses
        self.theta_first = False  # see judge()
        self._hot_part = np.zeros(snap.n_partitions, dtype=bool)  # partitions of the roles given to exempt_roles
        self._pin_cache: tuple[np.ndarray, bool] | None = None  # pins()'s cache
        self.byte_budget = float("inf")  # bytes replica moves may still copy (lowered by each move)
        self.min_gain_per_byte = 0.0  # polishing: a move must lower the squared deviation this much per byte
        self._bands: scalar_judge.Bands | None = None  # the goals as Python floats (scalar_judge)
        self._cap_rows: list[list[float] | None] | None = None  # the capacities likewise (scalar_judge.utils)
        self._edges: dict[int, tuple[int, scalar_judge.Bands, edges.Edges]] = {}  # edges()' cache
        # violation_of over every broker, kept for the goals it was computed with; rows of brokers a move
        # touched since (``_touched``) are recomputed on the next read
        self._raw: tuple[CapacityGoal, DistributionGoal, FloatArr] | None = None
        self._touched: set[int] = set()
        self._tiled: tuple[DistributionGoal, FloatArr, FloatArr, FloatArr] | None = None  # _band_rows' cache
        self.snap = snap
        self.rep = snap.replicas.copy()
        self.ldr = snap.leader.copy()
        self.cap = snap.capacity
        self.alive = snap.alive
        self.load = view.loads.copy()
        self.L = snap.leader_load
        self.F = snap.follower_load
        self.LF = snap.leader_load - snap.follower_load  # what a leadership change moves
        # [P, 2, R]: a follower's load, then a leader's; one gather picks each replica's role (role_loads),
        # as rows 2p and 2p + 1 of its [2P, R] view
        self._roles = np.stack([self.F, self.L], axis=1)
        self._role_rows = self._roles.reshape(-1, self._roles.shape[2])
        self.disk_bytes = view.disk_bytes
        # Every reassignment has a fixed cost (a new replica set, catch-up, a leader epoch) besides its bytes;
        # ranking moves by gain per byte counts it as one mean replica's worth. Measured on 20 testbeds and
        # 15 48-broker clusters: a third fewer moves than a 5 % charge, bytes within the same bound ratios.
        self.byte_floor = float(self.disk_bytes.mean()) + 1.0 if snap.n_partitions else 1.0
        n = snap.n_brokers
        self.members: list[set[int]] = [set(r.tolist()) for r in view.rows_by_broker]
        self._members_arr: dict[int, np.ndarray] = {}  # members_arr's cache
        self._member_roles: dict[int, np.ndarray] = {}  # member_roles' cache
        self._member_order: dict[int, dict[tuple[int, bool], np.ndarray]] = {}  # member_order's, per broker
        self.version = [0] * n  # per broker: bumped by every move that changes its load or replicas
        self.swap_misses: dict[tuple[int, int, int], tuple[object, ...]] = {}  # swap.py's dead ends
        self.rcount = view.replica_counts.copy()
        self.lcount = np.bincount(self.ldr[self.ldr >= 0], minlength=n).astype(np.int64)
        self.potential = view.potential_nw_out.copy()  # nw_out each broker would serve if all its replicas led
        self.topic_count = view.topic_counts.copy()  # [T, N] replicas of each topic per broker
        totals = view.totals
        live_cap = self.cap[self.alive].sum(axis=0)
        self.target = np.where(live_cap > 0, totals / np.where(live_cap > 0, live_cap, 1.0), 0.0)
        self._target_or_1 = np.where(self.target > 0, self.target, 1.0)  # the divisor of relative_deviation
        self._every_target = bool(np.all(self.target > 0))  # relative_deviation needs no mask then
        self.capacity_goal = CapacityGoal(theta)
        self.distribution_goal = DistributionGoal.around(self.target, eps, theta, margin, active=distribution)
        self.rack_goal = RackSpreadGoal(snap.rack_idx)
        self.host_goal = HostSpreadGoal(snap.host_idx)
        self.spread_goals = [g for g in (self.rack_goal, self.host_goal) if g.active]
        self.theta = theta
        self.replica_moves = 0
        self.leader_moves = 0
        self.changes = 0  # every replica or leadership move, undos included; never reset (count goals' caches)
        self.journal: list[Change] | None = None  # when a list, every change is appended to it (step_log.py)

    def adopt(self, replicas: np.ndarray, leader: np.ndarray) -> None:
        """Start from another assignment of the same partitions (e.g. the exact model's); loads follow."""
        for p in np.nonzero(np.any(replicas != self.rep, axis=1) | (leader != self.ldr))[0].tolist():
            for dst in [int(b) for b in replicas[p] if b >= 0 and b not in self.rep[p]]:
                src = next(int(b) for b in self.rep[p] if b >= 0 and b not in replicas[p])
                self.move_replica(p, src, dst)
            if self.ldr[p] != leader[p]:
                self.move_leadership(p, int(leader[p]))
        self.replica_moves = self.leader_moves = 0

    # -- utilisation and violations -------------------------------------------------------------
    def util(self, b: int | None = None) -> FloatArr:
        if b is None:
            return self.load / self.cap
        return self.load[b] / self.cap[b]

    def violation_of(self, util: FloatArr) -> FloatArr:
        """``capacity_goal.violation(util) + distribution_goal.violation(util)``, each term by the same
        operations, in place (this runs on every candidate move). Where no utilisation is above θ the
        capacity term is zero everywhere and is not computed."""
        theta = self.capacity_goal.theta
        dg = self.distribution_goal
        w: FloatArr | None = None
        if dg.active:
            hi, lo, inv = self._band_rows(util)
            w = np.subtract(util, hi)
            np.maximum(w, np.subtract(lo, util), out=w)
            np.maximum(w, 0.0, out=w)
            w *= inv
            if util.size == 0 or util.max() <= theta:
                return w
        v = np.subtract(util, theta)
        np.maximum(0.0, v, out=v)
        v /= theta
        v *= CAPACITY_WEIGHT
        if w is not None:
            v += w
        return v

    def _band_rows(self, util: FloatArr) -> tuple[FloatArr, FloatArr, FloatArr]:
        """The distribution goal's ``hi``, ``lo`` and ``inv_scale`` in the shape of ``util`` ([..., R], up to
        ``MAX_BAND_ROWS`` rows of R): repeated in memory, kept per goal (an element-wise operation against them
        runs as one flat loop, where one against a broadcast [R] row runs a loop of R elements per row: 3.4
        against 1.1 us on 229 rows, 195 against 75 us on 20,000). The same values, so the same results, as
        the [R] rows, which other shapes get."""
        dg = self.distribution_goal
        m = util.size // dg.hi.size if util.ndim >= 2 and util.shape[-1] == dg.hi.size else 0
        if not 0 < m <= MAX_BAND_ROWS:
            return dg.hi, dg.lo, dg.inv_scale
        kept = self._tiled
        if kept is None or kept[0] is not dg or kept[1].shape[0] < m:
            n = max(m, 2 * kept[1].shape[0] if kept is not None and kept[0] is dg else 256)
            kept = (dg, np.tile(dg.hi, (n, 1)), np.tile(dg.lo, (n, 1)), np.tile(dg.inv_scale, (n, 1)))
            self._tiled = kept
        if util.ndim == 2:
            return kept[1][:m], kept[2][:m], kept[3][:m]
        return kept[1][:m].reshape(util.shape), kept[2][:m].reshape(util.shape), kept[3][:m].reshape(util.shape)

    def edges(self, b: int) -> edges.Edges:
        """Broker ``b``'s slopes and holding range (edges.py), kept until a move changes its load or the
        goals are replaced."""
        bd = scalar_judge.bands(self)
        hit = self._edges.get(b)
        if hit is not None and hit[0] == self.version[b] and hit[1] is bd:
            return hit[2]
        e = edges.of(bd, self.load[b].tolist(), self.cap[b].tolist())
        self._edges[b] = (self.version[b], bd, e)
        return e

    def rising(self, b: int) -> np.ndarray:
        """[R]: resources on which any load added to broker ``b`` makes :meth:`violation_of` grow: ``b`` is
        above θ, and the capacity term rises there faster than the band term can fall. The violation is
        convex in the utilisation, so a right-hand slope of at least 1 means adding d raises it by at least d."""
        e = self.edges(b)
        theta = self.capacity_goal.theta
        return np.array([u > theta + 1e-9 and s >= 1.0 for u, s in zip(e.util, e.right, strict=True)])

    def exempt_roles(self, roles: tuple[tuple[int, int, bool], ...]) -> None:
        """Exempt whoever holds each (partition, resource, everyone) role (bounds.hot_partitions): its
        leader, and with ``everyone`` each of its replicas, wherever the plan puts them."""
        lead = [(p, r) for p, r, _ in roles]
        held = [(p, r) for p, r, everyone in roles if everyone]
        self.hot_lead = (np.array([p for p, _ in lead], np.int64), np.array([r for _, r in lead], np.int64))
        self.hot_held = (np.array([p for p, _ in held], np.int64), np.array([r for _, r in held], np.int64))
        self._hot_part = np.zeros(self.snap.n_partitions, dtype=bool)
        self._hot_part[self.hot_lead[0]] = True
        self._pin_cache = None

    def _hot_holders(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(brokers, resources, utilisation): each present holder of a role given to :meth:`exempt_roles`,
        and what the role alone puts on it (a broker may appear more than once)."""
        parts, res = self.hot_lead
        who = self.ldr[parts]
        ok = who >= 0
        b_lead, r_lead = who[ok], res[ok]
        u_lead = self.L[parts[ok], r_lead] / self.cap[b_lead, r_lead]
        parts, res = self.hot_held
        rows = self.rep[parts]
        k, c = np.nonzero((rows >= 0) & (rows != self.ldr[parts][:, None]))
        b_held, r_held = rows[k, c], res[k]
        u_held = self.F[parts[k], r_held] / self.cap[b_held, r_held]
        return (np.concatenate([b_lead, b_held]), np.concatenate([r_lead, r_held]),
                np.concatenate([u_lead, u_held]))

    def relative_deviation(self, util: np.ndarray, resources: list[int] | None = None) -> np.ndarray:
        """Utilisation's deviation from the target, relative to the target (resources along the last axis, all
        four or the ``resources`` listed; 0 on a resource no live broker has capacity for). Polishing, the
        usage band, leadership tightening and the heal's placement all weigh moves by its square."""
        t, div = (self.target, self._target_or_1) if resources is None else \
            (self.target[resources], self._target_or_1[resources])
        if self._every_target:
            return np.asarray((util - t) / div)
        return np.asarray(np.where(t > 0, (util - t) / div, 0.0))

    def out_of_reach(self) -> np.ndarray:
        """[B, R]: pairs whose band is out of reach: :attr:`exempt`, and the present holders of the roles
        given to :meth:`exempt_roles` (a too-hot partition's leader moved by the plan takes its exemption
        along)."""
        return self.pins()[0].copy()

    def exempt_pairs(self, brokers: np.ndarray | slice, resources: list[int]) -> None:
        """Put (broker, resource) pairs out of reach for good: never chased (:attr:`exempt`)."""
        for r in resources:
            self.exempt[brokers, r] = True
        self._pin_cache = None

    def pins(self) -> tuple[np.ndarray, bool]:
        """(:meth:`out_of_reach`, whether any pair is), kept until a hot role's partition moves or
        :meth:`exempt_pairs` adds pairs."""
        if self._pin_cache is None:
            mask = self.exempt.copy()
            if self.hot_lead[0].size:
                b, r, _ = self._hot_holders()
                mask[b, r] = True
            self._pin_cache = (mask, bool(mask.any()))
        return self._pin_cache

    def _violation_kept(self) -> FloatArr:
        """:meth:`violation_of` every broker's utilisation, the kept array itself (not to be written). Element
        by element, so the rows of brokers no move touched since the last read are kept (the loop reads this
        once per step, and a step changes one or two brokers); any change of goal recomputes all."""
        cg, dg = self.capacity_goal, self.distribution_goal
        if self._raw is None or self._raw[0] is not cg or self._raw[1] is not dg:
            self._raw = (cg, dg, self.violation_of(self.util()))
        elif self._touched:
            rows = np.fromiter(self._touched, dtype=np.int64, count=len(self._touched))
            self._raw[2][rows] = self.violation_of(self.load[rows] / self.cap[rows])
        self._touched.clear()
        return self._raw[2]

    def _violation_all(self) -> FloatArr:
        """:meth:`_violation_kept`, a fresh array."""
        return self._violation_kept().copy()

    def violation_at(self, brokers: int | np.ndarray) -> FloatArr:
        """:meth:`violation_of` the present utilisation of each of ``brokers`` (a fresh array), read from the
        kept rows: the same numbers, element by element, as computing it on ``load / cap`` of those brokers."""
        return self._violation_kept().take(brokers, axis=0)

    def violations(self) -> FloatArr:
        """Violation per (broker, resource); 0 on dead brokers and on pairs provably out of reach."""
        v = self._violation_all()
        v[~self.alive] = 0.0
        v[self.pins()[0]] = 0.0
        return v

    def hot_excess(self) -> FloatArr:
        """[B, R]: the capacity violation of a hot role's holder above what its hot roles alone put on it:
        the band is out of reach there, θ need not be (0 elsewhere)."""
        v = np.zeros(self.load.shape)
        if not self.hot_lead[0].size:
            return v
        b, r, u = self._hot_holders()
        own = np.zeros(self.load.shape)
        np.add.at(own, (b, r), u)
        held = own > 0
        theta = self.capacity_goal.theta
        util = self.load[held] / self.cap[held]
        v[held] = np.maximum(0.0, util - np.maximum(theta, own[held])) / theta * CAPACITY_WEIGHT
        v[self.exempt | ~self.alive[:, None]] = 0.0
        return v

    def judge(self, util0: FloatArr, util1: FloatArr, v0: FloatArr | None = None,
              rows: int | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For utilisations before and after a change (last axis: resources, broadcastable): does the
        change break a goal that held, and how much does it lower the cost?

        Normal mode: no goal that holds may break, cost = total violation (the paper's rule). Relaxed mode,
        for what is left when no move meets that rule: only θ may not newly break, and cost = the sum of
        squared violations, so an excess that cannot vanish is spread out instead of sitting on one broker.
        Polishing mode, once every goal holds: no goal may break, cost = the sum over resources of the
        squared relative deviation from the ideal utilisation, so σ keeps falling on every resource.
        θ-first mode, while the move loop brings a hot role's holder under θ: only θ may break (a resource
        going above it, or further above), and cost = the total violation with the capacity term counted
        ``THETA_FIRST`` times over. θ outranks the band, so the holder's band on another resource, or a
        destination's band, may give way (a holder at the bottom of its network-in band could otherwise
        never give up the replicas that keep its disk above θ).
        ``rows``, when given (the broker of each row), also holds pairs whose band is out of reach to θ in
        normal mode (:meth:`lifts_pinned`); callers give it wherever a broker receives load.

        ``v0``, when given, is ``violation_of(util0)`` already computed (it is element-wise, so a caller
        judging many moves onto the same brokers computes it once per broker and gathers the rows).
        """
        if self.polishing:
            return self.violation_grows(util0, util1, v0), self.polish_gain(util0, util1)
        v0 = self.violation_of(util0) if v0 is None else v0
        if self.theta_first:
            k0, k1 = self.capacity_goal.violation(util0), self.capacity_goal.violation(util1)
            bad = _any_last(_rises(k0, k1))
            drop = _sum_last(v0) - _sum_last(self.violation_of(util1))
            return bad, drop + THETA_FIRST * (_sum_last(k0) - _sum_last(k1))
        if not self.relaxed:
            return self._judge_normal(util0, util1, v0, rows)
        g0, g1 = self.capacity_goal.violation(util0), self.capacity_goal.violation(util1)
        c0, c1 = v0 ** 2, self.violation_of(util1) ** 2
        return _any_last((g0 <= TOL) & (g1 > TOL)), _sum_last(c0) - _sum_last(c1)

    def _judge_normal(self, util0: FloatArr, util1: FloatArr, v0: FloatArr,
                      rows: int | np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`judge` in normal mode, ``v0`` given: the reductions column by column (:func:`_sum_last`: the
        same sums, in the same order), :meth:`lifts_pinned` only when some pair is pinned (this runs on every
        candidate move)."""
        v1 = self.violation_of(util1)
        bad = _any_last((v0 <= TOL) & (v1 > TOL))
        if rows is not None and self.pins()[1]:
            bad |= self.lifts_pinned(rows, util0, util1)
        return bad, _sum_last(v0) - _sum_last(v1)

    def polish_gain(self, util0: FloatArr, util1: FloatArr) -> np.ndarray:
        """The drop of polishing's cost (:meth:`judge`): the squared relative deviations summed over the
        resources, before less after."""
        c0 = self.relative_deviation(util0) ** 2
        c1 = self.relative_deviation(util1) ** 2
        return np.asarray(_sum_last(c0) - _sum_last(c1))

    def lifts_pinned(self, rows: int | np.ndarray, util0: FloatArr, util1: FloatArr) -> np.ndarray:
        """Does the change take a pair whose band is out of reach above θ, or further above it? ``rows``: the
        broker of each utilisation row (broadcastable against them without the last axis). A pair inside its
        band cannot cross θ without breaking the band, which the judge refuses; on these the band is broken
        for good, so without this a move could trade their θ for some band elsewhere, and the move loop undo
        what it did to bring a hot role's holder under θ."""
        mask, some = self.pins()
        pin = mask[rows] if some else None
        if pin is None or not pin.any():
            return np.zeros(np.broadcast_shapes(np.shape(util0), np.shape(util1))[:-1], dtype=bool)
        k0, k1 = self.capacity_goal.violation(util0), self.capacity_goal.violation(util1)
        return np.asarray(_any_last(pin & _rises(k0, k1)))

    def violation_grows(self, util0: FloatArr, util1: FloatArr, v0: FloatArr | None = None) -> np.ndarray:
        """Does any violation grow, even one that was there before (last axis: resources)? ``v0``: as in
        :meth:`judge`."""
        g0 = self.violation_of(util0) if v0 is None else v0
        g1 = self.violation_of(util1)
        return _any_last(g1 > np.maximum(g0, TOL) + TOL)

    def new_replicas(self) -> np.ndarray:
        """[P, R]: slots holding a replica that is not in the partition's original set (bytes to copy)."""
        old, new = self.snap.replicas, self.rep
        return (new >= 0) & ~np.any(new[:, :, None] == old[:, None, :], axis=2)

    def accept(self, changes: list[tuple[int, FloatArr]]) -> float | None:
        """Gain (drop of cost) if the load changes are acceptable, else None.

        ``changes`` lists (broker, load delta) pairs; a broker may appear once.
        """
        gain = 0.0
        for b, delta in changes:
            if not self.alive[b]:
                continue
            us = scalar_judge.utils(self, b, delta)
            if us is None:
                bad_a, g_a = self.judge(self.load[b] / self.cap[b], (self.load[b] + delta) / self.cap[b], rows=b)
                bad, g = bool(bad_a), float(g_a)
            else:
                bad, g = scalar_judge.judge(self, scalar_judge.bands(self), *us, b=b)
            if bad:
                return None
            gain += g
        return gain if gain > 1e-9 else None

    def grows_at(self, b: int, delta: FloatArr) -> bool:
        """Would adding ``delta`` to broker ``b``'s load make any of its violations grow?"""
        us = scalar_judge.utils(self, b, delta)
        if us is None:
            return bool(self.violation_grows(self.load[b] / self.cap[b], (self.load[b] + delta) / self.cap[b]))
        return scalar_judge.grows(scalar_judge.bands(self), *us)

    # -- hard constraints -----------------------------------------------------------------------
    def dest_mask(self, p: int, src: int) -> np.ndarray:
        """Brokers a replica of partition ``p`` leaving ``src`` may move to."""
        mask = self.receive.copy()
        if self.frozen[p] and self.alive[src]:
            mask[:] = False
        if self.ldr[p] == src:
            mask &= self.may_lead
        row = self.rep[p]
        mask[row[row >= 0]] = False
        for goal in self.spread_goals:
            m = goal.dest_mask(row, src)
            if m is not None:
                mask &= m
        if self.budgeted and mask.any():
            mask &= self.budget_mask(np.array([p]), src, np.arange(mask.size))[0]
        return mask

    def dest_masks(self, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        """[len(parts), len(dests)]: may a replica of each partition leave ``src`` for each destination?"""
        rows = self.rep[parts]  # [K, R], -1 padded
        # a [K, R, D] comparison reduced over R (not the last axis): one pass, where R passes over [K, D] cost
        # more, and a [K, D, R] one reduced over R twice as much
        mask = (rows[:, :, None] != dests[None, None, :]).all(axis=1)
        mask &= self.receive[dests]
        if self.alive[src]:
            mask &= ~self.frozen[parts][:, None]
        # a leader replica takes its leadership along: only to a broker that may lead
        mask &= ~(self.ldr[parts] == src)[:, None] | self.may_lead[dests][None, :]
        if self.budgeted:
            mask &= self.budget_mask(parts, src, dests)
        for guard in self.guards:
            mask &= guard.replica_ok(self, parts, src, dests)
        for goal in self.spread_goals:
            spread = goal.dest_masks(rows, src, dests)
            if spread is not None:
                mask &= spread
        return mask

    def spread_ok(self, p: int, src: int, dst: int) -> bool:
        """May a replica of ``p`` move from ``src`` to ``dst``: hard constraints, the operator's modes, the
        budget and the guarded goals."""
        row = self.rep[p]
        if dst in row.tolist() or (self.frozen[p] and self.alive[src]):
            return False
        # a replica may always go back to a live broker that held it (an undo is not a new placement)
        if not (self.receive[dst] or (self.alive[dst] and dst in self.snap.replicas[p].tolist())):
            return False
        if self.ldr[p] == src and not self.may_lead[dst]:
            return False
        if not all(g.ok(row, src, dst) for g in self.spread_goals):
            return False
        if self.budgeted and not self.budget_mask(np.array([p]), src, np.array([dst]))[0, 0]:
            return False
        if not self.guards:
            return True
        return all(g.replica_ok_one(self, p, src, dst) for g in self.guards)

    def leader_ok(self, p: int, dst: int) -> bool:
        """May leadership of ``p`` move to ``dst`` (one of its replicas)?"""
        if not self.may_lead[dst] or self.frozen[p]:
            return False
        return all(g.leader_ok(self, p, int(self.ldr[p]), dst) for g in self.guards)

    # -- budgets --------------------------------------------------------------------------------
    def copy_delta(self, parts: np.ndarray, srcs: int | np.ndarray, dests: np.ndarray) -> np.ndarray:
        """[K, D]: change in the number of copied replicas if a replica of each partition moves from its
        source (``srcs``: one for all, or one each) to each destination (+1 a new copy, 0 a copy moved on, -1
        a replica sent back home)."""
        old = self.snap.replicas[parts]  # [K, R]
        src_new = ~(old == np.reshape(srcs, (-1, 1))).any(axis=1)  # [K]
        dst_new = ~(dests[None, :, None] == old[:, None, :]).any(axis=2)  # [K, D]
        return dst_new.astype(np.int64) - src_new.astype(np.int64)[:, None]

    def copy_change(self, p: int, src: int, dst: int) -> int:
        """:meth:`copy_delta` of one move, in Python integers: +1 a new copy, 0 a copy moved on, -1 a replica
        sent back home."""
        old = self.snap.replicas[p].tolist()
        return int(dst not in old) - int(src not in old)

    def _fits(self, d: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
        """Within the budget after ``d`` more copies of ``nbytes`` more bytes (element-wise)?"""
        return (self.copies + d <= self.max_moves) & (self.copied + nbytes <= self.max_bytes * (1 + 1e-12))

    def budget_mask(self, parts: np.ndarray, src: int, dests: np.ndarray) -> np.ndarray:
        d = self.copy_delta(parts, src, dests)
        return self._fits(d, d * self.disk_bytes[parts][:, None])

    def affordable(self, parts: np.ndarray, srcs: int | np.ndarray, dst: int | None = None) -> np.ndarray:
        """[K]: may a replica of each partition leave its source (one for all, or one each) within the budget,
        for destination ``dst``, or with ``dst`` None for the cheapest destination there could be (home, if the
        partition has an original replica elsewhere)? All true without a budget. Strategies drop what fails
        before they rank candidates, so that a budget's last bytes go to replicas that fit in them."""
        if not self.budgeted:
            return np.ones(parts.size, dtype=bool)
        if dst is not None:
            d = self.copy_delta(parts, srcs, np.array([dst]))[:, 0]
        else:  # an original replica that the partition no longer holds: a move there copies nothing
            old, now = self.snap.replicas[parts], self.rep[parts]
            home = ((old >= 0) & ~(old[:, :, None] == now[:, None, :]).any(axis=2)).any(axis=1)
            src_new = ~(old == np.reshape(srcs, (-1, 1))).any(axis=1)
            d = (~home).astype(np.int64) - src_new.astype(np.int64)
        return self._fits(d, d * self.disk_bytes[parts])

    def can_copy(self) -> bool:
        """Could one more replica be copied within the budget (and does any broker receive)?"""
        if not self.receive.any():
            return False
        if not self.budgeted:
            return True
        return self.copies < self.max_moves and self.max_bytes - self.copied >= self.min_movable_bytes

    @property
    def min_movable_bytes(self) -> float:
        if self._min_bytes is None:
            movable = ~self.frozen
            self._min_bytes = float(self.disk_bytes[movable].min()) if movable.any() else float("inf")
        return self._min_bytes

    def pair_within_budget(self, pa: int, hi: int, lo: int, pb: int) -> bool:
        """Both halves of a swap together within the budget."""
        if not self.budgeted:
            return True
        da = self.copy_change(pa, hi, lo)
        db = self.copy_change(pb, lo, hi) if pb >= 0 else 0
        nbytes = da * float(self.disk_bytes[pa]) + (db * float(self.disk_bytes[pb]) if pb >= 0 else 0.0)
        return bool(self._fits(np.asarray(da + db), np.asarray(nbytes)))

    # -- applying moves -------------------------------------------------------------------------
    def role_load(self, p: int, b: int) -> FloatArr:
        return self.L[p] if self.ldr[p] == b else self.F[p]

    def role_loads(self, parts: np.ndarray, holders: int | np.ndarray) -> FloatArr:
        """[len(parts), R]: :meth:`role_load` of many partitions at once, each on its holder (one broker for
        all, or one per partition)."""
        # a row take: about 40 % less than the [P, 2, R] fancy gather on large-hard
        return self._role_rows.take(2 * parts + (self.ldr[parts] == holders), axis=0)

    def move_replica(self, p: int, src: int, dst: int) -> None:
        delta = self.role_load(p, src)
        d = self.copy_change(p, src, dst)
        self.copies += d
        self.copied += d * float(self.disk_bytes[p])
        row = self.rep[p]
        row[np.nonzero(row == src)[0][0]] = dst
        if self.ldr[p] == src:
            self.ldr[p] = dst
            self.lcount[src] -= 1
            self.lcount[dst] += 1
        self.rcount[src] -= 1
        self.rcount[dst] += 1
        pot = self.L[p, NW_OUT]
        self.potential[src] -= pot
        self.potential[dst] += pot
        t = self.snap.topic_idx[p]
        self.topic_count[t, src] -= 1
        self.topic_count[t, dst] += 1
        self.load[src] -= delta
        self.load[dst] += delta
        if self._hot_part[p]:
            self._pin_cache = None
        self.version[src] += 1
        self.version[dst] += 1
        self._touched.add(src)
        self._touched.add(dst)
        self.members[src].discard(p)
        self.members[dst].add(p)
        self._members_arr.pop(src, None)
        self._members_arr.pop(dst, None)
        self._forget_roles(src)
        self._forget_roles(dst)
        self.replica_moves += 1
        self.changes += 1
        self.byte_budget -= float(self.disk_bytes[p])
        if self.journal is not None:
            self.journal.append((0, p, src, dst))

    def move_replicas(self, steps: Sequence[tuple[int, int, int]]) -> bool:
        """Make the replica moves ``(partition, from, to)`` in order, all or none: each is checked by
        :meth:`spread_ok` when its turn comes (an earlier move can change what a later one may do), and if one
        is refused those made are undone, leaving the state, the byte budget and the journal as they were."""
        mark = len(self.journal) if self.journal is not None else 0
        done: list[Change] = []
        for p, src, dst in steps:
            if not self.spread_ok(p, src, dst):
                journal, self.journal = self.journal, None
                for change in reversed(done):
                    self.undo(change)
                if journal is not None:
                    del journal[mark:]
                self.journal = journal
                return False
            self.move_replica(p, src, dst)
            done.append((0, p, src, dst))
        return True

    def undo(self, change: Change) -> None:
        """Reverse one journalled change (a leadership change from no leader is not undone here)."""
        kind, p, src, dst = change
        if kind == 0:
            self.move_replica(p, dst, src)  # leadership, if it came along, goes back with it
            self.byte_budget += 2 * float(self.disk_bytes[p])  # neither the move nor its undo spends any
        elif src >= 0:
            self.move_leadership(p, src)

    def move_leadership(self, p: int, dst: int) -> None:
        src = int(self.ldr[p])
        self._forget_roles(src)
        self._forget_roles(dst)
        if src >= 0:
            self.load[src] -= self.LF[p]
            self.lcount[src] -= 1
            self.version[src] += 1
            self._touched.add(src)
        self.load[dst] += self.LF[p]
        self.lcount[dst] += 1
        self.version[dst] += 1
        self._touched.add(dst)
        self.ldr[p] = dst
        if self._hot_part[p]:
            self._pin_cache = None
        self.leader_moves += 1
        self.changes += 1
        if self.journal is not None:
            self.journal.append((1, p, src, dst))

    def leaders_of(self, b: int) -> np.ndarray:
        m = self.members_arr(b)
        return m[self.ldr[m] == b]

    def members_arr(self, b: int) -> np.ndarray:
        """Partitions with a replica on ``b`` (in the set's order), read-only: kept until a move touches ``b``."""
        m = self._members_arr.get(b)
        if m is None:
            m = np.fromiter(self.members[b], dtype=np.int64, count=len(self.members[b]))
            m.flags.writeable = False
            self._members_arr[b] = m
        return m

    def member_roles(self, b: int) -> np.ndarray:
        """[len(members_arr(b)), R]: the load each of ``b``'s replicas puts on it (its leader's or follower's),
        read-only: kept until a replica or leadership move touches ``b``."""
        la = self._member_roles.get(b)
        if la is None:
            m = self.members_arr(b)
            la = self.role_loads(m, b)
            la.flags.writeable = False
            self._member_roles[b] = la
        return la

    def member_order(self, b: int, r: int, descending: bool) -> np.ndarray:
        """Positions in :meth:`member_roles` ``(b)`` by its load on ``r``, lightest or (``descending``) heaviest
        first, ties in member order (a stable sort); kept as long as those roles are. A broker is searched as
        a swap partner by many others between two moves that touch it."""
        la = self.member_roles(b)
        kept = self._member_order.setdefault(b, {})
        order = kept.get((r, descending))
        if order is None:
            order = np.argsort(-la[:, r] if descending else la[:, r], kind="stable")
            order.flags.writeable = False
            kept[(r, descending)] = order
        return order

    def _forget_roles(self, b: int) -> None:
        """Drop :meth:`member_roles` ``(b)`` and the orders drawn from it (a move changed them)."""
        self._member_roles.pop(b, None)
        self._member_order.pop(b, None)
