"""Broker traffic, the CPU split and the summaries of ``pipeline.columnar.np_cpu`` on hand-made partition and broker
window tables (no Spark); expected values are worked out by hand from ``sql/cpu.py``, ``sql/validity.py``
and ``sql/summaries.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from kafka_balancer.pipeline.columnar.np_cpu import (
    broker_summary,
    broker_table,
    broker_traffic,
    explode,
    fit_rows,
    partition_summary,
    reasons,
    split_cpu,
)
from kafka_balancer.pipeline.cpu_model import CpuModel

W = 60_000
W0, W1, W2 = 100 * W, 101 * W, 102 * W
I32, I64, F64, STR = pa.int32(), pa.int64(), pa.float64(), pa.string()

PW = pa.schema([("cluster", STR), ("topic", STR), ("partition", I32), ("window", I64), ("replicas", pa.list_(I32)),
                ("leader", I32), ("nw_in", F64), ("nw_out", F64), ("pw_valid", pa.bool_())])
BW = pa.schema([("cluster", STR), ("broker", I32), ("window", I64), ("cpu", F64), ("cpu_intervals", I64)])


def pw_row(p: str, window: int, replicas: list[int | None] | None, leader: int | None, nw_in: float | None,
           nw_out: float | None, valid: bool = True) -> dict[str, Any]:
    return {"cluster": "c", "topic": "t", "partition": int(p[1:]), "window": window, "replicas": replicas,
            "leader": leader, "nw_in": nw_in, "nw_out": nw_out, "pw_valid": valid}


def bw_table(rows: list[tuple[int, int, float | None]]) -> pa.Table:
    """Broker windows from (broker, window, cpu)."""
    return pa.Table.from_pylist([{"cluster": "c", "broker": b, "window": w, "cpu": cpu, "cpu_intervals": 5}
                                 for b, w, cpu in rows], BW)


def model(a: float, b: float, c: float) -> CpuModel:
    return CpuModel((a, b, c), (a, b, c), True, "fitted", 0, 0, None, None, None)


def by_key(t: pa.Table, keys: list[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
    rows = t.to_pylist()
    out = {tuple(r[k] for k in keys): r for r in rows}
    assert len(out) == len(rows)
    return out


def test_explode_gives_one_entry_per_replica_with_its_role() -> None:
    pw = pa.Table.from_pylist([
        pw_row("p0", W1, [1, 2], 2, 1.0, 1.0),
        pw_row("p1", W0, None, 1, 1.0, 1.0),  # null list: no entry (as Spark's explode)
        pw_row("p2", W0, [], 1, 1.0, 1.0),  # empty list: no entry
        pw_row("p3", W0, [3, None], 3, 1.0, 1.0),  # a null broker is neither leader nor follower
        pw_row("p4", W1, [1], None, 1.0, 1.0),  # no leader: neither
    ], PW)
    r = explode(pw, bw_table([(4, W0, 1.0)]))
    assert r.parent.tolist() == [0, 0, 3, 3, 4]
    assert r.lead.tolist() == [False, True, True, False, False]
    assert r.follow.tolist() == [True, False, False, False, False]
    assert r.brokers.to_pylist() == [1, 2, 3, 4] and r.windows.tolist() == [W0, W1]  # codes: broker 1 -> 0, ...
    assert r.broker.tolist() == [0, 1, 2, -1, 0] and r.window.tolist() == [1, 1, 0, 0, 1]


# --- broker traffic ------------------------------------------------------------------------------


def test_broker_traffic_counts_leaders_and_followers_by_role() -> None:
    pw = pa.Table.from_pylist([
        pw_row("p0", W0, [1, 2], 1, 100.0, 250.0),
        pw_row("p1", W0, [2, 3], 2, 40.0, 60.0, valid=False),
        pw_row("p2", W0, [1, 3], None, 1000.0, 2000.0),  # no leader: nobody's lin, lout or fin
        pw_row("p3", W0, None, 1, 5000.0, 5000.0),  # no replica list: no entry at all
        pw_row("p4", W0, [3], 3, None, 5.0, valid=False),  # null nw_in: skipped by the sum
        pw_row("p0", W1, [2, 1], 2, 10.0, 20.0),  # leader moved to 2
        pw_row("p5", W1, [4], 4, None, None),  # broker 4's only values are null: null sums
    ], PW)
    bw = bw_table([(b, w, 10.0) for b in (1, 2, 3) for w in (W0, W1)])
    got = by_key(broker_traffic(pw, explode(pw, bw)), ["broker", "window"])
    cols = ("lin", "lout", "fin", "replica_count", "invalid_partitions")
    assert {k: tuple(r[c] for c in cols) for k, r in got.items()} == {
        (1, W0): (100.0, 250.0, 0.0, 2, 0),  # leads p0; p2 (no leader) counts 0 but is a replica
        (2, W0): (40.0, 60.0, 100.0, 2, 1),  # leads p1 (invalid), follows p0
        (3, W0): (0.0, 5.0, 40.0, 3, 2),  # follows p1, p2 counts 0, leads p4 (nw_in null -> 0 + 0 + skipped)
        (2, W1): (10.0, 20.0, 0.0, 1, 0),
        (1, W1): (0.0, 0.0, 10.0, 1, 0),
        (4, W1): (None, None, 0.0, 1, 0),
    }
    assert all(r["cluster"] == "c" for r in got.values())


# cpu_model.broker_traffic: when(~pw_valid, 1).otherwise(0) takes the otherwise branch for a null pw_valid
def test_a_null_pw_valid_is_not_counted_as_an_invalid_partition() -> None:
    pw = pa.Table.from_pylist([{**pw_row("p0", W0, [1, 2], 1, 10.0, 10.0), "pw_valid": None}], PW)
    got = broker_traffic(pw, explode(pw, bw_table([(1, W0, 1.0)])))
    assert got.column("invalid_partitions").to_pylist() == [0, 0]


def test_broker_table_marks_cpu_validity_and_joins_the_traffic() -> None:
    pw = pa.Table.from_pylist([pw_row("p0", W0, [1], 1, 100.0, 150.0), pw_row("p0", W1, [1], 1, 10.0, 15.0)], PW)
    bw = pa.Table.from_pylist([
        {"cluster": "c", "broker": 1, "window": W0, "cpu": 10.0, "cpu_intervals": 2},
        {"cluster": "c", "broker": 2, "window": W0, "cpu": 10.0, "cpu_intervals": 1},
        {"cluster": "c", "broker": 3, "window": W0, "cpu": None, "cpu_intervals": 5},
        {"cluster": "c", "broker": 1, "window": W1, "cpu": 20.0, "cpu_intervals": 1},
    ], BW)
    r = explode(pw, bw)
    bt = by_key(broker_table(bw, broker_traffic(pw, r), {W0: 6, W1: 1}, 0.5, r), ["broker", "window"])
    # W0: min_samples ceil(6 × 0.5) = 3, intervals needed max(1, 3 − 1) = 2; W1: min_samples 1, needed 1
    assert {k: (v["min_samples"], v["cpu_valid"]) for k, v in bt.items()} == {
        (1, W0): (3, True), (2, W0): (3, False), (3, W0): (3, False), (1, W1): (1, True)}
    assert (bt[(1, W0)]["lin"], bt[(1, W0)]["lout"], bt[(1, W1)]["lin"]) == (100.0, 150.0, 10.0)
    assert bt[(2, W0)]["lin"] is None and bt[(2, W0)]["invalid_partitions"] is None  # no traffic: left join


def test_fit_rows_keep_valid_cpu_windows_whose_partitions_all_count() -> None:
    bt = pa.table({"cluster": ["c"] * 5, "broker": pa.array([1, 2, 3, 4, 5], I32), "window": [W0] * 5,
                   "cpu": [10.0, 20.0, 30.0, 40.0, 50.0], "cpu_valid": [True, True, False, None, True],
                   "invalid_partitions": pa.array([0, 1, 0, 0, None], I64),
                   "lin": [1.0] * 5, "lout": [2.0] * 5, "fin": [3.0] * 5})
    rows = fit_rows(bt)
    assert rows.column_names == ["cluster", "broker", "window", "y", "lin", "lout", "fin"]
    assert rows.to_pylist() == [{"cluster": "c", "broker": 1, "window": W0, "y": 10.0, "lin": 1.0, "lout": 2.0,
                                 "fin": 3.0}]


# --- the CPU split -------------------------------------------------------------------------------


def test_split_cpu_spreads_each_brokers_cpu_over_its_replicas_by_weighted_traffic() -> None:
    # weights a, b, c = 0.5, 0.25, 0.125: leader cost 0.5·in + 0.25·out, follower cost 0.125·in
    pw = pa.Table.from_pylist([
        pw_row("p0", W0, [1, 2], 1, 100.0, 200.0),  # leader 1: 50 + 50 = 100; follower 2: 12.5
        pw_row("p1", W0, [2, 1], 2, 40.0, 40.0),  # leader 2: 20 + 10 = 30; follower 1: 5
        pw_row("p2", W0, [3, 1, 2], 3, 80.0, 160.0),  # leader 3: 40 + 40 = 80; followers 1 and 2: 10 each
        pw_row("p3", W0, [1], 1, 0.0, 0.0),  # no follower: cpu_follower 0
        pw_row("p4", W0, [2], None, 50.0, 50.0),  # no leader: no leader or follower CPU
        pw_row("p0", W1, [1, 2], 1, 100.0, 200.0),  # W1: leader 1: 100, follower 2: 12.5
    ], PW)
    # weighted bytes, W0: broker 1 100 + 5 + 10 = 115; broker 2 12.5 + 30 + 10 = 52.5; broker 3 80.
    # CPU per weighted byte: broker 1 23 / 115 = 0.2; broker 2 21 / 52.5 = 0.4; broker 3 has no CPU: the
    # cluster's (23 + 21) / (115 + 52.5). W1: broker 1 50 / 100 = 0.5; broker 2 has no CPU in W1: the
    # cluster's of W1 (50 / 100), not of W0.
    bw = bw_table([(1, W0, 23.0), (2, W0, 21.0), (3, W0, None), (1, W1, 50.0)])
    r = explode(pw, bw)
    got = by_key(split_cpu(pw, bw, broker_traffic(pw, r), model(0.5, 0.25, 0.125), r), ["partition", "window"])
    k3 = (23.0 + 21.0) / (115.0 + 52.5)
    want = {
        (0, W0): (0.2 * 100, 0.4 * 12.5),
        (1, W0): (0.4 * 30, 0.2 * 5),
        (2, W0): (k3 * 80, (0.2 * 10 + 0.4 * 10) / 2),  # the mean over the two followers
        (3, W0): (0.0, 0.0),
        (0, W1): (0.5 * 100, 0.5 * 12.5),
    }
    for key, (lead, follow) in want.items():
        assert got[key]["cpu_leader"] == pytest.approx(lead), key
        assert got[key]["cpu_follower"] == pytest.approx(follow), key
    # (each measured broker's CPU is spread exactly: broker 1 20 + 1 + 2 + 0 = 23, broker 2 5 + 12 + 4 = 21)
    assert got[(4, W0)]["cpu_leader"] is None and got[(4, W0)]["cpu_follower"] == 0.0


def test_split_cpu_without_any_cpu_in_a_window_leaves_the_leader_cpu_null() -> None:
    pw = pa.Table.from_pylist([pw_row("p0", W0, [1, 2], 1, 100.0, 100.0), pw_row("p1", W0, None, None, 1.0, 1.0)], PW)
    bw = bw_table([(1, W0, None), (2, W0, None)])
    r = explode(pw, bw)
    got = by_key(split_cpu(pw, bw, broker_traffic(pw, r), model(1.0, 1.0, 1.0), r), ["partition"])
    assert got[(0,)]["cpu_leader"] is None and got[(0,)]["cpu_follower"] == 0.0  # avg of nulls -> coalesce 0
    assert got[(1,)]["cpu_leader"] is None and got[(1,)]["cpu_follower"] == 0.0  # no replicas at all


# --- reasons and the summaries -------------------------------------------------------------------


SUMMARY = pa.schema([("cluster", STR), ("topic", STR), ("partition", I32), ("window", I64),
                     ("replicas", pa.list_(I32)), ("leader", I32), ("n", I64), ("min_samples", I64),
                     ("pw_valid", pa.bool_()), ("nw_in", F64), ("nw_out", F64), ("disk", F64),
                     ("cpu_leader", F64), ("cpu_follower", F64)])


def srow(topic: str, p: int, w: int, valid: bool, nw: tuple[float | None, float | None], disk: float | None,
         cpu: tuple[float | None, float], n: int = 6, replicas: list[int] | None = None,
         leader: int | None = 1) -> dict[str, Any]:
    return {"cluster": "c", "topic": topic, "partition": p, "window": w, "replicas": replicas or [1, 2],
            "leader": leader, "n": n, "min_samples": 3, "pw_valid": valid, "nw_in": nw[0], "nw_out": nw[1],
            "disk": disk, "cpu_leader": cpu[0], "cpu_follower": cpu[1]}


def test_reasons_follow_the_order_of_the_sql_rule() -> None:
    pw = pa.Table.from_pylist([
        srow("t", 0, W0, True, (1.0, 1.0), 1.0, (0.0, 0.0)),
        srow("t", 0, W1, False, (None, 1.0), None, (0.0, 0.0), n=1),  # too few samples comes first
        srow("t", 0, W2, False, (None, 1.0), None, (0.0, 0.0)),  # then no rate
        srow("t", 1, W0, False, (1.0, 1.0), None, (0.0, 0.0)),  # then no replica size
    ], SUMMARY)
    assert reasons(pw).tolist() == [-1, 0, 1, 2]


def test_partition_summary() -> None:
    rows = [
        # t/0: W0 and W1 count, W2 (the latest) has too few samples
        srow("t", 0, W2, False, (1000.0, 1000.0), 900.0, (100.0, 100.0), n=1, replicas=[2, 3], leader=3),
        srow("t", 0, W0, True, (10.0, 20.0), 100.0, (1.0, 0.5)),
        srow("t", 0, W1, True, (30.0, 40.0), 200.0, (3.0, 1.5)),
        # t/1: no window counts
        srow("t", 1, W1, False, (15.0, 1.0), 50.0, (None, 0.0), n=1),
        srow("t", 1, W0, False, (5.0, 3.0), None, (None, 0.0)),
        srow("t", 1, W2, False, (None, 2.0), None, (None, 0.0), replicas=[4], leader=None),
        # u/0: another topic with the same partition number
        srow("u", 0, W0, True, (7.0, 8.0), 70.0, (2.0, 1.0)),
    ]
    got = {(r["topic"], r["partition"]): r for r in partition_summary(pa.Table.from_pylist(rows, SUMMARY))
           .to_dict(orient="records")}
    assert set(got) == {("t", 0), ("t", 1), ("u", 0)}
    t0, t1, u0 = got[("t", 0)], got[("t", 1)], got[("u", 0)]
    # means over the valid windows W0, W1; disk of the latest valid window (W1), not the latest (W2)
    assert (t0["nw_in"], t0["nw_out"], t0["cpu_leader"], t0["cpu_follower"]) == pytest.approx((20.0, 30.0, 2.0, 1.0))
    assert t0["disk"] == 200.0 and t0["valid_windows"] == 2 and t0["reasons"] == ["too few samples"]
    assert list(t0["replicas"]) == [2, 3] and t0["leader"] == 3  # of the latest window
    # no valid window: means over all ((5 + 15) / 2: null skipped; (3 + 1 + 2) / 3), null CPU -> 0;
    # disk of the latest window with one (W1)
    assert (t1["nw_in"], t1["nw_out"], t1["cpu_leader"]) == pytest.approx((10.0, 2.0, 0.0))
    assert t1["disk"] == 50.0 and t1["valid_windows"] == 0
    assert t1["reasons"] == ["no rate (counter reset or no offsets)", "no replica size", "too few samples"]
    assert list(t1["replicas"]) == [4] and (t1["leader"] is None or np.isnan(t1["leader"]))
    assert u0["nw_in"] == 7.0 and u0["disk"] == 70.0 and u0["reasons"] == [] and u0["cluster"] == "c"


def test_broker_summary_takes_rack_host_and_alive_of_the_latest_sample() -> None:
    rows = [  # (broker, window, last_ts, rack, host, alive, cpu, cpu_valid); rows unsorted
        (1, W1, W1 + 50_000, "r2", "h1b", False, 30.0, True),
        (1, W2, W1 + 40_000, "r3", "h1c", True, 90.0, False),  # a later window, an earlier last sample
        (1, W0, W0 + 50_000, "r1", "h1", True, 10.0, True),
        (2, W0, W0 + 10_000, None, "h2", True, 50.0, False),
        (2, W1, W1 + 10_000, "r9", "h2", True, None, None),
    ]
    keys = ("broker", "window", "last_ts", "rack", "host", "alive", "cpu", "cpu_valid")
    bt = pa.Table.from_pylist([{"cluster": "c", **dict(zip(keys, r, strict=True))} for r in rows],
                              pa.schema([("cluster", STR), ("broker", I32), ("window", I64), ("last_ts", I64),
                                         ("rack", STR), ("host", STR), ("alive", pa.bool_()), ("cpu", F64),
                                         ("cpu_valid", pa.bool_())]))
    got = {int(r["broker"]): r for r in broker_summary(bt).to_dict(orient="records")}
    b1, b2 = got[1], got[2]
    assert (b1["rack"], b1["host"], b1["alive"], b1["last_ts"]) == ("r2", "h1b", False, W1 + 50_000)
    assert (b1["cpu_valid_windows"], b1["cpu_windows"], b1["cpu_mean"]) == (2, 3, pytest.approx(20.0))  # (10+30)/2
    assert (b2["rack"], b2["alive"], b2["last_ts"], b2["cpu_valid_windows"], b2["cpu_windows"]) == (
        "r9", True, W1 + 10_000, 0, 2)
    assert np.isnan(b2["cpu_mean"])  # no valid CPU window
