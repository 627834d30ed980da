"""The batch pipeline: samples folder -> window tables (Parquet) -> snapshot + completeness report.

Two routes compute the same results: plain Parquet samples go through :mod:`kafka_balancer.pipeline.columnar`
(Spark aggregates the samples per window with Arrow, numpy computes the windows on the driver), anything
else through :mod:`kafka_balancer.pipeline.sql` (all Spark SQL). This module only picks the route and
writes what it returns.

    >>> result = run_batch(spark, "samples/", PipelineConfig(window_ms=300_000, windows=6))  # doctest: +SKIP
    >>> result.snapshot["partitions"][0]["load"]["leader"]["nw_in"]                          # doctest: +SKIP
    2000000.0
"""

from __future__ import annotations

import logging
from pathlib import Path

import orjson
from pyspark.sql import SparkSession

from kafka_balancer.errors import InputError
from kafka_balancer.files.outputs import write_bytes
from kafka_balancer.pipeline.columnar import job as columnar_job
from kafka_balancer.pipeline.columnar.file_windows import parquet_files
from kafka_balancer.pipeline.completeness import check
from kafka_balancer.pipeline.config import PipelineConfig
from kafka_balancer.pipeline.result import BatchResult
from kafka_balancer.pipeline.sql import job as sql_job

__all__ = ["BatchResult", "compute", "run_batch", "write_outputs"]

log = logging.getLogger("kafka_balancer.pipeline")


def compute(spark: SparkSession, samples_dir: str | Path, cfg: PipelineConfig, engine: str = "auto") -> BatchResult:
    """Window tables, CPU model, completeness report and snapshot of the samples.

    ``engine``: ``auto`` takes plain Parquet samples through the columnar route and anything else through
    Spark SQL; ``sql`` always uses Spark SQL. Both give the same results."""
    if engine not in ("auto", "sql"):
        raise InputError(f"unknown engine {engine!r}", hint="use 'auto' or 'sql'")
    files = parquet_files(samples_dir) if engine == "auto" else None
    if files is None:
        return sql_job.compute(spark, samples_dir, cfg)
    return columnar_job.compute(spark, files, cfg)


def write_outputs(
    result: BatchResult, out: str | Path, tables_dir: str | Path | None, report_path: str | Path | None
) -> None:
    """Validates and writes the snapshot; writes the window tables (Parquet) and the report (JSON)."""
    from kafka_balancer.model.snapshot_io import snapshot_from_dict, write_snapshot

    out = Path(out)
    if report_path is not None:
        write_bytes(report_path, orjson.dumps(result.report, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY),
                    "--report")
    if tables_dir is not None:
        result.tables.write(tables_dir)
    write_snapshot(snapshot_from_dict(result.snapshot, source=str(out)), out)


def run_batch(
    spark: SparkSession,
    samples_dir: str | Path,
    cfg: PipelineConfig,
    out: str | Path | None = None,
    tables_dir: str | Path | None = None,
    report_path: str | Path | None = None,
    engine: str = "auto",
) -> BatchResult:
    """The whole batch job; raises InputError (after writing the report) when completeness is too low.
    ``engine``: see :func:`compute`."""
    result = compute(spark, samples_dir, cfg, engine)
    for warning in result.warnings:  # one line each; the CLI prints this logger on stderr
        log.warning("warning: %s", warning)
    if out is not None:
        try:
            check(result.report)
        except InputError:
            if report_path is not None:
                write_bytes(report_path, orjson.dumps(result.report, option=orjson.OPT_INDENT_2), "--report")
            raise
        write_outputs(result, out, tables_dir, report_path)
    else:
        check(result.report)
    return result
