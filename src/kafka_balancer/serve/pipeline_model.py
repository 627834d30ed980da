"""Keeps per-partition loads current with the PySpark pipeline's columnar batch route.

Every closed window, the service flushes the sampler's Parquet files and runs the batch job
(``pipeline.batch.compute``, which takes the columnar route on Parquet samples) over the last
``windows`` closed windows, in one SparkSession kept warm for the life of the service. Why this route and
not the streaming one: the samples are already on local disk as Parquet (no topic to produce into on the
cluster being balanced, no connector jar, no checkpoint to keep consistent across restarts); a run over
a few windows takes seconds on a warm session; and the result depends only on the files, so a restart
loses nothing.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_balancer.serve.model import PartitionLoads, loads_from_document


class PipelineModel:
    def __init__(self, samples_dir: Path, window_s: float, windows: int, capacity: Mapping[str, float],
                 cluster: str = "serve") -> None:
        self.samples_dir = Path(samples_dir)
        self.window_ms = int(window_s * 1000)
        self.windows = windows
        self.capacity = dict(capacity)
        self.cluster = cluster
        self._spark: Any = None
        self.last_seconds = 0.0

    def refresh(self) -> PartitionLoads:
        """Loads of the latest closed windows; InputError while there are too few samples."""
        from kafka_balancer.pipeline.batch import compute
        from kafka_balancer.pipeline.completeness import check
        from kafka_balancer.pipeline.config import PipelineConfig

        if self._spark is None:
            import warnings

            from kafka_balancer.pipeline.session import get_spark, spark_conf

            warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
            # spark_conf's log4j2 profile keeps Spark to errors and its gateway's "default log level" notice away
            self._spark = get_spark(spark_conf(driver_memory="1g", extra={"spark.app.name": "kafka-balancer-serve"}))
        t0 = time.monotonic()
        cfg = PipelineConfig(window_ms=self.window_ms, windows=self.windows, cluster=self.cluster,
                             capacity=dict(self.capacity), min_valid_windows=1, cpu_min_windows=2,
                             min_valid_ratio=0.5)  # partitions moving now have invalid windows: normal here
        result = compute(self._spark, self.samples_dir, cfg)
        try:
            check(result.report)
            loads = loads_from_document(result.snapshot, time.time())
        finally:
            result.release()
        self.last_seconds = time.monotonic() - t0
        return loads

    def close(self) -> None:
        if self._spark is not None:
            with contextlib.suppress(Exception):
                self._spark.stop()
            self._spark = None
