"""Sample files (``docs/samples-format.md``) in both formats.

Parquet (no Spark): files with the sample types are accepted; a column of another type, a value past the
32-bit ids Kafka uses, another format version, a truncated or garbage file are one InputError naming the
file and column; ``pipeline --samples`` refuses them with exit 2 before Spark starts. JSON lines (on the
session's Spark, few cases): every record that is not JSON, has a field of the wrong type, an unknown
version or type, or no ``ts`` is skipped and counted by reason; a folder of nothing but such records fails.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.pipeline.schemas import RECORD_TYPES, type_schema
from kafka_balancer.validate.samples import check_parquet_file

from .harness import case

FN = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CLI = settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
SPARK = settings(max_examples=4, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

ARROW = {"int": pa.int32(), "bigint": pa.int64(), "double": pa.float64(), "string": pa.string(),
         "boolean": pa.bool_(), "array<int>": pa.list_(pa.int32())}


def _value(kind: str, i: int) -> Any:
    return {"int": i, "bigint": 1_700_000_000_000 + i, "double": float(i) * 1.5, "string": f"s{i}",
            "boolean": i % 2 == 0, "array<int>": [i, i + 1]}[kind]


def table(rtype: str, rows: int) -> dict[str, tuple[pa.DataType, list[Any]]]:
    """Columns of a valid ``rtype`` file: name -> (Arrow type, values)."""
    cols: dict[str, tuple[pa.DataType, list[Any]]] = {}
    for f in type_schema(rtype, with_type=False).fields:
        kind = f.dataType.simpleString()
        cols[f.name] = (ARROW[kind], [1 if f.name == "v" else _value(kind, i) for i in range(rows)])
    return cols


def write(path: Path, cols: dict[str, tuple[pa.DataType, list[Any]]]) -> None:
    pq.write_table(pa.table({n: pa.array(v, t) for n, (t, v) in cols.items()}), path)


WRONG = {pa.int32(): [pa.string(), pa.float64(), pa.bool_()], pa.int64(): [pa.string(), pa.float64()],
         pa.float64(): [pa.string(), pa.bool_()], pa.string(): [pa.int64(), pa.float64()],
         pa.bool_(): [pa.string(), pa.int32()], pa.list_(pa.int32()): [pa.string(), pa.int64()]}


def _cast(values: list[Any], t: pa.DataType) -> list[Any]:
    if pa.types.is_string(t):
        return [str(v) for v in values]
    if pa.types.is_floating(t):
        return [float(len(str(v))) + 0.5 for v in values]
    if pa.types.is_boolean(t):
        return [bool(v) for v in values]
    return [len(str(v)) for v in values]


@st.composite
def corrupt_file(draw: st.DrawFn, rtype: str, cols: dict[str, tuple[pa.DataType, list[Any]]]
                 ) -> tuple[dict[str, tuple[pa.DataType, list[Any]]] | bytes, str]:
    kind = draw(st.sampled_from(["type", "type", "int32", "version", "garbage"]))
    if kind == "type":
        name = draw(st.sampled_from(sorted(cols)))
        t, values = cols[name]
        new = draw(st.sampled_from(WRONG[t]))
        return {**cols, name: (new, _cast(values, new))}, name
    if kind == "int32":
        names = [n for n, (t, _) in cols.items() if t == pa.int32() and n != "v"]
        if names:
            name = draw(st.sampled_from(names))
            big = draw(st.sampled_from([2**31, 2**40, -(2**31) - 1]))
            return {**cols, name: (pa.int64(), [big] * len(cols[name][1]))}, name
    if kind in ("version", "int32"):
        return {**cols, "v": (pa.int32(), [draw(st.sampled_from([2, 0, 7]))] * len(cols["v"][1]))}, "version"
    return draw(st.binary(min_size=0, max_size=64)), "not readable Parquet"


@FN
@given(st.sampled_from(RECORD_TYPES), st.integers(1, 5))
def test_parquet_files_with_the_sample_types_are_accepted(rtype: str, rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "s.parquet"
        write(f, table(rtype, rows))
        assert check_parquet_file(f, rtype).num_rows == rows


@FN
@given(st.sampled_from(RECORD_TYPES), st.integers(1, 5), st.data())
def test_corrupt_parquet_files_are_one_input_error(rtype: str, rows: int, data: st.DataObject) -> None:
    bad, name = data.draw(corrupt_file(rtype, table(rtype, rows)))
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "s.parquet"
        if isinstance(bad, bytes):
            f.write_bytes(bad)
        else:
            write(f, bad)
            if data.draw(st.booleans()) and name == "version":  # a truncated file is as bad
                f.write_bytes(f.read_bytes()[: data.draw(st.integers(0, f.stat().st_size - 1))])
                name = "s.parquet"
        with pytest.raises(InputError) as err:
            check_parquet_file(f, rtype)
        assert name in err.value.render() and "s.parquet" in err.value.render()
        assert len(err.value.render().splitlines()) <= 2


@CLI
@given(st.sampled_from(RECORD_TYPES), st.data())
def test_pipeline_refuses_a_corrupt_parquet_sample_before_spark(rtype: str, data: st.DataObject) -> None:
    bad, name = data.draw(corrupt_file(rtype, table(rtype, 3)))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        folder = d / "samples" / "parquet" / rtype
        folder.mkdir(parents=True)
        for other in RECORD_TYPES:  # the other types are fine
            (d / "samples" / "parquet" / other).mkdir(exist_ok=True)
            write(d / "samples" / "parquet" / other / "good.parquet", table(other, 3))
        if isinstance(bad, bytes):
            (folder / "bad.parquet").write_bytes(bad)
        else:
            write(folder / "bad.parquet", bad)
        case(["pipeline", "--samples", str(d / "samples"), "--out", str(d / "snap.json")], 2,
             [name, "bad.parquet"], watch=[d])


# ---- JSON lines, on Spark ---------------------------------------------------------------------------------

GOOD = {"v": 1, "type": "broker", "cluster": "c", "ts": 1_700_000_000_000, "broker": 1, "rack": None,
        "host": "h", "alive": True, "cpu_seconds": 1.0, "cpu_cores": 2}
BAD: dict[str, list[bytes]] = {
    "not_json": [b"garbage \xff\xfe", b'{"v": 1, "type": "broker", "ts": 1, "broker": "x"}', b"[1, 2",
                 b'{"v": 1, "type": "partition", "ts": 1, "topic": "t", "partition": 2.5}'],
    "unknown_version": [b'{"v": 2, "type": "broker", "ts": 1, "broker": 1}'],
    "unknown_type": [b'{"v": 1, "type": "brokers", "ts": 1}', b'{"v": 1, "ts": 5}'],
    "no_time": [b'{"v": 1, "type": "replica", "topic": "t", "partition": 0, "broker": 1, "size": 5}'],
}


@pytest.mark.spark
@SPARK
@given(st.integers(1, 20), st.lists(st.sampled_from([(k, i) for k, v in BAD.items() for i in range(len(v))]),
                                    max_size=8))
def test_json_lines_records_are_skipped_and_counted_by_reason(spark: Any, good: int,
                                                              bad: list[tuple[str, int]]) -> None:
    from kafka_balancer.pipeline.read import read_samples_checked

    lines = [orjson.dumps({**GOOD, "ts": GOOD["ts"] + i}) for i in range(good)] + [BAD[k][i] for k, i in bad]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "samples-1.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        held: list[Any] = []
        by_type, skipped = read_samples_checked(spark, tmp, held)
        assert by_type["broker"].count() == good
        for reason in BAD:
            assert getattr(skipped, reason) == sum(1 for k, _ in bad if k == reason), (reason, skipped)
        assert skipped.total == good + len(bad)
        assert (skipped.warning() is None) == (not bad)
        for df in held:
            df.unpersist()


@pytest.mark.spark
def test_a_folder_of_nothing_but_bad_records_fails(spark: Any, tmp_path: Path) -> None:
    from kafka_balancer.pipeline.read import read_samples_checked

    (tmp_path / "samples-1.jsonl").write_bytes(b"\n".join(v for vs in BAD.values() for v in vs) + b"\n")
    with pytest.raises(InputError, match="none of the 8 records"):
        read_samples_checked(spark, tmp_path)
