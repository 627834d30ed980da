"""The service's planner modes on the live model (pure): an evacuation heals, a removal balances too."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_balancer.serve.modes import propose
from kafka_balancer.sim.cluster import PRESETS, generate


def test_evacuation_copies_only_the_dead_brokers_replicas() -> None:
    snap = generate(PRESETS["dead-broker"], seed=2)
    dead = [int(b) for b in snap.broker_ids[~snap.alive]]
    p = propose("evacuate", snap, 0.8, 0.1, brokers=dead)
    assert p.mode == "evacuate" and p.extra["constraints"] is None
    pos = snap.broker_pos()
    on_dead = np.isin(snap.replicas, [pos[b] for b in dead])
    disk = np.maximum(snap.leader_load[:, 1], snap.follower_load[:, 1])
    assert p.extra["moved_bytes_model"] == pytest.approx(float((on_dead.sum(axis=1) * disk).sum()))
    assert all(not set(dead) & set(e.replicas) for e in p.plan.entries)
    assert any("healing only" in n for n in p.notes)


def test_removal_of_a_live_broker_balances_the_rest_too() -> None:
    snap = generate(PRESETS["racks48"], seed=0)
    victim = int(snap.broker_ids[5])
    p = propose("remove_brokers", snap, 0.8, 0.1, brokers=[victim])
    assert p.extra["constraints"]["remove_brokers"] == [victim]
    assert all(victim not in e.replicas for e in p.plan.entries)
    moved_off = int(np.isin(snap.replicas, [5]).sum())
    assert p.extra["replica_moves"] > moved_off  # more than the removal alone: the rest is balanced as well
