"""What the service says about its load model when the pipeline cannot give loads for a window: with no
loads yet, disk comes from replica sizes; with earlier loads, those are kept, and the status says from when."""

from __future__ import annotations

import time
from pathlib import Path

from kafka_balancer.errors import InputError
from kafka_balancer.serve.config import ServeConfig
from kafka_balancer.serve.model import PartitionLoads
from kafka_balancer.serve.observation import Observation, Replicas
from kafka_balancer.serve.sampling import Sampler
from kafka_balancer.serve.service import Service

WHY = "only 0 of 2 partitions (0.0 %) have at least 1 valid windows of 3"


class _TooFewSamples:
    """Stands in for the Spark pipeline at the one point under test: its refresh refuses, as the real one
    does while samples are too few (pipeline/completeness.py)."""

    last_seconds = 0.0

    def refresh(self) -> PartitionLoads:
        raise InputError(WHY)


def _service(tmp_path: Path) -> Service:
    s = Service(ServeConfig(bootstrap="127.0.0.1:1", state_dir=tmp_path / "s", token="t"), model_source="sizes")
    parts = {("t", p): Replicas((1, 2), 1, (1, 2)) for p in range(2)}
    s.on_round(Observation(1000.0, frozenset({1, 2}), {1: "a", 2: "b"}, parts), {("t", 0): 10, ("t", 1): 20})
    s.sampler = Sampler("127.0.0.1:1", tmp_path / "samples")  # never connects: no round is taken here
    s.pipeline = _TooFewSamples()  # type: ignore[assignment]
    return s


def test_no_loads_yet_says_disk_comes_from_replica_sizes(tmp_path: Path) -> None:
    s = _service(tmp_path)
    s.loads = None
    s.evaluate_window()
    assert s.model.status == f"pipeline: {WHY}; disk from replica sizes meanwhile"


def test_earlier_loads_are_kept_and_the_status_says_from_when(tmp_path: Path) -> None:
    s = _service(tmp_path)
    built = time.mktime((2026, 11, 28, 9, 30, 15, 0, 0, -1))
    s.loads = PartitionLoads(built_at=built)
    s.evaluate_window()
    assert s.model.status == f"pipeline: {WHY}; the loads built at 09:30:15 are kept"
    assert s.loads is not None and s.loads.built_at == built
