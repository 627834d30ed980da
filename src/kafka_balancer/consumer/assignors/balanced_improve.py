"""Local improvement: lower the heaviest member by one move or one swap at a time.

At each step take the member ``a`` with the highest load ÷ capacity that is not known to be stuck,
and for each subscription class among its partitions the least-loaded eligible member ``b``. Try
every single move ``a → b`` and every swap ``(p in a) ↔ (q in b)`` (vectorised with a sorted
search for the partner closest to the ideal transfer), keep the one that lowers
``max(load_a, load_b)`` most, breaking ties by fewer moves and then less moved load.

A step's *cost* is the change in the number of partitions away from their previous owner: moving
a partition off its previous owner costs 1, moving it back costs -1, moving a partition that had
no previous owner (or already moved) costs 0. Costly steps are only taken while the maximum is
above ``(1 + tolerance) × lower bound`` and the move budget lasts; free steps are always taken
while they help by more than ``min_gain``.

Example:
    >>> import numpy as np
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> p = problem_from_arrays(2, [4.0, 3.0, 2.0, 1.0])
    >>> owner = np.array([0, 0, 0, 1])
    >>> improve(p, owner, budget=None, tolerance=0.0).tolist()
    [1, 0, 0, 1]
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem, FloatArray, IntArray
from kafka_balancer.consumer.result import lower_bound


class _Best:
    __slots__ = ("b", "cost", "gain", "moved_load", "p", "q")

    def __init__(self) -> None:
        self.gain = 0.0
        self.cost = 0
        self.moved_load = 0.0
        self.p = -1
        self.q = -1
        self.b = -1

    def offer(self, gain: float, cost: int, moved_load: float, p: int, q: int, b: int) -> None:
        if (gain, -cost, -moved_load) > (self.gain, -self.cost, -self.moved_load):
            self.gain, self.cost, self.moved_load, self.p, self.q, self.b = gain, cost, moved_load, p, q, b


def _pick(gains: FloatArray, costs: IntArray, loads: FloatArray, allow_cost: bool,
          max_cost: float = np.inf) -> int:
    """Index of the best candidate (highest gain, then lowest cost, then lowest load); -1 if none.

    A costly candidate needs ``allow_cost`` and a cost within ``max_cost`` (what is left of the
    budget: a swap can cost 2 when 1 move is left)."""
    ok = gains > 0
    ok &= costs <= (max_cost if allow_cost else 0)
    if not ok.any():
        return -1
    idx = np.flatnonzero(ok)
    g = gains[idx]
    top = g.max()
    near = idx[g >= top - 1e-12 * max(1.0, abs(top))]
    if near.size > 1:
        order = np.lexsort((loads[near], costs[near]))
        return int(near[order[0]])
    return int(near[0])


def improve(problem: AssignmentProblem, owner: IntArray, *, budget: int | None, tolerance: float,
            max_steps: int | None = None, min_gain_rel: float = 1e-4) -> IntArray:
    """Return an improved copy of ``owner`` (never mutates the argument)."""
    owner = owner.copy()
    M, P = problem.n_members, problem.n_partitions
    if M < 2 or P == 0:
        return owner
    load = problem.load
    cap = problem.capacity
    prev = problem.prev_owner
    cls, members_of = problem.subscription_classes()
    homogeneous = len(members_of) == 1
    L = np.bincount(owner, weights=load, minlength=M).astype(np.float64)
    lb = lower_bound(problem)
    min_gain = min_gain_rel * lb
    stop_costly = (1.0 + tolerance) * lb
    remaining = np.inf if budget is None else float(budget - int(((prev >= 0) & (prev != owner)).sum()))
    order = np.argsort(owner, kind="stable")
    splits = np.cumsum(np.bincount(owner, minlength=M))[:-1]
    parts: list[IntArray] = list(np.split(order, splits))
    stuck = np.zeros(M, dtype=bool)
    steps = 0
    limit = max_steps if max_steps is not None else 8 * M + 2000
    while steps < limit:
        norm = L / cap
        masked = np.where(stuck, -np.inf, norm)
        a = int(np.argmax(masked))
        na = float(norm[a])
        if not np.isfinite(masked[a]) or na <= lb * (1.0 + 1e-9):
            break
        # costly steps only while they lower the group's maximum, which is what they are paid for
        allow_cost = na > stop_costly and remaining > 0 and na >= float(norm.max()) * (1.0 - 1e-12)
        pa = parts[a]
        if pa.size == 0:
            stuck[a] = True
            continue
        best = _Best()
        class_ids = [0] if homogeneous else np.unique(cls[pa]).tolist()
        for k in class_ids:
            mem = members_of[k]
            cand_norm = norm[mem].copy()
            cand_norm[mem == a] = np.inf
            if not np.isfinite(cand_norm).any():
                continue
            b = int(mem[int(np.argmin(cand_norm))])
            pk = pa if homogeneous else pa[cls[pa] == k]
            lp = load[pk]
            ca, cb = cap[a], cap[b]
            La, Lb = L[a], L[b]
            # single moves
            new_max = np.maximum((La - lp) / ca, (Lb + lp) / cb)
            gains = na - new_max
            costs = (prev[pk] == a).astype(np.int64) - (prev[pk] == b).astype(np.int64)
            i = _pick(gains, costs, lp, allow_cost, remaining)
            if i >= 0:
                best.offer(float(gains[i]), int(costs[i]), float(lp[i]), int(pk[i]), -1, b)
            # swaps: q in b whose topic a may take
            pb = parts[b]
            if pb.size == 0:
                continue
            if not homogeneous:
                pb = pb[problem.subscribed[a, problem.topic_idx[pb]]]
                if pb.size == 0:
                    continue
            lq = load[pb]
            ideal = (La * cb - Lb * ca) / (ca + cb)
            srt = np.argsort(lp, kind="stable")
            lps = lp[srt]
            want = lq + ideal
            pos = np.searchsorted(lps, want)
            for off in (0, -1):
                j = np.clip(pos + off, 0, lps.size - 1)
                d = lps[j] - lq
                nm = np.maximum((La - d) / ca, (Lb + d) / cb)
                g = np.where(d > 0, na - nm, -np.inf)
                pi = pk[srt[j]]
                c = ((prev[pi] == a).astype(np.int64) - (prev[pi] == b).astype(np.int64)
                     + (prev[pb] == b).astype(np.int64) - (prev[pb] == a).astype(np.int64))
                i = _pick(g, c, lps[j] + lq, allow_cost, remaining)
                if i >= 0:
                    best.offer(float(g[i]), int(c[i]), float(lps[j][i] + lq[i]), int(pi[i]), int(pb[i]), b)
        if best.p < 0 or best.gain <= (0.0 if best.cost > 0 else min_gain):
            stuck[a] = True
            continue
        p, q, b = best.p, best.q, best.b
        owner[p] = b
        L[a] -= load[p]
        L[b] += load[p]
        parts[a] = parts[a][parts[a] != p]
        parts[b] = np.append(parts[b], p)
        if q >= 0:
            owner[q] = a
            L[b] -= load[q]
            L[a] += load[q]
            parts[b] = parts[b][parts[b] != q]
            parts[a] = np.append(parts[a], q)
        remaining -= best.cost
        stuck[b] = False
        steps += 1
    return owner
