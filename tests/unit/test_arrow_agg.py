"""The Arrow/numpy window aggregations of ``pipeline.columnar.arrow_agg`` on hand-computed cases (no Spark).

``tests/spark/test_file_windows.py`` checks the same functions against the Spark SQL aggregations; here
each rule is pinned on a few rows whose result is worked out by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from kafka_balancer.pipeline.columnar.arrow_agg import counter_rates, first_last, group_percentile, windows_of

W = 60_000
TB_KEYS = ["cluster", "broker", "topic"]
TB_FIELDS = {"bytes_in": "in_rate", "bytes_out": "out_rate"}
RATE_COLUMNS = ["in_rate", "in_rate_max", "in_rate_p95", "out_rate", "out_rate_max", "out_rate_p95"]


def _by_key(t: pa.Table, keys: list[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Rows of ``t`` by their key (each key must occur once)."""
    rows = t.to_pylist()
    out = {tuple(r[k] for k in keys): r for r in rows}
    assert len(out) == len(rows), f"duplicate keys in {rows}"
    return out


def _p95(values: list[float]) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), 95, method="linear"))


# --- windows_of ----------------------------------------------------------------------------------


def test_windows_of_is_the_epoch_aligned_start() -> None:
    ts = np.array([0, 59_999, 60_000, 125_000, 1_700_000_123_456, -1], dtype=np.int64)
    # a negative time belongs to the window before 0 (``pmod``, as Spark's window_start)
    assert windows_of(ts, W).tolist() == [0, 0, 60_000, 120_000, 1_700_000_100_000, -60_000]


# --- first_last ----------------------------------------------------------------------------------


def test_first_last_picks_values_at_the_first_and_last_time_per_key_and_window() -> None:
    # Unsorted input, two keys, two windows; the row without a sample time is dropped.
    rows = [
        ("a", 50_000, 5), ("b", 20_000, None), ("a", 10_000, 1), ("a", 110_000, 11), ("b", None, 100),
        ("a", 30_000, 3), ("b", 80_000, 8), ("a", 70_000, 7), ("a", 90_000, 9), ("b", 40_000, 4),
    ]
    t = pa.table({
        "cluster": ["c"] * len(rows),
        "topic": [r[0] for r in rows],
        "ts": pa.array([r[1] for r in rows], pa.int64()),
        "size": pa.array([r[2] for r in rows], pa.int64()),
    })
    got = first_last(t, ["cluster", "topic"], {"size": "size"}, W)
    assert got.column_names == ["cluster", "topic", "window", "n", "first_ts", "last_ts", "first_size", "last_size"]
    assert _by_key(got, ["topic", "window"]) == {
        ("a", 0): {"cluster": "c", "topic": "a", "window": 0, "n": 3, "first_ts": 10_000, "last_ts": 50_000,
                   "first_size": 1, "last_size": 5},
        ("a", 60_000): {"cluster": "c", "topic": "a", "window": 60_000, "n": 3, "first_ts": 70_000,
                        "last_ts": 110_000, "first_size": 7, "last_size": 11},
        # the value at the first time is null: null, as Spark's min_by returns (no skipping to the next)
        ("b", 0): {"cluster": "c", "topic": "b", "window": 0, "n": 2, "first_ts": 20_000, "last_ts": 40_000,
                   "first_size": None, "last_size": 4},
        ("b", 60_000): {"cluster": "c", "topic": "b", "window": 60_000, "n": 1, "first_ts": 80_000,
                        "last_ts": 80_000, "first_size": 8, "last_size": 8},
    }


def test_first_last_without_count_and_with_several_fields() -> None:
    t = pa.table({
        "k": [1, 1, 1, 2],
        "ts": pa.array([30_000, 10_000, 20_000, 5_000], pa.int64()),
        "leo": [300, 100, 200, 50],
        "lso": [3, 1, 2, 0],
    })
    got = first_last(t, ["k"], {"leo": "leo", "lso": "lso"}, W, count=False)
    assert got.column_names == ["k", "window", "first_ts", "last_ts", "first_leo", "last_leo", "first_lso", "last_lso"]
    assert _by_key(got, ["k"]) == {
        (1,): {"k": 1, "window": 0, "first_ts": 10_000, "last_ts": 30_000, "first_leo": 100, "last_leo": 300,
               "first_lso": 1, "last_lso": 3},
        (2,): {"k": 2, "window": 0, "first_ts": 5_000, "last_ts": 5_000, "first_leo": 50, "last_leo": 50,
               "first_lso": 0, "last_lso": 0},
    }


def test_first_last_last_only_and_min_max_skip_nulls() -> None:
    t = pa.table({
        "p": [0, 0, 0, 1, 1],
        "ts": pa.array([20_000, 40_000, 10_000, 15_000, 25_000], pa.int64()),
        "leo": [2, 4, 1, 7, 8],
        "replicas": pa.array([[1, 2], [3, 1], [1, 2], [5], [5, 6]], pa.list_(pa.int32())),
        "leader": pa.array([2, None, 1, None, None], pa.int32()),
    })
    got = first_last(t, ["p"], {"leo": "leo"}, W, last_only=["replicas", "leader"], min_max=["leader"])
    assert got.column_names == ["p", "window", "n", "first_ts", "last_ts", "first_leo", "last_leo", "replicas",
                                "leader", "leader_min", "leader_max"]
    rows = _by_key(got, ["p"])
    # p 0: last time 40 s has replicas [3, 1] and a null leader (taken as is); min/max skip that null
    assert rows[(0,)] == {"p": 0, "window": 0, "n": 3, "first_ts": 10_000, "last_ts": 40_000, "first_leo": 1,
                          "last_leo": 4, "replicas": [3, 1], "leader": None, "leader_min": 1, "leader_max": 2}
    # p 1: every leader null -> min and max null
    assert rows[(1,)] == {"p": 1, "window": 0, "n": 2, "first_ts": 15_000, "last_ts": 25_000, "first_leo": 7,
                          "last_leo": 8, "replicas": [5, 6], "leader": None, "leader_min": None, "leader_max": None}


def test_first_last_same_time_takes_the_first_and_last_in_input_order() -> None:
    # Documented tie rule (Spark's min_by/max_by do not define one; the equivalence tests avoid ties).
    t = pa.table({"k": [1, 1, 1, 1], "ts": pa.array([5_000, 5_000, 9_000, 9_000], pa.int64()), "v": [10, 11, 20, 21]})
    (row,) = first_last(t, ["k"], {"v": "v"}, W).to_pylist()
    assert (row["first_v"], row["last_v"], row["n"]) == (10, 21, 4)


def test_first_last_of_no_rows_is_empty() -> None:
    t = pa.table({"k": pa.array([1], pa.int64()), "ts": pa.array([None], pa.int64()), "v": [3]})
    got = first_last(t, ["k"], {"v": "v"}, W)
    assert got.num_rows == 0
    assert got.column_names == ["k", "window", "n", "first_ts", "last_ts", "first_v", "last_v"]


# --- counter_rates -------------------------------------------------------------------------------

WIN = 120_000  # the window whose rates are computed; 60_000 is the one before it, 0 two before
Point = tuple[int, str, int | None, float | None, float | None]  # broker, topic, ts, bytes_in, bytes_out


def _tb(points: Sequence[Point], dictionary: bool = False, broker_ids: dict[int, int] | None = None) -> pa.Table:
    """(broker, topic, ts, bytes_in, bytes_out) points of cluster "c"."""
    ids = broker_ids or {}
    t = pa.table({
        "cluster": ["c"] * len(points),
        "broker": pa.array([ids.get(p[0], p[0]) for p in points], pa.int32()),
        "topic": [p[1] for p in points],
        "ts": pa.array([p[2] for p in points], pa.int64()),
        "bytes_in": pa.array([p[3] for p in points], pa.float64()),
        "bytes_out": pa.array([p[4] for p in points], pa.float64()),
    })
    if dictionary:
        dict_t = pa.dictionary(pa.int32(), pa.string())
        t = t.cast(pa.schema([pa.field(f.name, dict_t) if pa.types.is_string(f.type) else f for f in t.schema]))
    return t


# Series, each in shuffled order below (the function sorts by key and time):
SERIES: dict[tuple[int, str], list[tuple[int, float | None, float | None]]] = {
    # (1, "a"): 50 -> 110 s ends in the window before: not counted; 110 -> 130 starts in the window before:
    # counted; then 130 -> 150 and 150 -> 160 (a zero delta). Rates 100, 200, 0 B/s (out: half).
    (1, "a"): [(50_000, 0.0, 0.0), (110_000, 1000.0, 500.0), (130_000, 3000.0, 1500.0), (150_000, 7000.0, 3500.0),
               (160_000, 7000.0, 3500.0)],
    # (1, "b"): 50 -> 130 s starts two windows back: not counted; 130 -> 170 s: 100 B/s
    (1, "b"): [(50_000, 0.0, 0.0), (130_000, 8000.0, 0.0), (170_000, 12000.0, 0.0)],
    # (1, "c"): two points at 130 s (dt = 0, dropped; equal values, so their order does not matter), then 10 B/s
    (1, "c"): [(130_000, 100.0, 100.0), (130_000, 100.0, 100.0), (150_000, 300.0, 300.0)],
    # (1, "d"): the counter goes down 125 -> 135 s (reset): dropped; 135 -> 145 s: 100 B/s
    (1, "d"): [(125_000, 1000.0, 1000.0), (135_000, 500.0, 1500.0), (145_000, 1500.0, 2500.0)],
    # (1, "e"): bytes_in null at 135 s: its two intervals have no in delta, the out deltas still count
    (1, "e"): [(125_000, 0.0, 0.0), (135_000, None, 1000.0), (145_000, 3000.0, 2000.0), (155_000, 4000.0, 2500.0)],
    # (2, "a"): broker 2 restarted in the interval ending at 135 s: dropped although both deltas are >= 0
    (2, "a"): [(125_000, 0.0, 0.0), (135_000, 1000.0, 1000.0), (145_000, 3000.0, 3000.0)],
    # (2, "z"): its only interval starts two windows back: no row
    (2, "z"): [(10_000, 0.0, 0.0), (130_000, 10.0, 10.0)],
}
RESTARTS = {(2, 135_000)}  # broker 1's intervals ending at 135 s ((1, "d"), (1, "e")) are not affected


def _series_points(order_seed: int = 7) -> list[Point]:
    pts: list[Point] = [(b, topic, ts, i, o) for (b, topic), ps in SERIES.items() for ts, i, o in ps]
    pts.append((1, "a", None, 99.0, 99.0))  # no sample time: dropped
    rng = np.random.default_rng(order_seed)
    return [pts[i] for i in rng.permutation(len(pts))]


EXPECTED: dict[tuple[int, str], dict[str, Any]] = {
    (1, "a"): {"in_rate": 6000 / 50, "in_rate_max": 200.0, "in_rate_p95": _p95([100, 200, 0]),
               "out_rate": 3000 / 50, "out_rate_max": 100.0, "out_rate_p95": _p95([50, 100, 0]), "intervals": 3},
    (1, "b"): {"in_rate": 100.0, "in_rate_max": 100.0, "in_rate_p95": 100.0,
               "out_rate": 0.0, "out_rate_max": 0.0, "out_rate_p95": 0.0, "intervals": 1},
    (1, "c"): {"in_rate": 10.0, "in_rate_max": 10.0, "in_rate_p95": 10.0,
               "out_rate": 10.0, "out_rate_max": 10.0, "out_rate_p95": 10.0, "intervals": 1},
    (1, "d"): {"in_rate": 100.0, "in_rate_max": 100.0, "in_rate_p95": 100.0,
               "out_rate": 100.0, "out_rate_max": 100.0, "out_rate_p95": 100.0, "intervals": 1},
    # in: one valid delta (1000 B over 10 s) over all three kept intervals' time (30 s), as Spark's
    # sum(d) / sum(dt) does; its max and p95 are of that one interval's rate
    (1, "e"): {"in_rate": 1000 / 30, "in_rate_max": 100.0, "in_rate_p95": 100.0,
               "out_rate": 2500 / 30, "out_rate_max": 100.0, "out_rate_p95": _p95([100, 100, 50]), "intervals": 3},
    (2, "a"): {"in_rate": 200.0, "in_rate_max": 200.0, "in_rate_p95": 200.0,
               "out_rate": 200.0, "out_rate_max": 200.0, "out_rate_p95": 200.0, "intervals": 1},
}


def _check_rates(got: pa.Table, expected: dict[tuple[int, str], dict[str, Any]],
                 broker_ids: dict[int, int] | None = None) -> None:
    ids = broker_ids or {}
    assert got.column_names == [*TB_KEYS, "window", *RATE_COLUMNS, "intervals"]
    assert [got.schema.field(c).type for c in [*RATE_COLUMNS, "intervals"]] == [pa.float64()] * 6 + [pa.int64()]
    rows = _by_key(got, ["broker", "topic"])
    assert set(rows) == {(ids.get(b, b), topic) for b, topic in expected}
    for (b, topic), want in expected.items():
        row = rows[(ids.get(b, b), topic)]
        assert (row["cluster"], row["window"]) == ("c", WIN)
        for col, value in want.items():
            if value is None or isinstance(value, int):
                assert row[col] == value, (b, topic, col, row[col], value)
            else:
                assert row[col] == pytest.approx(value, rel=1e-12, abs=0.0), (b, topic, col, row[col], value)


@pytest.mark.parametrize("dictionary", [False, True], ids=["plain", "dictionary"])
def test_counter_rates_keep_the_intervals_that_end_in_the_window(dictionary: bool) -> None:
    got = counter_rates(_tb(_series_points(), dictionary), TB_KEYS, TB_FIELDS, W, WIN, RESTARTS)
    _check_rates(got, EXPECTED)


def test_counter_rates_without_restarts_keep_the_restart_interval() -> None:
    got = counter_rates(_tb(_series_points()), TB_KEYS, TB_FIELDS, W, WIN, None)
    want = dict(EXPECTED)
    want[(2, "a")] = {"in_rate": 3000 / 20, "in_rate_max": 200.0, "in_rate_p95": _p95([100, 200]),
                      "out_rate": 3000 / 20, "out_rate_max": 200.0, "out_rate_p95": _p95([100, 200]), "intervals": 2}
    _check_rates(got, want)


def test_counter_rates_null_field_only_gives_null_rates_for_that_field() -> None:
    pts = [(1, "a", 125_000, None, 0.0), (1, "a", 135_000, None, 500.0), (1, "a", 145_000, 50.0, 1500.0)]
    (row,) = counter_rates(_tb(pts), TB_KEYS, TB_FIELDS, W, WIN).to_pylist()
    assert (row["in_rate"], row["in_rate_max"], row["in_rate_p95"]) == (None, None, None)
    assert row["out_rate"] == pytest.approx(75.0) and row["out_rate_max"] == pytest.approx(100.0)
    assert row["out_rate_p95"] == pytest.approx(_p95([50, 100]), rel=1e-12)
    assert row["intervals"] == 2


def test_counter_rates_order_of_the_input_does_not_matter() -> None:
    a = counter_rates(_tb(_series_points(1)), TB_KEYS, TB_FIELDS, W, WIN, RESTARTS)
    b = counter_rates(_tb(_series_points(2)), TB_KEYS, TB_FIELDS, W, WIN, RESTARTS)
    assert _by_key(a, ["broker", "topic"]) == _by_key(b, ["broker", "topic"])


@pytest.mark.parametrize("wide_id", [1 << 24, 1 << 30])
def test_counter_rates_wide_ids_and_times(wide_id: int) -> None:
    # Real epoch times plus two points at time 0 make the time span ~1.7e12 ms. Broker ids 1 and 2^24 are
    # coded by their offset (range < 2^24), so key * span would overflow int64: the lexsort path. Ids 1 and
    # 2^30 are dictionary-coded (range too wide for offsets) and take the single sort key. Same rates.
    ids = {1: 1, 2: wide_id}
    base = 1_700_000_040_000  # a 60 s window boundary
    pts = [(b, topic, None if ts is None else ts + base, i, o) for b, topic, ts, i, o in _series_points()]
    pts += [(b, "old", ts, 0.0, 0.0) for b in (1, 2) for ts in (0, 1_000)]  # a series per broker at time 0
    restarts = {(wide_id, 135_000 + base)}
    got = counter_rates(_tb(pts, broker_ids=ids), TB_KEYS, TB_FIELDS, W, WIN + base, restarts)
    assert got.column("window").to_pylist() == [WIN + base] * got.num_rows
    got = got.set_column(got.schema.get_field_index("window"), "window", pa.array([WIN] * got.num_rows, pa.int64()))
    _check_rates(got, EXPECTED, ids)


def test_counter_rates_p95_interpolates_like_numpy_linear() -> None:
    rng = np.random.default_rng(5)
    ts = WIN + np.cumsum(rng.integers(1_000, 3_000, size=25))
    assert ts[-1] < WIN + W
    vals = np.concatenate([[0.0], np.cumsum(rng.uniform(0.0, 1e6, size=24))])
    pts = [(1, "a", int(t), float(v), float(2 * v)) for t, v in zip(ts, vals, strict=True)]
    (row,) = counter_rates(_tb(pts), TB_KEYS, TB_FIELDS, W, WIN).to_pylist()
    rates = np.diff(vals) / np.diff(ts) * 1000.0
    assert row["intervals"] == 24
    assert row["in_rate_p95"] == pytest.approx(_p95(list(rates)), rel=1e-12)
    assert row["out_rate_p95"] == pytest.approx(_p95(list(2 * rates)), rel=1e-12)
    assert row["in_rate_max"] == pytest.approx(float(rates.max()), rel=1e-12)
    assert row["in_rate"] == pytest.approx((vals[-1] - vals[0]) / (ts[-1] - ts[0]) * 1000.0, rel=1e-12)
    # not the nearest rank: the interpolated value lies strictly between two rates
    srt = np.sort(rates)
    assert srt[-3] < row["in_rate_p95"] < srt[-1]


def test_counter_rates_of_too_few_points_is_empty_with_the_schema() -> None:
    for pts in ([], [(1, "a", 125_000, 0.0, 0.0)], [(1, "a", 125_000, 0.0, 0.0), (1, "a", None, 5.0, 5.0)]):
        got = counter_rates(_tb(pts), TB_KEYS, TB_FIELDS, W, WIN, count_name="tb_intervals")
        assert got.num_rows == 0
        assert got.column_names == [*TB_KEYS, "window", *RATE_COLUMNS, "tb_intervals"]
        assert got.schema.field("in_rate").type == pa.float64()
        assert got.schema.field("tb_intervals").type == pa.int64()


# --- group_percentile ---------------------------------------------------------------------------


def _grouped(counts: list[int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    group = np.repeat(np.arange(len(counts)), counts)
    values = rng.uniform(0.0, 1e6, size=len(group))
    values[rng.random(len(group)) < 0.2] = 42.0  # some equal values
    return values, group


def _check_percentiles(values: np.ndarray, group: np.ndarray, groups: int, q: float) -> None:
    got = group_percentile(values, group, groups, q)
    assert got.shape == (groups,)
    for g in range(groups):
        vs = values[group == g]
        if len(vs) == 0:
            assert np.isnan(got[g]), g
        else:
            want = np.percentile(vs, q * 100, method="linear")
            assert got[g] == pytest.approx(want, rel=1e-12, abs=0.0), (g, len(vs))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("q", [0.0, 0.5, 0.95, 1.0])
def testgroup_percentile_few_values_per_group(seed: int, q: float) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 12, size=60).tolist()  # some groups empty
    counts[-1] = 0
    values, group = _grouped(counts, rng)
    groups = len(counts)
    assert groups * max(counts) <= 4 * len(values) + 1024  # the padded-grid path
    _check_percentiles(values, group, groups, q)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("q", [0.0, 0.5, 0.95, 1.0])
def testgroup_percentile_one_big_group(seed: int, q: float) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=40).tolist()
    counts[7] = 20_000
    values, group = _grouped(counts, rng)
    groups = len(counts)
    assert groups * max(counts) > 4 * len(values) + 1024  # the sorted (lexsort) path
    _check_percentiles(values, group, groups, q)


def testgroup_percentile_of_no_values_is_nan() -> None:
    got = group_percentile(np.array([]), np.array([], dtype=np.int64), 3, 0.95)
    assert np.isnan(got).all() and got.shape == (3,)
