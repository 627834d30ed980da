"""Fleet planning and what-if sweeps on Spark: one cluster per applyInPandas group, the real planner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafka_balancer.cli.main import main
from kafka_balancer.model.snapshot_io import snapshot_to_dict
from kafka_balancer.pipeline.fleet import default_cluster, plan_one, sweep_summary, whatif_sweep
from kafka_balancer.sim.cluster import PRESETS, generate

pytestmark = pytest.mark.spark


def test_fleet_cli_plans_every_snapshot_like_the_planner_alone(spark: Any, tmp_path: Path, capsys: Any) -> None:
    import orjson
    import pandas as pd

    d = tmp_path / "snaps"
    d.mkdir()
    snaps = {f"c{s}": generate(PRESETS["paper"], seed=s) for s in range(3)}
    for name, snap in snaps.items():
        (d / f"{name}.json").write_bytes(orjson.dumps(snapshot_to_dict(snap)))
    (d / "broken.json").write_text('{"version": 1, "brokers": []}')
    rc = main(["fleet", "--snapshots", str(d), "--out", str(tmp_path / "out")])
    assert rc == 1  # one snapshot is broken: reported in its row, the others planned
    table = pd.read_csv(tmp_path / "out" / "fleet.csv").set_index("cluster")
    assert "'partitions' is missing" in table.loc["broken", "error"]
    for name, snap in snaps.items():
        alone = plan_one(snap, 0.8, 0.1)
        row = table.loc[name]
        assert (row["replica_moves"], row["leader_moves"]) == (alone["replica_moves"], alone["leader_moves"])
        assert row["sigma_after"] == pytest.approx(alone["sigma_after"])
        assert row["sigma_after"] < row["sigma_before"]
    assert "c0" in capsys.readouterr().out


def test_whatif_low_thresholds_move_more_high_thresholds_miss_more(spark: Any) -> None:
    table = whatif_sweep(spark, clusters=4, thetas=[0.8], epss=[0.02, 0.5], steps=2, seed=5,
                         make_cluster=default_cluster, time_limit=1.0)
    assert len(table) == 4 * 2 and set(table["cluster_id"]) == {5, 6, 7, 8}
    s = sweep_summary(table).set_index("eps")
    assert s.loc[0.02, "drift_moves"] > s.loc[0.5, "drift_moves"]  # thrash at low ε
    assert s.loc[0.5, "drift_sigma"] > s.loc[0.02, "drift_sigma"]  # sluggish at high ε
    # The worker ran the generator the caller passed: cluster 5's size matches default_cluster(5).
    assert table[table["cluster_id"] == 5]["partitions"].iloc[0] == default_cluster(5).n_partitions
