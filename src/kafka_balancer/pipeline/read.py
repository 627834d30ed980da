"""Read samples into one typed DataFrame (schema ``schemas.RAW``), from files or a stream of JSON strings.

Every reader returns the same columns, so the rest of the pipeline does not care where samples came
from: JSON lines (``DIR/*.jsonl``), Parquet (``DIR/parquet/<type>/``), or the ``value`` strings of a
Kafka topic (batch or streaming).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.schemas import RAW, RAW_COLUMNS, RECORD_TYPES, type_schema


def read_samples_by_type(
    spark: SparkSession, samples_dir: str | Path, held: list[DataFrame] | None = None
) -> dict[str, DataFrame]:
    """Samples per record type, typed, with ``event_time``. JSON lines are parsed once (and cached; the
    cached frame is appended to ``held`` so that the caller can release it); Parquet folders are read per
    type, so each type's aggregation scans only its own files."""
    d = Path(samples_dir)
    jsonl = sorted(str(p) for p in d.glob("*.jsonl")) if d.is_dir() else []
    parquet = {t: d / "parquet" / t for t in RECORD_TYPES}
    parquet = {t: p for t, p in parquet.items() if p.is_dir() and any(p.glob("*.parquet"))}
    if not jsonl:
        if not parquet:
            read_samples(spark, d)  # raises the user-facing error
        return {t: with_event_time(_parquet(spark, parquet[t], t)) if t in parquet else _empty(spark)
                for t in RECORD_TYPES}
    raw = read_samples(spark, d).persist()
    if held is not None:
        held.append(raw)
    return {t: raw.where(F.col("type") == t) for t in RECORD_TYPES}


def _empty(spark: SparkSession) -> DataFrame:
    return with_event_time(spark.createDataFrame([], RAW))


def read_samples(spark: SparkSession, samples_dir: str | Path) -> DataFrame:
    """All samples under ``samples_dir`` (JSON lines and/or Parquet), typed, with an ``event_time``."""
    d = Path(samples_dir)
    if not d.is_dir():
        raise InputError(f"samples directory {d} does not exist", hint="point --samples at the collector's --out")
    frames: list[DataFrame] = []
    jsonl = sorted(str(p) for p in d.glob("*.jsonl"))
    if jsonl:
        frames.append(spark.read.schema(RAW).option("mode", "PERMISSIVE").json(jsonl))
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
    cast to the explicit schema, and columns the type does not have are dropped."""
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


def parse_json_values(values: DataFrame, column: str = "value") -> DataFrame:
    """Parse a DataFrame of JSON strings (Kafka ``value`` cast to string, or text lines) into samples."""
    parsed = values.select(F.from_json(F.col(column).cast("string"), RAW).alias("r")).select("r.*")
    return with_event_time(parsed.where(F.col("type").isNotNull() & F.col("ts").isNotNull()))


def with_event_time(df: DataFrame) -> DataFrame:
    """Adds ``event_time`` (timestamp from ``ts`` ms) and fills a missing cluster label with ``local``."""
    return df.withColumn("cluster", F.coalesce(F.col("cluster"), F.lit("local"))).withColumn(
        "event_time", F.timestamp_millis(F.col("ts"))
    )
