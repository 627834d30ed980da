"""End to end on simulated samples with known truth: the batch pipeline recovers every partition's load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from kafka_balancer.cli.main import main
from kafka_balancer.model.snapshot_io import read_snapshot
from kafka_balancer.pipeline.batch import run_batch
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.sql.tables import is_stored

from .conftest import WINDOWS, SampleSet, partition_errors

pytestmark = pytest.mark.spark


def test_clean_samples_recover_disk_network_and_cpu(spark: Any, clean_samples: SampleSet, clean_batch: Any) -> None:
    res, tmp_path = clean_batch
    m = partition_errors(res.snapshot, clean_samples.sim)
    assert m["err_disk"].max() < 0.02
    assert m["err_nw_in"].max() < 0.05
    assert m["err_nw_out"].max() < 0.05
    # CPU: the simulated brokers burn a·in + b·out per leader and c·in per follower (0.7/0.15/0.15 on the
    # simulator's raw units; in snapshot units in and out are scaled differently). The fit must find the
    # per-byte costs the truth implies.
    assert res.cpu_model.fitted and res.cpu_model.r2 is not None and res.cpu_model.r2 > 0.99
    assert res.cpu_model.normalised == pytest.approx(_true_cpu_weights(clean_samples), rel=0.03)
    assert m["err_leader_cpu"].median() < 0.05
    assert res.report["valid_ratio"] == 1.0 and len(res.windows) == WINDOWS
    snap = read_snapshot(tmp_path / "snap.json")
    assert snap.n_partitions == clean_samples.snap.n_partitions and snap.alive.all()
    pw = spark.read.parquet(str(tmp_path / "tables" / "partition_windows"))
    assert pw.count() == WINDOWS * snap.n_partitions
    assert sorted(r["window"] for r in pw.select("window").distinct().collect()) == res.windows


def _true_cpu_weights(samples: SampleSet) -> tuple[float, float, float]:
    import numpy as np

    t = samples.sim.truth
    ab, *_ = np.linalg.lstsq(np.stack([t.nw_in, t.nw_out], axis=1), t.leader_cpu, rcond=None)
    c = float(np.median(t.follower_cpu / t.nw_in))
    tot = float(ab[0] + ab[1] + c)
    return float(ab[0]) / tot, float(ab[1]) / tot, c / tot


def test_resets_missing_samples_and_a_down_broker(spark: Any, faulty_samples: SampleSet, tmp_path: Path) -> None:
    res = run_batch(spark, faulty_samples.path, PipelineConfig(windows=WINDOWS))
    m = partition_errors(res.snapshot, faulty_samples.sim)
    assert m["err_disk"].max() < 0.02
    assert m["err_nw_in"].max() < 0.05
    assert m["err_nw_out"].max() < 0.05
    brokers = {b["id"]: b for b in res.snapshot["brokers"]}
    assert brokers[2]["alive"]  # back after its window
    # The down broker has no CPU for its window and is reported; the partitions still count.
    bad = {int(b["broker"]): b for b in res.report["brokers"]}
    assert bad[2]["cpu_valid_windows"] == WINDOWS - 1
    assert res.report["valid_ratio"] >= 0.95
    # The job stored its aggregates and window tables; release() drops every one of them.
    held = list(res.tables.held)
    assert is_stored(res.tables.partition_windows) and len(held) >= 7
    assert all(is_stored(df) for df in held)
    res.release()
    assert not any(is_stored(df) for df in held)
    assert not res.tables.held


def test_cli_pipeline_writes_snapshot_report_and_fails_clearly(
    spark: Any, clean_samples: SampleSet, tmp_path: Path, capsys: Any
) -> None:
    out = tmp_path / "snap.json"
    rc = main(["pipeline", "--samples", str(clean_samples.path), "--out", str(out), "--window", "5m",
               "--windows", str(WINDOWS)])
    assert rc == 0
    assert read_snapshot(out).n_partitions == clean_samples.snap.n_partitions
    report = orjson.loads((tmp_path / "snap.report.json").read_bytes())
    assert report["valid_partitions"] == clean_samples.snap.n_partitions
    captured = capsys.readouterr()
    assert "cpu model" in captured.out
    # Progress: one line per finished step, in order, with its time.
    steps = [line.split(":")[1].strip() for line in captured.err.splitlines() if line.startswith("pipeline: ")]
    assert steps[0].startswith("starting Spark") and "partition aggregate" in steps
    assert steps.index("partition aggregate") < steps.index("CPU model fit") < steps.index("summaries")
    # Bad flags fail before any Spark work, with one line and a hint, no traceback.
    rc = main(["snapshot", "--samples", str(clean_samples.path), "--out", str(tmp_path / "x.json"),
               "--windows", "4", "--min-valid-windows", "10"])
    err = capsys.readouterr().err
    assert rc == 2 and "--min-valid-windows must be between 1 and --windows (4)" in err and "hint:" in err
    assert not (tmp_path / "x.json").exists()
