"""The pure parts of ``collect --prometheus``: mapping, chunk planning, records from history blocks."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from kafka_balancer.collect.prometheus.assemble import Placement, chunk_tables
from kafka_balancer.collect.prometheus.fetch import MAX_STEPS, Block, plan_batches, plan_chunks, selector
from kafka_balancer.collect.prometheus.mapping import load_mapping
from kafka_balancer.errors import InputError


def test_default_mapping_names_the_three_rule_sets() -> None:
    m = load_mapping(None)
    # ours (localcluster rules), the JMX exporter's Kafka example and Strimzi's (name=(.+)PerSec -> bytesin)
    assert m.kinds["bytes_in"].metrics == ("kafka_server_brokertopicmetrics_bytesinpersec_total",
                                           "kafka_server_brokertopicmetrics_bytesin_total")
    assert m.kinds["log_end_offset"].metrics[0] == "kafka_log_log_logendoffset"
    assert m.kinds["group_committed"].metrics == ("kafka_consumergroup_current_offset",)
    assert {k for k, kind in m.kinds.items() if kind.essential} == {"bytes_in", "log_end_offset"}


def test_broker_id_from_instance_labels_and_hosts() -> None:
    m = load_mapping(None)
    assert m.broker_of({"instance": "127.0.0.1:9404"}, {"127.0.0.1:9404": 7}, {}) == 7
    assert m.broker_of({"instance": "x:1", "pod": "my-cluster-broker-12"}, {}, {}) == 12
    assert m.broker_of({"instance": "kafka-3.example:9404"}, {}, {"kafka-3.example": 3}) == 3
    assert m.broker_of({"instance": "unknown:9404"}, {}, {}) is None


def test_mapping_file_overrides_and_errors(tmp_path: Path) -> None:
    f = tmp_path / "m.json"
    f.write_text('{"selector": "job=\\"kafka\\"", "series": {"bytes_in": {"metrics": ["my_bytes_in_total"]}},'
                 ' "broker_id_labels": [{"label": "node", "regex": "n(\\\\d+)"}]}')
    m = load_mapping(f)
    assert m.kinds["bytes_in"].metrics == ("my_bytes_in_total",)
    assert m.kinds["bytes_out"].metrics[0] == "kafka_server_brokertopicmetrics_bytesoutpersec_total"  # kept
    assert selector("my_bytes_in_total", m, m.kinds["bytes_in"], ["h:1"]) == \
        'my_bytes_in_total{job="kafka",topic!="",instance=~"h:1"}'
    assert m.broker_of({"node": "n4"}, {}, {}) == 4
    for bad, words in [('{"series": {"bytes": {"metrics": []}}}', "unknown series kind 'bytes'"),
                       ('{"series": {"bytes_in": {"metrics": ["9bad"]}}}', "not a Prometheus metric name"),
                       ('{"broker_id_labels": [{"label": "pod", "regex": "\\\\d+"}]}', "needs a group"),
                       ('{"selector": "{job=\\"x\\"}"}', "without braces"),
                       ('[1]', "must be a JSON object"), ("{", "cannot read it as JSON")]:
        f.write_text(bad)
        with pytest.raises(InputError, match=words) as e:
            load_mapping(f)
        assert str(f) in e.value.message


def test_chunks_stay_under_the_server_limits() -> None:
    chunks = plan_chunks(0, 6 * 3600 * 1000, 10_000, total_series=2_000_000, max_values=20_000_000)
    assert all((b - a) // 10_000 + 1 <= 10 for a, b in chunks)  # 10 rounds x 2M series = 20M values
    assert chunks[0][0] == 0 and chunks[-1][1] == 6 * 3600 * 1000
    assert all(b + 10_000 == c for (_, b), (c, _) in itertools.pairwise(chunks))
    one = plan_chunks(0, 10**9, 1000, total_series=1)
    assert (one[0][1] - one[0][0]) // 1000 + 1 == MAX_STEPS
    batches = plan_batches({f"i{k:02d}": 300 for k in range(20)}, steps=1000, max_points=1_000_000)
    assert [len(b) for b in batches] == [3] * 6 + [2]
    assert sorted(i for b in batches for i in b) == [f"i{k:02d}" for k in range(20)]


def _placement() -> Placement:
    return Placement(
        brokers={1: {"host": "h1", "rack": "r1"}, 2: {"host": "h2", "rack": "r2"}},
        partitions={("t", 0): {"replicas": [1, 2], "leader": 1, "isr": [1, 2]},
                    ("t", 1): {"replicas": [2, 1], "leader": 2, "isr": [2]}},
        end_offsets={("t", 0): 500, ("t", 1): 900}, start_offsets={("t", 0): 0, ("t", 1): 10},
        sizes={("t", 0, 1): (5000, "/d1"), ("t", 0, 2): (4990, "/d2"), ("t", 1, 1): (9000, "/d1"),
               ("t", 1, 2): (9000, "/d2")})


def test_records_from_history_blocks() -> None:
    nan = np.nan
    ts = np.array([10_000, 20_000, 30_000], np.int64)
    blocks = {
        "cpu_seconds": Block([(1,), (2,)], np.array([[1.0, 2.0, 3.0], [5.0, nan, 7.0]])),  # broker 2 down at 20 s
        "cpu_cores": None,
        "bytes_in": Block([(1, "t"), (2, "t"), (1, "__consumer_offsets")], np.array([[10.0, 20.0, 30.0],
                                                                                     [1.0, nan, 3.0],
                                                                                     [1.0, 1.0, 1.0]])),
        "bytes_out": None, "messages_in": None,
        # the leader's series for (t, 0); for (t, 1) only the follower's (broker 1) and a kafka_exporter one (-1)
        "log_end_offset": Block([(1, "t", 0), (2, "t", 0), (1, "t", 1), (-1, "t", 1)],
                                np.array([[100.0, 110.0, 120.0], [99.0, 109.0, 119.0],
                                          [50.0, nan, 70.0], [nan, 60.0, 71.0]])),
        "log_start_offset": None,
        "log_size": Block([(1, "t", 0), (2, "t", 0)], np.array([[1e3, 2e3, 3e3], [nan, 2e3, 3e3]])),
        "group_committed": Block([("g", "t", 0), ("g", "gone", 0)], np.array([[5.0, 6.0, 7.0], [1.0, 1.0, 1.0]])),
    }
    tabs = chunk_tables(_placement(), ts, blocks, "c", {1: "hostA"}, cores_default=4)
    b = tabs["broker"].to_pylist()
    assert [(r["ts"], r["broker"], r["alive"], r["cpu_seconds"], r["cpu_cores"]) for r in b] == [
        (10_000, 1, True, 1.0, 4), (10_000, 2, True, 5.0, 4), (20_000, 1, True, 2.0, 4),
        (20_000, 2, False, None, 4), (30_000, 1, True, 3.0, 4), (30_000, 2, True, 7.0, 4)]
    assert (b[0]["host"], b[1]["host"], b[1]["rack"]) == ("hostA", "h2", "r2")
    tb = tabs["topic_broker"].to_pylist()
    assert [(r["ts"], r["broker"], r["bytes_in"], r["bytes_out"]) for r in tb] == [
        (10_000, 1, 10.0, 0.0), (10_000, 2, 1.0, 0.0), (20_000, 1, 20.0, 0.0), (30_000, 1, 30.0, 0.0),
        (30_000, 2, 3.0, 0.0)]  # internal topics left out; a round without a value has no record
    p = tabs["partition"].to_pylist()
    assert [(r["ts"], r["partition"], r["log_end_offset"], r["log_start_offset"], r["replicas"]) for r in p] == [
        (10_000, 0, 100, 0, [1, 2]), (10_000, 1, 50, 10, [2, 1]), (20_000, 0, 110, 0, [1, 2]),
        (20_000, 1, 60, 10, [2, 1]), (30_000, 0, 120, 0, [1, 2]), (30_000, 1, 71, 10, [2, 1])]
    rep = tabs["replica"].to_pylist()
    assert [(r["ts"], r["partition"], r["broker"], r["size"], r["log_dir"]) for r in rep] == [
        (10_000, 0, 1, 1000, "/d1"), (20_000, 0, 1, 2000, "/d1"), (20_000, 0, 2, 2000, "/d2"),
        (30_000, 0, 1, 3000, "/d1"), (30_000, 0, 2, 3000, "/d2")]
    g = tabs["group_offset"].to_pylist()
    assert [(r["ts"], r["group"], r["committed"]) for r in g] == [(10_000, "g", 5), (20_000, "g", 6), (30_000, "g", 7)]
    assert all(r["v"] == 1 and r["cluster"] == "c" for t in tabs.values() for r in t.to_pylist())


def test_without_history_the_current_values_fill_every_round() -> None:
    ts = np.array([0, 1000], np.int64)
    tabs = chunk_tables(_placement(), ts, dict.fromkeys(("cpu_seconds", "log_size", "log_end_offset")), "c", {})
    assert [r["size"] for r in tabs["replica"].to_pylist()] == [5000, 9000, 4990, 9000] * 2  # by broker
    assert [r["log_end_offset"] for r in tabs["partition"].to_pylist()] == [500, 900] * 2
    assert all(r["alive"] and r["cpu_seconds"] is None for r in tabs["broker"].to_pylist())
    assert tabs["group_offset"].num_rows == 0 and tabs["topic_broker"].num_rows == 0
