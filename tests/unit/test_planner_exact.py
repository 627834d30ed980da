"""The exact model, the spread LP proof, compaction and polishing, checked against brute force and the presets."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from kafka_balancer.model.snapshot import DISK, Snapshot
from kafka_balancer.planner import bounds, plan
from kafka_balancer.planner.exact import NODE_LIMIT, exact_bound
from kafka_balancer.planner.metrics import evaluate
from kafka_balancer.sim.cluster import PRESETS, ClusterSpec, generate

TINY = ClusterSpec(
    brokers=3, brokers_per_host=1, racks=0, topics=2, partitions=5, rf=(2,), rf_weights=(1.0,), name="tiny"
)


def brute_force_min_bytes(snap: Snapshot, theta: float, eps: float) -> float | None:
    """The fewest bytes any balanced assignment moves, by trying every one (tiny clusters only)."""
    n = snap.n_brokers
    disk = np.maximum(snap.leader_load[:, DISK], snap.follower_load[:, DISK])
    options = []
    for p in range(snap.n_partitions):
        rf = int(snap.rf[p])
        rows = []
        for brokers in itertools.combinations(range(n), rf):
            for lead in brokers:
                old = {int(b) for b in snap.replicas[p] if b >= 0}
                cost = float(disk[p]) * len(set(brokers) - old)
                rows.append((list(brokers), lead, cost))
        options.append(rows)
    best: float | None = None
    for combo in itertools.product(*options):
        cost = sum(c for _, _, c in combo)
        if best is not None and cost >= best:
            continue
        rep = np.array([r for r, _, _ in combo], dtype=snap.replicas.dtype)
        ldr = np.array([lead for _, lead, _ in combo], dtype=snap.leader.dtype)
        if evaluate(snap, theta, eps, replicas=rep, leader=ldr).balanced():
            best = cost
    return best


# (partitions, ε, seed): cases that need replica moves, one that needs only leadership, and ones with no
# balanced state at all ((5, 0.1, 0) and (5, 0.1, 1): the model must prove that too)
BRUTE_CASES = [(6, 0.15, 1), (6, 0.15, 5), (6, 0.15, 7), (6, 0.1, 2), (6, 0.15, 4), (5, 0.1, 0), (5, 0.1, 1)]


@pytest.mark.parametrize(("partitions", "eps", "seed"), BRUTE_CASES)
def test_exact_model_matches_brute_force(partitions: int, eps: float, seed: int) -> None:
    snap = generate(replace(TINY, partitions=partitions), seed=seed)
    theta = 0.95
    truth = brute_force_min_bytes(snap, theta, eps)
    ex = exact_bound(snap, theta, eps, node_limit=10_000)
    if truth is None:
        assert ex.infeasible
        return
    assert ex.optimal and ex.lower is not None
    assert ex.lower == pytest.approx(truth, rel=1e-6, abs=1.0)
    result = plan(snap, theta, eps, polish_share=0, exact_nodes=NODE_LIMIT, goals="capacity,distribution")
    assert result.after.balanced()
    assert result.moved_bytes == pytest.approx(truth, rel=1e-6, abs=1.0)  # the plan is the cheapest there is


def test_spread_lp_proves_the_heterogeneous_rack_layout_infeasible() -> None:
    snap = generate(PRESETS["hetero"], seed=0)
    proofs = bounds.spread_lp_infeasibility(snap, 0.8, 0.1)
    assert {p.split(" utilisation profile")[0] for p in proofs} == {
        "rack spread: no disk",
        "rack spread: no nw_in",
    }
    assert bounds.rack_infeasibility(snap, 0.1) == []  # the equal-capacity argument alone cannot see it
    result = plan(snap)
    assert result.infeasible and not result.after.balanced()
    for seed in (1, 2):  # and it does not cry wolf where balance is reached
        assert bounds.spread_lp_infeasibility(generate(PRESETS["hetero"], seed=seed), 0.8, 0.1) == []
    assert bounds.spread_lp_infeasibility(generate(PRESETS["racks48"], seed=0), 0.8, 0.1) == []


@pytest.mark.parametrize("share", [0.0, 1.25, 1.5])
def test_polish_stays_within_its_byte_allowance_and_keeps_balance(share: float) -> None:
    snap = generate(PRESETS["racks48"], seed=1)
    result = plan(snap, polish_share=share, goals="capacity,distribution")  # count goals spend bytes of their own
    assert result.after.balanced()
    if share:
        assert result.moved_bytes <= share * result.moved_bytes_lower_bound * (1 + 1e-9)


def test_polish_lowers_sigma_on_the_paper_testbed() -> None:
    snap = generate(PRESETS["paper"], seed=21)  # a start as skewed as the paper's (σ within 25 % of it)
    plain = plan(snap, polish_share=0)
    polished = plan(snap, polish_share=1.5)
    assert polished.after.balanced() and plain.after.balanced()
    total = {k: sum(m.sigma for m in r.after.resources.values()) for k, r in (("plain", plain), ("pol", polished))}
    assert total["pol"] < total["plain"]


def test_exact_model_is_skipped_on_large_clusters() -> None:
    snap = generate(replace(PRESETS["racks48"], partitions=400), seed=0)
    ex = exact_bound(snap, 0.8, 0.1)
    assert ex.lower is None and not ex.optimal and not ex.infeasible
