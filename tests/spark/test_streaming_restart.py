"""Structured Streaming restart: stop the queries mid-stream, restart from the checkpoints, and check that
no window is lost and none counted twice.

The source here is a folder of JSON-lines files (Spark's file source, one file per micro-batch), not
Kafka: everything after the source (JSON parsing, watermark, window aggregation, file sink, checkpoint,
window step, snapshot) is the code ``pipeline --from-kafka`` runs. The Kafka source itself is exercised by
``tests/kafka/test_pipeline_live.py``.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from pyspark.sql import functions as F

from kafka_balancer.model.snapshot_io import read_snapshot
from kafka_balancer.pipeline import streaming
from kafka_balancer.pipeline.config import PipelineConfig

from .conftest import WINDOWS, SampleSet

pytestmark = pytest.mark.spark


def _move(files: list[Path], dest: Path) -> None:
    """Files appear atomically and in time order, as a collector writes them (the file source takes them
    oldest first; a file of older samples arriving after newer ones would be late data, dropped)."""
    for f in files:
        tmp = dest / f".{f.name}.tmp"
        shutil.copy(f, tmp)
        stamp = 1_700_000_000 + int(f.name.split("-")[1]) // 1000
        os.utime(tmp, (stamp, stamp))
        tmp.rename(dest / f.name)


def test_stop_and_restart_loses_no_window_and_counts_none_twice(
    spark: Any, clean_samples: SampleSet, clean_batch: Any, tmp_path: Path
) -> None:
    cfg = PipelineConfig(windows=WINDOWS)
    files = sorted(clean_samples.path.glob("*.jsonl"))  # five rounds (one window) per file
    assert len(files) == WINDOWS + 1
    inbox, state, out = tmp_path / "in", tmp_path / "state", tmp_path / "out"
    inbox.mkdir()
    source = streaming.file_source(spark, inbox, max_files=1)

    # Run 1: the first three files, processed continuously; stopped as soon as every query's watermark has
    # passed the first window (so each has written it), while the queries are at different batches (some
    # are stopped in the middle of one).
    _move(files[:3], inbox)
    first_end = clean_samples.sim.spec.start_ms // cfg.window_ms * cfg.window_ms + cfg.window_ms
    job = streaming.start(spark, source, cfg, state, lateness_ms=0, trigger={"processingTime": "1 second"})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (job.watermark_ms() or 0) < first_end:
        time.sleep(0.5)
    job.stop()
    first = streaming.emit_ready_windows(spark, state, out, cfg)
    assert first, "the first run closed no window"

    # Run 2: restart from the checkpoints, with the rest of the files; drain and emit.
    _move(files[3:], inbox)
    job = streaming.start(spark, source, cfg, state, lateness_ms=0, trigger={"availableNow": True})
    job.await_all(300)
    second = streaming.emit_ready_windows(spark, state, out, cfg)
    assert not set(first) & set(second)
    emitted = sorted(first + second)

    batch = clean_batch[0]
    assert emitted == batch.windows  # every closed window, once
    assert orjson.loads((out / "emitted.json").read_bytes()) == emitted

    # Each aggregate row exactly once: a double-counted batch would repeat (key, window) or double n.
    aggs = streaming.read_aggregates(spark, state)
    assert aggs is not None
    p = aggs["partition"]
    assert p.count() == p.select("topic", "partition", "window").distinct().count()
    r = aggs["replica"]
    assert r.count() == r.select("topic", "partition", "broker", "window").distinct().count()

    # The streamed window tables equal the batch ones.
    s_pw = spark.read.parquet(str(out / "tables" / "partition_windows")).select(
        "topic", "partition", "window", "n", "nw_in", "nw_out", "disk")
    b_pw = batch.tables.partition_windows.select(
        "topic", "partition", "window", F.col("n").alias("b_n"), F.col("nw_in").alias("b_in"),
        F.col("nw_out").alias("b_out"), F.col("disk").alias("b_disk"))
    joined = s_pw.join(b_pw, ["topic", "partition", "window"], "full").collect()
    assert len(joined) == WINDOWS * clean_samples.snap.n_partitions
    for row in joined:
        assert row["n"] == row["b_n"]
        # same records, summed in another order (streamed micro-batches vs one batch job): equal up to float
        # reassociation; a window lost or counted twice would be off by tens of percent
        assert row["nw_in"] == pytest.approx(row["b_in"], rel=1e-6)
        assert row["nw_out"] == pytest.approx(row["b_out"], rel=1e-6)
        assert row["disk"] == row["b_disk"]
    snap = read_snapshot(out / "snapshot.json")
    assert snap.n_partitions == clean_samples.snap.n_partitions
    assert (out / f"snapshot-{emitted[-1]}.json").exists()
