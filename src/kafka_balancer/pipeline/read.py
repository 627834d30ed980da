"""Read samples into one typed DataFrame (schema ``schemas.RAW``), from files or a stream of JSON strings.

Every reader returns the same columns, so the rest of the pipeline does not care where samples came
from: JSON lines (``DIR/*.jsonl``), Parquet (``DIR/parquet/<type>/``), or the ``value`` strings of a
Kafka topic (batch or streaming).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.schemas import RAW, RAW_COLUMNS, RECORD_TYPES, type_schema
from kafka_balancer.validate.samples import FORMAT_VERSION, SkippedRecords, check_type_folder

CORRUPT = "_corrupt_record"  # Spark's column for a JSON line it could not read with the schema
FILE = "_file"
ORIGIN = "origin"  # a streaming source's column naming where a record came from (topic-partition@offset, file)
RAW_JSON = StructType([*RAW.fields, StructField(CORRUPT, StringType(), True)])


def read_samples_by_type(
    spark: SparkSession, samples_dir: str | Path, held: list[DataFrame] | None = None
) -> dict[str, DataFrame]:
    """Samples per record type (see :func:`read_samples_checked`)."""
    return read_samples_checked(spark, samples_dir, held)[0]


def read_samples_checked(
    spark: SparkSession, samples_dir: str | Path, held: list[DataFrame] | None = None
) -> tuple[dict[str, DataFrame], SkippedRecords]:
    """Samples per record type, typed, with ``event_time``, and the JSON-lines records skipped (not JSON,
    a field of the wrong type, an unknown version or type, no ``ts``). JSON lines are parsed once (and
    cached; the cached frame is appended to ``held`` so that the caller can release it); Parquet folders are
    read per type (each file checked first: :func:`kafka_balancer.validate.samples.check_parquet_file`), so
    each type's aggregation scans only its own files."""
    d = Path(samples_dir)
    jsonl = sorted(str(p) for p in d.glob("*.jsonl")) if d.is_dir() else []
    parquet = {t: d / "parquet" / t for t in RECORD_TYPES}
    parquet = {t: p for t, p in parquet.items() if p.is_dir() and any(p.glob("*.parquet"))}
    if not jsonl:
        if not parquet:
            read_samples(spark, d)  # raises the user-facing error
        return ({t: with_event_time(_parquet(spark, parquet[t], t)) if t in parquet else _empty(spark)
                 for t in RECORD_TYPES}, SkippedRecords(0))
    raw = _json_lines(spark, jsonl).persist()
    if held is not None:
        held.append(raw)
    skipped = skipped_records(raw)
    skipped.check_usable(d)
    frames = [raw.where(_usable()).drop(CORRUPT, FILE)]
    frames += [_parquet(spark, p, t) for t, p in parquet.items()]
    df = frames[0]
    for f in frames[1:]:
        df = df.unionByName(f)
    df = with_event_time(df)
    return {t: df.where(F.col("type") == t) for t in RECORD_TYPES}, skipped


def _json_lines(spark: SparkSession, files: list[str]) -> DataFrame:
    """The JSON-lines records as read, with Spark's corrupt-record column and the file of each."""
    return (spark.read.schema(RAW_JSON).option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
            .json(files).withColumn(FILE, F.input_file_name()))


def _usable() -> Column:
    return (F.col(CORRUPT).isNull() & (F.col("v").isNull() | (F.col("v") == FORMAT_VERSION))
            & F.col("type").isin(*RECORD_TYPES) & F.col("ts").isNotNull())


def skipped_records(raw: DataFrame) -> SkippedRecords:
    """What :func:`_usable` drops from the records of :func:`_json_lines`, by reason (one aggregation)."""
    bad = F.col(CORRUPT).isNotNull()
    version = ~bad & F.col("v").isNotNull() & (F.col("v") != FORMAT_VERSION)
    rtype = ~bad & ~version & (F.col("type").isNull() | ~F.col("type").isin(*RECORD_TYPES))
    no_ts = ~bad & ~version & ~rtype & F.col("ts").isNull()

    def count(c: Column) -> Column:
        return F.sum(F.when(c, 1).otherwise(0))

    row = raw.agg(F.count(F.lit(1)).alias("n"), count(bad).alias("bad"), count(version).alias("version"),
                  count(rtype).alias("rtype"), count(no_ts).alias("no_ts"),
                  F.min(F.when(~_usable(), F.col(FILE))).alias("file")).first()
    assert row is not None
    return SkippedRecords(total=int(row["n"]), not_json=int(row["bad"] or 0), unknown_version=int(row["version"] or 0),
                          unknown_type=int(row["rtype"] or 0), no_time=int(row["no_ts"] or 0), first_file=row["file"])


def _empty(spark: SparkSession) -> DataFrame:
    return with_event_time(spark.createDataFrame([], RAW))


def read_samples(spark: SparkSession, samples_dir: str | Path) -> DataFrame:
    """All usable samples under ``samples_dir`` (JSON lines and/or Parquet), typed, with an ``event_time``."""
    d = Path(samples_dir)
    if not d.is_dir():
        raise InputError(f"samples directory {d} does not exist", hint="point --samples at the collector's --out")
    frames: list[DataFrame] = []
    jsonl = sorted(str(p) for p in d.glob("*.jsonl"))
    if jsonl:
        frames.append(_json_lines(spark, jsonl).where(_usable()).drop(CORRUPT, FILE))
    for rtype in RECORD_TYPES:
        pdir = d / "parquet" / rtype
        if pdir.is_dir() and any(pdir.glob("*.parquet")):
            frames.append(_parquet(spark, pdir, rtype))
    if not frames:
        raise InputError(
            f"no samples in {d}: no *.jsonl files and no parquet/<type>/ folders",
            hint="run `kafka-balancer collect --out DIR` first, or give the folder that holds its files",
        )
    df = frames[0]
    for f in frames[1:]:
        df = df.unionByName(f)
    return with_event_time(df)


def _parquet(spark: SparkSession, pdir: Path, rtype: str) -> DataFrame:
    """Parquet files keep their own physical types (a writer may store ids as int64); every column is
    cast to the explicit schema, and columns the type does not have are dropped. Every file is checked
    first, so a column of the wrong type is one clear error, not a failed Spark task."""
    check_type_folder(pdir, rtype)
    df = spark.read.parquet(str(pdir))
    wanted = set(type_schema(rtype, with_type=False).fieldNames())
    df = df.select(*[c for c in df.columns if c in wanted])
    cols: list[Column] = []
    for name in RAW_COLUMNS:
        if name == "type":
            cols.append(F.lit(rtype).alias("type"))
        elif name in df.columns:
            cols.append(F.col(name).cast(RAW[name].dataType).alias(name))
        else:
            cols.append(F.lit(None).cast(RAW[name].dataType).alias(name))
    return df.select(*cols)


def parse_json_records(values: DataFrame, column: str = "value") -> DataFrame:
    """Every JSON string of ``values`` (Kafka ``value`` cast to string, or text lines) parsed with the
    samples schema, usable or not: the columns of :func:`_json_lines` (Spark's corrupt-record column for a
    value that is not JSON or has a field of the wrong type; the source's ``origin`` column, when it has
    one, as the record's location, e.g. ``topic-0@17`` for a Kafka record), for :func:`skipped_records`."""
    opts = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    origin = F.col(ORIGIN) if ORIGIN in values.columns else F.lit(None).cast("string")
    parsed = values.select(F.from_json(F.col(column).cast("string"), RAW_JSON, opts).alias("r"),
                           origin.alias(FILE))
    return parsed.select("r.*", FILE)


def parse_json_values(values: DataFrame, column: str = "value") -> DataFrame:
    """The usable samples among JSON strings (the same rule as the JSON-lines files: a record that is not
    JSON, has a field of the wrong type, another format version, an unknown type or no ``ts`` is left out;
    :func:`skipped_records` over :func:`parse_json_records` counts what was left out)."""
    return with_event_time(parse_json_records(values, column).where(_usable()).drop(CORRUPT, FILE))


def with_event_time(df: DataFrame) -> DataFrame:
    """Adds ``event_time`` (timestamp from ``ts`` ms) and fills a missing cluster label with ``local``."""
    return df.withColumn("cluster", F.coalesce(F.col("cluster"), F.lit("local"))).withColumn(
        "event_time", F.timestamp_millis(F.col("ts"))
    )
