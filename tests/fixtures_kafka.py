"""Session-scoped real local Kafka cluster for tests marked ``kafka``.

``kafka_cluster`` starts a 3-node KRaft cluster (every node broker+controller, one rack per node) on
free loopback ports the first time a test asks for it, and stops it at the end of the session. It is
lazy, so a run that selects no such test starts no JVM. After each test that used it, any broker the
test left killed is started again, so tests do not depend on each other's faults.

    def test_something(kafka_cluster):
        admin = kafka_cluster.admin()          # kafka-python KafkaAdminClient (closed after the test)
        kafka_cluster.kill_broker(2)           # SIGKILL
        kafka_cluster.start_broker(2)          # waits until it serves again
        kafka_cluster.bootstrap                # "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3"
"""

from __future__ import annotations

import atexit
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_balancer.localcluster.assignor import ASSIGNOR_OVERRIDES, FAST_CONSUMER_GROUP_OVERRIDES
from kafka_balancer.localcluster.cluster import LocalCluster
from kafka_balancer.localcluster.spec import ClusterSpec

# The brokers also run our server-side consumer assignor (`local-cluster up --assignor`'s settings) and
# detect dead consumer-protocol members in 10 s instead of 45 s; classic groups are unaffected.
TEST_SPEC = ClusterSpec(brokers=3, controllers=3, brokers_per_host=1, heap_mb=256,
                        overrides=(*ASSIGNOR_OVERRIDES, *FAST_CONSUMER_GROUP_OVERRIDES))


class KafkaTestCluster:
    """What tests see: bootstrap, fault injection, admin clients."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self._admins: list[Any] = []

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap

    @property
    def broker_ids(self) -> list[int]:
        return self.cluster.broker_ids

    @property
    def state_dir(self) -> Path:
        return self.cluster.state_dir

    def admin(self) -> Any:
        """A new ``KafkaAdminClient`` on the cluster; closed after the test."""
        a = self.cluster.admin()
        self._admins.append(a)
        return a

    def kill_broker(self, broker_id: int) -> None:
        self.cluster.kill_broker(broker_id)

    def start_broker(self, broker_id: int) -> None:
        self.cluster.start_broker(broker_id)

    def is_running(self, broker_id: int) -> bool:
        return self.cluster.is_running(broker_id)

    def ensure_all_running(self) -> None:
        for b in self.broker_ids:
            if not self.cluster.is_running(b):
                self.cluster.start_broker(b)

    def close_admins(self) -> None:
        """Close the admin clients handed out: each runs a background I/O thread, which must not outlive
        its test (it draws reconnect jitter from the global ``random``, which Hypothesis watches in the
        property tests that may run next on the same xdist worker)."""
        for a in self._admins:
            with contextlib.suppress(Exception):
                a.close()
        self._admins.clear()

    def close(self) -> None:
        self.close_admins()
        # SIGKILL at once: the session's data is thrown away, and a controlled shutdown of every node at the
        # same time waits several seconds on a quorum that is leaving (`./dev demo` stops its cluster gracefully)
        self.cluster.down(wipe=False, timeout_s=0.0)


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaTestCluster]:
    state_dir = tmp_path_factory.mktemp("kafka-cluster")
    cluster = LocalCluster(state_dir, TEST_SPEC, base_port=None)
    handle = KafkaTestCluster(cluster)
    atexit.register(cluster.down)  # backstop if the session dies before teardown
    try:
        cluster.up(fresh=True, timeout_s=180)
        yield handle
    finally:
        handle.close()
        atexit.unregister(cluster.down)


@pytest.fixture(autouse=True)
def _after_a_cluster_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test on a session cluster: its admin clients closed, any broker it killed started again."""
    yield
    for name in ("kafka_cluster", "secure_cluster"):
        if name in request.fixturenames:
            handle = request.getfixturevalue(name)
            handle.close_admins()
            if name == "kafka_cluster":
                handle.ensure_all_running()


# ---- a secured cluster (docs/security.md) --------------------------------------------------------------------
# SCRAM over TLS, and a client certificate required on top (mutual TLS), so both are exercised
SECURE_SPEC = ClusterSpec(brokers=3, controllers=3, brokers_per_host=1, heap_mb=256, security="sasl_ssl",
                          overrides=(("listener.name.sasl_ssl.ssl.client.auth", "required"),))


class SecureTestCluster(KafkaTestCluster):
    """The session's SASL_SSL cluster: SCRAM users ``admin`` (super user) and ``reader`` (read-only ACLs), a
    TLS listener that requires a client certificate signed by the cluster's CA, ACLs on."""

    def properties(self, user: str = "admin") -> Path:
        path = self.cluster.client_properties(user)
        assert path is not None
        return path

    @property
    def tls_dir(self) -> Path:
        return self.state_dir / "tls"

    def secrets(self) -> list[str]:
        """Every password of the cluster (to prove none leaks)."""
        import re

        found = set()
        for user in ("admin", "reader"):
            text = self.properties(user).read_text()
            found |= set(re.findall(r'password="([^"]+)"', text))
            found |= set(re.findall(r"ssl\.keystore\.password=(\S+)", text))
        server = (self.state_dir / "node-1" / "server.properties").read_text()
        found |= set(re.findall(r"ssl\.keystore\.password=(\S+)", server))
        return sorted(found)


@pytest.fixture(scope="session")
def secure_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureTestCluster]:
    state_dir = tmp_path_factory.mktemp("kafka-secure")
    cluster = LocalCluster(state_dir, SECURE_SPEC, base_port=None)
    handle = SecureTestCluster(cluster)
    atexit.register(cluster.down)
    try:
        cluster.up(fresh=True, timeout_s=240)
        yield handle
    finally:
        handle.close()
        atexit.unregister(cluster.down)
