"""Seed 001's formulas (1)-(6) against values computed by hand."""

import math

import numpy as np

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.metrics import evaluate, resource_metrics


def test_formulas_by_hand() -> None:
    util = np.array([0.1, 0.2, 0.3, 0.4])
    m = resource_metrics(util, theta=0.35, eps=0.1)
    assert math.isclose(m.mean, 0.25)
    assert np.allclose(m.share, [0.1, 0.2, 0.3, 0.4])  # D(j) = B(j) / ΣB, ΣB = 1
    assert np.allclose(m.gamma, [0.6, 0.2, 0.2, 0.6])  # |B - 0.25| / 0.25
    # σ = sqrt(mean((D - 1/4)^2)) = sqrt((0.0225 + 0.0025) * 2 / 4)
    assert math.isclose(m.sigma, math.sqrt(0.0125))
    assert math.isclose(m.eta, 0.025)
    assert m.over_theta == 1 and math.isclose(m.max_util, 0.4)


def test_sigma_le_eta_is_cv_le_eps() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        util = rng.uniform(0.05, 0.9, size=rng.integers(2, 30))
        m = resource_metrics(util, 0.8, 0.1)
        cv = util.std() / util.mean()
        assert math.isclose(m.sigma * len(util), cv, rel_tol=1e-9)
        assert (m.sigma <= m.eta) == (cv <= 0.1)


def test_roles_and_dead_brokers() -> None:
    # one partition on brokers 0 (leader) and 1; broker 2 dead and empty
    snap = Snapshot.build(
        broker_ids=[0, 1, 2],
        capacity=np.full((3, 4), 10.0),
        topics=["t"],
        topic_idx=[0],
        partition=[0],
        replicas=[[0, 1]],
        leader=[0],
        alive=[True, True, False],
        leader_load=[[4.0, 5.0, 2.0, 6.0]],
        follower_load=[[1.0, 5.0, 2.0, 0.0]],
    )
    m = evaluate(snap)
    assert m.n_live == 2 and math.isclose(m.eta, 0.05)
    assert np.allclose(m.resources["cpu"].util, [0.4, 0.1])
    assert np.allclose(m.resources["disk"].util, [0.5, 0.5])
    assert np.allclose(m.resources["nw_out"].util, [0.6, 0.0])
    assert m.resources["disk"].sigma == 0.0
