"""The collector's Parquet writer: one folder per record type, files written every N rounds and at close,
each appearing whole; what it writes is what the pipeline's columnar route lists and reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from kafka_balancer.collect.writer import SampleParquetWriter
from kafka_balancer.pipeline.columnar.file_windows import parquet_files


def round_(ts: int) -> list[dict[str, Any]]:
    c = {"v": 1, "cluster": "prod", "ts": ts}
    return [
        {**c, "type": "broker", "broker": 1, "rack": "r1", "host": "h1", "alive": True, "cpu_seconds": ts / 1000.0,
         "cpu_cores": 4},
        {**c, "type": "partition", "topic": "t", "partition": 0, "replicas": [1, 2], "leader": 1, "isr": [1],
         "log_end_offset": ts, "log_start_offset": 0},
        {**c, "type": "replica", "topic": "t", "partition": 0, "broker": 2, "size": None, "log_dir": "/d"},
    ]


def test_files_per_type_every_n_rounds_and_at_close(tmp_path: Path) -> None:
    w = SampleParquetWriter(tmp_path, rounds_per_file=2)
    for ts in (10_000, 20_000, 30_000):
        assert w.write_round(round_(ts)) == tmp_path / "parquet"
    # two rounds written, the third held
    assert sorted(p.relative_to(tmp_path).as_posix() for p in w.files) == [
        "parquet/broker/samples-10000-0000.parquet", "parquet/partition/samples-10000-0000.parquet",
        "parquet/replica/samples-10000-0000.parquet"]
    w.close()
    assert len(w.files) == 6 and (tmp_path / "parquet/broker/samples-30000-0001.parquet").exists()
    assert not list(tmp_path.rglob(".*"))  # no temporary file left
    part = pq.read_table(tmp_path / "parquet" / "partition").sort_by("ts").to_pylist()
    assert [r["log_end_offset"] for r in part] == [10_000, 20_000, 30_000]
    assert part[0]["replicas"] == [1, 2] and "type" not in part[0] and part[0]["cluster"] == "prod"
    rep = pq.read_table(tmp_path / "parquet" / "replica").to_pylist()
    assert [r["size"] for r in rep] == [None] * 3 and rep[0]["log_dir"] == "/d"
    files = parquet_files(tmp_path)
    assert files is not None and files["group_offset"] == []
    assert sorted((f.lo, f.hi, f.rows) for f in files["broker"]) == [(10_000, 20_000, 2), (30_000, 30_000, 1)]


def test_close_without_rounds_and_bad_records(tmp_path: Path) -> None:
    w = SampleParquetWriter(tmp_path)
    w.close()
    assert w.files == [] and not (tmp_path / "parquet").exists()
    with pytest.raises(ValueError, match="at least one record"):
        w.write_round([])
    with pytest.raises(ValueError, match="unknown type 'bogus'"):
        w.write_round([{"type": "bogus", "ts": 1}])
