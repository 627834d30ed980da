"""``balanced``: load-aware, capacity-weighted, sticky assignment (our own).

Goal, in order: (1) minimise the largest ``load ÷ capacity`` over members; (2) move as few
partitions, and as little load, as that allows, within ``max_moves``; (3) respect every member's
subscriptions. Steps:

1. keep every partition with its previous owner (when that owner is still here and subscribed);
2. place the rest heaviest first onto the least-loaded eligible member (heap over the heavy head,
   vectorised water-fill over the light tail, see :mod:`.balanced_fill`);
3. improve locally by moves and swaps off the heaviest member (see :mod:`.balanced_improve`);
   moving a previously-owned partition is only done while the maximum is above
   ``(1 + tolerance) ×`` the lower bound and the budget lasts;
4. safety net: if ``range`` or ``paper`` (both cheap) would give a lower maximum than steps 1-3,
   run step 3 from their assignment instead, when that is allowed (no previous owners, or ours is
   above the tolerance and theirs fits the move budget). Greedy heaviest-first can lose to them
   with mixed subscriptions (a restricted member filled early with flexible partitions); with
   identical subscriptions this net has never been needed in our tests.

With no previous owners this is an LPT-style greedy plus local search; with owners it is a sticky
repair. ``protocol="cooperative"`` returns the same target plus a round one in which moving
partitions are first revoked.

Example:
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> from kafka_balancer.consumer.result import stats
    >>> p = problem_from_arrays(3, [9.0, 5.0, 4.0, 3.0, 3.0, 3.0, 1.0])
    >>> r = assign(p)
    >>> stats(p, r.owner).max_load, stats(p, r.owner).lower_bound
    (10.0, 9.333333333333334)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from kafka_balancer.consumer.assignors import paper
from kafka_balancer.consumer.assignors import range as range_
from kafka_balancer.consumer.assignors.balanced_fill import fill_by_class, fill_homogeneous
from kafka_balancer.consumer.assignors.balanced_improve import improve
from kafka_balancer.consumer.problem import AssignmentProblem, IntArray
from kafka_balancer.consumer.result import EAGER, AssignmentResult, lower_bound, normalised_loads, seq_sum

NAME = "balanced"
DEFAULT_TOLERANCE = 0.01


def assign(problem: AssignmentProblem, *, protocol: str = EAGER, max_moves: int | None = None,
           tolerance: float = DEFAULT_TOLERANCE, max_steps: int | None = None) -> AssignmentResult:
    """Assign with the ``balanced`` strategy; see the module docstring.

    Zero-load partitions still count a little (1e-6 of the mean load, or 1e-6 when everything is
    zero), so idle partitions are spread by count instead of piling onto one member.
    """
    if problem.n_partitions:
        mean = seq_sum(problem.load) / problem.n_partitions
        tiny = 1e-6 * (mean if mean > 0 else 1.0)
        problem = dataclasses.replace(problem, load=problem.load + tiny, _cache={})
    M = problem.n_members
    owner = problem.prev_owner.copy()
    free = np.flatnonzero(owner < 0)
    cur = np.bincount(owner[owner >= 0], weights=problem.load[owner >= 0], minlength=M).astype(np.float64)
    cls, members_of = problem.subscription_classes()
    if len(members_of) == 1:
        fill_homogeneous(problem.load, free, cur, problem.capacity, owner)
    else:
        fill_by_class(problem.load, free, cur, problem.capacity, owner, cls, members_of)
    owner = improve(problem, owner, budget=max_moves, tolerance=tolerance, max_steps=max_steps)
    owner = _safety_net(problem, owner, max_moves, tolerance, max_steps)
    return AssignmentResult.build(NAME, problem, owner, protocol)


def _moves(problem: AssignmentProblem, owner: IntArray) -> int:
    prev = problem.prev_owner
    return int(((prev >= 0) & (prev != owner)).sum())


def _safety_net(problem: AssignmentProblem, owner: IntArray, max_moves: int | None, tolerance: float,
                max_steps: int | None) -> IntArray:
    ours = float(normalised_loads(problem, owner).max())
    lb = lower_bound(problem)
    if ours <= lb * (1.0 + 1e-9):
        return owner  # optimal: nothing can beat it
    fresh = bool((problem.prev_owner < 0).all())
    if not fresh and ours <= (1.0 + tolerance) * lb:
        return owner
    for alt in (range_.assign, paper.assign):
        start = alt(problem).owner
        if float(normalised_loads(problem, start).max()) >= ours:
            continue
        if max_moves is not None and _moves(problem, start) > max_moves:
            continue
        cand = improve(problem, start, budget=max_moves, tolerance=tolerance, max_steps=max_steps)
        mx = float(normalised_loads(problem, cand).max())
        if mx < ours:
            owner, ours = cand, mx
    return owner
