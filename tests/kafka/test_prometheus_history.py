"""History from a real Prometheus server against live collection of the same span.

A real Prometheus (Debian's package, run on 127.0.0.1 with its own config) scrapes the local cluster's
JMX exporters every second while a producer writes known rates to three partitions and a consumer group
reads them. Over the same span the live collector samples the cluster. Snapshots built from both sample
sets must agree per partition and per broker: disk within 2 %, network within 5 % (issue 14 §4).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from fixtures_prometheus import prometheus_server, up_targets
from kafka_balancer.collect.capacity import read_capacity_file
from kafka_balancer.collect.collector import CollectOptions, collect
from kafka_balancer.collect.prometheus.history import HistoryOptions, collect_history
from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.batch import run_batch
from kafka_balancer.pipeline.config import PipelineConfig

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

TOPIC = "prom-history"
RATES = {0: 30_000.0, 1: 15_000.0, 2: 6_000.0}  # bytes of values per second per partition
VALUE = 1000
BACKLOG = 3000  # messages per partition before the span, so that a second of writes is < 2 % of a log


def _produce(bootstrap: str, stop: threading.Event) -> None:
    from kafka import KafkaProducer

    prod = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
    payload = b"x" * VALUE
    for p in RATES:
        for _ in range(BACKLOG):
            prod.send(TOPIC, payload, partition=p)
    prod.flush()
    sent = dict.fromkeys(RATES, 0)
    t0 = time.monotonic()
    while not stop.is_set():
        elapsed = time.monotonic() - t0
        for p, rate in RATES.items():
            while sent[p] < int(elapsed * rate / VALUE):
                prod.send(TOPIC, payload, partition=p)
                sent[p] += 1
        time.sleep(0.02)
    prod.flush()
    prod.close()


def _consume(bootstrap: str, stop: threading.Event, caught_up: threading.Event) -> None:
    """Reads every partition (assigned, so no group join can stall it) and commits after each poll."""
    from kafka import KafkaConsumer, TopicPartition

    cons = KafkaConsumer(bootstrap_servers=bootstrap, group_id="prom-history-readers",
                         auto_offset_reset="earliest", enable_auto_commit=False)
    tps = [TopicPartition(TOPIC, p) for p in RATES]
    cons.assign(tps)
    while not stop.is_set():
        if cons.poll(timeout_ms=100):
            cons.commit()
        if not caught_up.is_set():
            ends = cons.end_offsets(tps)
            if all(ends[tp] >= BACKLOG and cons.position(tp) >= ends[tp] - 50 for tp in tps):
                caught_up.set()
    cons.close()


def _loads(snapshot: dict[str, Any]) -> dict[tuple[str, int], dict[str, float]]:
    return {(p["topic"], p["partition"]): p["load"]["leader"] for p in snapshot["partitions"]}


def _broker_loads(snapshot: dict[str, Any]) -> dict[tuple[int, str], float]:
    out: dict[tuple[int, str], float] = {}
    for p in snapshot["partitions"]:
        if p["topic"] != TOPIC:
            continue
        for b in p["replicas"]:
            role = "leader" if b == p["leader"] else "follower"
            for r in ("disk", "nw_in", "nw_out"):
                out[(b, r)] = out.get((b, r), 0.0) + p["load"][role][r]
    return out


def test_history_snapshot_matches_live(kafka_cluster: Any, spark: Any, tmp_path: Path) -> None:
    from kafka.admin import NewTopic

    cluster = kafka_cluster.cluster
    admin = kafka_cluster.admin()
    admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=2)])
    time.sleep(2)
    targets = [u.split("//", 1)[1].split("/", 1)[0] for u in cluster.metrics_urls().values()]
    stop, caught_up = threading.Event(), threading.Event()
    threads = [threading.Thread(target=_produce, args=(kafka_cluster.bootstrap, stop), daemon=True),
               threading.Thread(target=_consume, args=(kafka_cluster.bootstrap, stop, caught_up), daemon=True)]
    with prometheus_server(tmp_path / "prometheus", targets) as url:
        for t in threads:
            t.start()
        assert caught_up.wait(120), "the consumer did not catch up with the backlog"
        time.sleep(4)  # steady state, a few scrapes
        assert up_targets(url) == len(targets)
        live_dir = tmp_path / "live"
        t0 = int(time.time() * 1000)
        collect(CollectOptions(bootstrap=kafka_cluster.bootstrap, out_dir=live_dir, interval_s=1.0, duration_s=44,
                               metrics_urls=cluster.metrics_urls(), hosts=cluster.hosts()), say=lambda m: None)
        t1 = int(time.time() * 1000)
        time.sleep(3)  # the last scrapes of the span are in
        stop.set()
        for t in threads:
            t.join(30)
        # the same span as the live rounds (the round timestamps, not when collect returned)
        live_ts = [orjson.loads(line)["ts"] for f in live_dir.glob("*.jsonl") for line in f.read_bytes().splitlines()]
        t0, t1 = min(live_ts) - 999, max(live_ts)
        hist_dir = tmp_path / "history"
        said: list[str] = []
        res = collect_history(HistoryOptions(
            prometheus_url=url, bootstrap=kafka_cluster.bootstrap, out_dir=hist_dir, start_ms=t0, end_ms=t1,
            step_ms=1000, metrics_urls=cluster.metrics_urls(), hosts=cluster.hosts(), file_format="parquet"),
            say=said.append, progress=False)
        # bad mapping against the same real server: essential series missing -> exit-2 error naming it
        bad = tmp_path / "bad-mapping.json"
        bad.write_text('{"series": {"bytes_in": {"metrics": ["no_such_bytes_in_total"]}}}')
        with pytest.raises(InputError, match=r"bytes_in \(tried no_such_bytes_in_total\{topic!=\"\"\}\)"):
            collect_history(HistoryOptions(prometheus_url=url, bootstrap=kafka_cluster.bootstrap,
                                           out_dir=tmp_path / "bad", start_ms=t0, end_ms=t1, step_ms=1000,
                                           mapping_path=bad), say=lambda m: None, progress=False)
    assert res.rounds >= 40, res
    # kafka_exporter is not running: group offsets have no history, and the collector says so
    assert res.missing == ["group_committed"], said
    assert any("kafka_consumergroup_current_offset" in m for m in said)
    assert set(res.series) >= {"cpu_seconds", "cpu_cores", "bytes_in", "bytes_out", "log_size", "log_end_offset"}

    # §5: both collectors wrote the brokers' own disk figures (DescribeLogDirs v4+), which are the volume's
    for d in (live_dir, hist_dir):
        doc = orjson.loads((d / "broker-capacity.json").read_bytes())
        assert sorted(int(b) for b in doc["brokers"]) == sorted(kafka_cluster.broker_ids)
        for entry in doc["log_dirs"]:
            st = os.statvfs(entry["log_dir"])
            assert entry["total_bytes"] == st.f_blocks * st.f_frsize
            assert 0 < doc["brokers"][str(entry["broker"])]["disk"] <= entry["total_bytes"]
    assert read_capacity_file(hist_dir).keys() == set(kafka_cluster.broker_ids)

    # windows of 10 s: a live round reads the exporters a few hundred ms after its timestamp (after the
    # Admin API calls), which moves a 5 s window's rate by several % on a loaded machine
    cfg = PipelineConfig(window_ms=10_000, windows=3, min_valid_ratio=0.5)
    live = run_batch(spark, live_dir, cfg)
    hist = run_batch(spark, hist_dir, cfg)
    assert hist.windows == live.windows
    lv, hv = _loads(live.snapshot), _loads(hist.snapshot)
    mine = sorted(k for k in lv if k[0] == TOPIC)
    assert len(mine) == 3
    for key in mine:
        a, b = lv[key], hv[key]
        print(key, {r: f"live {a[r]:.6g} history {b[r]:.6g} ({100 * (b[r] / a[r] - 1):+.2f} %)"
                    for r in ("disk", "nw_in", "nw_out")})
        assert b["disk"] == pytest.approx(a["disk"], rel=0.02), (key, "disk", a, b)
        assert b["nw_in"] == pytest.approx(a["nw_in"], rel=0.05), (key, "nw_in", a, b)
        assert b["nw_out"] == pytest.approx(a["nw_out"], rel=0.05), (key, "nw_out", a, b)
        assert a["nw_in"] == pytest.approx(RATES[key[1]], rel=0.25)  # the rates are the producer's
        assert a["nw_out"] > 1.5 * a["nw_in"]  # the consumer's bytes are in: nw_out = consumer + replication
    # per broker (this topic's replicas): leader role on the leader, follower role on the others
    bl, bh = _broker_loads(live.snapshot), _broker_loads(hist.snapshot)
    assert set(bl) == set(bh)
    for (b, res_name), v in bl.items():
        tol = 0.02 if res_name == "disk" else 0.05
        assert bh[(b, res_name)] == pytest.approx(v, rel=tol), (b, res_name, v, bh[(b, res_name)])
    brokers_live = {b["id"]: b for b in live.snapshot["brokers"]}
    for b in hist.snapshot["brokers"]:
        assert b["rack"] == brokers_live[b["id"]]["rack"]
