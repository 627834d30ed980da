"""Pure parts of the planner comparison (bench/compare_planners.py) and its storage-only greedy baseline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.baselines.storage_greedy import storage_greedy  # noqa: E402
from bench.compare_planners import (  # noqa: E402
    Outcome,
    after_violations,
    judge,
    kafka_generate,
    merge_rerun,
    moves,
    plan_measures,
    rack_duplicates,
    ratio,
    render_case,
    render_summary,
    replace_section,
    split_plan,
    state_measures,
    topic_spread,
)
from bench.peers import cc  # noqa: E402

from kafka_balancer.model.plan_io import Plan, PlanEntry, apply_plan  # noqa: E402
from kafka_balancer.model.snapshot import DISK, Snapshot  # noqa: E402
from kafka_balancer.sim.cluster import PRESETS, generate  # noqa: E402

I32 = np.int32


def _cluster(alive: list[bool] | None = None) -> Snapshot:
    """4 brokers on 2 racks / 4 hosts; 3 partitions of RF 2, all on brokers 0 and 1 (rack r0 and r1)."""
    return Snapshot.build(
        broker_ids=[10, 11, 12, 13],
        capacity=np.full((4, 4), 100.0),
        racks=["r0", "r1", "r0", "r1"],
        hosts=["h0", "h1", "h2", "h3"],
        alive=alive,
        topics=["a", "b"],
        topic_idx=[0, 0, 1],
        partition=[0, 1, 0],
        replicas=[[0, 1], [1, 0], [0, 1]],
        leader=[0, 1, 0],
        leader_load=[[4, 30, 2, 6], [4, 20, 2, 6], [4, 10, 2, 6]],
        follower_load=[[1, 30, 2, 0], [1, 20, 2, 0], [1, 10, 2, 0]],
    )


def test_moves_counts_added_replicas_leaders_and_bytes() -> None:
    snap = _cluster()
    after = snap.with_assignment(np.array([[2, 1], [1, 0], [1, 3]], I32), np.array([2, 1, 1], I32))
    m = moves(snap, after)
    # partition a-0 gains broker 2 (30 bytes), b-0 gains broker 3 (10 bytes); a-1 unchanged
    assert (m.replica_moves, m.leader_moves, m.bytes_moved) == (2, 2, 40.0)


def test_pure_reorder_is_a_leader_move_without_bytes() -> None:
    snap = _cluster()
    after = snap.with_assignment(np.array([[1, 0], [1, 0], [0, 1]], I32), np.array([1, 1, 0], I32))
    m = moves(snap, after)
    assert (m.replica_moves, m.leader_moves, m.bytes_moved) == (0, 1, 0.0)


def test_after_violations_rack_host_and_dead() -> None:
    snap = _cluster(alive=[True, True, True, False])
    # a-0 -> [0, 2]: both on rack r0 (spread 2 -> 1); b-0 -> [0, 3]: broker 13 is dead
    after = snap.with_assignment(np.array([[0, 2], [1, 0], [0, 3]], I32), np.array([0, 1, 0], I32))
    v = after_violations(snap, after)
    assert (v.live_only, v.rack_spread, v.host_spread) == (1, 1, 0)


def test_split_plan_sorts_out_malformed_entries() -> None:
    snap = _cluster()
    plan = Plan((
        PlanEntry("a", 0, (12, 11)),  # fine
        PlanEntry("a", 1, (11, 11)),  # duplicate broker
        PlanEntry("b", 0, (10, 11, 12)),  # RF change
        PlanEntry("zz", 0, (10, 11)),  # unknown topic
        PlanEntry("a", 1, (10, 99)),  # unknown broker
    ))
    valid, v = split_plan(snap, plan)
    assert [e.replicas for e in valid.entries] == [(12, 11)]
    assert (v.distinct, v.rf, v.unknown) == (1, 1, 2)


def test_judge_uses_the_shared_metrics() -> None:
    snap = _cluster()
    plan = Plan((PlanEntry("a", 0, (12, 13)),))
    mv, viol, met = judge(snap, plan, 0.8, 0.1)
    assert viol.total() == 0
    assert mv.bytes_moved == 60.0  # two replicas of 30 bytes
    # before: disk 60/60/0/0 -> after 30/30/30/30: perfectly even
    assert met.resources["disk"].sigma == pytest.approx(0.0, abs=1e-12)


def test_kafka_generate_keeps_rf_and_uses_live_brokers_only() -> None:
    snap = generate(PRESETS["dead-broker"], seed=3)
    plan = kafka_generate(snap, seed=0)
    assert len(plan) > 0
    after = apply_plan(snap, plan)
    assert np.array_equal((after.replicas >= 0).sum(axis=1), snap.rf)
    on = after.replicas[after.replicas >= 0]
    assert after.alive[on].all()
    assert after_violations(snap, after).rack_spread == 0  # Kafka's rack-aware placement spreads racks


def test_kafka_generate_is_seeded() -> None:
    snap = generate(PRESETS["paper"], seed=1)
    assert kafka_generate(snap, seed=5) == kafka_generate(snap, seed=5)


def test_storage_greedy_evens_disk_and_keeps_constraints() -> None:
    snap = generate(PRESETS["new-brokers"], seed=2)
    res = storage_greedy(snap, tolerance=0.1, theta=0.8)
    after = apply_plan(snap, res.plan)
    _, viol, met_after = judge(snap, res.plan, 0.8, 0.1)
    _, _, met_before = judge(snap, Plan(()), 0.8, 0.1)
    assert viol.total() == 0
    assert met_after.resources["disk"].sigma < 0.5 * met_before.resources["disk"].sigma
    # the new, empty brokers (the last 6) received data
    used = np.bincount(after.replicas[after.replicas >= 0], minlength=snap.n_brokers)
    assert (used[-6:] > 0).all()


def test_storage_greedy_moves_every_replica_off_a_dead_broker() -> None:
    snap = generate(PRESETS["dead-broker"], seed=4)
    res = storage_greedy(snap)
    dead = int(np.nonzero(~snap.alive)[0][0])
    on_dead = int((snap.replicas == dead).sum())
    assert on_dead > 0 and res.rebuilt == on_dead and res.unplaced == 0
    after = apply_plan(snap, res.plan)
    assert not (after.replicas == dead).any()
    assert after_violations(snap, after).total() == 0


def test_storage_greedy_takes_largest_first_within_the_band() -> None:
    # one broker holds 50, 30 and 20 bytes; three empty ones. Mean 25 %, band top 27.5 bytes.
    snap = Snapshot.build(
        broker_ids=[0, 1, 2, 3], capacity=np.full((4, 4), 100.0), topics=["t"],
        topic_idx=[0, 0, 0], partition=[0, 1, 2], replicas=[[0], [0], [0]], leader=[0, 0, 0],
        leader_load=[[0, 50, 0, 0], [0, 30, 0, 0], [0, 20, 0, 0]],
        follower_load=[[0, 50, 0, 0], [0, 30, 0, 0], [0, 20, 0, 0]],
    )
    res = storage_greedy(snap)
    moved = {e.partition for e in res.plan.entries}
    # 50 fits nowhere under 27.5; 30 does not either; 20 does -> broker 0 keeps 80 > band: nothing else fits
    assert moved == {2}
    assert float(apply_plan(snap, res.plan).follower_load[2, DISK]) == 20.0


def test_ratio_and_section_replacement() -> None:
    assert ratio(1.0, 4.0) == "0.25"
    assert ratio(None, 1.0) == "n/a" and ratio(0.0, 0.0) == "1.00" and ratio(1.0, 0.0) == "∞"
    doc = "# B\n\n## Lead\nx\n\n## Side by side with Cruise Control\nold\n\n## Later\ny\n"
    out = replace_section(doc, "## Side by side with Cruise Control", "new table\n")
    assert "old" not in out and "new table" in out
    assert out.startswith("# B\n\n## Lead\nx\n") and out.endswith("## Later\ny\n")
    assert replace_section("# B\n", "## S", "t\n") == "# B\n\n## S\nt\n"


def _info(snap: Snapshot) -> dict[str, object]:
    return {"name": "tiny", "preset": "tiny", "brokers": 4, "alive": 4, "partitions": 3, "replicas": 6,
            "eta": 0.025, "before_measures": state_measures(snap, 0.8, 0.1)}


def test_render_case_shows_a_cruise_control_failure_as_its_result() -> None:
    snap = _cluster()
    m, viol = plan_measures(snap, Plan((PlanEntry("a", 0, (12, 13)),)), 0.8, 0.1)
    ours = Outcome("ours", "ok", wall_s=0.5, cpu_s=0.4, proc_wall_s=1.0, proc_cpu_s=0.9, peak_rss_mb=50,
                   measures=m, violations=viol, load_avg=(1.0, 2.0, 3.0))
    failed = Outcome("cc", "failed", cc.short_failure("OptimizationFailureException: [DiskCapacityGoal] Insufficient"),
                     wall_s=0.2, cpu_s=0.3, proc_wall_s=2.0, proc_cpu_s=2.5, peak_rss_mb=150, peak_heap_mb=30)
    md = render_case(_info(snap), [ours, failed])
    assert "| measure | before | ours | cc |" in md
    assert "| status |  | ok | failed: [DiskCapacityGoal] Insufficient |" in md
    assert "| GB moved |  | 0.0 |  |" in md  # 60 bytes; nothing for the planner that proposed nothing
    assert "| hard-constraint violations |  | 0 |  |" in md
    assert "| plan time s (wall / CPU) |  | 0.50 / 0.40 | 0.20 / 0.30 |" in md
    assert "| whole process s, start-up included (wall / CPU) |  | 1.00 / 0.90 | 2.00 / 2.50 |" in md
    assert "| peak RSS MB (heap MB) |  | 50 | 150 (30) |" in md
    assert "| load average at start (1 / 5 / 15 min) |  | 1.0 / 2.0 / 3.0 |  |" in md


def test_render_summary_ratios_and_failed_peer() -> None:
    snap = _cluster()
    m, _ = plan_measures(snap, Plan((PlanEntry("a", 0, (12, 13)),)), 0.8, 0.1)
    m2 = dict(m, sigma_cpu=2 * m["sigma_cpu"], bytes_moved=4 * m["bytes_moved"], replica_cv=0.5)
    outs = [
        {"planner": "ours", "status": "ok", "measures": m, "cpu_s": 1.0, "proc_cpu_s": 2.0, "extra": {}},
        {"planner": "cc", "status": "ok", "measures": m2, "cpu_s": 0.1, "proc_cpu_s": 3.0, "extra": {}},
        {"planner": "cc-fast", "status": "failed", "measures": None, "cpu_s": 0.1, "proc_cpu_s": 2.0,
         "extra": {"failed_goal": "DiskCapacityGoal"}},
    ]
    md = render_summary([{"case": {"preset": "tiny"}, "outcomes": outs}])
    cc_row = next(ln for ln in md.splitlines() if ln.startswith("| tiny | cc |"))
    assert "| 0.50 / " in cc_row and "| 0.25 |" in cc_row and f"| {m['replica_cv']:.3f} / 0.500 |" in cc_row
    assert "| 1.00 / 0.10 | 2.00 / 3.00 |" in cc_row
    fast_row = next(ln for ln in md.splitlines() if ln.startswith("| tiny | cc-fast |"))
    assert "| failed (DiskCapacityGoal) | n/a | n/a |" in fast_row


def test_topic_spread_counts_replicas_above_the_even_share() -> None:
    snap = _cluster()  # topic a: 2 partitions x RF 2 on brokers 10, 11 (2 / 2 / 0 / 0): share 1 each
    excess, uneven = topic_spread(snap)
    # a: 1 above share on 10 and on 11; b: 1 / 1 / 0 / 0, share 1: none above, max - min = 1: even
    assert (excess, uneven) == (2, 1)
    spread = snap.with_assignment(np.array([[0, 1], [2, 3], [0, 1]], I32), np.array([0, 2, 0], I32))
    assert topic_spread(spread) == (0, 0)


def test_topic_spread_ignores_dead_brokers() -> None:
    snap = _cluster(alive=[True, True, True, False])
    # live 10, 11, 12: topic a 2 / 2 / 0 (share ceil(4/3) = 2): nothing above, but uneven
    assert topic_spread(snap) == (0, 1)


def test_rack_duplicates_only_where_a_free_rack_exists() -> None:
    snap = _cluster()  # racks r0 r1 r0 r1: every partition on r0 + r1 -> nothing to repair
    assert rack_duplicates(snap) == 0
    same = snap.with_assignment(np.array([[0, 2], [1, 0], [1, 3]], I32), np.array([0, 1, 1], I32))
    assert rack_duplicates(same) == 2  # a-0 on r0 twice, b-0 on r1 twice; r1 / r0 has room
    one_rack = Snapshot.build(
        broker_ids=[1, 2], capacity=np.ones((2, 4)), racks=["r", "r"], topics=["t"], topic_idx=[0],
        partition=[0], replicas=[[0, 1]], leader=[0], leader_load=[[1, 1, 1, 1]], follower_load=[[1, 1, 1, 0]],
    )
    assert rack_duplicates(one_rack) == 0


def test_rack_duplicates_uses_hosts_when_brokers_have_no_rack() -> None:
    snap = Snapshot.build(
        broker_ids=[1, 2, 3], capacity=np.ones((3, 4)), hosts=["h0", "h0", "h1"], topics=["t"],
        topic_idx=[0], partition=[0], replicas=[[0, 1]], leader=[0], leader_load=[[1, 1, 1, 1]],
        follower_load=[[1, 1, 1, 0]],
    )
    assert rack_duplicates(snap) == 1  # both on host h0 while h1 is free


def test_state_and_plan_measures() -> None:
    snap = _cluster()
    before = state_measures(snap, 0.8, 0.1)
    assert before["over_theta_pairs"] == 0 and before["over_theta_brokers"] == 0
    assert before["max_gamma"] == max(before[f"gamma_{r}"] for r in ("cpu", "disk", "nw_in", "nw_out"))
    m, viol = plan_measures(snap, Plan((PlanEntry("a", 0, (12, 13)),)), 0.8, 0.1)
    assert viol.total() == 0 and m["violations"] == 0
    assert (m["replica_moves"], m["leader_moves"], m["bytes_moved"]) == (2, 1, 60.0)
    assert m["sigma_disk"] == pytest.approx(0.0, abs=1e-12)
    assert m["replica_cv"] < before["replica_cv"]
    # a tiny cluster pushed over theta: broker 10 alone at 90 % disk
    hot = Snapshot.build(
        broker_ids=[0, 1], capacity=np.full((2, 4), 100.0), topics=["t"], topic_idx=[0], partition=[0],
        replicas=[[0]], leader=[0], leader_load=[[1, 90, 1, 1]], follower_load=[[1, 90, 1, 0]],
    )
    hm = state_measures(hot, 0.8, 0.1)
    assert (hm["over_theta_pairs"], hm["over_theta_brokers"]) == (1, 1)


def test_parse_cc_stats_ok_and_failed() -> None:
    ok = cc.parse_stats({"status": "ok", "wall_s": 2.0, "cpu_s": 3.0, "thread_cpu_s": 1.5, "proposals": 7,
                         "violated_goals_after": ["PotentialNwOutGoal"], "goal_seconds": {"RackAwareGoal": 0.1}})
    assert (ok.status, ok.failed_goal, ok.proposals, ok.violated_after) == ("ok", "", 7, ("PotentialNwOutGoal",))
    assert ok.peak_heap_mb is None and ok.goal_seconds == {"RackAwareGoal": 0.1}
    msg = ("OptimizationFailureException: [DiskCapacityGoal] Insufficient capacity for disk (Utilization "
           "43199993217024.00, Allowed Capacity 38400000000000.00, Threshold: 0.80). Add at least 6 brokers.")
    bad = cc.parse_stats({"status": "failed", "failure": msg, "wall_s": 1.0, "cpu_s": 0.4})
    assert (bad.status, bad.failed_goal, bad.thread_cpu_s) == ("failed", "DiskCapacityGoal", 0.4)
    assert cc.short_failure(bad.failure, 40) == "[DiskCapacityGoal] Insufficient capacit…"
    with pytest.raises(ValueError, match="unknown status"):
        cc.parse_stats({"status": "weird", "wall_s": 1, "cpu_s": 1})


def test_cc_jars_missing_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(cc.CcUnavailable) as err:
        cc.find_jar_dir(tmp_path / "repo", override=str(tmp_path / "nowhere"))
    text = str(err.value)
    assert "\n" not in text and "nowhere" in text and "cruise-control-2.5.146.jar" in text and "--cc-jars" in text


def test_cc_jar_dir_is_found_beside_the_checkout(tmp_path: Path) -> None:
    d = tmp_path / "shared" / "peers" / "cruise-control"
    d.mkdir(parents=True)
    for a in cc.CC_ARTIFACTS:
        for ext in ("jar", "pom"):
            (d / f"{a}-{cc.CC_VERSION}.{ext}").write_text("x")
    (tmp_path / "repo").mkdir()
    assert cc.find_jar_dir(tmp_path / "repo") == d


def test_harness_is_rebuilt_when_a_source_is_newer(tmp_path: Path) -> None:
    jar, src = tmp_path / "h.jar", tmp_path / "H.java"
    assert cc.harness_stale(jar, [src])  # no jar yet
    src.write_text("class H {}")
    jar.write_text("jar")
    os.utime(src, (1_000, 1_000))
    assert not cc.harness_stale(jar, [src])
    os.utime(src, (jar.stat().st_mtime + 10,) * 2)
    assert cc.harness_stale(jar, [src])


def test_docstring_examples_hold() -> None:
    import doctest

    import bench.baselines.storage_greedy as greedy_mod
    import bench.compare_planners as compare_mod

    for mod in (compare_mod, greedy_mod, cc):
        assert doctest.testmod(mod).failed == 0


def test_count_balance_sees_what_sigma_does_not() -> None:
    from bench.compare_planners import count_balance

    snap = _cluster()  # replicas 3/3/0/0, leaders 2/1/0/0
    c0 = count_balance(snap)
    # b-0 moves to brokers 12 and 13, led by 12: replicas 2/2/1/1, leaders 1/1/1/0
    after = snap.with_assignment(np.array([[0, 1], [1, 0], [2, 3]], I32), np.array([0, 1, 2], I32))
    c1 = count_balance(after)
    assert c1["replica_cv"] < c0["replica_cv"] and c1["leader_cv"] < c0["leader_cv"]
    # potential nw_out: broker 10 held three partitions of leader nw_out 6 each on capacity 100 -> 0.18
    assert c0["max_potential_nw_out"] == pytest.approx(0.18)
    assert c1["max_potential_nw_out"] == pytest.approx(0.12)


def test_one_command_end_to_end_on_the_paper_testbed(tmp_path: Path) -> None:
    """The whole flow on the smallest case: generate, run each planner in its own process, judge, render."""
    from bench.compare_planners import main

    md = tmp_path / "bench.md"
    md.write_text("# Benchmarks\n\n## Someone else's\nkeep me\n")
    rc = main(["--cases", "paper", "--planners", "ours,kafka-generate,storage-greedy", "--work",
               str(tmp_path / "work"), "--md", str(md), "--timeout", "300", "--json", str(tmp_path / "out.json")])
    assert rc == 0
    doc = md.read_text()
    assert "## Someone else's\nkeep me\n" in doc
    section = doc.split("## Side by side with Cruise Control", 1)[1]
    assert "| measure | before | ours | kafka-generate | storage-greedy |" in section
    assert "| status |  | ok | ok | ok |" in section
    assert (tmp_path / "work" / "paper-s1" / "ours.plan.json").exists()
    import json

    results = json.loads((tmp_path / "out.json").read_text())
    assert results["command"].endswith("--json " + str(tmp_path / "out.json"))
    (case,) = results["results"]
    assert [o["planner"] for o in case["outcomes"]] == ["ours", "kafka-generate", "storage-greedy"]
    ours = case["outcomes"][0]
    assert ours["measures"]["violations"] == 0 and ours["proc_cpu_s"] >= ours["cpu_s"] > 0
    # --render redraws the same section from the results JSON, running nothing
    md2 = tmp_path / "again.md"
    assert main(["--render", str(tmp_path / "out.json"), "--md", str(md2)]) == 0
    redrawn = md2.read_text().split("## Side by side with Cruise Control", 1)[1]
    assert redrawn.split("### Every measure", 1)[1] == section.split("### Every measure", 1)[1]


def test_a_rerun_replaces_only_its_planners_outcomes() -> None:
    case = {"preset": "paper", "name": "paper-testbed"}
    recorded = {"seed": 1, "command": "old", "code": "abc", "results": [
        {"case": case, "outcomes": [{"planner": "ours", "v": 1}, {"planner": "cc-fast", "v": 2}]}]}
    fresh = [{"case": case, "outcomes": [{"planner": "ours", "v": 3}]}]
    meta, results = merge_rerun(recorded, {"command": "new", "code": "def"}, fresh)
    assert results[0]["outcomes"] == [{"planner": "ours", "v": 3}, {"planner": "cc-fast", "v": 2}]
    assert meta["command"] == "old" and meta["code"] == "abc"  # the recorded run's header stays
    assert [(x["command"], x["code"], x["planners"]) for x in meta["reruns"]] == [("new", "def", ["ours"])]
    assert recorded["results"][0]["outcomes"][0] == {"planner": "ours", "v": 1}  # not mutated
    again, _ = merge_rerun({**meta, "results": results}, {"command": "newer", "code": "ghi"}, fresh)  # supersedes
    assert [x["command"] for x in again["reruns"]] == ["newer"]
