"""``collect --prometheus`` against the secured cluster (SASL_SSL, client certificate, ACLs on): the
history comes from a real Prometheus scraping the brokers' exporters, the Admin API part (placement, log
dirs, offsets) goes through ``--command-config``; no password reaches the output or the files."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from fixtures_prometheus import prometheus_server, up_targets
from kafka_balancer.cli.main import main
from kafka_balancer.collect.admin import connect_admin
from kafka_balancer.security.clients import kafka_kwargs
from kafka_balancer.security.settings import load_settings

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

TOPIC = "sec-prom-history"


def test_prometheus_history_with_command_config(secure_cluster: Any, tmp_path: Path,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    from kafka.admin import NewTopic

    from kafka import KafkaProducer

    props = secure_cluster.properties("admin")
    settings = load_settings(props)
    admin = connect_admin(secure_cluster.bootstrap, security=settings)
    secure_cluster._admins.append(admin)
    admin.create_topics([NewTopic(TOPIC, num_partitions=2, replication_factor=2)])
    metrics = secure_cluster.cluster.metrics_urls()
    targets = [u.split("//", 1)[1].split("/", 1)[0] for u in metrics.values()]
    with prometheus_server(tmp_path / "prometheus", targets) as url:
        prod = KafkaProducer(bootstrap_servers=secure_cluster.bootstrap, **kafka_kwargs(settings))
        t_end = time.monotonic() + 15
        while time.monotonic() < t_end:
            for p in (0, 1):
                prod.send(TOPIC, b"x" * 500, partition=p)
            time.sleep(0.01)
        prod.flush()
        prod.close()
        time.sleep(3)
        assert up_targets(url) == len(targets)
        out = tmp_path / "samples"
        capfd.readouterr()
        rc = main(["collect", "--prometheus", url, "--since", "20s", "--interval", "1s", "--format", "jsonl",
                   "--bootstrap", secure_cluster.bootstrap, "--command-config", str(props),
                   "--metrics", ",".join(f"{b}={u}" for b, u in metrics.items()), "--out", str(out)])
        o, e = capfd.readouterr()
    assert rc == 0, e
    # nobody consumed: Kafka made no per-topic BytesOut series, which is said, not fatal
    assert "no series for bytes_out" in e and "no series for group_committed" in e
    records = [orjson.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_bytes().splitlines()]
    parts = [r for r in records if r["type"] == "partition" and r["topic"] == TOPIC]
    assert len({r["ts"] for r in parts}) >= 10  # rounds from history
    leo = {}
    for r in sorted(parts, key=lambda r: r["ts"]):  # offsets from history grow round by round
        if r["log_end_offset"] is not None:  # rounds before the topic's gauges existed have none
            leo.setdefault(r["partition"], []).append(r["log_end_offset"])
    assert sorted(leo) == [0, 1] and all(len(v) >= 5 for v in leo.values()), leo
    assert all(v == sorted(v) and v[-1] > v[0] for v in leo.values()), leo
    assert any(r["type"] == "topic_broker" and r["topic"] == TOPIC and r["bytes_in"] > 0 for r in records)
    cap = orjson.loads((out / "broker-capacity.json").read_bytes())
    assert sorted(int(b) for b in cap["brokers"]) == secure_cluster.broker_ids
    written = "".join(f.read_text() for f in out.rglob("*") if f.is_file())
    for secret in secure_cluster.secrets():
        assert secret not in o and secret not in e and secret not in written
