"""The broker-side assignor (Java) against the Python reference ``balanced`` on the shared seeded groups.

Both must pass the one invariant checker and keep the same stickiness budget (moves off previous
owners <= max_moves). Max load ÷ lower bound: the plugin is never worse than the reference by more
than 1 %, and the two are within 1 % of each other in at least 98 % of the groups. (Measured: 138 of
140; in the other 2, sticky groups with a budget of 1 and 3 moves, the plugin ends 2-4 % *better*:
a near-tie in the placement step sends one light partition elsewhere and the budget-limited search
then takes another path.) All groups run through one JVM.
"""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.consumer.assignors import run
from kafka_balancer.consumer.invariants import owner_from_lists, violations
from kafka_balancer.consumer.problem import AssignmentProblem, IntArray, problem_from_arrays
from kafka_balancer.consumer.result import stats
from kafka_balancer.consumer.workloads import random_problem, zipf_loads
from kafka_balancer.errors import InputError
from kafka_balancer.jvm.assignor_harness import problem_doc, run_batch

BUDGETS = (None, 0, 1, 3, 10)


def _plugin_or_skip() -> None:
    from kafka_balancer.jvm.assignor_harness import classpath

    try:
        classpath()
    except InputError as exc:
        pytest.fail(f"{exc.message} ({exc.hint})")


def _cases() -> list[tuple[str, object, int | None]]:
    cases: list[tuple[str, object, int | None]] = []
    for seed in range(60):
        for mixed in (False, True):
            p = random_problem(seed, mixed=mixed)
            cases.append((f"seed{seed}-{'mixed' if mixed else 'same'}", p, BUDGETS[seed % len(BUDGETS)]))
    for seed in range(20):  # seed 000's shape: 6 consumers, Zipf-skewed partitions, sticky rounds
        rng = np.random.default_rng(seed)
        loads = zipf_loads(24, 1.0, seed=seed)
        prev = rng.integers(-1, 6, size=24)
        cases.append((f"zipf{seed}", problem_from_arrays(6, loads, prev_owner=prev), BUDGETS[seed % len(BUDGETS)]))
    return cases


def test_plugin_matches_reference_on_seeded_groups() -> None:
    _plugin_or_skip()
    cases = _cases()
    docs = [problem_doc(p, max_moves=b, doc_id=name) for name, p, b in cases]  # type: ignore[arg-type]
    answers = run_batch(docs)
    worse, apart = [], []
    for (name, problem, budget), ans in zip(cases, answers, strict=True):
        assert ans["id"] == name
        py = run("balanced", problem, max_moves=budget).owner  # type: ignore[arg-type]
        jv = owner_from_lists(problem, ans["assignment"])  # type: ignore[arg-type]
        assert violations(problem, py) == [], name  # type: ignore[arg-type]
        assert violations(problem, jv) == [], name  # type: ignore[arg-type]
        sp, sj = stats(problem, py), stats(problem, jv)  # type: ignore[arg-type]
        if budget is not None:
            assert sp.moved <= budget, (name, "python", sp.moved, budget)
            assert sj.moved <= budget, (name, "java", sj.moved, budget)
        row = (name, budget, round(sp.ratio, 4), round(sj.ratio, 4))
        if sj.ratio > 1.01 * sp.ratio:
            worse.append(row)
        if abs(sj.ratio - sp.ratio) > 0.01 * sp.ratio:
            apart.append(row)
    assert not worse, f"the plugin is > 1 % worse than the reference in {len(worse)} groups: {worse[:10]}"
    assert len(apart) <= 0.02 * len(cases), f"{len(apart)} of {len(cases)} groups differ by > 1 %: {apart[:10]}"


def test_plugin_falls_back_to_counts_when_anything_fails() -> None:
    """A load source that throws: the plugin still answers, with a valid count-balanced assignment."""
    _plugin_or_skip()
    problems = [random_problem(seed, mixed=False, capacities=False) for seed in range(10)]
    docs = [{**problem_doc(p, doc_id=i), "fail_loads": True} for i, p in enumerate(problems)]
    for problem, ans in zip(problems, run_batch(docs), strict=True):
        owner = owner_from_lists(problem, ans["assignment"])
        assert violations(problem, owner) == []
        assert stats(problem, owner).count_spread <= 1


def _rack_local(p: AssignmentProblem, owner: IntArray, racks: dict[str, str],
                prack: dict[tuple[str, int], list[str]]) -> float:
    return float(np.mean([racks[p.member_ids[int(owner[i])]] in prack[p.tp(i)] for i in range(p.n_partitions)]))


def test_plugin_prefers_rack_local_members_without_losing_balance() -> None:
    """Members and partitions on 3 racks: with racks given, most partitions land on a member in one of
    their replica racks, and the max load stays within the tolerance of the rack-blind result."""
    _plugin_or_skip()
    docs, problems = [], []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        p = problem_from_arrays(6, rng.uniform(0.5, 1.5, size=60))
        racks = {mid: f"r{i % 3}" for i, mid in enumerate(p.member_ids)}
        prack = {p.tp(i): [f"r{i % 3}", f"r{(i + 1) % 3}"] for i in range(p.n_partitions)}
        problems.append((p, racks, prack))
        docs.append(problem_doc(p, racks=racks, partition_racks=prack, doc_id=f"racks{seed}"))
        docs.append(problem_doc(p, doc_id=f"blind{seed}"))
    answers = run_batch(docs)
    aware_share, blind_share = [], []
    for k, (p, racks, prack) in enumerate(problems):
        aware = owner_from_lists(p, answers[2 * k]["assignment"])
        blind = owner_from_lists(p, answers[2 * k + 1]["assignment"])
        assert violations(p, aware) == []

        aware_share.append(_rack_local(p, aware, racks, prack))
        blind_share.append(_rack_local(p, blind, racks, prack))
        assert stats(p, aware).ratio <= stats(p, blind).ratio * 1.02
    # the local search ignores racks, so some placements move off-rack: measured 0.87-0.97 per group
    # (rack-blind: 0.58-0.78)
    assert min(aware_share) >= 0.8 and np.mean(aware_share) >= 0.9 > max(blind_share), (aware_share, blind_share)
