"""Where sample records go: JSON-lines files in a directory, and optionally a Kafka topic.

Files are ``DIR/samples-<first ts_ms>-<seq>.jsonl``; a file is closed after ``rounds_per_file``
rounds, so a reader (the pipeline) can pick up closed files while collection goes on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

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
            self._path = self.out_dir / f"samples-{records[0]['ts']}-{self._seq:04d}.jsonl"
            self._seq += 1
            self._rounds_in_file = 0
            self.files.append(self._path)
        with self._path.open("ab") as f:
            f.write(b"".join(orjson.dumps(r) + b"\n" for r in records))
        self._rounds_in_file += 1
        return self._path


class SampleTopicWriter:
    """Produce each record to a topic, keyed ``<cluster>|<type>`` (created if missing)."""

    def __init__(self, bootstrap: str, topic: str = DEFAULT_TOPIC, admin: Any = None) -> None:
        from kafka.admin import NewTopic
        from kafka.errors import TopicAlreadyExistsError

        from kafka import KafkaProducer

        self.topic = topic
        if admin is not None and topic not in admin.list_topics():
            n = len(admin.describe_cluster()["brokers"])
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([NewTopic(topic, 1, min(3, max(1, n)))])
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=50, acks="all")

    def write_round(self, records: Sequence[dict[str, Any]]) -> None:
        for r in records:
            key = f"{r['cluster']}|{r['type']}".encode()
            self.producer.send(self.topic, key=key, value=orjson.dumps(r))
        self.producer.flush(timeout=30)

    def close(self) -> None:
        self.producer.close(timeout=10)
