"""Where the group leader gets partition loads at assignment time.

* :class:`StaticLoads` — a fixed mapping (tests, offline use);
* :class:`SnapshotLoads` — the latest pipeline snapshot: each partition's bytes-in rate (``nw_in``);
* :class:`LiveLoads` — measured from the admin API: ``rate + lag ÷ horizon``, where ``rate`` is the
  growth of the end offset between samples (messages/s) and ``lag`` is end offset − committed
  offset of the group. A background thread refreshes a cache, so the leader never blocks on the
  network inside the rebalance.

A load source is called with the partitions to assign and returns ``{(topic, partition): load}``;
partitions it does not know get load 1.0 (count-like), so the assignment stays valid.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from kafka_balancer.errors import ClusterError

TP = tuple[str, int]


class LoadSource(Protocol):
    def __call__(self, partitions: Iterable[TP]) -> dict[TP, float]: ...


class StaticLoads:
    def __init__(self, loads: Mapping[TP, float]) -> None:
        self.loads = dict(loads)

    def __call__(self, partitions: Iterable[TP]) -> dict[TP, float]:
        return {tp: float(self.loads.get(tp, 1.0)) for tp in partitions}


class SnapshotLoads:
    """Loads from a snapshot file (see docs/snapshot-format.md): leader ``nw_in`` per partition."""

    def __init__(self, path: str | Path) -> None:
        from kafka_balancer.model.snapshot import RESOURCES
        from kafka_balancer.model.snapshot_io import read_snapshot

        snap = read_snapshot(Path(path))
        col = RESOURCES.index("nw_in")
        self.loads = {(snap.topics[int(t)], int(p)): float(v)
                      for t, p, v in zip(snap.topic_idx.tolist(), snap.partition.tolist(),
                                         snap.leader_load[:, col].tolist(), strict=True)}

    def __call__(self, partitions: Iterable[TP]) -> dict[TP, float]:
        return {tp: self.loads.get(tp, 1.0) for tp in partitions}


def end_offsets(admin: Any, partitions: Iterable[TP]) -> dict[TP, int]:
    from kafka.admin import OffsetSpec
    from kafka.structs import TopicPartition

    specs = {TopicPartition(t, p): OffsetSpec.LATEST for t, p in partitions}
    if not specs:
        return {}
    res = admin.list_partition_offsets(specs)
    return {(tp.topic, tp.partition): int(v.offset) for tp, v in res.items()}


def committed_offsets(admin: Any, group: str) -> dict[TP, int]:
    """The group's committed offsets; ``{}`` when the group has none yet (new group, no coordinator). A
    broker that refuses the connection, or one the client never heard of (a coordinator that joined after
    it connected), is raised, not taken for a group without offsets: every partition's whole log would
    count as lag."""
    from kafka.errors import KafkaConnectionError, KafkaError, UnknownBrokerIdError

    try:
        res = admin.list_group_offsets({group: None}).get(group, {})
    except (KafkaConnectionError, UnknownBrokerIdError):
        raise
    except KafkaError:
        return {}
    return {(tp.topic, tp.partition): int(v.offset) for tp, v in res.items() if v.offset is not None and v.offset >= 0}


def topic_partitions(admin: Any, topics: Iterable[str]) -> list[TP]:
    out: list[TP] = []
    for t in admin.describe_topics(sorted(set(topics))):
        name = t.get("name") or t.get("topic")
        for p in t.get("partitions", []):
            out.append((str(name), int(p.get("partition_index", p.get("partition", -1)))))
    return sorted(out)


class LiveLoads:
    """``rate + lag / horizon_s`` per partition, refreshed every ``interval_s`` in the background."""

    def __init__(self, bootstrap: str, group: str, topics: Iterable[str], *, interval_s: float = 2.0,
                 horizon_s: float = 30.0, start: bool = True, security: Any = None) -> None:
        from kafka_balancer.collect.admin import PATIENT, RenewingAdmin

        self.session = RenewingAdmin.connect(bootstrap, client_id=f"kafka-balancer-loads-{group}", security=security,
                                             attempts=PATIENT)
        self.group = group
        self.topics = sorted(set(topics))
        self.interval_s = interval_s
        self.horizon_s = horizon_s
        self._lock = threading.Lock()
        self._cache: dict[TP, float] = {}
        self._last: tuple[float, dict[TP, int]] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.refresh()
        if start:
            self._thread = threading.Thread(target=self._loop, name=f"loads-{group}", daemon=True)
            self._thread.start()

    def refresh(self) -> dict[TP, float]:
        """One synchronous measurement; updates and returns the cache."""
        call = self.session.call
        try:  # a broker that died is still in the client's metadata for a while: each call is tried again
            parts = call(lambda admin: topic_partitions(admin, self.topics))
            ends = call(lambda admin: end_offsets(admin, parts))
            committed = call(lambda admin: committed_offsets(admin, self.group))
        except Exception as exc:  # network trouble: keep the old cache
            if not self._cache:
                raise ClusterError(f"cannot measure loads for group {self.group!r}: {exc}",
                                   hint="check --bootstrap and that the topics exist") from exc
            return dict(self._cache)
        now = time.monotonic()
        rates: dict[TP, float] = {}
        if self._last is not None and now > self._last[0]:
            dt = now - self._last[0]
            rates = {tp: max(0, e - self._last[1].get(tp, e)) / dt for tp, e in ends.items()}
        self._last = (now, ends)
        loads = {tp: rates.get(tp, 0.0) + max(0, e - committed.get(tp, 0)) / self.horizon_s
                 for tp, e in ends.items()}
        with self._lock:
            self._cache = loads
        return dict(loads)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.refresh()

    def __call__(self, partitions: Iterable[TP]) -> dict[TP, float]:
        with self._lock:
            return {tp: self._cache.get(tp, 1.0) for tp in partitions}

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.session.close()
