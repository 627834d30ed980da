"""The loads-topic record format (shared with the Java plugin's LoadRecord) and the local-cluster plumbing."""

from __future__ import annotations

import json

import pytest

from kafka_balancer.consumer.load_topic import FORMAT_VERSION, decode_record, encode_record
from kafka_balancer.errors import InputError
from kafka_balancer.localcluster.assignor import ASSIGNOR_CLASS, ASSIGNOR_OVERRIDES, uses_plugin, with_assignor
from kafka_balancer.localcluster.spec import ClusterSpec, plan_nodes, server_properties
from kafka_balancer.localcluster.tools import TOOLS, tool_command


def test_record_round_trip_and_versioning() -> None:
    k, v = encode_record("t.x-1", 12, 3.5, generation=9, ts_ms=1234, unit="msg/s", source="serve")
    assert k == b"t.x-1:12"
    doc = json.loads(v)
    assert doc["v"] == FORMAT_VERSION and doc["generation"] == 9 and doc["ts_ms"] == 1234
    rec = decode_record(k, v)
    assert rec is not None and (rec.topic, rec.partition, rec.load, rec.unit) == ("t.x-1", 12, 3.5, "msg/s")
    assert decode_record(k, None) is None  # tombstone
    with pytest.raises(InputError, match="format version 2"):
        decode_record(k, json.dumps({**doc, "v": 2}).encode())
    with pytest.raises(InputError, match="not <topic>:<partition>"):
        decode_record(b"nopartition", v)
    with pytest.raises(InputError, match="load"):
        encode_record("t", 0, float("nan"), generation=1, ts_ms=1)


def test_assignor_settings_reach_server_properties() -> None:
    spec = with_assignor(ClusterSpec(brokers=1, controllers=1))
    assert uses_plugin(spec) and not uses_plugin(ClusterSpec())
    node = plan_nodes(spec, [1, 2, 3])[0]
    from pathlib import Path

    props = server_properties(spec, node, [node], Path("/tmp/x"))
    assert f"group.consumer.assignors=uniform,range,{ASSIGNOR_CLASS}\n" in props
    assert dict(ASSIGNOR_OVERRIDES)["group.consumer.assignors"].endswith(ASSIGNOR_CLASS)


def test_tool_command_names_kafka_main_classes() -> None:
    cmd = tool_command("consumer-groups", ["--list"], "127.0.0.1:1", classpath="CP")
    assert cmd[-4:] == [TOOLS["consumer-groups"], "--bootstrap-server", "127.0.0.1:1", "--list"]
    assert cmd[cmd.index("CP") + 1] == "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
    with pytest.raises(InputError, match="unknown Kafka tool"):
        tool_command("nope", [], "x", classpath="CP")
