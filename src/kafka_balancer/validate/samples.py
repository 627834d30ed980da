"""Sample files (``docs/samples-format.md``, version 1), checked before Spark reads them.

* Parquet (``DIR/parquet/<type>/*.parquet``): each file's footer must be readable, and every column the
  record type has must be of a type the pipeline can read it as: integers for ids, offsets, sizes and
  times, numbers for counters, strings for names, booleans for ``alive``, lists of integers for replica
  lists (a column of nulls fits anything; columns the type does not have are ignored). The ``v`` column's
  statistics must say format version 1. One file of the wrong shape stops the job (exit 2), naming the
  file, the column, its type and the type wanted: it was not written by ``collect``, and reading it would
  fail half-way or give wrong numbers.
* JSON lines: a record that is not JSON, has a field of the wrong type, or is of an unknown version or
  record type, or lacks ``ts``, is skipped; :class:`SkippedRecords` counts them by reason so the job says
  what it skipped (one warning line), and the job fails when no record at all is usable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
)

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.schemas import type_schema

FORMAT_VERSION = 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
HINT_PARQUET = "move it out of the samples folder: `collect --format parquet` writes the files the pipeline reads"


def _fits(arrow: pa.DataType, want: DataType) -> bool:
    """Whether a Parquet column of type ``arrow`` can be read as ``want`` without loss or error."""
    if pa.types.is_null(arrow):
        return True
    if pa.types.is_dictionary(arrow):
        arrow = arrow.value_type
    if isinstance(want, IntegerType | LongType):
        return pa.types.is_integer(arrow)
    if isinstance(want, DoubleType):
        return pa.types.is_integer(arrow) or pa.types.is_floating(arrow)
    if isinstance(want, StringType):
        return pa.types.is_string(arrow) or pa.types.is_large_string(arrow)
    if isinstance(want, BooleanType):
        return pa.types.is_boolean(arrow)
    if isinstance(want, ArrayType):
        if not (pa.types.is_list(arrow) or pa.types.is_large_list(arrow)):
            return False
        return _fits(arrow.value_type, want.elementType)
    return False


def _wanted(want: DataType) -> str:
    if isinstance(want, ArrayType):
        return f"a list of {_wanted(want.elementType)}s"
    return {IntegerType: "integer", LongType: "integer", DoubleType: "number", StringType: "string",
            BooleanType: "boolean"}.get(type(want), want.simpleString())


def check_parquet_file(path: str | Path, rtype: str) -> pq.FileMetaData:
    """The footer of a ``rtype`` sample file, after checking its columns' types and its format version."""
    p = Path(path)
    try:
        pf = pq.ParquetFile(p)
        schema = pf.schema_arrow
        md = pf.metadata
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"sample file {p} is not readable Parquet ({str(exc).splitlines()[0][:120]})",
                         hint=f"move it out of {p.parent} (a collector stopped mid-write leaves such a file) "
                              "and run again") from None
    expected = {f.name: f.dataType for f in type_schema(rtype, with_type=False).fields}
    for fld in schema:
        want = expected.get(fld.name)
        if want is not None and not _fits(fld.type, want):
            raise InputError(f"sample file {p}: column {fld.name!r} is {fld.type}; {rtype} records need "
                             f"{_wanted(want)} there", hint=HINT_PARQUET)
    leaves = [md.schema.column(i).path for i in range(md.num_columns)]
    for g in range(md.num_row_groups):
        for i, name in enumerate(leaves):
            top = name.split(".")[0]
            st = md.row_group(g).column(i).statistics
            if top not in expected or st is None or not st.has_min_max:
                continue
            if top == "v" and (st.min != FORMAT_VERSION or st.max != FORMAT_VERSION):
                bad = st.max if st.max != FORMAT_VERSION else st.min
                raise InputError(f"sample file {p} holds records of format version {bad}; this version reads "
                                 f"version {FORMAT_VERSION}", hint=HINT_PARQUET)
            if _int32(expected[top]) and isinstance(st.min, int) and not (
                    st.min >= INT32_MIN and st.max <= INT32_MAX):
                bad = st.min if st.min < INT32_MIN else st.max
                raise InputError(f"sample file {p}: column {top!r} holds {bad}, beyond the 32-bit integers Kafka "
                                 f"uses for it", hint=HINT_PARQUET)
    return md


def _int32(want: DataType) -> bool:
    return isinstance(want, IntegerType) or (isinstance(want, ArrayType) and isinstance(want.elementType, IntegerType))


def check_sample_folder(samples_dir: str | Path) -> int:
    """Check every Parquet sample file under ``samples_dir/parquet/<type>/`` (and that the ``*.jsonl`` files
    are regular files); the number of Parquet files checked. Cheap (footers only): the CLI runs it before
    Spark starts."""
    from kafka_balancer.files.inputs import check_input_file
    from kafka_balancer.pipeline.schemas import RECORD_TYPES

    for f in sorted(Path(samples_dir).glob("*.jsonl")):  # a named pipe among them would block Spark's reader
        check_input_file(f, "--samples", "a folder of sample files")
    return sum(check_type_folder(Path(samples_dir) / "parquet" / rtype, rtype) for rtype in RECORD_TYPES)


def check_type_folder(pdir: Path, rtype: str) -> int:
    """:func:`check_parquet_file` on every file under ``pdir`` (names starting with ``.`` or ``_`` are
    skipped, as Spark skips them); the number of files checked."""
    if not pdir.is_dir():
        return 0
    checked = 0
    for f in sorted(pdir.rglob("*")):
        if f.is_dir() or any(part.startswith(("_", ".")) for part in f.relative_to(pdir).parts):
            continue
        if not f.is_file():  # a pipe or a device: Arrow would block on it or fail
            raise InputError(f"sample file {f} is not a regular file", hint=HINT_PARQUET)
        check_parquet_file(f, rtype)
        checked += 1
    return checked


@dataclass(frozen=True)
class SkippedRecords:
    """JSON-lines records the job could not use, by reason."""

    total: int
    not_json: int = 0  # not JSON, or a field of the wrong type
    unknown_version: int = 0
    unknown_type: int = 0
    no_time: int = 0
    first_file: str | None = None  # a file holding a skipped record

    @property
    def skipped(self) -> int:
        return self.not_json + self.unknown_version + self.unknown_type + self.no_time

    def __add__(self, other: SkippedRecords) -> SkippedRecords:
        """The counts of two reads together (a streaming run adds up its micro-batches)."""
        return SkippedRecords(self.total + other.total, self.not_json + other.not_json,
                              self.unknown_version + other.unknown_version, self.unknown_type + other.unknown_type,
                              self.no_time + other.no_time, self.first_file or other.first_file)

    def warning(self) -> str | None:
        """One line saying what was skipped, or None."""
        if not self.skipped:
            return None
        parts = [f"{n:,} {what}" for n, what in (
            (self.not_json, "not JSON or with a field of the wrong type"),
            (self.unknown_version, f"of a format version other than {FORMAT_VERSION}"),
            (self.unknown_type, "of an unknown record type"),
            (self.no_time, "without ts"),
        ) if n]
        where = f" (one is in {Path(self.first_file).name})" if self.first_file else ""
        return f"skipped {self.skipped:,} of {self.total:,} sample records: {', '.join(parts)}{where}"

    def check_usable(self, samples_dir: str | Path, *, source: str | None = None, hint: str | None = None) -> None:
        """Fail when records were read but none is usable. ``source`` names where they were read (by
        default the ``*.jsonl`` files of ``samples_dir``)."""
        if self.total and self.skipped == self.total:
            where = source or f"the *.jsonl files of {samples_dir}"
            raise InputError(f"none of the {self.total:,} records in {where} is a usable sample: {self.warning()}",
                             hint=hint or "give the folder `kafka-balancer collect --out` wrote "
                                          "(docs/samples-format.md)")
