"""The columnar route of the batch pipeline, for plain Parquet samples: Spark tasks read and aggregate the
sample files with Arrow (``file_windows``, ``window_tasks``, ``arrow_agg``, ``arrow_broker``); the window
step runs on the driver with numpy (``np_keys``, ``np_windows``, ``np_cpu``); ``tables`` holds and writes
the window tables; ``job`` runs it all.
"""
