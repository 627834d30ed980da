"""The local cluster fixture itself: brokers, racks, metrics endpoints, kill and restart."""

from __future__ import annotations

import urllib.request

import pytest

from kafka_balancer.collect.admin import connect_admin
from kafka_balancer.localcluster import processes

pytestmark = pytest.mark.kafka


def test_all_brokers_registered_with_racks(kafka_cluster):
    info = kafka_cluster.admin().describe_cluster()
    got = {b["broker_id"]: b["rack"] for b in info["brokers"]}
    assert got == {1: "host-0", 2: "host-1", 3: "host-2"}


def test_metrics_endpoint_exposes_cpu_and_cores(kafka_cluster):
    url = kafka_cluster.cluster.metrics_urls()[1]
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    assert "process_cpu_seconds_total" in text
    assert "os_available_processors" in text


def test_kill_and_start_broker(kafka_cluster):
    pid_before = kafka_cluster.cluster.pids[3]
    kafka_cluster.kill_broker(3)
    assert not processes.pid_runs(pid_before, "server.properties")
    assert not kafka_cluster.is_running(3)
    cluster = kafka_cluster.cluster
    assert cluster.node(3).bootstrap in cluster.bootstrap.split(",")
    assert cluster.node(3).bootstrap not in cluster.running_bootstrap.split(",")
    cluster.wait_fenced([3], timeout_s=60)  # no metadata sends a client to it any more
    admin = connect_admin(cluster.running_bootstrap, security=cluster.security())
    try:
        unfenced = {int(b["broker_id"]) for b in admin.describe_cluster()["brokers"] if not b.get("is_fenced")}
    finally:
        admin.close()
    assert unfenced == {1, 2}
    kafka_cluster.start_broker(3)
    assert kafka_cluster.is_running(3)
    assert kafka_cluster.cluster.pids[3] != pid_before
