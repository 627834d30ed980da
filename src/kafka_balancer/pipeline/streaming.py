"""Structured Streaming: samples arriving on a Kafka topic (or as files) -> window aggregates with a
watermark -> a fresh snapshot for every window that closes.

One streaming query per record type parses the JSON values, sets a watermark on the sample time and
runs the *same* window aggregation as the batch pipeline (``sql/aggregate.py``) in append mode: Spark keeps
each open window in its state store and writes it once, when the watermark passes its end, to a Parquet
file sink (``STATE/aggs/<type>/``). The file sink and the checkpoint (``STATE/checkpoints/<type>/``) make
that exactly-once across restarts: a batch that was interrupted is replayed under the same id and its
files are committed once.

:func:`emit_ready_windows` then takes every window that all queries have closed and that has no snapshot
yet, runs the batch pipeline's window step (``sql/tables.py``) on the stored aggregates (with the window
before them as the base of the first interval and the history the CPU fit needs), writes the window
tables of those windows (overwriting each window's partition only) and ``snapshot-<window start>.json``
plus ``snapshot.json`` for the newest one. Polled every trigger, that is one snapshot per window; after
a restart with a backlog, the backlog's windows get their tables and the newest its snapshot.

The source is either Kafka (``kafka_source``; needs the ``spark_kafka`` jars) or a folder of JSON-lines
files (``file_source``); both yield a ``value`` string column (and ``origin``: where a record came from),
and everything after is the same code.

Records the aggregations cannot use (not JSON, a field of the wrong type, another format version, an
unknown record type, no ``ts``: the rule of the batch readers) are left out and counted by one more query
(``skipped``): every micro-batch that skipped some says so in one warning line with the counts by reason
and the running total, and a bounded run (``--max-polls``) that read records but could use none fails
(exit 2), as the batch job does on such a folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

from kafka_balancer.errors import ClusterError, InputError
from kafka_balancer.files.outputs import ensure_dir, write_bytes
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.read import ORIGIN, parse_json_records, parse_json_values, skipped_records
from kafka_balancer.pipeline.sql.aggregate import AGGREGATORS
from kafka_balancer.pipeline.sql.job import finish
from kafka_balancer.pipeline.sql.tables import WindowTables, window_tables
from kafka_balancer.validate.samples import SkippedRecords

DEFAULT_TOPIC = "__kafka_balancer_samples"
SOURCE_TIMEOUT_S = 15.0
Source = Callable[[], DataFrame]
Say = Callable[[str], None]
SKIPPED_QUERY = "skipped"  # the query counting the records no aggregation can use (checkpoints/skipped/)


def check_kafka_source(bootstrap: str, topic: str = DEFAULT_TOPIC, timeout_s: float = SOURCE_TIMEOUT_S) -> None:
    """The samples topic exists on a cluster that answers within ``timeout_s``: ClusterError (exit 1) when
    no broker answers, InputError when the topic is not there. Spark's Kafka source would otherwise retry
    without end and say nothing."""
    from kafka_balancer.collect.admin import connect_admin, retried

    try:
        admin = connect_admin(bootstrap, timeout_s)
    except ClusterError as exc:
        raise ClusterError(f"--from-kafka: {exc.message}", hint="check --from-kafka host:port and that the "
                           "brokers run (`kafka-balancer local-cluster status` for the local cluster)") from None
    try:
        topics = set(retried(admin.list_topics))  # (retried keeps kafka-python's logs quiet)
    except Exception as exc:  # kafka-python raises its own errors and OSErrors on a broken connection
        raise ClusterError(f"cannot list the topics of {bootstrap}: {type(exc).__name__}: {exc}"[:300],
                           hint="check --from-kafka and that the brokers run") from None
    finally:
        admin.close()
    if topic not in topics:
        raise InputError(f"--topic {topic!r} does not exist on {bootstrap}",
                         hint="`kafka-balancer collect --topic` produces the samples there; check --topic")


def kafka_source(spark: SparkSession, bootstrap: str, topic: str = DEFAULT_TOPIC,
                 max_offsets: int | None = None, options: dict[str, str] | None = None) -> Source:
    """``options``: more source options, e.g. the ``kafka.*`` security settings (security/clients.py)."""
    def make() -> DataFrame:
        r = (spark.readStream.format("kafka")
             .options(**(options or {}))
             .option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", topic)
             .option("startingOffsets", "earliest")
             .option("failOnDataLoss", "false"))
        if max_offsets:
            r = r.option("maxOffsetsPerTrigger", str(max_offsets))
        return r.load().select(F.col("value").cast("string").alias("value"),
                               F.format_string("%s-%d@%d", "topic", "partition", "offset").alias(ORIGIN))
    return make


def file_source(spark: SparkSession, directory: str | Path, max_files: int | None = None) -> Source:
    def make() -> DataFrame:
        r = spark.readStream.option("pathGlobFilter", "*.jsonl")
        if max_files:
            r = r.option("maxFilesPerTrigger", str(max_files))
        return r.text(str(directory)).withColumn(ORIGIN, F.input_file_name())
    return make


@dataclass
class SkipCounter:
    """The records the queries skipped, added up over the micro-batches of the ``skipped`` query (run in
    the driver by ``foreachBatch``); ``say`` gets one warning line per micro-batch that skipped any."""

    say: Say | None = None
    total: SkippedRecords = field(default_factory=lambda: SkippedRecords(0))

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        now = skipped_records(batch)
        self.total = self.total + now
        line = now.warning()
        if line and self.say is not None:
            self.say(f"warning: micro-batch {batch_id}: {line} (so far: {self.total.skipped:,} of "
                     f"{self.total.total:,})")

    def check_usable(self, where: str) -> None:
        """Fail (InputError) when records were read and none of them was usable."""
        self.total.check_usable(where, source=where, hint="check --topic: `kafka-balancer collect --topic` "
                                "produces samples there (docs/samples-format.md)")


@dataclass
class StreamingJob:
    queries: dict[str, StreamingQuery]
    state_dir: Path
    emitted: list[int] = field(default_factory=list)
    skipped: SkipCounter = field(default_factory=SkipCounter)
    counter_query: StreamingQuery | None = None

    def all_queries(self) -> list[StreamingQuery]:
        return [*self.queries.values(), *([self.counter_query] if self.counter_query is not None else [])]

    def stop(self) -> None:
        for q in self.all_queries():
            if q.isActive:
                q.stop()

    def await_all(self, timeout_s: int = 600) -> None:
        for q in self.all_queries():
            q.awaitTermination(timeout_s)
            exc = q.exception()
            if exc is not None:
                raise RuntimeError(f"streaming query {q.name} failed: {exc}")

    def watermark_ms(self) -> int | None:
        """The lowest watermark over the queries (None until every query reported one)."""
        marks = []
        for q in self.queries.values():
            prog: dict[str, Any] = q.lastProgress or {}
            wm = prog.get("eventTime", {}).get("watermark")
            if wm is None:
                return None
            marks.append(int(datetime.fromisoformat(wm.replace("Z", "+00:00")).timestamp() * 1000))
        return min(marks) if marks else None


def start(spark: SparkSession, source: Source, cfg: PipelineConfig, state_dir: str | Path,
          lateness_ms: int = 60_000, trigger: dict[str, Any] | None = None, say: Say | None = None) -> StreamingJob:
    """Start one aggregation query per record type and the query counting skipped records (``trigger``:
    e.g. ``{"availableNow": True}`` or ``{"processingTime": "30 seconds"}``; ``say``: where the warning
    lines of skipped records go)."""
    state = Path(state_dir)
    trig = trigger or {"processingTime": "30 seconds"}
    queries: dict[str, StreamingQuery] = {}
    for rtype, fn in AGGREGATORS.items():
        samples = parse_json_values(source()).where(F.col("type") == rtype)
        if cfg.cluster is not None:
            samples = samples.where(F.col("cluster") == cfg.cluster)
        samples = samples.withWatermark("event_time", f"{lateness_ms} milliseconds")
        agg = fn(samples, cfg.window_ms)
        queries[rtype] = (
            agg.writeStream.format("parquet")
            .outputMode("append")
            .option("path", str(state / "aggs" / rtype))
            .option("checkpointLocation", str(state / "checkpoints" / rtype))
            .queryName(f"kafka_balancer_{rtype}_{abs(hash(str(state))) % 10**6}")
            .trigger(**trig)
            .start()
        )
    counter = SkipCounter(say)
    counting = (parse_json_records(source()).writeStream.foreachBatch(counter)
                .option("checkpointLocation", str(state / "checkpoints" / SKIPPED_QUERY))
                .queryName(f"kafka_balancer_{SKIPPED_QUERY}_{abs(hash(str(state))) % 10**6}")
                .trigger(**trig).start())
    return StreamingJob(queries, state, skipped=counter, counter_query=counting)


def committed_files(state_dir: str | Path, rtype: str) -> int:
    """How many data files the file sink of ``rtype`` has committed (from its ``_spark_metadata`` log)."""
    log = Path(state_dir) / "aggs" / rtype / "_spark_metadata"
    if not log.is_dir():
        return 0
    return sum(f.read_text(errors="replace").count('"path"') for f in log.iterdir() if f.name.split(".")[0].isdigit())


def read_aggregates(spark: SparkSession, state_dir: str | Path) -> dict[str, DataFrame] | None:
    """The window aggregates written so far (None until every type has written something)."""
    out = {}
    for rtype in AGGREGATORS:
        d = Path(state_dir) / "aggs" / rtype
        if not (d / "_spark_metadata").is_dir():
            return None
        out[rtype] = spark.read.parquet(str(d))
    return out


def committed_watermark_ms(state_dir: str | Path) -> int | None:
    """The lowest, over the record types' queries, of the watermark their last committed batch ran with
    (from ``STATE/checkpoints/<type>/``: ``commits/<id>`` marks batch ``id`` done, line 2 of
    ``offsets/<id>`` is its metadata). A query has written every window that ends at or below it to its
    file sink. A query that has never seen a sample (its watermark is still 0: a cluster without consumer
    groups has no group offsets) holds nothing back. None until every query has committed a batch and one
    has seen samples."""
    marks = []
    for rtype in AGGREGATORS:
        cp = Path(state_dir) / "checkpoints" / rtype
        commits = cp / "commits"
        done = [int(f.name) for f in commits.iterdir() if f.name.isdigit()] if commits.is_dir() else []
        if not done:
            return None
        lines = (cp / "offsets" / str(max(done))).read_text().splitlines()
        mark = int((orjson.loads(lines[1]) if len(lines) > 1 else {}).get("batchWatermarkMs", 0))
        if mark > 0:
            marks.append(mark)
    return min(marks) if marks else None


def _emitted_path(out_dir: Path) -> Path:
    return out_dir / "emitted.json"


def emitted_windows(out_dir: str | Path) -> list[int]:
    """The windows already written to ``out_dir`` (its ``emitted.json``: a JSON list of window starts)."""
    from kafka_balancer.files.inputs import read_bytes

    p = _emitted_path(Path(out_dir))
    if not p.exists():
        return []
    data = read_bytes(p, "--out-dir", "the streaming job's list of emitted windows")
    try:
        windows = orjson.loads(data)
    except orjson.JSONDecodeError:
        windows = None
    if not isinstance(windows, list) or not all(isinstance(w, int) and not isinstance(w, bool) for w in windows):
        raise InputError(f"--out-dir {out_dir}: {p.name} is not a JSON list of window starts (ms)",
                         hint=f"remove {p} to write every window's snapshot again, or give a new --out-dir")
    return sorted(windows)


def emit_ready_windows(spark: SparkSession, state_dir: str | Path, out_dir: str | Path, cfg: PipelineConfig,
                       watermark_ms: int | None = None, say: Say | None = None) -> list[int]:
    """Snapshot every closed window not emitted yet; returns the windows emitted now.

    A window is closed when its partition aggregates exist and its end is at or below the watermark of
    every record type's last committed batch (:func:`committed_watermark_ms`), so that each type's file
    sink holds it: the queries run independently, and one stopped in the middle may be a window behind the
    others. ``watermark_ms``, when given (a running job's lowest live watermark), bounds it further.
    """
    from kafka_balancer.model.snapshot_io import snapshot_from_dict, write_snapshot

    aggs = read_aggregates(spark, state_dir)
    if aggs is None:
        return []
    out = ensure_dir(out_dir, "--out-dir")
    w_ms = cfg.window_ms
    bound = committed_watermark_ms(state_dir)
    if bound is None:
        return []
    if watermark_ms is not None:
        bound = min(bound, watermark_ms)
    present = sorted(int(r["window"]) for r in aggs["partition"].select("window").distinct().collect())
    present = [w for w in present if w + w_ms <= bound]
    done = set(emitted_windows(out))
    todo = [w for w in present if w not in done]
    if not todo:
        return []
    newest = todo[-1]
    # History: the requested number of windows up to the newest, and every window to emit.
    history = sorted({x for x in present if newest - cfg.windows * w_ms < x <= newest} | set(todo))
    base = history[0] - w_ms
    window_aggs = {t: a.where((F.col("window") >= base) & (F.col("window") <= newest)) for t, a in aggs.items()}
    tables = window_tables(window_aggs, w_ms, history, cfg.min_sample_ratio, cfg.cpu_min_obs, cfg.cpu_min_windows)
    # Window tables of the new windows (a window rewritten after a restart replaces itself).
    is_new = F.col("window").isin(todo)
    WindowTables(tables.partition_windows.where(is_new), tables.broker_windows.where(is_new),
                 tables.cpu_model, todo).write(out / "tables")
    # One snapshot, for the newest window, over the last ``cfg.windows`` windows.
    last_n = [x for x in history if x > newest - cfg.windows * w_ms]
    in_n = F.col("window").isin(last_n)
    clusters = [r["cluster"] for r in tables.partition_windows.select("cluster").distinct().collect()]
    for cluster in clusters:
        mine = F.col("cluster") == cluster
        one = WindowTables(tables.partition_windows.where(mine & in_n), tables.broker_windows.where(mine & in_n),
                           tables.cpu_model, last_n)
        result = finish(one, cfg, cluster)
        if say is not None:
            for warning in result.warnings:
                say(f"warning: window {newest}{'' if len(clusters) == 1 else f' cluster {cluster}'}: {warning}")
        suffix = "" if len(clusters) == 1 else f"-{cluster}"
        snap = snapshot_from_dict(result.snapshot, source=f"window {newest}")
        write_snapshot(snap, out / f"snapshot{suffix}-{newest}.json")
        write_snapshot(snap, out / f"snapshot{suffix}.json")
        write_bytes(out / f"report{suffix}-{newest}.json", orjson.dumps(result.report, option=orjson.OPT_INDENT_2),
                    "--out-dir")
    write_bytes(_emitted_path(out), orjson.dumps(sorted(done | set(todo))), "--out-dir")
    # The window tables were stored for this emission only: a job emitting every window for days must
    # not keep each emission's tables.
    tables.release()
    return todo


def run_forever(spark: SparkSession, source: Source, cfg: PipelineConfig, state_dir: str | Path,
                out_dir: str | Path, lateness_ms: int, poll_s: float = 10.0,
                on_emit: Callable[[list[int]], None] | None = None, max_polls: int | None = None,
                say: Say | None = None) -> SkippedRecords:
    """The ``pipeline --from-kafka`` loop: keep the queries running, emit windows as they close. ``say``
    gets the warning lines (skipped records, a CPU model on fixed weights). Returns what was skipped."""
    job = start(spark, source, cfg, state_dir, lateness_ms, {"processingTime": f"{int(poll_s)} seconds"}, say)
    polls = 0
    rows = 0
    try:
        while max_polls is None or polls < max_polls:
            time.sleep(poll_s)
            polls += 1
            for q in job.all_queries():
                if q.exception() is not None:
                    raise RuntimeError(f"streaming query {q.name} failed: {q.exception()}")
            rows += sum(1 for q in job.queries.values() for prog in q.recentProgress
                        if int(prog.get("numInputRows") or 0) > 0)
            wm = job.watermark_ms()
            if wm is not None:
                new = emit_ready_windows(spark, state_dir, out_dir, cfg, wm, say)
                if new and on_emit is not None:
                    on_emit(new)
    finally:
        job.stop()
    if max_polls is not None and not emitted_windows(out_dir):
        job.skipped.check_usable(f"the samples topic ({polls} polls)")
    if max_polls is not None and rows == 0 and not emitted_windows(out_dir):
        raise ClusterError(f"no samples arrived in {polls} polls of {poll_s:g} s: nothing to make a snapshot of",
                           hint="check that `kafka-balancer collect --topic` is producing samples to the topic")
    return job.skipped.total
