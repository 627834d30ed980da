"""Where sample records go: JSON-lines or Parquet files in a directory, and optionally a Kafka topic.

JSON lines: ``DIR/samples-<first ts_ms>-<seq>.jsonl``; a file is closed after ``rounds_per_file``
rounds, so a reader (the pipeline) can pick up closed files while collection goes on.

Parquet: ``DIR/parquet/<type>/samples-<first ts_ms>-<seq>.parquet``, one folder per record type, the
layout the pipeline's columnar route reads (``docs/pipeline.md``). A Parquet file cannot grow, so rounds
are held in memory and each type's file is written every ``rounds_per_file`` rounds and at ``close()``
(the collector calls it when it stops, Ctrl-C included); a collector killed outright loses the rounds not
yet written. A file appears whole: it is written under a dot-name, which readers skip, then renamed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from kafka_balancer.files.outputs import replacing

DEFAULT_TOPIC = "__kafka_balancer_samples"


class SampleFileWriter:
    def __init__(self, out_dir: Path, rounds_per_file: int = 30) -> None:
        self.out_dir = Path(out_dir)
        self.rounds_per_file = rounds_per_file
        self._seq = 0
        self._rounds_in_file = 0
        self._path: Path | None = None
        self.files: list[Path] = []

    def write_round(self, records: Sequence[dict[str, Any]]) -> Path:
        if not records:
            raise ValueError("a round has at least one record")
        if self._path is None or self._rounds_in_file >= self.rounds_per_file:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            while True:  # a new file, never one that was there before (a name taken moves on to the next seq)
                path = self.out_dir / f"samples-{records[0]['ts']}-{self._seq:04d}.jsonl"
                self._seq += 1
                try:
                    with path.open("xb"):
                        break
                except FileExistsError:
                    continue
            self._path = path
            self._rounds_in_file = 0
            self.files.append(self._path)
        with self._path.open("ab") as f:
            f.write(b"".join(orjson.dumps(r) + b"\n" for r in records))
        self._rounds_in_file += 1
        return self._path

    def close(self) -> None:
        """Nothing to do: every round is on disk when ``write_round`` returns."""


def _arrow_schema(rtype: str) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    from kafka_balancer.pipeline.schemas import type_schema

    return to_arrow_schema(type_schema(rtype, with_type=False))


class SampleParquetWriter:
    """Records as Parquet, one folder per record type (see the module docstring)."""

    def __init__(self, out_dir: Path, rounds_per_file: int = 10) -> None:
        from kafka_balancer.pipeline.schemas import RECORD_TYPES

        self.out_dir = Path(out_dir)
        self.rounds_per_file = rounds_per_file
        self._seq = 0
        self._rounds = 0
        self._pending: dict[str, list[dict[str, Any]]] = {t: [] for t in RECORD_TYPES}
        self._first_ts: int | None = None
        self.files: list[Path] = []

    def write_round(self, records: Sequence[dict[str, Any]]) -> Path:
        """Holds the round; writes the files when ``rounds_per_file`` rounds are held. Returns the folder."""
        if not records:
            raise ValueError("a round has at least one record")
        bad = [r.get("type") for r in records if r.get("type") not in self._pending]
        if bad:
            raise ValueError(f"record of unknown type {bad[0]!r}")
        for r in records:
            self._pending[r["type"]].append(r)
        if self._first_ts is None:
            self._first_ts = int(records[0]["ts"])
        self._rounds += 1
        if self._rounds >= self.rounds_per_file:
            self.flush()
        return self.out_dir / "parquet"

    def flush(self) -> None:
        """Writes the rounds held, one file per record type that has records."""
        for rtype, rows in self._pending.items():
            if not rows:
                continue
            d = self.out_dir / "parquet" / rtype
            d.mkdir(parents=True, exist_ok=True)
            name = f"samples-{self._first_ts}-{self._seq:04d}.parquet"
            # written under a unique dot-name ending .tmp (no reader takes it), then renamed into place
            with replacing(d / name, "--out", suffix=".tmp") as tmp:
                pq.write_table(pa.Table.from_pylist(rows, schema=_arrow_schema(rtype)), tmp, compression="snappy")
            self.files.append(d / name)
            rows.clear()
        self._seq += 1
        self._rounds = 0
        self._first_ts = None

    def close(self) -> None:
        self.flush()


class SampleTopicWriter:
    """Produce each record to a topic, keyed ``<cluster>|<type>`` (created if missing)."""

    def __init__(self, bootstrap: str, topic: str = DEFAULT_TOPIC, admin: Any = None, security: Any = None) -> None:
        from kafka.admin import NewTopic
        from kafka.errors import TopicAlreadyExistsError

        from kafka import KafkaProducer

        self.topic = topic
        if admin is not None and topic not in admin.list_topics():
            n = len(admin.describe_cluster()["brokers"])
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([NewTopic(topic, 1, min(3, max(1, n)))])
        from kafka_balancer.security.clients import kafka_kwargs

        self.producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=50, acks="all", **kafka_kwargs(security))

    def write_round(self, records: Sequence[dict[str, Any]]) -> None:
        for r in records:
            key = f"{r['cluster']}|{r['type']}".encode()
            self.producer.send(self.topic, key=key, value=orjson.dumps(r))
        self.producer.flush(timeout=30)

    def close(self) -> None:
        self.producer.close(timeout=10)
