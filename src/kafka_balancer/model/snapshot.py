"""The load model of one cluster: brokers, partitions and per-role loads, held in numpy arrays.

Brokers and partitions are addressed by *position* (0..N-1, 0..P-1), not by Kafka id, so that every
per-broker quantity is a plain array. ``replicas`` holds broker positions, padded with -1 up to the
largest replication factor.

Example::

    >>> import numpy as np
    >>> snap = Snapshot.build(
    ...     broker_ids=[0, 1], capacity=np.full((2, 4), 100.0),
    ...     topics=["t"], topic_idx=[0], partition=[0], replicas=[[0, 1]], leader=[0],
    ...     leader_load=[[2.0, 10.0, 1.0, 3.0]], follower_load=[[1.0, 10.0, 1.0, 0.0]])
    >>> broker_loads(snap)[:, 0].tolist()   # cpu: leader 2.0 on broker 0, follower 1.0 on broker 1
    [2.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

RESOURCES: tuple[str, ...] = ("cpu", "disk", "nw_in", "nw_out")
CPU, DISK, NW_IN, NW_OUT = 0, 1, 2, 3
NR = len(RESOURCES)

FloatArr = npt.NDArray[np.float64]
IntArr = npt.NDArray[np.int32]
Int64Arr = npt.NDArray[np.int64]
BoolArr = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class Snapshot:
    """An immutable cluster snapshot. Use :meth:`build` or ``snapshot_io`` to make one."""

    broker_ids: Int64Arr
    rack_idx: IntArr  # -1 = no rack
    rack_names: tuple[str, ...]
    host_idx: IntArr  # -1 = unknown host
    host_names: tuple[str, ...]
    alive: BoolArr
    capacity: FloatArr  # [N, 4]
    topics: tuple[str, ...]
    topic_idx: IntArr  # [P]
    partition: IntArr  # [P]
    replicas: IntArr  # [P, R] broker positions, -1 padded
    rf: IntArr  # [P]
    leader: IntArr  # [P] broker position, -1 = no leader (offline)
    leader_load: FloatArr  # [P, 4]
    follower_load: FloatArr  # [P, 4]
    name: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_brokers(self) -> int:
        return int(self.broker_ids.shape[0])

    @property
    def n_partitions(self) -> int:
        return int(self.topic_idx.shape[0])

    @property
    def n_replicas(self) -> int:
        return int(self.rf.sum())

    def broker_pos(self) -> dict[int, int]:
        """Kafka broker id -> position."""
        return {int(b): i for i, b in enumerate(self.broker_ids)}

    def partition_label(self, p: int) -> str:
        return f"{self.topics[int(self.topic_idx[p])]}-{int(self.partition[p])}"

    def with_assignment(self, replicas: IntArr, leader: IntArr) -> Snapshot:
        """A copy with another replica assignment (same shapes); arrays are not shared."""
        return replace(self, replicas=replicas.copy(), leader=leader.copy())

    @staticmethod
    def build(
        *,
        broker_ids: Sequence[int] | Int64Arr,
        capacity: Any,
        topics: Sequence[str],
        topic_idx: Any,
        partition: Any,
        replicas: Any,
        leader: Any,
        leader_load: Any,
        follower_load: Any,
        racks: Sequence[str | None] | None = None,
        hosts: Sequence[str | None] | None = None,
        alive: Any = None,
        name: str | None = None,
    ) -> Snapshot:
        """Build from plain sequences; ``replicas`` is a list of broker *positions* per partition."""
        n = len(broker_ids)
        rack_idx, rack_names = _intern(racks if racks is not None else [None] * n)
        host_idx, host_names = _intern(hosts if hosts is not None else [None] * n)
        if isinstance(replicas, np.ndarray):
            rep = replicas.astype(np.int32)
        else:
            width = max((len(r) for r in replicas), default=1)
            rep = np.full((len(replicas), width), -1, dtype=np.int32)
            for i, r in enumerate(replicas):
                rep[i, : len(r)] = r
        return Snapshot(
            broker_ids=np.asarray(broker_ids, dtype=np.int64),
            rack_idx=rack_idx,
            rack_names=rack_names,
            host_idx=host_idx,
            host_names=host_names,
            alive=np.ones(n, dtype=bool) if alive is None else np.asarray(alive, dtype=bool),
            capacity=np.asarray(capacity, dtype=np.float64).reshape(n, NR),
            topics=tuple(topics),
            topic_idx=np.asarray(topic_idx, dtype=np.int32),
            partition=np.asarray(partition, dtype=np.int32),
            replicas=rep,
            rf=(rep >= 0).sum(axis=1).astype(np.int32),
            leader=np.asarray(leader, dtype=np.int32),
            leader_load=np.asarray(leader_load, dtype=np.float64).reshape(-1, NR),
            follower_load=np.asarray(follower_load, dtype=np.float64).reshape(-1, NR),
            name=name,
        )


def _intern(values: Sequence[str | None]) -> tuple[IntArr, tuple[str, ...]]:
    names: dict[str, int] = {}
    idx = np.empty(len(values), dtype=np.int32)
    for i, v in enumerate(values):
        idx[i] = -1 if v is None else names.setdefault(v, len(names))
    return idx, tuple(names)


def broker_loads(snap: Snapshot, replicas: IntArr | None = None, leader: IntArr | None = None) -> FloatArr:
    """Load per broker and resource, [N, 4]: the sum over its replicas of the load of their role.

    Another assignment (same shapes) may be passed to evaluate it against the same loads.
    """
    rep = snap.replicas if replicas is None else replicas
    ldr = snap.leader if leader is None else leader
    n = snap.n_brokers
    out = np.zeros((n, NR), dtype=np.float64)
    has_leader = ldr >= 0
    for r in range(NR):
        out[:, r] += np.bincount(ldr[has_leader], weights=snap.leader_load[has_leader, r], minlength=n)
    follower = (rep >= 0) & (rep != ldr[:, None])
    rows, cols = np.nonzero(follower)
    brokers = rep[rows, cols]
    for r in range(NR):
        out[:, r] += np.bincount(brokers, weights=snap.follower_load[rows, r], minlength=n)
    return out


def total_load(snap: Snapshot, rows: np.ndarray | None = None) -> FloatArr:
    """Cluster load per resource, [4]: each partition's leader load plus ``rf − 1`` follower loads
    (all partitions, or those selected by ``rows``, a mask or index array)."""
    lead, fol, rf = snap.leader_load, snap.follower_load, snap.rf
    if rows is not None:
        lead, fol, rf = lead[rows], fol[rows], rf[rows]
    return (lead + fol * (rf.astype(np.int64) - 1)[:, None]).sum(axis=0)


def on_live(snap: Snapshot, replicas: IntArr | None = None) -> np.ndarray:
    """[P, R]: slots holding a replica on a live broker (of the snapshot's or another assignment)."""
    rep = snap.replicas if replicas is None else replicas
    return (rep >= 0) & snap.alive[np.maximum(rep, 0)]


def replica_counts(snap: Snapshot, replicas: IntArr | None = None) -> Int64Arr:
    rep = snap.replicas if replicas is None else replicas
    flat = rep[rep >= 0]
    return np.bincount(flat, minlength=snap.n_brokers).astype(np.int64)


class Derived:
    """What the planner's steps derive from one snapshot, computed once on first use and shared: the
    exact model, the bounds, the metrics, the working state and the infeasibility proofs all read it
    instead of recomputing totals, live slots and per-broker loads. Read-only: never modify the arrays.

    Example::

        >>> import numpy as np
        >>> snap = Snapshot.build(
        ...     broker_ids=[0, 1], capacity=np.full((2, 4), 100.0),
        ...     topics=["t"], topic_idx=[0], partition=[0], replicas=[[0, 1]], leader=[0],
        ...     leader_load=[[2.0, 10.0, 1.0, 3.0]], follower_load=[[1.0, 10.0, 1.0, 0.0]])
        >>> Derived(snap).totals.tolist()
        [3.0, 20.0, 2.0, 3.0]
    """

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap

    @cached_property
    def loads(self) -> FloatArr:
        return broker_loads(self.snap)

    @cached_property
    def totals(self) -> FloatArr:
        return total_load(self.snap)

    @cached_property
    def live_slot(self) -> BoolArr:
        return on_live(self.snap)

    @cached_property
    def has_live(self) -> BoolArr:
        return np.asarray(self.live_slot.any(axis=1))

    @cached_property
    def disk_bytes(self) -> FloatArr:
        return np.maximum(self.snap.leader_load[:, DISK], self.snap.follower_load[:, DISK])

    @cached_property
    def rows_by_broker(self) -> list[Int64Arr]:
        """Partitions with a replica on each broker position."""
        rep = self.snap.replicas
        rows, cols = np.nonzero(rep >= 0)
        brokers = rep[rows, cols]
        order = np.argsort(brokers, kind="stable")
        cuts = np.searchsorted(brokers[order], np.arange(self.snap.n_brokers + 1))
        rows_sorted = rows[order].astype(np.int64)
        return [rows_sorted[cuts[i] : cuts[i + 1]] for i in range(self.snap.n_brokers)]

    @cached_property
    def replica_counts(self) -> Int64Arr:
        return replica_counts(self.snap)

    @cached_property
    def potential_nw_out(self) -> FloatArr:
        """Network-out each broker would serve if every replica it holds led."""
        rep = self.snap.replicas
        rows, cols = np.nonzero(rep >= 0)
        pot = np.bincount(rep[rows, cols], weights=self.snap.leader_load[rows, NW_OUT], minlength=self.snap.n_brokers)
        return pot.astype(np.float64)

    @cached_property
    def topic_counts(self) -> Int64Arr:
        """[T, N]: replicas of each topic on each broker."""
        snap = self.snap
        rep = snap.replicas
        rows, cols = np.nonzero(rep >= 0)
        key = snap.topic_idx[rows].astype(np.int64) * snap.n_brokers + rep[rows, cols]
        flat = np.bincount(key, minlength=len(snap.topics) * snap.n_brokers)
        return flat.reshape(len(snap.topics), snap.n_brokers).astype(np.int64)
