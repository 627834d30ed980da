"""Which windows a stopped streaming job has written for every record type, read from its checkpoints."""

from __future__ import annotations

from pathlib import Path

import orjson

from kafka_balancer.pipeline.schemas import RECORD_TYPES
from kafka_balancer.pipeline.streaming import committed_watermark_ms


def _batch(state: Path, rtype: str, batch: int, watermark: int, committed: bool = True) -> None:
    cp = state / "checkpoints" / rtype
    (cp / "offsets").mkdir(parents=True, exist_ok=True)
    (cp / "commits").mkdir(parents=True, exist_ok=True)
    meta = {"batchWatermarkMs": watermark, "batchTimestampMs": 1, "conf": {}}
    (cp / "offsets" / str(batch)).write_bytes(b"v1\n" + orjson.dumps(meta) + b'\n{"logOffset":0}\n')
    if committed:
        (cp / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}\n')


def test_the_lowest_committed_watermark_over_the_record_types(tmp_path: Path) -> None:
    assert committed_watermark_ms(tmp_path) is None  # nothing ran yet
    for i, rtype in enumerate(RECORD_TYPES):
        _batch(tmp_path, rtype, 0, 300_000)
        _batch(tmp_path, rtype, 1, 900_000 + i * 300_000)
    assert committed_watermark_ms(tmp_path) == 900_000
    # The slowest query was stopped in the middle of batch 2: its offsets are logged, not committed.
    _batch(tmp_path, RECORD_TYPES[0], 2, 1_800_000, committed=False)
    assert committed_watermark_ms(tmp_path) == 900_000
    _batch(tmp_path, RECORD_TYPES[0], 2, 1_800_000)
    assert committed_watermark_ms(tmp_path) == 1_200_000


def test_a_query_without_samples_holds_nothing_back_and_a_missing_one_holds_everything(tmp_path: Path) -> None:
    for rtype in RECORD_TYPES:
        _batch(tmp_path, rtype, 0, 0 if rtype == "group_offset" else 600_000)
    assert committed_watermark_ms(tmp_path) == 600_000  # no consumer group: no group offsets
    for rtype in RECORD_TYPES:
        _batch(tmp_path / "other", rtype, 0, 0)
    assert committed_watermark_ms(tmp_path / "other") is None  # no query has seen a sample
    missing = tmp_path / "missing"
    for rtype in RECORD_TYPES[1:]:
        _batch(missing, rtype, 0, 600_000)
    assert committed_watermark_ms(missing) is None  # one query has not committed a batch
