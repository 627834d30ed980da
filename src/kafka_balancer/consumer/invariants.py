"""One invariant checker shared by every assignor, test and adapter.

Rules for a final (target) assignment:
  1. every partition is assigned to exactly one member;
  2. that member subscribes to the partition's topic;
  3. member positions are in range.
Rules for a cooperative round one:
  4. a partition is either given to its final owner or to nobody;
  5. it is withheld only when it moves away from a live previous owner, so that no partition is
     ever owned by two members at once.

Example:
    >>> from kafka_balancer.consumer.problem import problem_from_arrays
    >>> import numpy as np
    >>> p = problem_from_arrays(2, [1.0, 2.0])
    >>> violations(p, np.array([0, 1]))
    []
    >>> violations(p, np.array([0, 5]))
    ['partition t-1 assigned to member position 5, out of range [0, 2)']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kafka_balancer.consumer.problem import AssignmentProblem, IntArray
from kafka_balancer.consumer.result import AssignmentResult

_MAX_REPORTED = 10


def violations(problem: AssignmentProblem, owner: IntArray, round1: IntArray | None = None) -> list[str]:
    """Every broken rule, as readable lines (at most a few per rule)."""
    out: list[str] = []
    P, M = problem.n_partitions, problem.n_members
    owner = np.asarray(owner)
    if owner.shape != (P,):
        return [f"owner array has shape {owner.shape}, expected ({P},)"]
    bad = np.flatnonzero((owner < -1) | (owner >= M))
    for p in bad[:_MAX_REPORTED].tolist():
        t, n = problem.tp(p)
        out.append(f"partition {t}-{n} assigned to member position {int(owner[p])}, out of range [0, {M})")
    unassigned = np.flatnonzero(owner == -1)
    for p in unassigned[:_MAX_REPORTED].tolist():
        t, n = problem.tp(p)
        out.append(f"partition {t}-{n} is not assigned to any member")
    ok = (owner >= 0) & (owner < M)
    not_sub = np.flatnonzero(ok & ~problem.subscribed[np.where(ok, owner, 0), problem.topic_idx])
    for p in not_sub[:_MAX_REPORTED].tolist():
        t, n = problem.tp(p)
        who = problem.member_ids[int(owner[p])]
        out.append(f"partition {t}-{n} assigned to {who!r}, which does not subscribe to {t!r}")
    if round1 is not None:
        round1 = np.asarray(round1)
        if round1.shape != (P,):
            return [*out, f"round1 array has shape {round1.shape}, expected ({P},)"]
        wrong = np.flatnonzero((round1 != -1) & (round1 != owner))
        for p in wrong[:_MAX_REPORTED].tolist():
            t, n = problem.tp(p)
            out.append(f"round one gives {t}-{n} to position {int(round1[p])}, "
                       f"not its final owner {int(owner[p])}")
        prev = problem.prev_owner
        double = np.flatnonzero((round1 >= 0) & (prev >= 0) & (prev != round1))
        for p in double[:_MAX_REPORTED].tolist():
            t, n = problem.tp(p)
            who = problem.member_ids[int(prev[p])]
            out.append(f"round one gives {t}-{n} to a new owner while {who!r} still owns it")
        withheld = np.flatnonzero((round1 == -1) & ~((prev >= 0) & (prev != owner)))
        for p in withheld[:_MAX_REPORTED].tolist():
            t, n = problem.tp(p)
            out.append(f"round one withholds {t}-{n} although it does not change owner")
    return out


def check_result(problem: AssignmentProblem, result: AssignmentResult) -> None:
    """Raise ``AssertionError`` listing every violation of ``result`` (used by tests and benches)."""
    found = violations(problem, result.owner, result.round1 if result.protocol == "cooperative" else None)
    if found:
        raise AssertionError(f"{result.strategy}: " + "; ".join(found))


def owner_from_lists(problem: AssignmentProblem, lists: Mapping[str, Sequence[Sequence[Any]]]) -> IntArray:
    """Convert ``{member: [[topic, partition], ...]}`` into an owner array, checking "at most once".

    A partition listed for two members, an unknown member or an unknown partition raises
    ``AssertionError``; partitions listed for nobody get ``-1`` (then ``violations`` reports them).
    """
    pairs = zip(problem.topic_idx.tolist(), problem.partition.tolist(), strict=True)
    pos = {(problem.topics[int(t)], int(n)): i for i, (t, n) in enumerate(pairs)}
    mpos = {m: i for i, m in enumerate(problem.member_ids)}
    owner = np.full(problem.n_partitions, -1, dtype=np.int64)
    for mid, tps in lists.items():
        if mid not in mpos:
            raise AssertionError(f"assignment names unknown member {mid!r}")
        for tp in tps:
            key = (str(tp[0]), int(tp[1]))
            if key not in pos:
                raise AssertionError(f"assignment gives unknown partition {key[0]}-{key[1]} to {mid!r}")
            p = pos[key]
            if owner[p] >= 0:
                raise AssertionError(f"partition {key[0]}-{key[1]} assigned twice "
                                     f"({problem.member_ids[int(owner[p])]!r} and {mid!r})")
            owner[p] = mpos[mid]
    return owner
