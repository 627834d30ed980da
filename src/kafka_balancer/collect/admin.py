"""Connecting to a live cluster with kafka-python, with errors a user can act on.

Everything that talks to a cluster (collector, executor, workload, local cluster readiness) opens its
admin client here, so an unreachable bootstrap server gives the same one-line
:class:`~kafka_balancer.errors.ClusterError` everywhere, within the given timeout.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from kafka_balancer.errors import ClusterError, InputError

if TYPE_CHECKING:
    from kafka_balancer.security.settings import SecuritySettings

DEFAULT_TIMEOUT_S = 15.0
T = TypeVar("T")


def check_bootstrap(bootstrap: str) -> str:
    """Validate ``host:port[,host:port...]``; returns it stripped."""
    text = bootstrap.strip()
    for part in text.split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InputError(
                f"bad --bootstrap {bootstrap!r}: {part.strip()!r} is not host:port",
                hint="e.g. --bootstrap 127.0.0.1:19092 (several: comma-separated)",
            )
    return text


_QUIET_LOCK = threading.Lock()
_quiet: list[int] = []  # the level before the first of the nested or concurrent quiet spans


@contextlib.contextmanager
def quiet_kafka_logs(level: int = logging.CRITICAL) -> Iterator[None]:
    """Silence kafka-python's connection-retry warnings while we poll or probe. Spans may nest or overlap
    across threads (the service's sampler and executor): the level set before the first is restored when
    the last ends, never a level another span set."""
    logger = logging.getLogger("kafka")
    with _QUIET_LOCK:
        if not _quiet:
            _quiet.append(logger.level)
        _quiet.append(level)
        logger.setLevel(max(_quiet[1:]))
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _quiet.remove(level)
            logger.setLevel(max(_quiet[1:]) if len(_quiet) > 1 else _quiet.pop())


def admin_client(**configs: Any) -> Any:
    """``KafkaAdminClient(**configs)``, and when that raises (no broker answered in time, a failed
    handshake), its network client closed. kafka-python starts the client's I/O thread before it
    bootstraps and leaves it running when the bootstrap fails, reconnecting for ever; a caller that waits
    for a cluster by trying again (the local cluster's start-up, a service's retries) would pile them up."""
    from kafka.admin import KafkaAdminClient
    from kafka.net.compat import KafkaNetClient

    made: list[Any] = []

    def network_client(**kw: Any) -> Any:
        made.append(KafkaNetClient(**kw))
        return made[-1]

    try:
        return KafkaAdminClient(kafka_client=network_client, **configs)
    except BaseException:
        for client in made:
            with contextlib.suppress(Exception):
                client.close()
        raise


def connect_admin(
    bootstrap: str, timeout_s: float = DEFAULT_TIMEOUT_S, client_id: str = "kafka-balancer",
    security: SecuritySettings | None = None,
) -> Any:
    """A ``KafkaAdminClient`` for ``bootstrap``; raises ClusterError if no broker answers in ``timeout_s``.

    ``security`` (from ``--command-config``) connects over TLS and/or SASL; a wrong password, an unknown
    mechanism or an untrusted certificate is then an InputError (exit 2) within the timeout."""
    from kafka.errors import KafkaError

    bootstrap = check_bootstrap(bootstrap)
    ms = int(timeout_s * 1000)
    if security is not None and security.protocol != "PLAINTEXT":
        from kafka_balancer.security.connect import open_secured

        return open_secured(
            lambda kw, boot_ms: admin_client(bootstrap_servers=bootstrap, client_id=client_id,
                                             bootstrap_timeout_ms=boot_ms, request_timeout_ms=max(ms, 5000), **kw),
            bootstrap, timeout_s, security)
    try:
        with quiet_kafka_logs():
            return admin_client(
                bootstrap_servers=bootstrap,
                client_id=client_id,
                bootstrap_timeout_ms=ms,
                request_timeout_ms=max(ms, 5000),
            )
    except (KafkaError, OSError) as exc:
        raise ClusterError(
            f"cannot reach Kafka at {bootstrap} within {timeout_s:g} s ({type(exc).__name__})",
            hint="check --bootstrap host:port and that the brokers run "
            "(`kafka-balancer local-cluster status` for the local cluster)",
        ) from exc


def log_dir_replicas(entries: Any, topics: set[str]) -> Iterator[tuple[str, int, int, int, str, bool]]:
    """Walk kafka-python's ``describe_log_dirs`` answer: (topic, partition, broker, size, log dir, future)
    for every replica of one of ``topics``. ``future`` marks the copy of an ongoing intra-broker move."""
    for entry in entries:
        b = int(entry["broker"])
        for d in entry["log_dirs"]:
            for t in d.get("topics", []):
                if t["name"] not in topics:
                    continue
                for p in t["partitions"]:
                    yield (t["name"], int(p["partition_index"]), b, int(p["partition_size"]), d["log_dir"],
                           bool(p.get("is_future_key")))


def retried(call: Callable[[], T], attempts: int = 4, renew: Callable[[], None] | None = None) -> T:
    """``call()``, tried again after a connection error, ``attempts`` times in all (0.5 s, 1 s, ... apart),
    ``renew`` (a fresh client) before the last try. kafka-python sends a request to one node, and a broker
    that died (still in the bootstrap list, or in the client's metadata) refuses it or resets the
    connection: the next try goes to another node. A broker the client never heard of (one that joined after
    it read the metadata: kafka-python does not learn of it from DescribeCluster) gets ``renew()`` at once,
    once: only a fresh client reaches it. The last error is raised as it is."""
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError, RetriableError, UnknownBrokerIdError

    renewed = False
    for attempt in range(attempts):
        try:
            with quiet_kafka_logs():
                return call()
        except UnknownBrokerIdError:
            if renew is None or renewed or attempt + 1 >= attempts:
                raise
            renew()
            renewed = True
        except (KafkaConnectionError, KafkaTimeoutError, RetriableError, OSError):
            if attempt + 1 >= attempts:
                raise
            time.sleep(0.5 * (attempt + 1))
            if renew is not None and attempt + 2 == attempts:
                renew()
    raise AssertionError("unreachable")


PATIENT = 8  # tries over about 14 s: a broker that died is fenced, and its leaderships move, within ~10 s


class RenewingAdmin:
    """An admin client whose calls go through :func:`retried`, with a fresh client (from ``reconnect``)
    before a call's last try: kafka-python can stay pinned to a broker that died, or to its stale metadata
    (a partition still led by it). ``client`` is the present client; ``attempts`` the tries a call gets
    unless it says otherwise; :meth:`close` closes the client."""

    def __init__(self, client: Any, reconnect: Callable[[], Any] | None = None, attempts: int = 4) -> None:
        self.client = client
        self._reconnect = reconnect
        self.attempts = attempts

    @classmethod
    def connect(cls, bootstrap: str, timeout_s: float = DEFAULT_TIMEOUT_S, client_id: str = "kafka-balancer",
                security: SecuritySettings | None = None, attempts: int = 4) -> RenewingAdmin:
        """A client on ``bootstrap`` (:func:`connect_admin`), renewed the same way."""
        def make() -> Any:
            return connect_admin(bootstrap, timeout_s=timeout_s, client_id=client_id, security=security)

        return cls(make(), reconnect=make, attempts=attempts)

    def renew(self) -> None:
        """Replace the client with a fresh one; keep it when the cluster is away (the last try shows that)."""
        if self._reconnect is None:
            return
        try:
            fresh = self._reconnect()
        except Exception:  # the cluster is still away (ClusterError, or a test's own client failing)
            return
        old, self.client = self.client, fresh
        with contextlib.suppress(Exception), quiet_kafka_logs():
            old.close()

    def call(self, fn: Callable[[Any], T], attempts: int | None = None) -> T:
        """``fn(client)``, tried ``attempts`` times in all (the session's by default; see :func:`retried`)."""
        return retried(lambda: fn(self.client), self.attempts if attempts is None else attempts, renew=self.renew)

    def close(self) -> None:
        with quiet_kafka_logs():
            self.client.close()
