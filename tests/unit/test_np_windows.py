"""``np_windows.partition_windows`` on small hand-made window aggregates (no Spark): every expected value is
worked out by hand from the rules of ``rates.py``, ``loads.py`` and ``completeness.py``.

Times: windows of 60 s; W0, W1, W2 follow each other, B is the window before W0 (the base of the first)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from kafka_balancer.pipeline.columnar.np_windows import partition_windows, per_window, window_rounds

W = 60_000
S = 1_000
W0 = 1_000 * W
B, W1, W2 = W0 - W, W0 + W, W0 + 2 * W
I32, I64, F64, STR = pa.int32(), pa.int64(), pa.float64(), pa.string()

PART = pa.schema([("cluster", STR), ("topic", STR), ("partition", I32), ("window", I64), ("n", I64),
                  ("first_ts", I64), ("last_ts", I64), ("first_leo", I64), ("last_leo", I64), ("first_lso", I64),
                  ("last_lso", I64), ("replicas", pa.list_(I32)), ("leader", I32), ("isr", pa.list_(I32)),
                  ("leader_moved", pa.bool_())])
REPLICA = pa.schema([("cluster", STR), ("topic", STR), ("partition", I32), ("broker", I32), ("window", I64),
                     ("n", I64), ("first_ts", I64), ("last_ts", I64), ("first_size", I64), ("last_size", I64)])
GROUP = pa.schema([("cluster", STR), ("group", STR), ("topic", STR), ("partition", I32), ("window", I64),
                   ("first_ts", I64), ("last_ts", I64), ("first_c", I64), ("last_c", I64)])
TB = pa.schema([("cluster", STR), ("broker", I32), ("topic", STR), ("window", I64)]
               + [(f"{d}_rate{s}", F64) for d in ("in", "out") for s in ("", "_max", "_p95")]
               + [("tb_intervals", I64)])


def part(topic: str, p: int, window: int, leo: tuple[int | None, int | None], ts: tuple[int, int],
         lso: tuple[int, int] = (0, 0), n: int = 6, replicas: list[int] | None = None,
         leader: int | None = 1) -> dict[str, Any]:
    reps = [1, 2] if replicas is None else replicas
    return {"cluster": "c", "topic": topic, "partition": p, "window": window, "n": n, "first_ts": ts[0],
            "last_ts": ts[1], "first_leo": leo[0], "last_leo": leo[1], "first_lso": lso[0], "last_lso": lso[1],
            "replicas": reps, "leader": leader, "isr": reps, "leader_moved": False}


def replica(topic: str, p: int, broker: int, window: int, size: tuple[int | None, int | None],
            ts: tuple[int, int]) -> dict[str, Any]:
    return {"cluster": "c", "topic": topic, "partition": p, "broker": broker, "window": window, "n": 6,
            "first_ts": ts[0], "last_ts": ts[1], "first_size": size[0], "last_size": size[1]}


def group(g: str, topic: str, p: int, window: int, c: tuple[int, int], ts: tuple[int, int]) -> dict[str, Any]:
    return {"cluster": "c", "group": g, "topic": topic, "partition": p, "window": window, "first_ts": ts[0],
            "last_ts": ts[1], "first_c": c[0], "last_c": c[1]}


def tb(broker: int, topic: str, window: int, in_rate: tuple[float | None, float | None, float | None],
       out_rate: tuple[float | None, float | None, float | None]) -> dict[str, Any]:
    return {"cluster": "c", "broker": broker, "topic": topic, "window": window,
            "in_rate": in_rate[0], "in_rate_max": in_rate[1], "in_rate_p95": in_rate[2],
            "out_rate": out_rate[0], "out_rate_max": out_rate[1], "out_rate_p95": out_rate[2], "tb_intervals": 5}


def run(parts: list[dict[str, Any]], replicas: list[dict[str, Any]], groups: list[dict[str, Any]],
        tbs: list[dict[str, Any]], windows: list[int] | None = None, rounds: dict[int, int] | None = None,
        ratio: float = 0.5) -> dict[tuple[str, int, int], dict[str, Any]]:
    """The partition window table by (topic, partition, window)."""
    wins = [W0] if windows is None else windows
    out = partition_windows(pa.Table.from_pylist(parts, PART), pa.Table.from_pylist(replicas, REPLICA),
                            pa.Table.from_pylist(groups, GROUP), pa.Table.from_pylist(tbs, TB),
                            {w: 6 for w in wins} if rounds is None else rounds, W, wins, ratio)
    rows = {(r["topic"], r["partition"], r["window"]): r for r in out.to_pylist()}
    assert len(rows) == out.num_rows
    return rows


def test_topic_rates_are_split_by_appended_and_committed_messages() -> None:
    # Broker 1 leads t/0 and t/1 (replicas [1, 2]: RF 2). Each partition's span: B's last sample (50 s) to
    # W0's last (50 s): 60 s. t/0 appends 300 messages (5 msg/s), t/1 100 (1.67 msg/s): shares 3/4, 1/4.
    parts = [part("t", 0, B, (0, 1000), (B + 10 * S, B + 50 * S)),
             part("t", 0, W0, (1010, 1300), (W0 + 10 * S, W0 + 50 * S)),
             part("t", 1, B, (0, 500), (B + 10 * S, B + 50 * S)),
             part("t", 1, W0, (505, 600), (W0 + 10 * S, W0 + 50 * S))]
    # over 60 s, g1 commits 100 on t/0 and 50 on t/1, g2 50 on t/0 and none on t/1: summed over the
    # groups, 150 and 50, consumer shares 3/4, 1/4
    groups = [group("g1", "t", 0, B, (0, 100), (B, B + 30 * S)),
              group("g1", "t", 0, W0, (120, 200), (W0, W0 + 30 * S)),
              group("g2", "t", 0, B, (0, 10), (B, B + 30 * S)),
              group("g2", "t", 0, W0, (20, 60), (W0, W0 + 30 * S)),
              group("g1", "t", 1, B, (0, 100), (B, B + 30 * S)),
              group("g1", "t", 1, W0, (110, 150), (W0, W0 + 30 * S)),
              group("g2", "t", 1, B, (0, 70), (B, B + 30 * S)),
              group("g2", "t", 1, W0, (70, 70), (W0, W0 + 30 * S))]
    # t/0: the leader's replica (5 MB) is the disk, not the larger follower's; t/1 has no leader replica
    # row in W0: the largest replica's size
    reps = [replica("t", 0, 1, W0, (4_000_000, 5_000_000), (W0, W0 + 40 * S)),
            replica("t", 0, 2, W0, (4_000_000, 6_000_000), (W0, W0 + 40 * S)),
            replica("t", 1, 2, W0, (600_000, 700_000), (W0, W0 + 40 * S))]
    tbs = [tb(1, "t", W0, (4000.0, 8000.0, None), (2000.0, 4000.0, 6000.0)),
           tb(2, "t", W0, (1e9, 1e9, 1e9), (1e9, 1e9, 1e9))]  # broker 2 leads nothing of t: not used
    got = run(parts, reps, groups, tbs)
    p0, p1 = got[("t", 0, W0)], got[("t", 1, W0)]
    assert (p0["d_leo"], p0["span_ms"], p1["d_leo"]) == (300, 60_000, 100)
    assert p0["nw_in_source"] == p1["nw_in_source"] == "jmx"
    assert p0["nw_in"] == pytest.approx(3000.0) and p1["nw_in"] == pytest.approx(1000.0)  # 4000 × 3/4, × 1/4
    assert p0["consumer_out"] == pytest.approx(1500.0) and p1["consumer_out"] == pytest.approx(500.0)  # 2000 × 3/4
    # nw_out = consumer + nw_in × (RF − 1)
    assert p0["nw_out"] == pytest.approx(1500.0 + 3000.0) and p1["nw_out"] == pytest.approx(500.0 + 1000.0)
    # peaks: in max 8000 × 3/4 = 6000; in p95 null -> nw_in; out max 4000 × 3/4, out p95 6000 × 3/4
    assert p0["nw_in_max"] == pytest.approx(6000.0) and p0["nw_in_p95"] == pytest.approx(3000.0)
    assert p0["nw_out_max"] == pytest.approx(3000.0 + 6000.0) and p0["nw_out_p95"] == pytest.approx(4500.0 + 3000.0)
    assert (p0["disk"], p1["disk"]) == (5_000_000.0, 700_000.0)
    assert p0["pw_valid"] and p1["pw_valid"]
    assert set(got) == {("t", 0, W0), ("t", 1, W0)}  # the base window is not in the table


def test_shares_are_taken_on_rates_and_fall_back_to_equal_shares() -> None:
    # leader 1, topic t: t/0 appends 300 over 60 s (5/s), t/1 200 over its own 20 s (10/s): in shares 1/3, 2/3.
    # No group committed: the consumer bytes are split like the bytes in.
    parts = [part("t", 0, W0, (0, 300), (W0, W0 + 60 * S)), part("t", 1, W0, (0, 200), (W0 + 30 * S, W0 + 50 * S)),
             # leader 2, topic t: both append nothing (rate 0, total 0): 1/2 each over the 2 partitions with a
             # rate; t/4's log-end offset went down (null rate) and does not count
             part("t", 2, W0, (10, 10), (W0, W0 + 60 * S), leader=2),
             part("t", 3, W0, (10, 10), (W0, W0 + 60 * S), leader=2),
             part("t", 4, W0, (900, 100), (W0, W0 + 60 * S), leader=2)]
    tbs = [tb(1, "t", W0, (900.0, None, None), (300.0, None, None)),
           tb(2, "t", W0, (600.0, None, None), (80.0, None, None))]
    got = run(parts, [], [], tbs)
    assert got[("t", 0, W0)]["nw_in"] == pytest.approx(300.0)  # 900 × 5 / 15
    assert got[("t", 1, W0)]["nw_in"] == pytest.approx(600.0)  # 900 × 10 / 15
    assert got[("t", 1, W0)]["consumer_out"] == pytest.approx(200.0)  # 300 × 2/3
    assert got[("t", 2, W0)]["nw_in"] == pytest.approx(300.0) and got[("t", 3, W0)]["nw_in"] == pytest.approx(300.0)
    assert got[("t", 3, W0)]["consumer_out"] == pytest.approx(40.0)  # 80 × 1/2
    # t/4: no message rate and no replica size: no rate at all, the window does not count
    t4 = got[("t", 4, W0)]
    assert t4["d_leo"] is None and t4["nw_in"] is None and t4["nw_in_source"] is None and not t4["pw_valid"]


def test_without_topic_rates_the_size_delta_and_retention_deletions_give_the_rate() -> None:
    # t/0, RF 3, leader 1. Span 60 s (B at 50 s -> W0 at 50 s). Offsets: log end 1000 -> 1600, log start
    # 0 -> 100 (retention deleted 100 messages): 1500 messages kept.
    parts = [part("t", 0, B, (900, 1000), (B + 10 * S, B + 50 * S), lso=(0, 0), replicas=[1, 2, 3]),
             part("t", 0, W0, (1010, 1600), (W0 + 10 * S, W0 + 50 * S), lso=(50, 100), replicas=[1, 2, 3])]
    # leader replica: 1.2 MB at B+40 s -> 1.5 MB at W0+20 s: +300 kB over 40 s; 1.5 MB / 1500 messages = 1000 B/msg
    reps = [replica("t", 0, 1, B, (1_100_000, 1_200_000), (B, B + 40 * S)),
            replica("t", 0, 1, W0, (1_300_000, 1_500_000), (W0, W0 + 20 * S)),
            replica("t", 0, 2, W0, (1_300_000, 1_600_000), (W0, W0 + 20 * S))]
    # g1 commits 900 -> 1500 (600 messages), g3 100 -> 400 (300); g2 was rewound 1400 -> 1000: clipped at
    # 0, not -400. Summed over the groups: 900 messages.
    groups = [group("g1", "t", 0, B, (800, 900), (B, B + 30 * S)),
              group("g1", "t", 0, W0, (1000, 1500), (W0, W0 + 30 * S)),
              group("g2", "t", 0, B, (1300, 1400), (B, B + 30 * S)),
              group("g2", "t", 0, W0, (1000, 1000), (W0, W0 + 30 * S)),
              group("g3", "t", 0, B, (0, 100), (B, B + 10 * S)),
              group("g3", "t", 0, W0, (200, 400), (W0, W0 + 10 * S))]
    # topic rates of t on broker 2 (not the leader) and of topic u on broker 1: neither joins
    tbs = [tb(2, "t", W0, (5e6, 5e6, 5e6), (5e6, 5e6, 5e6)), tb(1, "u", W0, (5e6, 5e6, 5e6), (5e6, 5e6, 5e6))]
    r = run(parts, reps, groups, tbs)[("t", 0, W0)]
    assert (r["d_leo"], r["d_lso"], r["span_ms"]) == (600, 100, 60_000)
    assert r["nw_in_source"] == "size"
    # (300 000 B + 100 deleted × 1000 B) / 40 s
    assert r["nw_in"] == pytest.approx(400_000 / 40)
    # consumer: 900 messages × 1000 B over the partition's 60 s span
    assert r["consumer_out"] == pytest.approx(900 * 1000 / 60)
    assert r["nw_out"] == pytest.approx(15_000.0 + 10_000.0 * 2)  # + nw_in × (3 − 1)
    assert r["nw_in_max"] == r["nw_in_p95"] == pytest.approx(10_000.0)  # no peaks: the mean
    assert r["nw_out_max"] == pytest.approx(35_000.0) and r["disk"] == 1_500_000.0  # the leader's, not 1.6 MB


def test_the_base_is_the_previous_adjacent_window_else_the_windows_own_first_sample() -> None:
    parts = [
        # t/0 has no W0 row: W1's base is its own first sample (log end 100 at 10 s), not B's last (5000):
        # 100 -> 400 at 50 s, 300 over 40 s. Log start 10 -> 5: deletions clipped at 0.
        part("t", 0, B, (0, 5000), (B, B + 50 * S)),
        part("t", 0, W1, (100, 400), (W1 + 10 * S, W1 + 50 * S), lso=(10, 5)),
        # W2 follows W1: its base is W1's last sample (400 at 50 s) -> 1000 at W2+20 s: 600 over 30 s;
        # log start 5 (W1's last) -> 25: 20 deleted
        part("t", 0, W2, (450, 1000), (W2 + 5 * S, W2 + 20 * S), lso=(7, 25)),
        # t/1: the log end offset went down (1000 -> 200, a recreated log): no d_leo, no rate
        part("t", 1, W0, (0, 1000), (W0, W0 + 50 * S)), part("t", 1, W1, (150, 200), (W1, W1 + 50 * S)),
    ]
    reps = [replica("t", 1, 1, W0, (0, 10_000), (W0, W0 + 30 * S)),
            replica("t", 1, 1, W1, (1_000, 4_000), (W1, W1 + 30 * S))]
    tbs = [tb(1, "t", W1, (3000.0, None, None), (0.0, None, None))]
    got = run(parts, reps, [], tbs, windows=[W0, W1, W2])
    a, b, c = got[("t", 0, W1)], got[("t", 0, W2)], got[("t", 1, W1)]
    assert (a["d_leo"], a["span_ms"], a["d_lso"]) == (300, 40_000, 0)
    assert (b["d_leo"], b["span_ms"], b["d_lso"]) == (600, 30_000, 20)
    # t/0 is the only partition of t on broker 1 with a rate in W1: all of t's 3000 B/s
    assert a["nw_in"] == pytest.approx(3000.0) and a["nw_in_source"] == "jmx"
    assert c["d_leo"] is None and c["d_lso"] == 0 and c["span_ms"] == 60_000
    # no message rate, so no share of the topic rate; the log went back, so its size delta (10 000 -> 4000)
    # says nothing either: no rate, and the window does not count
    assert c["nw_in_source"] is None and c["nw_in"] is None and c["disk"] == 4000.0 and not c["pw_valid"]
    # W2 has neither a topic rate nor a replica: no rate (null, not 0) and no disk, so the window does not count
    assert b["nw_in"] is None and b["nw_in_source"] is None and b["disk"] is None and not b["pw_valid"]
    assert ("t", 0, W0) not in got


def test_a_partition_without_leader_gets_no_topic_rate_and_the_largest_replica() -> None:
    # leader null: the (topic, leader) join finds nothing, the leader replica neither
    parts = [part("t", 0, W0, (0, 600), (W0, W0 + 60 * S), leader=None)]
    reps = [replica("t", 0, 1, W0, (100, 2000), (W0, W0 + 60 * S)),
            replica("t", 0, 2, W0, (100, 3000), (W0, W0 + 60 * S))]
    r = run(parts, reps, [], [tb(1, "t", W0, (7000.0, None, None), (7000.0, None, None))])[("t", 0, W0)]
    assert r["disk"] == 3000.0
    # no leader replica: no size delta, so no rate at all (null, not 0), and the window does not count
    assert r["nw_in"] is None and r["nw_in_source"] is None and r["nw_out"] is None and not r["pw_valid"]
    assert r["consumer_out"] == 0.0 and r["leader"] is None


def test_validity_needs_enough_samples_for_the_rounds_of_the_window() -> None:
    # rounds 5 and 7 at ratio 0.5: at least ceil(2.5) = 3 and ceil(3.5) = 4 samples
    def p(pn: int, w: int, n: int) -> dict[str, Any]:
        return part("t", pn, w, (0, 60), (w, w + 60 * S), n=n)

    parts = [p(0, W0, 3), p(0, W1, 3), p(1, W0, 2), p(1, W1, 4)]
    reps = [replica("t", pn, 1, w, (10, 20), (w, w + 60 * S)) for pn in (0, 1) for w in (W0, W1)]
    got = run(parts, reps, [], [], windows=[W0, W1], rounds={W0: 5, W1: 7})
    assert [(got[("t", 0, w)]["rounds"], got[("t", 0, w)]["min_samples"]) for w in (W0, W1)] == [(5, 3), (7, 4)]
    assert [got[k]["pw_valid"] for k in (("t", 0, W0), ("t", 0, W1), ("t", 1, W0), ("t", 1, W1))] == [
        True, False, False, True]


def test_min_samples_is_at_least_one_and_rounds_come_from_the_largest_n() -> None:
    rounds, need = per_window({W0: 0, W1: 10}, pa.array([W1, W0, W1, 5 * W]).to_numpy(), 0.25)
    # ceil(10 × 0.25) = 3; 0 rounds -> 1; a window without rounds counts 0 rounds -> 1
    assert rounds.tolist() == [10, 0, 10, 0] and need.tolist() == [3, 1, 3, 1]
    a = pa.table({"window": pa.array([W0, W0, W1], I64), "n": pa.array([4, None, 2], I64)})
    b = pa.table({"window": pa.array([W1, W0], I64), "n": pa.array([7, 1], I64)})
    assert window_rounds(a, b) == {W0: 4, W1: 7}


def test_the_table_has_the_columns_of_the_sql_partition_window_table() -> None:
    got = partition_windows(pa.Table.from_pylist([part("t", 0, W0, (0, 60), (W0, W0 + 60 * S))], PART),
                            REPLICA.empty_table(), GROUP.empty_table(), TB.empty_table(), {W0: 6}, W, [W0], 0.5)
    assert got.column_names == [
        "cluster", "topic", "partition", "window", "n", "last_ts", "replicas", "leader", "isr", "leader_moved",
        "nw_in", "nw_in_max", "nw_in_p95", "nw_out", "nw_out_max", "nw_out_p95", "consumer_out", "disk",
        "nw_in_source", "d_leo", "d_lso", "span_ms", "rounds", "min_samples", "pw_valid"]
    assert got.to_pylist()[0]["nw_in"] is None and got.to_pylist()[0]["disk"] is None
