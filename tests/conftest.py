"""Shared pytest set-up. Fixtures that start real servers live in their own plug-in modules:

- ``fixtures_kafka``: a session-scoped real local Kafka cluster (marker ``kafka``);
- ``fixtures_spark``: one session-scoped local SparkSession (marker ``spark``).
"""

pytest_plugins = ["fixtures_kafka", "fixtures_spark"]
