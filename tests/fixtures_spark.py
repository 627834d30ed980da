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

    session = get_spark(spark_conf(driver_memory="4g", shuffle_partitions=2, jars=connector_jars()))
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _release_spark_cache(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test that used Spark, drop cached tables: one session serves the whole run, and what a
    test persisted must not pile up (the driver heap is shared by driver and executors in local mode)."""
    yield
    if "spark" in request.fixturenames:
        request.getfixturevalue("spark").catalog.clearCache()
