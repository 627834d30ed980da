"""Each pipeline transformation on small hand-made DataFrames (one shared local SparkSession)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson
import pytest
from pyspark.sql import functions as F

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.completeness import check, completeness_report
from kafka_balancer.pipeline.cpu_model import FIXED_WEIGHTS, CpuModel, solve
from kafka_balancer.pipeline.read import read_samples, read_samples_by_type
from kafka_balancer.pipeline.schemas import RAW_COLUMNS
from kafka_balancer.pipeline.sql.aggregate import broker_window_agg, partition_window_agg, window_aggregates
from kafka_balancer.pipeline.sql.cpu import broker_traffic, split_cpu
from kafka_balancer.pipeline.sql.loads import partition_loads
from kafka_balancer.pipeline.sql.rates import (
    broker_cpu_rates,
    group_deltas,
    partition_deltas,
    replica_deltas,
    topic_broker_rates,
)

from .helpers import MIN, T0, broker, group, part, replica, samples, tb

pytestmark = pytest.mark.spark
W = 300_000


def test_read_jsonl_and_parquet_give_the_same_typed_rows(spark: Any, tmp_path: Path) -> None:
    recs = [broker(T0, 1, 10.0), part(T0, "t", 0, 100, replicas=[1, 2], leader=1)]
    lines = [orjson.dumps({"v": 1, "cluster": "c", **r, "unknown_field": 1}) for r in recs]
    (tmp_path / "samples-1-0000.jsonl").write_bytes(b"\n".join([*lines, b"{not json"]) + b"\n")
    df = read_samples(spark, tmp_path)
    assert df.columns == [*RAW_COLUMNS, "event_time"]
    rows = {r["type"]: r for r in df.where(F.col("type").isNotNull()).collect()}
    assert rows["broker"]["cpu_seconds"] == 10.0 and rows["partition"]["replicas"] == [1, 2]
    # The same rows as Parquet, one folder per type.
    pq_dir = tmp_path / "pq"
    src = samples(spark, recs)
    for t in ("broker", "partition"):
        cols = [c for c in RAW_COLUMNS if c != "type"]
        src.where(F.col("type") == t).select(*cols).write.parquet(str(pq_dir / "parquet" / t))
    by_type = read_samples_by_type(spark, pq_dir)
    assert by_type["broker"].first()["cpu_seconds"] == 10.0
    assert by_type["partition"].first()["replicas"] == [1, 2]
    assert by_type["replica"].count() == 0


def test_read_rejects_an_empty_folder(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no samples"):
        read_samples(spark, tmp_path)


def test_window_aggregates_keep_first_last_and_points(spark: Any) -> None:
    df = samples(spark, [
        broker(T0, 1, 100.0), broker(T0 + MIN, 1, 160.0), broker(T0 + W, 1, 220.0),
        part(T0, "t", 0, 10, 1), part(T0 + 2 * MIN, "t", 0, 30, 2), part(T0 + W, "t", 0, 50, 2),
    ])
    b = broker_window_agg(df, W).orderBy("window").collect()
    assert [(r["window"], r["n"], [p["v"] for p in r["pts"]]) for r in b] == [
        (T0, 2, [100.0, 160.0]), (T0 + W, 1, [220.0])]
    p = partition_window_agg(df, W).orderBy("window").first()
    assert (p["first_leo"], p["last_leo"], p["first_lso"], p["last_lso"], p["n"]) == (10, 30, 1, 2, 2)


def test_cpu_rate_drops_a_counter_reset(spark: Any) -> None:
    # 4 cores; 60 CPU-seconds per 60 s is one core = 25 %. The reset interval (160 -> 10) is dropped.
    df = samples(spark, [broker(T0 + i * MIN, 1, v) for i, v in enumerate([100.0, 160.0, 10.0, 70.0])])
    r = broker_cpu_rates(broker_window_agg(df, W), W).first()
    assert r["cpu"] == pytest.approx(25.0)
    assert (r["cpu_intervals"], r["restarts"]) == (2, 1)
    assert r["cpu_max"] == pytest.approx(25.0) and r["cpu_p95"] == pytest.approx(25.0)


def test_cpu_rate_spans_the_window_boundary(spark: Any) -> None:
    # The first interval of window 1 starts at window 0's last point.
    df = samples(spark, [broker(T0 + 4 * MIN, 1, 0.0), broker(T0 + W, 1, 120.0), broker(T0 + W + MIN, 1, 150.0)])
    rows = broker_cpu_rates(broker_window_agg(df, W), W).orderBy("window").collect()
    assert rows[0]["cpu"] is None and rows[0]["cpu_intervals"] == 0
    assert rows[1]["cpu_intervals"] == 2
    assert rows[1]["cpu"] == pytest.approx(150.0 / 120.0 * 100 / 4)  # 150 cpu-s over 120 s on 4 cores
    assert rows[1]["cpu_max"] == pytest.approx(50.0)


def test_topic_rates_drop_negative_deltas_and_restart_intervals(spark: Any) -> None:
    recs = []
    cpu = [0.0, 60.0, 5.0, 65.0, 125.0]  # broker 1 restarts between rounds 1 and 2
    bytes_in = [1000.0, 7000.0, 13000.0, 19000.0, 25000.0]  # positive delta across the restart: still dropped
    for i in range(5):
        recs += [broker(T0 + i * MIN, 1, cpu[i]), tb(T0 + i * MIN, 1, "t", bytes_in[i], 2 * bytes_in[i])]
    recs += [tb(T0 + i * MIN, 2, "t", v) for i, v in enumerate([600.0, 1200.0, 60.0, 660.0])]  # reset on 2
    df = samples(spark, recs)
    aggs = window_aggregates(df, W)
    rows = {r["broker"]: r for r in topic_broker_rates(aggs["topic_broker"], aggs["broker"], W).collect()}
    assert rows[1]["tb_intervals"] == 3 and rows[1]["in_rate"] == pytest.approx(100.0)
    assert rows[1]["out_rate"] == pytest.approx(200.0)
    assert rows[2]["tb_intervals"] == 2 and rows[2]["in_rate"] == pytest.approx(10.0)


def test_partition_deltas_use_the_adjacent_window_and_drop_truncation(spark: Any) -> None:
    df = samples(spark, [
        part(T0 + 4 * MIN, "t", 0, 100, 10), part(T0 + W + 4 * MIN, "t", 0, 700, 40),  # adjacent: +600
        part(T0 + 3 * W, "t", 0, 800, 40), part(T0 + 3 * W + MIN, "t", 0, 900, 40),   # gap: own first
        part(T0 + 4 * W, "t", 0, 5, 0),                                                 # truncated
    ])
    rows = partition_deltas(partition_window_agg(df, W), W).orderBy("window").collect()
    got = [(r["d_leo"], r["d_lso"], r["span_ms"]) for r in rows]
    assert got == [(0, 0, 0), (600, 30, W), (100, 0, MIN), (None, 0, W - MIN)]


def test_group_deltas_clip_a_rewound_group(spark: Any) -> None:
    df = samples(spark, [
        group(T0, "a", "t", 0, 100), group(T0 + MIN, "a", "t", 0, 160),
        group(T0, "b", "t", 0, 500), group(T0 + MIN, "b", "t", 0, 20),  # rewound
    ])
    r = group_deltas(window_aggregates(df, W)["group_offset"], W).first()
    assert (r["d_committed"], r["groups"]) == (60, 2)


def test_partition_loads_split_by_offsets_and_fall_back_to_sizes(spark: Any) -> None:
    recs = []
    for i in range(3):
        ts = T0 + i * MIN
        # Topic t on broker 1: 4000 B/s in, shared 3:1 by p0 and p1; 1000 B/s out read only from p0.
        recs += [broker(ts, 1, 10.0 * i), tb(ts, 1, "t", 240_000.0 * i, 60_000.0 * i)]
        recs += [part(ts, "t", 0, 300 * i, leader=1, replicas=[1, 2]), part(ts, "t", 1, 100 * i, leader=1,
                                                                              replicas=[1, 2])]
        recs += [group(ts, "g", "t", 0, 50 * i), group(ts, "g", "t", 1, 0)]
        recs += [replica(ts, "t", 0, 1, 1000 + 10 * i), replica(ts, "t", 0, 2, 990), replica(ts, "t", 1, 1, 500)]
        # Topic u has no JMX series: its rate comes from the leader's size; retention deleted 2 messages of
        # 10 bytes in the second interval (size 200 -> 800 -> 1380 with 60 new messages a minute).
        lso = [0, 0, 2][i]
        recs += [part(ts, "u", 0, 20 + 60 * i, lso, leader=2, replicas=[2]),
                 replica(ts, "u", 0, 2, [200, 800, 1380][i])]
        # Topic v has no JMX series and its leader (3) has no replica record: no rate at all. Topic w's log
        # was recreated (log end 500 -> 20 -> 40): in the window of the drop its size says nothing either.
        recs += [part(ts, "v", 0, 10 * i, leader=3, replicas=[3, 2]), replica(ts, "v", 0, 2, 70)]
        recs += [part(ts, "w", 0, [500, 20, 40][i], leader=2, replicas=[2]), replica(ts, "w", 0, 2, [900, 30, 60][i])]
    df = samples(spark, recs)
    aggs = window_aggregates(df, W)
    pw = partition_loads(
        partition_deltas(aggs["partition"], W),
        topic_broker_rates(aggs["topic_broker"], aggs["broker"], W),
        replica_deltas(aggs["replica"], W),
        group_deltas(aggs["group_offset"], W),
    )
    rows = {(r["topic"], r["partition"]): r for r in pw.collect()}
    p0, p1, u0 = rows[("t", 0)], rows[("t", 1)], rows[("u", 0)]
    assert p0["nw_in"] == pytest.approx(3000.0) and p1["nw_in"] == pytest.approx(1000.0)
    assert p0["nw_out"] == pytest.approx(1000.0 + 3000.0)  # consumers + one follower's fetch
    assert p1["nw_out"] == pytest.approx(1000.0)  # no consumer, one follower
    assert p0["disk"] == 1020.0  # the leader's latest size, not the follower's
    assert (u0["nw_in_source"], u0["nw_in"]) == ("size", pytest.approx(10.0))  # 1200 B over 120 s
    # no rate is null, not 0 (a window without a rate must not count as an idle one)
    v0 = rows[("v", 0)]
    assert (v0["nw_in_source"], v0["nw_in"], v0["nw_out"], v0["disk"]) == (None, None, None, 70.0)
    w0 = rows[("w", 0)]
    assert (w0["d_leo"], w0["nw_in_source"], w0["nw_in"], w0["disk"]) == (None, None, None, 60.0)


def test_cpu_model_recovers_exact_weights_and_falls_back_when_short() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    x = rng.uniform(1e5, 1e7, size=(40, 3))
    coef = np.array([7e-7, 1.5e-7, 1.5e-7])
    y = x @ coef
    g: dict[str, float] = {"n": 40.0, "windows": 5.0, "sy": float(y.sum()), "syy": float(y @ y)}
    for i in range(3):
        g[f"xy_{i}"] = float(x[:, i] @ y)
        for j in range(i, 3):
            g[f"xx_{i}{j}"] = float(x[:, i] @ x[:, j])
    m = solve(g)
    assert m.fitted and m.normalised == pytest.approx((0.7, 0.15, 0.15), rel=1e-6)
    assert m.rmse is not None and m.rmse < 1e-6 and m.r2 == pytest.approx(1.0)
    short = solve({**g, "windows": 2.0})
    assert not short.fitted and short.weights == FIXED_WEIGHTS and "too little history" in short.reason


def test_cpu_split_spreads_each_brokers_cpu_by_weighted_traffic(spark: Any) -> None:
    # weights a, b, c = 1, 0.5, 0.25. Traffic (from the partitions below):
    #   broker 1 leads t/0 (in 100, out 200) and follows t/1 (in 50): weighted 100 + 100 + 12.5 = 212.5;
    #   broker 2 leads t/1 (in 50, out 50) and follows t/0 (in 100): 50 + 25 + 25 = 100;
    #   broker 3 follows t/1: 12.5, and has no CPU measurement, so it takes the cluster's CPU per weighted
    #   byte, (42.5 + 30) / (212.5 + 100) = 0.232. t/2 has no leader: no leader CPU, no follower CPU.
    pw = spark.createDataFrame(
        [("c", "t", 0, 0, 1, [1, 2], 100.0, 200.0, True), ("c", "t", 1, 0, 2, [2, 3, 1], 50.0, 50.0, True),
         ("c", "t", 2, 0, None, [3, 1], 10.0, 0.0, False)],
        "cluster string, topic string, partition int, window long, leader int, replicas array<int>, "
        "nw_in double, nw_out double, pw_valid boolean",
    )
    bw = spark.createDataFrame([("c", 1, 0, 42.5), ("c", 2, 0, 30.0), ("c", 3, 0, None)],
                               "cluster string, broker int, window long, cpu double")
    model = CpuModel((1.0, 0.5, 0.25), (0.57, 0.29, 0.14), True, "fitted", 3, 1, None, None, None)
    out = split_cpu(pw, bw, broker_traffic(pw), model)
    assert out.columns == [*pw.columns, "cpu_leader", "cpu_follower"]
    rows = {r["partition"]: r for r in out.collect()}
    assert len(rows) == 3 and rows[2]["pw_valid"] is False  # the other columns pass through
    assert rows[0]["cpu_leader"] == pytest.approx(0.2 * 200.0)  # 42.5 / 212.5 per weighted byte
    assert rows[0]["cpu_follower"] == pytest.approx(0.3 * 25.0)  # broker 2: 30 / 100
    assert rows[1]["cpu_leader"] == pytest.approx(0.3 * 75.0)
    assert rows[1]["cpu_follower"] == pytest.approx((0.232 * 12.5 + 0.2 * 12.5) / 2)  # mean of brokers 3 and 1
    assert rows[2]["cpu_leader"] is None and rows[2]["cpu_follower"] == 0.0


def test_completeness_fails_clearly_under_the_threshold() -> None:
    import pandas as pd

    parts = pd.DataFrame({
        "topic": ["a"] * 10 + ["b"] * 10, "partition": list(range(10)) * 2,
        "leader": [1] * 10 + [2] * 9 + [3], "valid_windows": [6] * 10 + [6] * 9 + [1],
        "reasons": [[]] * 19 + [["too few samples"]],
    })
    brokers = pd.DataFrame({"broker": [1, 2, 3], "cpu_valid_windows": [6, 6, 5], "cpu_windows": [6, 6, 6]})
    rep = completeness_report(parts, brokers, list(range(6)), 3, 0.95)
    assert rep["valid_ratio"] == pytest.approx(0.95) and rep["topics"][0]["topic"] == "b"
    check(rep)  # exactly at the threshold passes
    strict = completeness_report(parts, brokers, list(range(6)), 3, 0.99)
    with pytest.raises(InputError, match=r"19 of 20 partitions.*b \(9/10\).*broker 3") as exc:
        check(strict)
    assert exc.value.hint and "--min-valid-ratio" in exc.value.hint
    assert math.isclose(strict["valid_ratio"], 0.95)


def test_batch_partition_aggregate_equals_the_streaming_one(spark: Any) -> None:
    # Seeded random partition samples over 3 windows: the replica list, the ISR and the leader change inside
    # windows, offsets move both ways and some rounds are missing. The batch aggregation (lists as grouping
    # keys, then the latest lists) must give exactly the single aggregation that streaming runs.
    import numpy as np

    rng = np.random.default_rng(7)
    lists = [[1, 2, 3], [2, 3, 1], [1, 2], [4, 5, 6]]
    recs = []
    for p in range(4):
        leo = 0
        for i in range(15):
            if rng.random() < 0.2:
                continue
            leo = max(0, leo + int(rng.integers(-20, 100)))
            reps = lists[int(rng.integers(0, len(lists)))]
            rec = part(T0 + i * MIN + int(rng.integers(0, 1000)), "t", p, leo, int(rng.integers(0, 5)),
                       leader=reps[0], replicas=reps)
            rec["isr"] = reps[: int(rng.integers(1, len(reps) + 1))]
            recs.append(rec)
    df = samples(spark, recs)
    cols = ["cluster", "topic", "partition", "n", "first_ts", "last_ts", "first_leo", "last_leo", "first_lso",
            "last_lso", "replicas", "leader", "isr", "leader_moved", "window"]
    batch = partition_window_agg(df, W, False)
    streaming = partition_window_agg(df, W, True)
    assert batch.columns == streaming.columns == cols
    key = ["topic", "partition", "window"]
    got = [r.asDict() for r in batch.orderBy(*key).collect()]
    want = [r.asDict() for r in streaming.orderBy(*key).collect()]
    assert len(got) == 12 and got == want
    assert any(r["leader_moved"] for r in got) and len({tuple(r["replicas"]) for r in got}) > 1


def test_topic_rates_from_raw_samples_equal_those_from_the_window_aggregate(spark: Any) -> None:
    # A batch job hands the raw topic_broker samples to the rates; streaming hands the aggregate's points.
    import numpy as np

    rng = np.random.default_rng(11)
    recs = []
    for b in (1, 2):
        cpu, total = 0.0, 0.0
        for i in range(12):
            ts = T0 + i * MIN
            # Broker 2 restarts before round 7; its byte counter still grows across it (the interval must
            # be dropped because of the CPU counter's reset), and it is rewound once before round 10.
            cpu = 0.0 if (b == 2 and i == 7) else cpu + 30.0
            total = total / 4 if (b == 2 and i == 10) else total + float(rng.integers(0, 5000))
            recs += [broker(ts, b, cpu), tb(ts, b, "t", total, total / 2)]
    df = samples(spark, recs)
    aggs = window_aggregates(df, W)
    raw = df.where(F.col("type") == "topic_broker").select("cluster", "broker", "topic", "ts", "bytes_in", "bytes_out")
    key = ["broker", "window"]
    a = [r.asDict() for r in topic_broker_rates(aggs["topic_broker"], aggs["broker"], W).orderBy(*key).collect()]
    b_ = [r.asDict() for r in topic_broker_rates(raw, aggs["broker"], W).orderBy(*key).collect()]
    assert a == b_ and len(a) == 6
    assert sum(r["tb_intervals"] for r in a) == 2 * 11 - 2  # broker 2's restart and rewind are dropped
