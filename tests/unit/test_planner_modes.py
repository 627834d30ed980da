"""Operator modes of the planner (issue 13 §2): hand-checked small clusters, bad input, and the shared
invariant checker over many seeded random cases."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import Snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.constraints import Constraints
from kafka_balancer.planner.invariants import hard_violations, mode_violations
from kafka_balancer.planner.mode_report import demote_alone
from kafka_balancer.planner.plan import heals
from kafka_balancer.sim.cluster import ClusterSpec, generate

GB = 1e9


def _snap(
    replicas: list[list[int]],
    *,
    n: int = 4,
    topics: list[str] | None = None,
    disk: list[float] | None = None,
    racks: list[str | None] | None = None,
    cap_disk: float = 1000 * GB,
) -> Snapshot:
    """``n`` equal brokers; partition i of topic ``topics[i]`` (default "t"), leader = first replica; loads
    small and equal unless ``disk`` (GB per replica) says otherwise."""
    p = len(replicas)
    d = np.asarray(disk if disk is not None else [10.0] * p) * GB
    lead = np.stack([np.full(p, 1.0), d, np.full(p, 1e5), np.full(p, 3e5)], axis=1)
    fol = np.stack([np.full(p, 0.5), d, np.full(p, 1e5), np.zeros(p)], axis=1)
    names = topics if topics is not None else ["t"] * p
    uniq = sorted(set(names))
    cap = np.tile([100.0, cap_disk, 1.25e8, 1.25e8], (n, 1))
    return Snapshot.build(
        broker_ids=list(range(n)), capacity=cap, topics=uniq, topic_idx=[uniq.index(t) for t in names],
        partition=list(range(p)), replicas=replicas, leader=[r[0] for r in replicas],
        leader_load=lead, follower_load=fol, racks=racks,
    )


def _check(snap: Snapshot, c: Constraints, **kw: object) -> object:
    r = plan(snap, constraints=c, **kw)  # type: ignore[arg-type]
    assert hard_violations(snap, r.after_snapshot) == []
    assert mode_violations(snap, r.after_snapshot, c) == []
    assert r.summary["mode"] == c.mode and r.summary["constraints"] == c.as_dict()
    return r


def test_remove_brokers_empties_them_and_balances_the_rest() -> None:
    # 4 brokers, broker 3 holds a replica of every partition
    snap = _snap([[3, i % 3] for i in range(12)])
    r = _check(snap, Constraints(remove_brokers=frozenset({3})))
    after = r.after_snapshot  # type: ignore[attr-defined]
    assert not (after.replicas == 3).any()
    counts = np.bincount(after.replicas.ravel(), minlength=4)
    assert counts[:3].tolist() == [8, 8, 8]  # 24 replicas over the three that stay, evenly
    assert all(e.replicas[0] != 3 for e in r.plan.entries)  # type: ignore[attr-defined]


def test_remove_refuses_when_replication_factor_cannot_be_kept() -> None:
    snap = _snap([[0, 1, 2]], n=3)
    with pytest.raises(InputError, match=r"t-0 has replication factor 3"):
        plan(snap, constraints=Constraints(remove_brokers=frozenset({2})))


def test_remove_refuses_when_rack_spread_would_drop() -> None:
    # brokers 0,1 in rack a, 2,3 in rack b; t-0 on racks a and b; removing both rack-b brokers would put it
    # in one rack; one of them alone is fine
    snap = _snap([[0, 2]], racks=["a", "a", "b", "b"])
    with pytest.raises(InputError, match=r"partition t-0 spans racks \['a', 'b'\]"):
        plan(snap, constraints=Constraints(remove_brokers=frozenset({2, 3})))
    r = _check(snap, Constraints(remove_brokers=frozenset({2})))
    assert sorted(r.after_snapshot.replicas[0].tolist()) == [0, 3]  # type: ignore[attr-defined]


def test_remove_refuses_when_capacity_is_short() -> None:
    # 600 GB replicas on disks of 1000 GB: broker 2's replica fits nowhere once it must leave
    snap = _snap([[0], [1], [2]], n=3, disk=[600.0, 600.0, 600.0])
    with pytest.raises(InputError, match=r"partition t-2 needs 600.0 GB of disk"):
        plan(snap, constraints=Constraints(remove_brokers=frozenset({2})))


def test_remove_refuses_a_budget_below_what_must_leave() -> None:
    snap = _snap([[3, 0], [3, 1]])
    with pytest.raises(InputError, match=r"--max-bytes 10.0 GB is below the 20.0 GB"):
        plan(snap, constraints=Constraints(remove_brokers=frozenset({3}), max_bytes=10 * GB))


def test_add_brokers_only_they_receive() -> None:
    # brokers 0-2 full, 3 and 4 new and empty; only 4 is listed
    snap = _snap([[i % 3, (i + 1) % 3] for i in range(15)], n=5)
    r = _check(snap, Constraints(add_brokers=frozenset({4})))
    after = r.after_snapshot  # type: ignore[attr-defined]
    assert not (after.replicas == 3).any()
    assert (after.replicas == 4).sum() >= 5  # it was filled
    assert r.replica_moves == (after.replicas == 4).sum()  # type: ignore[attr-defined]
    # broker 3 was left out: the plan says it stays empty, and that the mode held balance back
    assert [w for w in r.warnings if w.startswith("broker(s) 3 hold no replicas")]  # type: ignore[attr-defined]
    assert r.remaining[0].startswith("only brokers 4 receive replicas (--add-brokers)")  # type: ignore[attr-defined]
    listed = _check(snap, Constraints(add_brokers=frozenset({3, 4})))
    assert not [w for w in listed.warnings if "hold no replicas" in w]  # type: ignore[attr-defined]


def test_demote_moves_leadership_off_and_lists_the_broker_last() -> None:
    snap = _snap([[0, 1], [0, 2], [1, 0], [2, 3]])
    r = _check(snap, Constraints(demote_brokers=frozenset({0})))
    assert not (r.after_snapshot.leader == 0).any()  # type: ignore[attr-defined]
    entries = {e.partition: e.replicas for e in r.plan.entries}  # type: ignore[attr-defined]
    # every partition that had 0 first is rewritten with 0 last (or without 0, if balance moved it away)
    assert 0 in entries and 1 in entries
    assert all(reps[-1] == 0 for reps in entries.values() if 0 in reps)
    assert all(reps[0] != 0 for reps in entries.values())


def test_demotion_says_what_it_costs_and_what_it_leaves() -> None:
    # brokers 0 and 1 hold 6 of 8 partitions: a demotion of broker 3 alone also rebalances, and says so
    skewed = _snap([[0, 1]] * 6 + [[2, 3]] * 2)
    alone = Constraints(demote_brokers=frozenset({3}))
    r = _check(skewed, alone)
    assert r.replica_moves > 0  # type: ignore[attr-defined]
    (line,) = demote_alone(alone, r.replica_moves, r.moved_bytes)  # type: ignore[attr-defined]
    assert line.startswith(f"--demote-brokers also rebalances: this plan moves {r.replica_moves} replica(s)")  # type: ignore[attr-defined]
    assert "--leadership-only" in line
    lead = Constraints(demote_brokers=frozenset({3}), leadership_only=True)
    only = _check(skewed, lead)
    assert only.replica_moves == 0  # type: ignore[attr-defined]
    assert demote_alone(lead, only.replica_moves, only.moved_bytes) == []  # type: ignore[attr-defined]
    # with a removal the replica moves are the point: no warning
    assert demote_alone(Constraints(demote_brokers=frozenset({3}), remove_brokers=frozenset({0})), 5, 1e9) == []
    # an even cluster: broker 0 led 2 of 8 and now leads none, so its network-out sits below the band, and
    # the plan names the demotion as the reason (not a planner that gave up)
    even = _snap([[i % 4, (i + 1) % 4] for i in range(8)])
    d = _check(even, Constraints(demote_brokers=frozenset({0}), leadership_only=True))
    assert any(line.startswith("broker(s) 0 lead nothing (--demote-brokers)") for line in d.remaining)  # type: ignore[attr-defined]
    assert not any("lead nothing" in line
                   for line in _check(even, Constraints(leadership_only=True)).remaining)  # type: ignore[attr-defined]


def test_demote_cannot_help_a_partition_living_only_on_demoted_brokers() -> None:
    snap = _snap([[0], [1, 2]])
    r = plan(snap, constraints=Constraints(demote_brokers=frozenset({0})))
    assert int(r.after_snapshot.leader[0]) == 0
    assert any("no other replica may lead them" in w and "t-0" in w for w in r.warnings)


def test_excluded_topics_never_move_but_count() -> None:
    # everything on broker 0: the payments topic is excluded, the other one may move
    names = ["payments.eu"] * 4 + ["logs"] * 4
    snap = _snap([[0]] * 8, topics=names)
    r = _check(snap, Constraints(exclude_topics=r"payments\..*"))
    after = r.after_snapshot  # type: ignore[attr-defined]
    pay = np.array([snap.topics[t] == "payments.eu" for t in snap.topic_idx])
    assert (after.replicas[pay] == 0).all()
    # the excluded load still counts: broker 0 keeps 4 × 10 GB, so the other topic's replicas leave it
    assert (after.replicas[~pay] != 0).all()


def test_a_pattern_that_excludes_nothing_or_everything_is_said() -> None:
    names = ["payments.eu"] * 4 + ["logs"] * 4
    snap = _snap([[0]] * 8, topics=names)
    # a typo (the topic is payments.eu, not payment.eu) excludes nothing: the plan says so and moves freely
    r = _check(snap, Constraints(exclude_topics=r"payment\..*"))
    assert any("matches none of the 2 topic(s): nothing is excluded" in w for w in r.warnings)  # type: ignore[attr-defined]
    assert r.replica_moves > 0  # type: ignore[attr-defined]
    # a pattern matching every topic: nothing moves, and with a budget the budget is not blamed
    r = _check(snap, Constraints(exclude_topics=".*", max_bytes=100 * GB))
    assert any("matches every topic (2): no replica or leadership moves" in w for w in r.warnings)  # type: ignore[attr-defined]
    assert r.replica_moves == 0 and r.leader_moves == 0  # type: ignore[attr-defined]
    assert r.remaining and not any("budget is spent" in x for x in r.remaining)  # type: ignore[attr-defined]
    # a pattern matching some topics says nothing
    r = _check(snap, Constraints(exclude_topics=r"payments\..*"))
    assert not any("--exclude-topics" in w for w in r.warnings)  # type: ignore[attr-defined]


def test_leadership_only_moves_no_replica() -> None:
    snap = _snap([[0, 1]] * 6 + [[2, 3]])
    r = _check(snap, Constraints(leadership_only=True))
    assert r.replica_moves == 0 and r.leader_moves > 0  # type: ignore[attr-defined]
    assert np.array_equal(np.sort(r.after_snapshot.replicas, axis=1), np.sort(snap.replicas, axis=1))  # type: ignore[attr-defined]
    # broker 0 and 1 hold 6 of 7 partitions: replica count stays unbalanced, and the mode is named as why
    assert r.remaining[0].startswith("no replica moves (--leadership-only)")  # type: ignore[attr-defined]
    assert any(line.startswith("replica_count") for line in r.remaining)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("budget", "line"), [
    (Constraints(max_moves=1), "the move budget is spent (--max-moves: 1 of at most 1 replica moves)"),
    # 10 GB replicas: the second one does not fit in the 5 GB left
    (Constraints(max_bytes=15 * GB), "the byte budget is spent (--max-bytes: 10.0 of at most 15.0 GB moved; no "
                                     "replica that may move fits in the rest)"),
    (Constraints(max_moves=0), "the move budget is spent (--max-moves: 0 of at most 0 replica moves)"),
])
def test_budget_kept_and_remainder_reported(budget: Constraints, line: str) -> None:
    snap = _snap([[0]] * 8)
    r = _check(snap, budget)
    assert r.moved_bytes <= 10 * GB + 1  # type: ignore[attr-defined]
    first = r.remaining[0]  # type: ignore[attr-defined]
    assert first.startswith(line + "; a larger budget would balance further"), first
    # the ε band is missed: the line gives the least any plan must move to reach it
    bound = r.moved_bytes_lower_bound  # type: ignore[attr-defined]
    assert bound == pytest.approx(58 * GB)  # broker 0 holds 80 GB, the band's top is 22 GB (mean 20, ε 0.1)
    assert bound > r.moved_bytes and first.endswith(f"at least {bound / 1e9:,.1f} GB (lower bound)"), first  # type: ignore[attr-defined]
    assert not r.after.balanced()  # type: ignore[attr-defined]


def test_what_was_kept_to_is_said_in_one_set_of_words() -> None:
    # the terminal's line and the dashboard (the API's constraints.kept) read the same words
    c = Constraints(add_brokers=frozenset({7, 8}), demote_brokers=frozenset({1}), exclude_topics="__.*",
                    max_moves=500, max_bytes=5e11, leadership_only=True)
    assert c.kept() == ["add brokers 7,8", "demote brokers 1", "excluded topics /__.*/", "at most 500 replica moves",
                        "at most 500.0 GB moved", "leadership only"]
    assert c.as_dict()["kept"] == c.kept()
    assert c.describe() == "   ".join(["mode add-brokers+demote-brokers+leadership-only", *c.kept()[:-1]])
    assert Constraints().kept() == [] and Constraints().describe() == "mode full"


def test_modes_compose() -> None:
    snap = _snap([[i % 4, (i + 1) % 4] for i in range(16)], n=6)
    c = Constraints(add_brokers=frozenset({4}), remove_brokers=frozenset({3}), demote_brokers=frozenset({2}))
    r = _check(snap, c)
    assert r.summary["mode"] == "add-brokers+remove-brokers+demote-brokers"  # type: ignore[attr-defined]
    assert not (r.after_snapshot.replicas == 5).any()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("c", "message"),
    [
        (Constraints(add_brokers=frozenset({9})), "--add-brokers: broker 9 is not in the snapshot"),
        (Constraints(demote_brokers=frozenset({-1})), "--demote-brokers: broker -1 is not in the snapshot"),
        (Constraints(add_brokers=frozenset({1}), remove_brokers=frozenset({1})), "broker 1 is listed both"),
        (Constraints(exclude_topics="pay(ments"), "--exclude-topics 'pay(ments' is not a valid regular expression"),
        (Constraints(max_moves=-3), "--max-moves -3 is negative"),
        (Constraints(max_bytes=-1.0), "--max-bytes -1.0 is negative"),
        (Constraints(max_bytes=float("nan")), "--max-bytes nan is negative or not a number"),
        (Constraints(demote_brokers=frozenset({0, 1, 2}), remove_brokers=frozenset({3})),
         "--demote-brokers leaves no live broker to lead"),
        (Constraints(add_brokers=frozenset({1, 3})), "--add-brokers: broker 3 is down in the snapshot"),
        (Constraints(remove_brokers=frozenset({2}), leadership_only=True),
         "--remove-brokers needs replica moves, and --leadership-only allows none"),
        (Constraints(add_brokers=frozenset({2}), leadership_only=True),
         "--add-brokers needs replica moves, and --leadership-only allows none"),
    ],
)
def test_bad_input_is_one_line_naming_it(c: Constraints, message: str) -> None:
    snap = _snap([[0, 1]])
    snap = replace(snap, alive=np.array([True, True, True, False]))  # broker 3 is down
    with pytest.raises(InputError) as e:
        plan(snap, constraints=c)
    assert e.value.message.startswith(message) and "\n" not in e.value.message


SMALL = ClusterSpec(brokers=12, brokers_per_host=2, racks=3, topics=12, partitions=240, new_brokers=2, name="small")


@pytest.mark.parametrize("seed", range(40))
def test_invariants_hold_for_random_modes(seed: int) -> None:
    """The shared checker over seeded random combinations of modes on a 14-broker cluster (every other seed
    with a dead broker, so healing plans are checked too). Seed 27 caught a partition whose followers were
    all demoted when demotion ran, then gained a replica on a broker that may lead while leadership stayed
    on the demoted one (demotion now runs again at the end); seeds 21 and 33, a checker that took a
    follower on a dead broker for one that could lead."""
    snap = generate(replace(SMALL, dead_brokers=seed % 2), seed=seed)
    rng = np.random.default_rng(seed)
    ids = [int(b) for b in rng.permutation(snap.broker_ids)]
    pos = snap.broker_pos()
    c = Constraints(
        # a broker that is down cannot be added (refused as bad input): only live ones are drawn
        add_brokers=frozenset(b for b in ids[:2] if snap.alive[pos[b]]) if rng.random() < 0.4 else frozenset(),
        remove_brokers=frozenset(ids[2:3]) if rng.random() < 0.5 else frozenset(),
        demote_brokers=frozenset(ids[3:5]) if rng.random() < 0.5 else frozenset(),
        exclude_topics="topic-000[0-3]" if rng.random() < 0.5 else None,
        leadership_only=bool(rng.random() < 0.15),
        max_moves=int(rng.integers(0, 40)) if rng.random() < 0.3 else None,
        max_bytes=float(rng.uniform(0, 2e12)) if rng.random() < 0.3 else None,
    )
    try:
        r = plan(snap, constraints=c)
    except InputError as e:  # a removal the budget or layout cannot carry is refused, naming why (and an add
        # with leadership only)
        assert "remove" in e.message or "--max" in e.message or e.message.startswith("--add-brokers needs")
        return
    # a replica of a dead broker with nowhere the modes let it go stays, and the plan names its partition;
    # when only a few brokers may receive, a healed partition may span fewer racks or hosts (healing first)
    stranded = set(r.extra["stranded"])
    healed = {snap.partition_label(p) for p in np.nonzero(np.isin(snap.replicas, np.nonzero(~snap.alive)[0]))[0]}
    narrow = bool(c.add_brokers or c.leadership_only)
    left = [v for v in hard_violations(snap, r.after_snapshot, limit=10**6)
            if not (v.endswith("a replica is on a dead broker after the plan") and v.split(":")[0] in stranded)
            and not (narrow and "spans fewer" in v and v.split(":")[0] in healed)]
    assert left == []
    assert mode_violations(snap, r.after_snapshot, c, heal=r.mode == "heal") == []
    assert [g.name for g in r.goals][:2] == ["capacity", "distribution"]
    if r.mode == "heal":
        assert heals(snap, c) and r.summary["mode"] == "heal"
    else:
        assert r.summary["mode"] == c.mode


def test_a_budget_goes_to_theta_before_the_band() -> None:
    # broker 0 holds a 700 GB partition (no broker can hold it inside the disk band: out of reach by proof)
    # and four 50 GB ones: 900 GB of 1,000, above θ = 0.8. Broker 1 holds 600 GB, above its band (mean 425 GB,
    # band 382-468). With 100 GB to spend, the capacity goal ranks first: exactly two 50 GB replicas leave
    # broker 0 (0.800), and nothing is spent on broker 1. Spent on the band first, it stayed at 0.900.
    snap = _snap([[0]] * 5 + [[1]] * 20 + [[2]] * 4 + [[3]] * 4, disk=[700] + [50] * 4 + [30] * 20 + [25] * 8)
    r = _check(snap, Constraints(max_bytes=100 * GB))
    capacity = next(g for g in r.goals if g.name == "capacity")  # type: ignore[attr-defined]
    assert capacity.before == 1 and capacity.after == 0, capacity.detail
    assert r.moved_bytes == pytest.approx(100 * GB)  # type: ignore[attr-defined]
    moved = r.after_snapshot.replicas[:, 0] != snap.replicas[:, 0]  # type: ignore[attr-defined]
    assert int(moved.sum()) == 2 and set(np.nonzero(moved)[0].tolist()) <= {1, 2, 3, 4}  # two of broker 0's 50 GB
