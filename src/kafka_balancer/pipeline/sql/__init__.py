"""The Spark SQL route of the pipeline: every stage as DataFrame -> DataFrame functions.

It reads JSON lines and Parquet samples, and is the route of the streaming job. Stages: ``aggregate``
(per-window aggregates) -> ``rates`` -> ``loads`` -> ``validity`` -> ``cpu`` (fit and split) -> ``tables``
(the shared window step) -> ``summaries``; ``job`` runs them as the batch job.
"""
