"""Continuous sampling with the collector's own round reader and Parquet writer (collect/): one round per
interval, written under ``<state_dir>/samples/parquet/<type>/`` for the pipeline, and the round's
topology handed to the detectors. Files older than the model's span are deleted, so the folder and the
pipeline's work stay bounded however long the service runs."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_balancer.collect.admin import connect_admin, quiet_kafka_logs
from kafka_balancer.collect.sampler import RawRound, build_records, read_round, retry_fresh
from kafka_balancer.collect.writer import SampleParquetWriter
from kafka_balancer.serve.observation import TP, Observation, from_raw

_FILE_TS = re.compile(r"samples-(\d+)-\d+\.parquet$")


class Sampler:
    def __init__(self, bootstrap: str, samples_dir: Path, metrics_urls: Mapping[int, str] | None = None,
                 hosts: Mapping[int, str] | None = None, cluster: str = "serve", security: Any = None) -> None:
        self.bootstrap = bootstrap
        self.security = security
        self.samples_dir = Path(samples_dir)
        self.metrics_urls = dict(metrics_urls or {})
        self.hosts = dict(hosts or {})
        self.cluster = cluster
        self.writer = SampleParquetWriter(self.samples_dir, rounds_per_file=1_000_000)  # flushed by the service
        self._admin: Any = None
        self.failed: list[str] = []

    def round(self) -> tuple[Observation, dict[TP, int]]:
        """One sampling round: the topology and each partition's size (largest replica, bytes)."""
        raw = retry_fresh(self._read, self.close_admin)
        self.failed = list(raw.failed)  # what this round still lacks after a fresh client tried
        records = build_records(raw, self.cluster, self.hosts)
        if records:
            self.writer.write_round(records)
        sizes: dict[TP, int] = {}
        for t, p, _b, size, _d in raw.replica_sizes:
            sizes[(t, p)] = max(sizes.get((t, p), 0), int(size))
        return from_raw(raw), sizes

    def _read(self) -> RawRound:
        if self._admin is None:
            self._admin = connect_admin(self.bootstrap, timeout_s=10.0, security=self.security)
        try:
            return read_round(self._admin, int(time.time() * 1000), self.metrics_urls)
        except Exception:
            self.close_admin()  # a fresh client next round (kafka-python can stay pinned to a dead broker)
            raise

    def flush(self) -> None:
        self.writer.flush()

    def prune(self, older_than_ms: int) -> int:
        """Delete sample files whose first round is older than ``older_than_ms``; returns how many."""
        n = 0
        for f in self.samples_dir.glob("parquet/*/samples-*.parquet"):
            m = _FILE_TS.search(f.name)
            if m and int(m.group(1)) < older_than_ms:
                f.unlink(missing_ok=True)
                n += 1
        return n

    def close_admin(self) -> None:
        if self._admin is not None:
            try:
                with quiet_kafka_logs():
                    self._admin.close()
            except Exception:
                pass
            self._admin = None

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.close_admin()
