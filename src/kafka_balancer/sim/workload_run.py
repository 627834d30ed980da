"""Run a :class:`~kafka_balancer.sim.workload.WorkloadSpec` against a live cluster.

Creates the topics (Kafka places the replicas itself), writes the backlog, produces at the given
rates for ``duration_s`` (one idempotent producer, so every acknowledged message is in the log exactly
once), runs the consumer groups, and at the end waits until they have read everything. The result counts
messages produced (acknowledged) and consumed (distinct offsets per group)::

    runner = WorkloadRunner("127.0.0.1:19092", skewed_workload(), seed=1, duration_s=60)
    result = runner.run()            # or runner.start(); ...; runner.stop()
    result.produced["orders"], result.consumed["billing"]["orders"]
"""

from __future__ import annotations

import contextlib
import random
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kafka_balancer.collect.admin import connect_admin, quiet_kafka_logs, retried
from kafka_balancer.errors import ClusterError
from kafka_balancer.security.acl import check_workload_rights
from kafka_balancer.security.clients import kafka_kwargs
from kafka_balancer.security.settings import SecuritySettings
from kafka_balancer.sim.workload import KeyChooser, WorkloadSpec, message_size

TICK_S = 0.05
PREFILL_SIZE = 32_000


@dataclass
class WorkloadResult:
    produced: dict[str, int] = field(default_factory=dict)
    produced_bytes: int = 0
    failed: int = 0
    consumed: dict[str, dict[str, int]] = field(default_factory=dict)
    elapsed_s: float = 0.0
    drained: bool = False

    def consumed_total(self, group: str) -> int:
        return sum(self.consumed.get(group, {}).values())

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class _GroupReader:
    """One consumer group: ``members`` consumer threads sharing a set of seen offsets."""

    def __init__(self, bootstrap: str, group: str, topics: tuple[str, ...], members: int,
                 security: SecuritySettings | None = None) -> None:
        self.bootstrap, self.group, self.topics = bootstrap, group, topics
        self.security = security
        self.seen: dict[str, set[tuple[int, int]]] = defaultdict(set)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.threads = [threading.Thread(target=self._loop, name=f"wl-{group}-{i}", daemon=True)
                        for i in range(members)]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def _loop(self) -> None:
        from kafka import KafkaConsumer
        from kafka_balancer.consumer.kafka_adapter import keep_join_pending

        try:
            with quiet_kafka_logs():
                c = KafkaConsumer(*self.topics, bootstrap_servers=self.bootstrap, group_id=self.group,
                                  auto_offset_reset="earliest", enable_auto_commit=True,
                                  auto_commit_interval_ms=1000, client_id=f"kb-workload-{self.group}",
                                  **kafka_kwargs(self.security))
            # the topics were usually created a moment ago: the rebalance their metadata triggers must finish
            keep_join_pending(c)
        except Exception as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return
        try:
            while not self.stop.is_set():
                with quiet_kafka_logs():
                    batch = c.poll(timeout_ms=200, max_records=2000)
                if batch:
                    with self.lock:
                        for tp, msgs in batch.items():
                            s = self.seen[tp.topic]
                            s.update((tp.partition, m.offset) for m in msgs)
            with quiet_kafka_logs(), contextlib.suppress(Exception):
                c.commit()
        except Exception as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            with quiet_kafka_logs(), contextlib.suppress(Exception):
                c.close()

    def counts(self) -> dict[str, int]:
        with self.lock:
            return {t: len(s) for t, s in self.seen.items()}


class WorkloadRunner:
    def __init__(self, bootstrap: str, spec: WorkloadSpec, seed: int = 0, duration_s: float = 60.0,
                 drain_timeout_s: float = 60.0, progress: bool = True, connect_timeout_s: float = 15.0,
                 security: SecuritySettings | None = None) -> None:
        self.bootstrap = bootstrap
        self.security = security
        self.spec = spec
        self.seed = seed
        self.duration_s = duration_s
        self.drain_timeout_s = drain_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.progress = progress
        self.result = WorkloadResult()
        self._stop = threading.Event()
        self.steady = threading.Event()  # set when the backlog is written and timed production runs
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    # ---- set-up -------------------------------------------------------------------------------
    def create_topics(self) -> list[str]:
        """Create missing topics with Kafka's own placement; returns the names created."""
        from kafka.admin import NewTopic
        from kafka.errors import TopicAlreadyExistsError

        admin = connect_admin(self.bootstrap, self.connect_timeout_s, security=self.security)
        try:
            with quiet_kafka_logs():
                have = set(retried(admin.list_topics))  # a stopped broker may be in the bootstrap list
                new = [NewTopic(t.name, t.partitions, t.replication) for t in self.spec.topics
                       if t.name not in have]
                if self.security is not None:
                    check_workload_rights(admin, [t.name for t in self.spec.topics if t.name in have], new,
                                          self.security.who)
                if new:
                    with contextlib.suppress(TopicAlreadyExistsError):
                        admin.create_topics(new)
                    admin.wait_for_topics([t.name for t in new], timeout_ms=30000)
            return [t.name for t in new]
        finally:
            with quiet_kafka_logs():
                admin.close()

    # ---- running ------------------------------------------------------------------------------
    def run(self) -> WorkloadResult:
        """Blocking: create topics, start consumers, backlog, timed production, drain."""
        self.create_topics()
        readers = [_GroupReader(self.bootstrap, g.group, g.topics, g.members, self.security)
                   for g in self.spec.groups]
        for r in readers:
            r.start()
        t0 = time.monotonic()
        try:
            self._produce()
        finally:
            self.result.elapsed_s = time.monotonic() - t0
            self.result.drained = self._drain(readers)
            for r in readers:
                r.stop.set()
            for r in readers:
                for t in r.threads:
                    t.join(timeout=15)
            self.result.consumed = {r.group: r.counts() for r in readers}
        return self.result

    def start(self) -> None:
        """Run in a background thread; :meth:`stop` ends production early and returns the result."""
        def target() -> None:
            try:
                self.run()
            except BaseException as exc:
                self._error = exc

        self._thread = threading.Thread(target=target, name="workload", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 180.0) -> WorkloadResult:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)
        if self._error is not None:
            raise self._error
        return self.result

    def wait(self, timeout_s: float | None = None) -> WorkloadResult:
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)
        if self._error is not None:
            raise self._error
        return self.result

    def _produce(self) -> None:
        from kafka import KafkaProducer

        rng = random.Random(self.seed)
        payload = random.Random(self.seed + 1).randbytes(64 * 1024)
        keys = {t.name: KeyChooser(t, random.Random(rng.random())) for t in self.spec.topics}
        lock = threading.Lock()
        produced: dict[str, int] = defaultdict(int)

        def ok(topic: str, nbytes: int) -> Any:
            def cb(_md: Any) -> None:
                with lock:
                    produced[topic] += 1
                    self.result.produced_bytes += nbytes
            return cb

        def failed(_exc: Any) -> None:
            with lock:
                self.result.failed += 1

        def send(producer: Any, topic_name: str, size: int | None = None) -> None:
            t = next(x for x in self.spec.topics if x.name == topic_name)
            n = size or message_size(t, rng)
            off = rng.randrange(0, len(payload) - n)
            fut = producer.send(topic_name, key=keys[topic_name].next(), value=payload[off:off + n])
            fut.add_callback(ok(topic_name, n))
            fut.add_errback(failed)

        with quiet_kafka_logs():
            try:
                producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", enable_idempotence=True,
                                         linger_ms=20, retries=2**31 - 1, request_timeout_ms=30000,
                                         delivery_timeout_ms=300000, client_id="kb-workload",
                                         **kafka_kwargs(self.security))
            except Exception as exc:
                raise ClusterError(f"workload producer cannot connect to {self.bootstrap}: {exc}") from exc
        try:
            for t in self.spec.topics:  # backlog
                left = int(t.prefill_mb * 1e6)
                while left > 0 and not self._stop.is_set():
                    send(producer, t.name, PREFILL_SIZE)  # big messages: the backlog is quick to write
                    left -= PREFILL_SIZE
            with quiet_kafka_logs():
                producer.flush(timeout=120)
            owed = {t.name: 0.0 for t in self.spec.topics}
            start = time.monotonic()
            self.steady.set()
            last_report = start
            while not self._stop.is_set():
                now = time.monotonic()
                if now - start >= self.duration_s:
                    break
                for t in self.spec.topics:
                    owed[t.name] += t.rate * TICK_S
                    while owed[t.name] >= 1.0:
                        send(producer, t.name)
                        owed[t.name] -= 1.0
                if self.progress and now - last_report >= 10:
                    last_report = now
                    with lock:
                        total = sum(produced.values())
                    print(f"workload: {now - start:.0f}/{self.duration_s:.0f} s, {total} messages acknowledged",
                          file=sys.stderr)
                time.sleep(max(0.0, TICK_S - (time.monotonic() - now)))
            with quiet_kafka_logs():
                producer.flush(timeout=120)
        finally:
            with quiet_kafka_logs():
                producer.close(timeout=30)
            with lock:
                self.result.produced = dict(sorted(produced.items()))

    def _drain(self, readers: list[_GroupReader]) -> bool:
        """Wait until each group has seen every produced message of its topics (or the timeout)."""
        deadline = time.monotonic() + self.drain_timeout_s
        while time.monotonic() < deadline:
            produced = dict(self.result.produced)
            if all(r.counts().get(t, 0) >= produced.get(t, 0) for r in readers for t in r.topics):
                return True
            time.sleep(0.5)
        return False
