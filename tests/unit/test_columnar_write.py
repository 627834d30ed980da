"""The Arrow writer of the window tables (``columnar._write_partitioned``: Spark's ``cluster=<c>/window=<w>/``
layout with dynamic partition overwrite), its path escaping, and ``window_spans`` (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from kafka_balancer.pipeline.columnar.job import window_spans
from kafka_balancer.pipeline.columnar.tables import _write_partitioned, escape_path_value

W = 60_000
W0, W1 = 100 * W, 101 * W


def test_escape_path_value_escapes_what_spark_escapes() -> None:
    assert escape_path_value("a/b:c") == "a%2Fb%3Ac"
    assert escape_path_value("prod-eu_1.kafka") == "prod-eu_1.kafka"  # plain names unchanged
    assert escape_path_value("a b") == "a b"  # a space is kept (outside Windows)
    assert escape_path_value("100%=x?") == "100%25%3Dx%3F"
    assert escape_path_value('q"#\'*\\{[]^') == "q%22%23%27%2A%5C%7B%5B%5D%5E"
    assert escape_path_value("t\n\x7f") == "t%0A%7F"  # control characters, upper-case hex


def _table(rows: list[tuple[str, int, str, float]]) -> pa.Table:
    return pa.table({
        "cluster": pa.array([r[0] for r in rows]).dictionary_encode(),
        "topic": pa.array([r[2] for r in rows]),
        "window": pa.array([r[1] for r in rows], pa.int64()),
        "nw_in": pa.array([r[3] for r in rows], pa.float64()),
    })


def _read(root: Path) -> list[tuple[str, int, str, float]]:
    t = ds.dataset(root, format="parquet", partitioning="hive").to_table()
    return sorted(zip(t.column("cluster").to_pylist(), t.column("window").to_pylist(), t.column("topic").to_pylist(),
                      t.column("nw_in").to_pylist(), strict=True))


def test_write_partitioned_writes_one_folder_per_cluster_and_window(tmp_path: Path) -> None:
    root = tmp_path / "partition_windows"
    rows = [("p/1", W0, "a", 1.0), ("q", W1, "b", 2.0), ("p/1", W1, "c", 3.0), ("p/1", W0, "d", 4.0)]
    _write_partitioned(_table(rows), root)
    folders = sorted(str(p.relative_to(root)) for p in root.glob("*/*") if p.is_dir())
    assert folders == [f"cluster=p%2F1/window={W0}", f"cluster=p%2F1/window={W1}", f"cluster=q/window={W1}"]
    assert (root / "_SUCCESS").exists()
    files = list((root / "cluster=p%2F1" / f"window={W0}").glob("*.parquet"))
    assert len(files) == 1
    body = pq.read_table(files[0])
    # the partition columns live in the path only, the other columns keep their order
    assert body.column_names == ["topic", "nw_in"]
    assert sorted(body.column("topic").to_pylist()) == ["a", "d"]
    assert _read(root) == sorted(rows)  # the escaped value reads back as it was


def test_a_second_write_replaces_its_windows_and_keeps_the_others(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _write_partitioned(_table([("p", W0, "a", 1.0), ("p", W1, "b", 2.0), ("q", W1, "c", 3.0)]), root)
    _write_partitioned(_table([("p", W1, "x", 9.0)]), root)
    # p's W1 holds only the new row (one file, not two); p's W0 and q's W1 are untouched
    assert len(list((root / "cluster=p" / f"window={W1}").glob("*.parquet"))) == 1
    assert _read(root) == [("p", W0, "a", 1.0), ("p", W1, "x", 9.0), ("q", W1, "c", 3.0)]
    _write_partitioned(_table([]), root)  # nothing to write: nothing replaced
    assert len(_read(root)) == 3


# Spark's writer puts an empty (or null) partition value in cluster=__HIVE_DEFAULT_PARTITION__
def test_an_empty_cluster_label_gets_sparks_default_partition_folder(tmp_path: Path) -> None:
    _write_partitioned(_table([("", W0, "a", 1.0)]), tmp_path)
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == ["cluster=__HIVE_DEFAULT_PARTITION__"]


def test_window_spans_gives_the_latest_sample_time_per_cluster_and_window() -> None:
    part = pa.table({
        "cluster": pa.array(["a", "b", "a", "a", "b"]).dictionary_encode(),
        "topic": ["t", "t", "u", "t", "t"],
        "window": pa.array([W0, W0, W0, W1, W0], pa.int64()),
        "last_ts": pa.array([W0 + 10, W0 + 5, W0 + 30, W1 + 1, W0 + 50], pa.int64()),
    })
    assert sorted(window_spans(part)) == [("a", W0, W0 + 30), ("a", W1, W1 + 1), ("b", W0, W0 + 50)]
    assert window_spans(part.slice(0, 0)) == []
