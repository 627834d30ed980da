"""The PySpark pipeline: samples -> window tables -> snapshot (``docs/pipeline.md``).

Layers, each depending only on those before it:

* shared: ``schemas``, ``config``, ``session``, ``progress``, ``read`` (samples as DataFrames), ``cpu_model``
  (the model and its solve), ``completeness`` (the rules and the report), ``assemble`` (the snapshot
  document), ``result`` (what a route returns; cluster and window selection);
* routes: ``sql/`` (Spark SQL) and ``columnar/`` (Arrow + numpy);
* jobs: ``batch`` (picks a route), ``streaming`` (the SQL route over a stream), ``fleet``; ``cli_common``.
"""
