"""arrow_broker.broker_window: one window of broker records -> the broker window rows (CPU rates) and the
restarts, values computed by hand (``tests/spark/test_file_windows.py`` compares it with Spark SQL)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from kafka_balancer.pipeline.columnar.arrow_broker import BW_SCHEMA, broker_window

W = 60_000
W1 = 10 * W  # the window computed; W0 = W1 - W is the one before
S = 1_000
SCHEMA = pa.schema([("cluster", pa.string()), ("broker", pa.int32()), ("ts", pa.int64()),
                    ("cpu_seconds", pa.float64()), ("cpu_cores", pa.int32()), ("rack", pa.string()),
                    ("host", pa.string()), ("alive", pa.bool_())])


def rec(broker: int | None, ts: int, cpu: float | None, cores: int | None = 2, rack: str = "r1",
        alive: bool = True) -> dict[str, Any]:
    return {"cluster": "c", "broker": broker, "ts": ts, "cpu_seconds": cpu, "cpu_cores": cores, "rack": rack,
            "host": f"h{broker}", "alive": alive}


def run(rows: list[dict[str, Any]]) -> tuple[dict[Any, dict[str, Any]], set[tuple[int, int]]]:
    out, restarts = broker_window(pa.Table.from_pylist(rows, SCHEMA), W, W1)
    assert out.schema == BW_SCHEMA
    return {r["broker"]: r for r in out.to_pylist()}, restarts


def test_the_first_interval_starts_at_the_previous_windows_last_point() -> None:
    # broker 1 on 2 cores: 100 s at W0+50 s, 130 at W1+10 s, 190 at W1+40 s: 30 CPU-s over 20 s (75 %) and
    # 60 over 30 s (100 %); the window's rate is 90 / 50 s = 1.8 CPU-s/s = 90 % of 2 cores.
    got, restarts = run([rec(1, W1 - 10 * S, 100.0), rec(1, W1 + 10 * S, 130.0), rec(1, W1 + 40 * S, 190.0)])
    b = got[1]
    assert b["cpu"] == pytest.approx(90.0) and b["cpu_max"] == pytest.approx(100.0)
    assert b["cpu_p95"] == pytest.approx(75.0 + 0.95 * 25.0)  # between the two interval rates
    assert (b["n"], b["cpu_intervals"], b["restarts"], b["last_ts"], b["window"]) == (2, 2, 0, W1 + 40 * S, W1)
    assert restarts == set()


def test_a_counter_that_goes_down_is_a_restart_and_is_dropped() -> None:
    # 0 -> 60 over 60 s (1 CPU-s/s = 50 % of 2 cores), then 60 -> 5: a restart (broker 2 ends it at W1+40 s)
    got, restarts = run([rec(2, W1 - 20 * S, 0.0), rec(2, W1 + 40 * S, 60.0), rec(2, W1 + 50 * S, 5.0)])
    assert (got[2]["cpu"], got[2]["cpu_intervals"], got[2]["restarts"]) == (pytest.approx(50.0), 1, 1)
    assert restarts == {(2, W1 + 50 * S)}


def test_an_interval_from_two_windows_back_and_null_or_missing_values() -> None:
    rows = [
        # broker 3: the previous point is two windows back (not read as a start): no interval, no rate
        rec(3, W1 - 2 * W + S, 0.0), rec(3, W1 + S, 50.0),
        # broker 4: a null CPU sample is skipped (but counted in n); cores unknown counts as 1 core
        rec(4, W1 + 0 * S, 10.0, cores=None), rec(4, W1 + 10 * S, None, cores=None),
        rec(4, W1 + 20 * S, 20.0, cores=None),
        # broker 5: in the previous window only: no row
        rec(5, W1 - 30 * S, 1.0),
    ]
    got, _ = run(rows)
    assert set(got) == {3, 4}
    assert (got[3]["cpu"], got[3]["cpu_max"], got[3]["cpu_p95"], got[3]["cpu_intervals"]) == (None, None, None, 0)
    # 10 CPU-s over 20 s on 1 core: 50 %
    assert (got[4]["cpu"], got[4]["n"], got[4]["cores"], got[4]["cpu_intervals"]) == (pytest.approx(50.0), 3, None, 1)


def test_labels_come_from_the_latest_sample_of_the_window() -> None:
    rows = [rec(1, W1 + 30 * S, 1.0, rack="old", alive=True), rec(1, W1 + 50 * S, 2.0, rack="new", alive=False),
            rec(1, W1 + 10 * S, 0.5, rack="older"), rec(1, W1 - 5 * S, 0.0, rack="before")]
    b = run(rows)[0][1]
    assert (b["rack"], b["alive"], b["host"], b["last_ts"], b["n"]) == ("new", False, "h1", W1 + 50 * S, 3)


def test_no_rows_in_the_window() -> None:
    got, restarts = run([rec(1, W1 - 5 * S, 1.0)])
    assert got == {} and restarts == set()
    assert broker_window(SCHEMA.empty_table(), W, W1)[0].num_rows == 0
