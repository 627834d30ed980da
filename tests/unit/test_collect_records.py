"""Collector pieces without a cluster: exporter text parsing, records per docs/samples-format.md."""

from __future__ import annotations

from kafka_balancer.collect.collector import parse_interval
from kafka_balancer.collect.prom_text import parse_broker_metrics
from kafka_balancer.collect.sampler import RawRound, build_records
from kafka_balancer.collect.writer import SampleFileWriter

EXPORTER = """\
# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 42.25
os_available_processors 2.0
kafka_server_brokertopicmetrics_bytesinpersec_total{topic="orders",} 1234.0
kafka_server_brokertopicmetrics_bytesoutpersec_total{topic="orders",} 99.0
kafka_server_brokertopicmetrics_messagesinpersec_total{topic="orders",} 7.0
kafka_server_brokertopicmetrics_bytesinpersec_total{topic="logs"} 5.0E3
jvm_memory_bytes_used{area="heap",} 1.0E8
"""


def test_parse_exporter_text():
    m = parse_broker_metrics(EXPORTER)
    assert m.cpu_seconds == 42.25 and m.cpu_cores == 2
    assert m.topics["orders"].bytes_in == 1234.0 and m.topics["orders"].bytes_out == 99.0
    assert m.topics["orders"].messages_in == 7.0
    assert m.topics["logs"].bytes_in == 5000.0 and m.topics["logs"].bytes_out == 0.0
    assert parse_broker_metrics("garbage\n# only comments").cpu_seconds is None


def test_records_follow_the_sample_format():
    raw = RawRound(
        ts=1_700_000_000_000,
        brokers=[{"broker_id": 1, "host": "127.0.0.1", "rack": "host-0"},
                 {"broker_id": 2, "host": "127.0.0.1", "rack": "host-0"}],
        partitions={("orders", 0): {"replicas": [1, 3], "leader": 1, "isr": [1]}},
        end_offsets={("orders", 0): 50}, start_offsets={("orders", 0): 0},
        replica_sizes=[("orders", 0, 1, 4096, "/d1")],
        group_offsets=[("billing", "orders", 0, 40)],
        metrics={1: parse_broker_metrics(EXPORTER), 2: None},
    )
    recs = build_records(raw, "c1", hosts={1: "hostA"})
    assert {r["v"] for r in recs} == {1} and {r["ts"] for r in recs} == {raw.ts}
    assert {r["cluster"] for r in recs} == {"c1"}
    brokers = {r["broker"]: r for r in recs if r["type"] == "broker"}
    assert brokers[1]["host"] == "hostA" and brokers[2]["host"] == "127.0.0.1"
    assert brokers[1]["cpu_seconds"] == 42.25 and brokers[2]["cpu_seconds"] is None
    assert brokers[3]["alive"] is False  # holds a replica, missing from the metadata
    (part,) = [r for r in recs if r["type"] == "partition"]
    assert part["log_end_offset"] == 50 and part["isr"] == [1] and part["leader"] == 1
    assert [r["topic"] for r in recs if r["type"] == "topic_broker"] == ["logs", "orders"]
    (rep,) = [r for r in recs if r["type"] == "replica"]
    assert (rep["broker"], rep["size"], rep["log_dir"]) == (1, 4096, "/d1")
    (g,) = [r for r in recs if r["type"] == "group_offset"]
    assert (g["group"], g["committed"]) == ("billing", 40)


def test_writer_rotates_files(tmp_path):
    w = SampleFileWriter(tmp_path, rounds_per_file=2)
    for ts in (10, 20, 30):
        w.write_round([{"v": 1, "type": "broker", "cluster": "c", "ts": ts}])
    assert [p.name for p in w.files] == ["samples-10-0000.jsonl", "samples-30-0001.jsonl"]
    assert len(w.files[0].read_text().splitlines()) == 2


def test_parse_interval():
    assert parse_interval("10s") == 10.0 and parse_interval("500ms") == 0.5 and parse_interval("2m") == 120.0
    assert parse_interval("3") == 3.0
