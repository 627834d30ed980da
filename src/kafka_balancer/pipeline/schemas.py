"""Explicit Spark schemas of the sample records (``docs/samples-format.md``, version 1).

``RAW`` is the union of every record type's fields (all nullable): JSON lines of mixed types are read
with it in one pass, then split by ``type``. ``TYPE_COLUMNS`` lists the columns each type keeps.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

COMMON: list[tuple[str, DataType]] = [
    ("v", IntegerType()),
    ("type", StringType()),
    ("cluster", StringType()),
    ("ts", LongType()),
]

TYPE_FIELDS: dict[str, list[tuple[str, DataType]]] = {
    "broker": [
        ("broker", IntegerType()),
        ("rack", StringType()),
        ("host", StringType()),
        ("alive", BooleanType()),
        ("cpu_seconds", DoubleType()),
        ("cpu_cores", IntegerType()),
    ],
    "topic_broker": [
        ("broker", IntegerType()),
        ("topic", StringType()),
        ("bytes_in", DoubleType()),
        ("bytes_out", DoubleType()),
        ("messages_in", DoubleType()),
    ],
    "partition": [
        ("topic", StringType()),
        ("partition", IntegerType()),
        ("replicas", ArrayType(IntegerType())),
        ("leader", IntegerType()),
        ("isr", ArrayType(IntegerType())),
        ("log_end_offset", LongType()),
        ("log_start_offset", LongType()),
    ],
    "replica": [
        ("topic", StringType()),
        ("partition", IntegerType()),
        ("broker", IntegerType()),
        ("size", LongType()),
        ("log_dir", StringType()),
    ],
    "group_offset": [
        ("group", StringType()),
        ("topic", StringType()),
        ("partition", IntegerType()),
        ("committed", LongType()),
    ],
}

RECORD_TYPES: tuple[str, ...] = tuple(TYPE_FIELDS)


def _union_fields() -> list[tuple[str, DataType]]:
    seen: dict[str, DataType] = dict(COMMON)
    for fields in TYPE_FIELDS.values():
        for name, dtype in fields:
            if name in seen and seen[name] != dtype:
                raise AssertionError(f"field {name} has two types")
            seen.setdefault(name, dtype)
    return list(seen.items())


RAW = StructType([StructField(n, t, True) for n, t in _union_fields()])
RAW_COLUMNS: tuple[str, ...] = tuple(RAW.fieldNames())


def type_schema(rtype: str, with_type: bool = True) -> StructType:
    """The schema of one record type (as stored in ``DIR/parquet/<type>/``)."""
    common = COMMON if with_type else [c for c in COMMON if c[0] != "type"]
    return StructType([StructField(n, t, True) for n, t in [*common, *TYPE_FIELDS[rtype]]])


# the offsets of a partition record, by the short name the window aggregates give them (first_leo, last_lso)
OFFSETS = {"leo": "log_end_offset", "lso": "log_start_offset"}
