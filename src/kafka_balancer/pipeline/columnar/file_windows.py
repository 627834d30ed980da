"""Sample files per window: which Parquet files hold a window, and reading a window's rows with Arrow.

Over Parquet samples the windows can be cut without a shuffle: the ``ts`` statistics in the file footers
tell which files hold a window (:func:`parquet_files`, :func:`candidate_windows`), so a task reads just
those files (:func:`read_slice`) and aggregates them (:mod:`window_tasks`). JSON lines, and a folder that
is not plain Parquet, take the Spark SQL route.

    >>> files = parquet_files("samples/")                                   # doctest: +SKIP
    >>> paths = [f.path for f in files["replica"]]                          # doctest: +SKIP
    >>> t = read_slice(paths, input_schema("replica"), 0, 300_000, "prod")  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import to_arrow_schema

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.schemas import OFFSETS, RECORD_TYPES, type_schema
from kafka_balancer.validate.samples import check_parquet_file


@dataclass(frozen=True)
class FileSpan:
    """A Parquet file and the range of its sample times (None, None when it holds no time)."""

    path: str
    lo: int | None
    hi: int | None
    rows: int


@dataclass(frozen=True)
class FirstLastSpec:
    keys: tuple[str, ...]
    fields: dict[str, str]
    count: bool = True
    last_only: tuple[str, ...] = ()
    min_max: tuple[str, ...] = ()


SPECS: dict[str, FirstLastSpec] = {
    "partition": FirstLastSpec(("cluster", "topic", "partition"), OFFSETS, last_only=("replicas", "leader", "isr"),
                               min_max=("leader",)),
    "replica": FirstLastSpec(("cluster", "topic", "partition", "broker"), {"size": "size"}),
    "group_offset": FirstLastSpec(("cluster", "group", "topic", "partition"), {"c": "committed"}, count=False),
}
TB_FIELDS = {"bytes_in": "in_rate", "bytes_out": "out_rate"}


def parquet_files(samples_dir: str | Path) -> dict[str, list[FileSpan]] | None:
    """The Parquet files of each record type with their time ranges, or None when the folder is not plain
    Parquet samples (JSON lines, or a type folder with sub-folders): those take the Spark SQL path."""
    d = Path(samples_dir)
    if not d.is_dir() or any(d.glob("*.jsonl")):
        return None
    out: dict[str, list[FileSpan]] = {}
    for rtype in RECORD_TYPES:
        pdir = d / "parquet" / rtype
        if not pdir.is_dir():
            out[rtype] = []
            continue
        entries = [p for p in sorted(pdir.iterdir()) if not p.name.startswith(("_", "."))]
        if any(p.is_dir() for p in entries):
            return None
        out[rtype] = [_span(p, rtype) for p in entries]
    if not any(out.values()):
        return None
    return out


def _span(path: Path, rtype: str) -> FileSpan:
    """Time range from the footer's ``ts`` statistics (reads the column when a row group has none). A file
    that is not readable Parquet (truncated by a collector stopped mid-write, say), or whose columns are not
    of the sample types, is an input error (:func:`kafka_balancer.validate.samples.check_parquet_file`)."""
    md = check_parquet_file(path, rtype)
    try:
        return _footer_span(path, md)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"sample file {path} is not readable Parquet ({str(exc).splitlines()[0]})",
            hint=f"move it out of {path.parent} (a collector stopped mid-write leaves such a file) and run again",
        ) from exc


def _footer_span(path: Path, md: pq.FileMetaData) -> FileSpan:
    names = [md.schema.column(i).name for i in range(md.num_columns)]
    if "ts" not in names or md.num_rows == 0:
        return FileSpan(str(path), None, None, md.num_rows)
    col = names.index("ts")
    lows: list[int] = []
    highs: list[int] = []
    for g in range(md.num_row_groups):
        st = md.row_group(g).column(col).statistics
        if st is None or not st.has_min_max:
            ts = pc.min_max(pq.read_table(path, columns=["ts"]).column("ts")).as_py()
            if ts["min"] is None:
                return FileSpan(str(path), None, None, md.num_rows)
            return FileSpan(str(path), int(ts["min"]), int(ts["max"]), md.num_rows)
        lows.append(int(st.min))
        highs.append(int(st.max))
    return FileSpan(str(path), min(lows), max(highs), md.num_rows)


def candidate_windows(files: list[FileSpan], window_ms: int) -> list[int]:
    """Every window some file's time range touches."""
    wins: set[int] = set()
    for f in files:
        if f.lo is not None and f.hi is not None:
            wins.update(range(f.lo - f.lo % window_ms, f.hi - f.hi % window_ms + 1, window_ms))
    return sorted(wins)


def read_slice(paths: list[str], schema: pa.Schema, lo: int, hi: int, cluster: str | None) -> pa.Table:
    """The rows of ``paths`` with ``lo <= ts < hi`` in ``schema`` (missing columns null; strings
    dictionary-encoded with one dictionary per column), the cluster label filled with ``local`` as the SQL
    reader does, and only ``cluster``'s rows when given."""
    parts = []
    for p in paths:
        have = set(pq.ParquetFile(p).schema_arrow.names)
        t = pq.read_table(p, columns=[c for c in schema.names if c in have],
                          filters=[("ts", ">=", lo), ("ts", "<", hi)])
        cols = [t.column(f.name).cast(f.type) if f.name in have else pa.nulls(t.num_rows, f.type)
                for f in schema]
        parts.append(pa.Table.from_arrays(cols, schema=schema))
    t = pa.concat_tables(parts).unify_dictionaries() if parts else schema.empty_table()
    labels = t.column("cluster")
    if labels.null_count:
        labels = pc.fill_null(labels.cast(pa.string()), "local").dictionary_encode().cast(schema.field("cluster").type)
        t = t.set_column(t.schema.get_field_index("cluster"), "cluster", labels)
    if cluster is not None:
        t = t.filter(_dict_equal(labels.combine_chunks(), cluster))
    return t


def _dict_equal(arr: pa.Array, value: str) -> pa.Array:
    """``arr == value`` for a dictionary array, compared on its indices."""
    hit = pc.index(arr.dictionary, value).as_py()
    if hit < 0:
        return pa.array([False] * len(arr))
    return pc.fill_null(pc.equal(arr.indices, pa.scalar(hit, arr.indices.type)), False)


def input_schema(rtype: str) -> pa.Schema:
    """The Arrow schema a task reads ``rtype`` in: the sample schema, strings dictionary-encoded."""
    sch = to_arrow_schema(type_schema(rtype, with_type=False))
    return pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), pa.string())) if pa.types.is_string(f.type) else f
                      for f in sch])
