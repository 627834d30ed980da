"""Hand-built planner states where only disk carries load, for the end-of-plan passes' tests."""

from __future__ import annotations

import numpy as np

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner.state import State

GB = 1e9


def disk_only_state(sizes_gb: list[float], holders: list[int], n: int) -> State:
    """``n`` brokers of 1 TB; one single-replica partition per size, on its holder. The other resources
    have a target of 0 and never count."""
    lead = np.array([[0.0, s * GB, 0.0, 0.0] for s in sizes_gb])
    snap = Snapshot.build(
        broker_ids=list(range(n)), capacity=np.tile([100.0, 1e12, 1e8, 1e8], (n, 1)), topics=["t"],
        topic_idx=[0] * len(sizes_gb), partition=list(range(len(sizes_gb))), replicas=[[b] for b in holders],
        leader=holders, leader_load=lead, follower_load=lead,
    )
    return State(snap, 0.8, 0.1, 0.97)
