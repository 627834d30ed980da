"""One session-scoped local SparkSession for every test marked ``spark`` (local[2], small memory, no UI,
bound to 127.0.0.1). The Spark Kafka connector jars are added from the cache when present, so the same
session serves the live Kafka test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from kafka_balancer.pipeline.session import connector_jars, get_spark, spark_conf

    session = get_spark(spark_conf(driver_memory="2g", shuffle_partitions=2, jars=connector_jars()))
    yield session
    session.stop()
