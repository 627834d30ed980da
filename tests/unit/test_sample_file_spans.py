"""The Parquet footers that tell the batch job which files hold a window (no Spark session needed)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.columnar.file_windows import parquet_files


def _write(folder: Path, name: str, ts: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    pq.write_table(pa.table({"cluster": ["c"] * len(ts), "ts": pa.array(ts, pa.int64())}), path)
    return path


def test_spans_come_from_the_footers(tmp_path: Path) -> None:
    _write(tmp_path / "parquet" / "replica", "part-0.parquet", [120_000, 60_000, 90_000])
    _write(tmp_path / "parquet" / "replica", "part-1.parquet", [])
    files = parquet_files(tmp_path)
    assert files is not None and files["partition"] == []
    spans = {Path(f.path).name: (f.lo, f.hi, f.rows) for f in files["replica"]}
    assert spans == {"part-0.parquet": (60_000, 120_000, 3), "part-1.parquet": (None, None, 0)}


def test_a_truncated_sample_file_is_named_with_a_hint(tmp_path: Path) -> None:
    _write(tmp_path / "parquet" / "partition", "part-0.parquet", [0, 1])
    bad = _write(tmp_path / "parquet" / "replica", "part-7.parquet", [0, 1])
    bad.write_bytes(bad.read_bytes()[:40])  # a collector stopped mid-write
    with pytest.raises(InputError) as err:
        parquet_files(tmp_path)
    text = err.value.render()
    assert "part-7.parquet" in text and "not readable Parquet" in text and "move it out of" in text
