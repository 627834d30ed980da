"""Holder floors: a partition that fits under the band's top on its own, but not together with the load its
leader must keep to stay inside the band on another resource."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from kafka_balancer.model.snapshot import CPU, NW_IN, Derived, Snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.bounds import mean_util_range
from kafka_balancer.planner.holder_floors import holder_floors
from kafka_balancer.sim.cluster import PRESETS, generate

FILLERS = 100


def _cluster(k: float) -> Snapshot:
    """Four brokers of capacity 100 on every resource. Partition 0 (leader on broker 0): CPU 10, network-in
    14, disk 20 (a follower of it: CPU 1). A hundred fillers, 1.46 network-in and 1.46 disk each, with ``k``
    CPU per unit of network-in. Network-in totals 160: mean 0.40, band bottom 0.36. Nothing serves
    network-out. (On so small a cluster partition 0 also has disk and network-in floors: whoever holds it
    must keep enough CPU for that band, and fillers bring disk and network-in with it.)

    k = 0.25: CPU totals 46.5, band top 1.1 × 46.5 / 400 = 0.128; partition 0 alone is 0.10, but its leader
    must keep 36 − 14 = 22 network-in, which costs at least 0.25 × 22 = 5.5 CPU: floor 0.155 (disk asks
    less: mean 0.415, bottom 0.3735, 17.35 more disk at 0.25 CPU each is 4.3).
    k = 0.5: top 1.1 × 83 / 400 = 0.228 and floor 0.10 + 0.11 = 0.21: no floor."""
    n_in = [14.0] + [1.46] * FILLERS
    disk = [20.0] + [1.46] * FILLERS
    cpu = [10.0] + [k * 1.46] * FILLERS
    p = len(n_in)
    load = np.stack([cpu, disk, n_in, np.zeros(p)], axis=1)
    follower = load.copy()
    follower[0, CPU] = 1.0  # a follower of partition 0 would carry little CPU: no floor for that role
    replicas = [[0]] + [[1 + i % 3] if i < 60 else [i % 4] for i in range(FILLERS)]
    return Snapshot.build(
        broker_ids=[0, 1, 2, 3], capacity=np.full((4, 4), 100.0), topics=["hot", "fill"],
        topic_idx=[0] + [1] * FILLERS, partition=list(range(p)), replicas=replicas,
        leader=[r[0] for r in replicas], leader_load=load, follower_load=follower,
    )


def test_a_partition_under_the_top_alone_has_a_floor_above_it() -> None:
    found = [f for f in holder_floors(_cluster(0.25), 0.1) if f.resource == CPU]
    assert len(found) == 1
    f = found[0]
    assert (f.partition, f.resource, f.everyone, f.via) == (0, CPU, False, NW_IN)
    assert f.util == pytest.approx(0.155)
    assert f.top == pytest.approx(1.1 * 46.5 / 400)
    assert f.must_hold == pytest.approx(0.36)
    assert "whoever leads it is at cpu 0.155 or more, above the band top 0.128" in f.line("hot-0")


def test_no_cpu_floor_where_the_rest_fits_under_the_top() -> None:
    assert [f for f in holder_floors(_cluster(0.5), 0.1) if f.resource == CPU] == []


def test_the_plan_reports_the_floor_and_does_not_list_its_holder_as_unreached() -> None:
    r = plan(_cluster(0.25))
    assert any("partition hot-0: whoever leads it is at cpu 0.155" in w for w in r.warnings)
    leader = int(r.after_snapshot.leader[0])
    assert not any(u.startswith(f"broker {leader} cpu") for u in r.unresolved)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_plan_puts_a_holder_below_its_floor_while_inside_the_band_elsewhere(seed: int) -> None:
    # the floor is a bound on every state; the planner's result is one state: each holder of a floored
    # partition is at its floor or above, or below the band somewhere else
    spec = replace(PRESETS["large-hard"], brokers=40, racks=4, topics=80, partitions=3000, name="mini-hard")
    snap = generate(spec, seed)
    floors = holder_floors(snap, 0.1)
    assert floors, "the preset's premise: hot partitions"
    after = plan(snap).after_snapshot
    view = Derived(after)
    caps = after.capacity[after.alive]
    util = view.loads / after.capacity
    bottom = np.array([
        (1 - 0.1) * mean_util_range(float(view.totals[s]), caps[:, s], 0.1)[0] for s in range(util.shape[1])
    ])
    for f in floors:
        holders = [b for b in after.replicas[f.partition] if b >= 0] if f.everyone else [after.leader[f.partition]]
        for b in holders:
            below_elsewhere = any(util[b, s] < bottom[s] - 1e-9 for s in range(util.shape[1]) if s != f.resource)
            assert util[b, f.resource] >= f.util - 1e-9 or below_elsewhere, (f, int(b))
