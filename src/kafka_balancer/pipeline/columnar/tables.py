"""The columnar route's window tables: Arrow tables on the driver, given to Spark as DataFrames on demand and
written with Arrow in the layout Spark's writer uses (``cluster=<c>/window=<w>/``)."""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from kafka_balancer.pipeline.columnar.np_keys import ints
from kafka_balancer.pipeline.cpu_model import CpuModel
from kafka_balancer.pipeline.progress import step


@dataclass
class ColumnarTables:
    """The two window tables held as Arrow tables; ``partition_windows`` and ``broker_windows`` give them
    as Spark DataFrames (made on first use)."""

    spark: SparkSession
    partition_arrow: pa.Table
    broker_arrow: pa.Table
    cpu_model: CpuModel
    windows: list[int]
    _frames: dict[str, DataFrame] = field(default_factory=dict)

    @property
    def partition_windows(self) -> DataFrame:
        return self._frame("partition_windows", self.partition_arrow)

    @property
    def broker_windows(self) -> DataFrame:
        return self._frame("broker_windows", self.broker_arrow)

    def _frame(self, name: str, table: pa.Table) -> DataFrame:
        if name not in self._frames:
            self._frames[name] = self.spark.createDataFrame(table)
        return self._frames[name]

    def release(self) -> None:
        """Forget the DataFrames made from the tables (nothing is stored in Spark)."""
        self._frames.clear()

    def write(self, tables_dir: str | Path) -> None:
        """``partition_windows/`` and ``broker_windows/`` in Spark's layout (one folder per cluster and window;
        a window written again replaces its folder, as Spark's dynamic partition overwrite does)."""
        d = Path(tables_dir)
        for name, table in (("partition_windows", self.partition_arrow), ("broker_windows", self.broker_arrow)):
            with step(self.spark, f"{name} written"):
                _write_partitioned(table, d / name)


# Spark's escaping of partition values in paths (ExternalCatalogUtils): these characters become %XX
_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(i) for i in range(32)}


DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Spark's folder for an empty or null partition value


def escape_path_value(value: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in value)


def _write_partitioned(table: pa.Table, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    cl = table.column("cluster").cast(pa.string())
    win = ints(table.column("window"))
    body = table.drop_columns(["cluster", "window"])
    labels = np.asarray(cl.to_pylist() if table.num_rows else [], dtype=object)
    for c in sorted(set(labels.tolist())):
        in_c = labels == c
        for w in np.unique(win[in_c]):
            rows = np.flatnonzero(in_c & (win == w))
            folder = root / f"cluster={escape_path_value(c) or DEFAULT_PARTITION}" / f"window={int(w)}"
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            pq.write_table(body.take(pa.array(rows)), folder / f"part-00000-{uuid.uuid4()}.c000.snappy.parquet",
                           compression="snappy")
    (root / "_SUCCESS").touch()

