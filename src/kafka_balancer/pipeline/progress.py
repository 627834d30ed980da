"""Progress of a Spark job: each step is named in Spark's UI and event log, and logged with its time."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

log = logging.getLogger("kafka_balancer.pipeline")


@contextmanager
def step(spark: SparkSession, label: str) -> Iterator[None]:
    """Spark jobs started inside carry ``kafka-balancer: <label>`` as their description, which the Spark UI
    and the event log show (``bench/pipeline_profile.py`` sums the time of each step from it). A finished
    step is logged (logger ``kafka_balancer.pipeline``, INFO) with its time: the CLI's progress lines."""
    sc = spark.sparkContext
    before = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(f"kafka-balancer: {label}")
    t0 = time.perf_counter()
    try:
        yield
    finally:
        sc.setLocalProperty("spark.job.description", before)  # type: ignore[arg-type]  # None clears it
    log.info("%s: %.1f s", label, time.perf_counter() - t0)

