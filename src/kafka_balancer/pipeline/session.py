"""The SparkSession the pipeline runs on: local mode by default, any master when given.

Local runs bind to 127.0.0.1, keep the UI off and use few shuffle partitions (the data of one cluster
is small once aggregated). The Spark Kafka connector jars (artifact set ``spark_kafka``, fetched by
``kafka-balancer setup-jvm``) are passed with ``spark.jars`` when they are in the cache; they are needed
only for ``--from-kafka``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from kafka_balancer.errors import InputError
from kafka_balancer.validate.spark import check_master, check_memory, start_failure

DEFAULT_MASTER = "local[2]"
QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")  # errors only: no banner, no WARN lines
# Lines the gateway JVM prints on every start that say nothing a user can act on, dropped from its stderr
# (exact lines: everything else the JVM and the Python workers it starts print still reaches stderr).
# Spark's launcher puts ``--add-modules=jdk.incubator.vector`` on every JVM's command line
# (launcher/JavaModuleOptions), and the JVM announces every incubator module it resolves; no JVM option
# turns that off, and the launcher's list cannot be changed from a setting.
JVM_NOISE = frozenset({b"WARNING: Using incubator modules: jdk.incubator.vector"})
# The pandas >= 3 notice PySpark's Python workers print (the driver's copy is silenced in cli/main.py).
WORKER_WARNINGS = "ignore:PySpark does not yet fully support pandas:FutureWarning"


def connector_jars(required: bool = False) -> list[Path]:
    """The Kafka connector jars from the cache; [] when absent (or InputError when ``required``)."""
    from kafka_balancer.jvm.artifacts import set_jars

    try:
        return set_jars("spark_kafka")
    except InputError:
        if required:
            raise
        return []


def spark_conf(
    master: str = DEFAULT_MASTER,
    driver_memory: str = "1g",
    shuffle_partitions: int = 4,
    jars: list[Path] | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    conf = {
        "spark.master": master,
        "spark.app.name": "kafka-balancer-pipeline",
        "spark.driver.memory": driver_memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.streaming.noDataMicroBatches.enabled": "true",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.executorEnv.PYTHONWARNINGS": WORKER_WARNINGS,
        "spark.driver.extraJavaOptions": "-XX:+UseParallelGC -Dio.netty.tryReflectionSetAccessible=true "
                                         f"-Dlog4j2.configurationFile={QUIET_LOG4J.as_uri()}",
    }
    if master.startswith("local"):
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    if jars:
        conf["spark.jars"] = ",".join(str(j) for j in jars)
    conf.update(extra or {})
    return conf


def get_spark(conf: dict[str, str] | None = None) -> Any:
    """Build (or reuse) the SparkSession. ``SPARK_LOCAL_IP`` is pinned to loopback for local masters.
    Settings Spark cannot start with, or a Spark that does not start, are one SparkStartError (exit 1)."""
    from pyspark.sql import SparkSession

    conf = conf or spark_conf()
    master = check_master(conf.get("spark.master", DEFAULT_MASTER))
    check_memory(conf.get("spark.driver.memory", "1g"))
    # Python workers (applyInPandas) run the interpreter that runs us, which has kafka_balancer installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if conf.get("spark.master", "").startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder
    for k, v in conf.items():
        builder = builder.config(k, v)
    try:
        _start_gateway(conf)
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start or refused the settings
        raise start_failure(master, exc) from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _forward(stream: IO[bytes]) -> None:
    """Copy the gateway JVM's stderr to ours, line by line, leaving out :data:`JVM_NOISE`."""
    for line in iter(stream.readline, b""):
        if line.rstrip(b"\r\n") in JVM_NOISE:
            continue
        with contextlib.suppress(OSError):  # our stderr is gone: keep draining, the JVM must not block
            os.write(2, line)


def _start_gateway(conf: dict[str, str]) -> None:
    """Start the gateway JVM (as PySpark would) with its stderr piped through :func:`_forward`, and make
    its SparkContext the active one, so that ``getOrCreate`` uses it. Nothing when a context already runs
    (a second session of the same process reuses it). The JVM's real errors, and anything the Python
    workers it starts print, still reach stderr; only the exact start-up lines of :data:`JVM_NOISE` do not.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._active_spark_context is not None or SparkContext._gateway is not None:
        return
    spark_conf = SparkConf(loadDefaults=False).setAll(list(conf.items()))
    gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": subprocess.PIPE})  # type: ignore[no-untyped-call]
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.stderr is not None:
        threading.Thread(target=_forward, args=(proc.stderr,), name="spark-jvm-stderr", daemon=True).start()
    SparkContext(conf=spark_conf, gateway=gateway)
