"""Simulated sample sets with known truth, shared by the end-to-end and streaming tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.sim.cluster import ClusterSpec, generate
from kafka_balancer.sim.samples import SampleSpec, SimulatedSamples, simulate, write_jsonl

CLUSTER = ClusterSpec(brokers=9, racks=3, topics=10, partitions=120, name="e2e")
WINDOWS = 4


@dataclass
class SampleSet:
    snap: Snapshot
    sim: SimulatedSamples
    path: Path


def _with_retention(snap: Snapshot, seconds: float) -> Snapshot:
    """Every partition holds at least ``seconds`` of its writes (the simulator scales disk and network to
    their own capacities, which can leave a partition whose whole log is a few minutes of writes; its
    size then moves by several % between two rounds and no sampler pins it within 2 %)."""
    from dataclasses import replace

    from kafka_balancer.model.snapshot import DISK, NW_IN

    disk = np.maximum(snap.leader_load[:, DISK], snap.leader_load[:, NW_IN] * seconds)
    ll, fl = snap.leader_load.copy(), snap.follower_load.copy()
    ll[:, DISK] = disk
    fl[:, DISK] = disk
    return replace(snap, leader_load=ll, follower_load=fl)


def _make(tmp: Path, spec: SampleSpec, seed: int) -> SampleSet:
    snap = _with_retention(generate(CLUSTER, seed=seed), 6 * 3600.0)
    sim = simulate(snap, spec, seed=seed)
    write_jsonl(sim.rounds, tmp, rounds_per_file=5)
    return SampleSet(snap, sim, tmp)


@pytest.fixture(scope="session")
def clean_samples(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SampleSet]:
    yield _make(tmp_path_factory.mktemp("clean"), SampleSpec(cluster="e2e", windows=WINDOWS), 11)


@pytest.fixture(scope="session")
def faulty_samples(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SampleSet]:
    """Counter resets (broker 1 restarts before round 7), 5 % of records missing, broker 2 down for
    window 1 (and restarted after it)."""
    spec = SampleSpec(cluster="e2e", windows=WINDOWS, missing=0.05, restarts=((1, 7),), down=((2, 1),))
    yield _make(tmp_path_factory.mktemp("faulty"), spec, 11)


@pytest.fixture(scope="session")
def clean_batch(spark: Any, clean_samples: SampleSet, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The batch pipeline on the clean samples (outputs written), shared by the tests that compare to it."""
    from kafka_balancer.pipeline.batch import run_batch
    from kafka_balancer.pipeline.config import PipelineConfig

    out = tmp_path_factory.mktemp("clean_batch")
    res = run_batch(spark, clean_samples.path, PipelineConfig(windows=WINDOWS), out=out / "snap.json",
                    tables_dir=out / "tables", report_path=out / "report.json")
    return res, out


def partition_errors(snapshot: dict[str, Any], sim: SimulatedSamples) -> Any:
    import pandas as pd

    got = pd.DataFrame([
        {"topic": p["topic"], "partition": p["partition"], **{f"got_{k}": v for k, v in p["load"]["leader"].items()},
         "got_fcpu": p["load"]["follower"]["cpu"]}
        for p in snapshot["partitions"]
    ])
    m = got.merge(sim.truth.as_frame(), on=["topic", "partition"], how="outer", indicator=True)
    assert (m["_merge"] == "both").all(), "snapshot and truth list different partitions"
    for g, t in (("got_disk", "disk"), ("got_nw_in", "nw_in"), ("got_nw_out", "nw_out"), ("got_cpu", "leader_cpu"),
                 ("got_fcpu", "follower_cpu")):
        m[f"err_{t}"] = (m[g] / m[t] - 1.0).abs()
    return m
