"""Spark tasks that aggregate Parquet samples per window with Arrow and send the results back as Arrow.

One task per (kind, window) reads the files whose footer time range touches the window (:mod:`file_windows`)
and returns its window's aggregate as an Arrow IPC stream (lz4-compressed) to the driver:

* ``partition``, ``replica``, ``group_offset``: :func:`arrow_agg.first_last` of the window's records;
* ``broker_window``: the broker records and the topic-broker byte counters of the window and the one
  before it, giving the broker window row with its CPU rates (:func:`arrow_broker.broker_window`) and
  the topic-broker byte rates (:func:`arrow_agg.counter_rates`, without the intervals in which the
  broker's CPU counter went down): kinds ``broker`` and ``topic_broker``.

The tasks of one call form one Spark job (an RDD of the task list, biggest first), so the Python workers
start once and a short task does not wait for a long one of another kind. The sample folder must be
readable from every executor, as for ``spark.read.parquet``.

    >>> tasks = window_tasks("replica", files["replica"], [0, 300_000], 300_000)       # doctest: +SKIP
    >>> out = run_window_tasks(spark, tasks, 300_000, "prod", ("replica",))           # doctest: +SKIP
    >>> out["replica"].num_rows                                                       # doctest: +SKIP
    2118900
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession

from kafka_balancer.pipeline.columnar.arrow_agg import counter_rates, first_last
from kafka_balancer.pipeline.columnar.arrow_broker import BW_SCHEMA, broker_window
from kafka_balancer.pipeline.columnar.file_windows import SPECS, TB_FIELDS, FileSpan, input_schema, read_slice


@dataclass(frozen=True)
class WindowTask:
    kind: str  # partition, replica, group_offset or broker_window
    window: int
    lo: int  # read samples with lo <= ts < hi
    hi: int
    paths: tuple[str, ...]  # the kind's files (topic-broker files for broker_window)
    rows: int  # rows in those files (the biggest tasks start first)
    broker_paths: tuple[str, ...] = ()  # broker_window: the broker files


def _hit(files: list[FileSpan], lo: int, hi: int) -> list[FileSpan]:
    return [f for f in files if f.lo is not None and f.hi is not None and f.lo < hi and f.hi >= lo]


def window_tasks(kind: str, files: list[FileSpan], windows: list[int], window_ms: int) -> list[WindowTask]:
    """A first-last task (``kind`` partition, replica or group_offset) per window with files."""
    out = []
    for w in windows:
        hit = _hit(files, w, w + window_ms)
        if hit:
            out.append(WindowTask(kind, w, w, w + window_ms, tuple(f.path for f in hit), sum(f.rows for f in hit)))
    return out


def broker_window_tasks(tb_files: list[FileSpan], broker_files: list[FileSpan], windows: list[int],
                        window_ms: int) -> list[WindowTask]:
    """A broker_window task per window with topic-broker or broker files (reading the window before too)."""
    out = []
    for w in windows:
        lo, hi = w - window_ms, w + window_ms
        tb, br = _hit(tb_files, lo, hi), _hit(broker_files, lo, hi)
        if tb or br:
            out.append(WindowTask("broker_window", w, lo, hi, tuple(f.path for f in tb),
                                  sum(f.rows for f in tb + br), tuple(f.path for f in br)))
    return out


def _ipc(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_table(t)
    return bytes(sink.getvalue().to_pybytes())


def _first_last(kind: str, t: pa.Table, window_ms: int) -> pa.Table:
    spec = SPECS[kind]
    agg = first_last(t, spec.keys, spec.fields, window_ms, spec.count, spec.last_only, spec.min_max)
    if "leader_min" in agg.column_names:
        agg = agg.append_column("leader_moved", pc.not_equal(agg.column("leader_min"), agg.column("leader_max")))
    return agg


def _broker_window(task: WindowTask, window_ms: int, cluster: str | None) -> tuple[pa.Table, pa.Table]:
    brokers = read_slice(list(task.broker_paths), input_schema("broker"), task.lo, task.hi, cluster)
    bw, restarts = broker_window(brokers, window_ms, task.window)
    tb = read_slice(list(task.paths), input_schema("topic_broker"), task.lo, task.hi, cluster)
    rates = counter_rates(tb, ["cluster", "broker", "topic"], TB_FIELDS, window_ms, task.window, restarts,
                          count_name="tb_intervals")
    return bw, rates


def run_task(task: WindowTask, window_ms: int, cluster: str | None) -> list[tuple[str, bytes]]:
    """The task's (kind, Arrow IPC stream) results (runs on an executor)."""
    if task.kind == "broker_window":
        bw, rates = _broker_window(task, window_ms, cluster)
        return [("broker", _ipc(bw)), ("topic_broker", _ipc(rates))]
    t = read_slice(list(task.paths), input_schema(task.kind), task.lo, task.hi, cluster)
    return [(task.kind, _ipc(_first_last(task.kind, t, window_ms)))]


def empty_result(kind: str, window_ms: int) -> pa.Table:
    """The (empty) table a kind gives when no task ran."""
    if kind == "broker":
        return BW_SCHEMA.empty_table()
    if kind == "topic_broker":
        return counter_rates(input_schema("topic_broker").empty_table(), ["cluster", "broker", "topic"], TB_FIELDS,
                             window_ms, 0, set(), count_name="tb_intervals")
    return _first_last(kind, input_schema(kind).empty_table(), window_ms)


def run_window_tasks(spark: SparkSession, tasks: list[WindowTask], window_ms: int, cluster: str | None,
                     kinds: tuple[str, ...]) -> dict[str, pa.Table]:
    """Runs ``tasks`` as one Spark job (one partition per task, biggest first) and returns each of ``kinds``
    as one Arrow table (dictionary columns unified)."""
    ordered = sorted(tasks, key=lambda t: -t.rows)
    results: list[tuple[str, bytes]] = []
    if ordered:
        rdd = spark.sparkContext.parallelize(ordered, len(ordered))
        results = rdd.flatMap(partial(run_task, window_ms=window_ms, cluster=cluster)).collect()
    out: dict[str, pa.Table] = {}
    for kind in kinds:
        parts = [pa.ipc.open_stream(data).read_all() for k, data in results if k == kind]
        out[kind] = pa.concat_tables(parts).unify_dictionaries() if parts else empty_result(kind, window_ms)
    return out
