"""The executor's edge: kafka-python 3.x admin calls, turned into :class:`ClusterView` and plain results.

Only this module knows kafka-python types. Calls used: ``describe_cluster``, ``describe_topics``,
``describe_log_dirs``, ``list_partition_reassignments``, ``alter_partition_reassignments``,
``elect_leaders`` (preferred) and incremental ``alter_configs`` for the throttle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafka_balancer.collect.admin import RenewingAdmin, log_dir_replicas
from kafka_balancer.errors import ClusterError
from kafka_balancer.executor.throttle import ThrottleConfigs
from kafka_balancer.executor.view import TP, ClusterView, PartitionState, Reassignment, tp_label


class KafkaAdapter:
    """Wraps one ``KafkaAdminClient``.

    ``reconnect`` builds a fresh client: kafka-python can stay pinned to a connection of a broker that
    died (a node it chose as controller), so after repeated connection errors the client is replaced.
    """

    def __init__(self, admin: Any, reconnect: Callable[[], Any] | None = None) -> None:
        self.session = RenewingAdmin(admin, reconnect)

    @property
    def admin(self) -> Any:
        """The admin client in use (replaced after repeated connection errors)."""
        return self.session.client

    @classmethod
    def connect(cls, bootstrap: str, timeout_s: float | None = None, security: Any = None) -> KafkaAdapter:
        """An adapter on a fresh admin client, able to replace it after repeated connection errors.
        ``security``: the SecuritySettings of ``--command-config`` (None: plaintext)."""
        from kafka_balancer.collect.admin import DEFAULT_TIMEOUT_S, connect_admin

        def make() -> Any:
            return connect_admin(bootstrap, timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s,
                                 security=security)

        return cls(make(), reconnect=make)

    def close(self) -> None:
        self.session.close()

    def _call(self, what: str, method: str, *args: Any, attempts: int = 4, **kwargs: Any) -> Any:
        """Call ``method`` of the admin client; connection errors (a broker that just died is still in the
        client's metadata) are retried, the last time on a fresh client, before they become a ClusterError."""
        from kafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError, RetriableError

        try:
            return self.session.call(lambda admin: getattr(admin, method)(*args, **kwargs), attempts)
        except (KafkaConnectionError, KafkaTimeoutError, RetriableError, OSError) as exc:
            raise ClusterError(f"{what} failed: {type(exc).__name__}: {exc}",
                               hint="is the cluster reachable? `--resume` continues later") from exc
        except KafkaError as exc:
            raise ClusterError(f"{what} failed: {type(exc).__name__}: {exc}") from exc

    # ---- reading ------------------------------------------------------------------------------
    def alive_brokers(self) -> frozenset[int]:
        info = self._call("describe_cluster", "describe_cluster")
        return frozenset(int(b["broker_id"]) for b in info["brokers"] if not b.get("is_fenced"))

    def view(self, topics: Iterable[str] | None = None, with_sizes: bool = True) -> ClusterView:
        """The cluster now: alive brokers, partitions of ``topics`` (all if None), reassignments, sizes."""
        alive = self.alive_brokers()
        wanted = sorted(set(topics)) if topics is not None else None
        if wanted is None:
            names = [t for t in self._call("list_topics", "list_topics") if not t.startswith("__")]
            wanted = sorted(names)
        parts: dict[TP, PartitionState] = {}
        if wanted:
            described = self._call("describe_topics", "describe_topics", wanted)
            for t in described:
                if t.get("error_code", 0) != 0:
                    continue  # unknown topic: validation reports it
                for p in t["partitions"]:
                    parts[(t["name"], int(p["partition_index"]))] = PartitionState(
                        tuple(int(b) for b in p["replica_nodes"]),
                        int(p["leader_id"]),
                        tuple(int(b) for b in p["isr_nodes"]),
                    )
        reassigning = {
            (tp.topic, tp.partition): Reassignment(tuple(r["replicas"]), tuple(r["adding_replicas"]),
                                                   tuple(r["removing_replicas"]))
            for tp, r in self._call("list_partition_reassignments", "list_partition_reassignments").items()
        }
        sizes: dict[tuple[str, int, int], int] = {}
        if with_sizes and wanted:
            sizes = self.replica_sizes(alive, set(wanted))
        return ClusterView(alive, parts, reassigning, sizes)

    def replica_sizes(self, brokers: Iterable[int], topics: set[str]) -> dict[tuple[str, int, int], int]:
        """Replica sizes from ``describe_log_dirs``, one broker at a time: a broker that just died (and
        is not yet fenced) is skipped instead of failing the whole poll."""
        out: dict[tuple[str, int, int], int] = {}
        entries = []
        for b in sorted(brokers):
            try:
                entries += self._call("describe_log_dirs", "describe_log_dirs", None, [b], attempts=1)
            except ClusterError:
                continue
        for t, p, b, size, _dir, _future in log_dir_replicas(entries, topics):
            out[(t, p, b)] = max(out.get((t, p, b), 0), size)
        return out

    # ---- acting -------------------------------------------------------------------------------
    def submit(self, targets: Mapping[TP, Sequence[int]]) -> dict[TP, str]:
        """Ask for reassignments; returns partition -> error name for those the controller refused."""
        from kafka import TopicPartition

        if not targets:
            return {}
        req = {TopicPartition(t, p): list(r) for (t, p), r in targets.items()}
        res = self._call("alter_partition_reassignments", "alter_partition_reassignments", req)
        return {(tp.topic, tp.partition): getattr(err, "__name__", str(err))
                for tp, err in res.items() if err is not None}

    def cancel(self, tps: Iterable[TP]) -> dict[TP, str]:
        """Cancel ongoing reassignments (``None`` target); returns refusals."""
        from kafka import TopicPartition

        req = {TopicPartition(t, p): None for t, p in tps}
        if not req:
            return {}
        res = self._call("alter_partition_reassignments (cancel)", "alter_partition_reassignments", req)
        return {(tp.topic, tp.partition): getattr(err, "__name__", str(err))
                for tp, err in res.items() if err is not None}

    def elect_preferred(self, tps: Sequence[TP]) -> None:
        """Preferred-leader election; partitions already led by their preferred replica are fine.
        Per-partition failures (preferred replica not yet in ISR) are left to the next poll."""
        if not tps:
            return
        by_topic: dict[str, list[int]] = {}
        for t, p in tps:
            by_topic.setdefault(t, []).append(p)
        self._call("elect_leaders", "elect_leaders", 0, by_topic, raise_errors=False)

    def set_throttle(self, cfg: ThrottleConfigs) -> None:
        self._alter(cfg, delete=False)

    def clear_throttle(self, cfg: ThrottleConfigs) -> None:
        self._alter(cfg, delete=True)

    def _alter(self, cfg: ThrottleConfigs, delete: bool) -> None:
        from kafka.admin import ConfigResource, ConfigResourceType

        resources = []
        for b, kv in cfg.brokers.items():
            resources.append(ConfigResource(ConfigResourceType.BROKER, str(b), configs={
                k: (("DELETE", None) if delete else v) for k, v in kv.items()}))
        for t, kv in cfg.topics.items():
            resources.append(ConfigResource(ConfigResourceType.TOPIC, t, configs={
                k: (("DELETE", None) if delete else v) for k, v in kv.items()}))
        if not resources:
            return
        what = "clearing the replication throttle" if delete else "setting the replication throttle"
        res = self._call(what, "alter_configs", resources, incremental=True, raise_on_unknown=False)
        bad = [f"{kind} {name}: {r}" for kind, by_name in res.items() for name, r in by_name.items()
               if r != "OK"]
        if bad:
            raise ClusterError(f"{what} failed for " + "; ".join(bad[:5]))

    def throttled_now(self, brokers: Iterable[int], topics: Iterable[str]) -> ThrottleConfigs:
        """Throttle configs currently set on these brokers and topics (for ``cancel`` without journal)."""
        from kafka.admin import ConfigResource, ConfigResourceType

        from kafka_balancer.executor.throttle import BROKER_KEYS, TOPIC_KEYS

        resources = [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in brokers]
        resources += [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        if not resources:
            return ThrottleConfigs({}, {})
        res = self._call("describe_configs", "describe_configs", resources)
        out_b = {int(name): {k: v["value"] for k, v in kv.items() if k in BROKER_KEYS}
                 for name, kv in res.get("broker", {}).items()}
        out_t = {name: {k: v["value"] for k, v in kv.items() if k in TOPIC_KEYS}
                 for name, kv in res.get("topic", {}).items()}
        return ThrottleConfigs({b: kv for b, kv in out_b.items() if kv}, {t: kv for t, kv in out_t.items() if kv})


__all__ = ["KafkaAdapter", "tp_label"]
