"""Local cluster layout and config rendering (no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.jvm.artifacts import artifact_sets, pom_stamp
from kafka_balancer.localcluster.spec import (
    ClusterSpec,
    jvm_command,
    plan_nodes,
    ports_from_base,
    quorum_voters,
    server_properties,
)


def test_default_layout_is_three_hosts_of_two_brokers_with_three_controllers():
    spec = ClusterSpec()
    nodes = plan_nodes(spec, ports_from_base(spec, 19092))
    assert [n.rack for n in nodes] == ["host-0", "host-0", "host-1", "host-1", "host-2", "host-2"]
    assert [n.is_controller for n in nodes] == [True, True, True, False, False, False]
    assert nodes[0].broker_port == 19092 and nodes[0].metrics_port == 19192 and nodes[0].controller_port == 19292
    assert quorum_voters(nodes) == "1@127.0.0.1:19292,2@127.0.0.1:19293,3@127.0.0.1:19294"


def test_server_properties_are_loopback_kraft_with_rack():
    spec = ClusterSpec(brokers=3, controllers=1, brokers_per_host=1, overrides=(("num.partitions", "9"),))
    nodes = plan_nodes(spec, list(range(40000, 40000 + spec.ports_needed)))
    props = dict(line.split("=", 1) for line in server_properties(spec, nodes[1], nodes, Path("/d")).splitlines())
    assert props["process.roles"] == "broker" and props["broker.rack"] == "host-1"
    assert props["listeners"] == f"PLAINTEXT://127.0.0.1:{nodes[1].broker_port}"
    assert props["num.partitions"] == "9" and props["auto.leader.rebalance.enable"] == "false"
    ctrl = dict(line.split("=", 1) for line in server_properties(spec, nodes[0], nodes, Path("/d")).splitlines())
    assert "CONTROLLER://127.0.0.1:" in ctrl["listeners"]


def test_jvm_command_has_small_heap_and_exporter_agent():
    spec = ClusterSpec(heap_mb=256)
    n = plan_nodes(spec, ports_from_base(spec, 20000))[0]
    cmd = jvm_command(spec, n, [Path("/a.jar"), Path("/b.jar")], Path("/agent.jar"), Path("/n1"))
    assert "-Xmx256m" in cmd and cmd[-2:] == ["kafka.Kafka", "/n1/server.properties"]
    assert f"-javaagent:/agent.jar=127.0.0.1:{n.metrics_port}:/n1/jmx-exporter.yaml" in cmd


@pytest.mark.parametrize("kw", [{"brokers": 0}, {"controllers": 7}, {"brokers_per_host": 0}, {"heap_mb": 64}])
def test_bad_specs_are_refused(kw):
    with pytest.raises(InputError):
        ClusterSpec(**kw).validate()


def test_artifact_sets_include_kafka_and_stamp_changes_with_the_pom(tmp_path):
    names = [a.name for a in artifact_sets()]
    assert "kafka" in names
    pom = tmp_path / "x" / "pom.xml"
    pom.parent.mkdir()
    pom.write_text("<project/>")
    s1 = pom_stamp(pom)
    pom.write_text("<project></project>")
    assert pom_stamp(pom) != s1
    assert [a.name for a in artifact_sets(tmp_path)] == ["x"]


def test_cluster_ids_never_start_with_a_dash() -> None:
    """kafka-storage reads an id that starts with '-' as an option (one start in 64 failed that way)."""
    import base64

    from kafka_balancer.localcluster.cluster import _new_cluster_id

    ids = [_new_cluster_id() for _ in range(3000)]  # without the rule, P(no dash first) = (63/64)^3000 ≈ 3e-21
    assert not [i for i in ids if i.startswith("-")]
    assert all(len(base64.urlsafe_b64decode(i + "==")) == 16 for i in ids)
