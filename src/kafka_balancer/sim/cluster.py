"""Generator of realistic cluster snapshots, placed by Kafka's own default placement.

Loads follow how Kafka clusters actually skew:

* topic produce rates are Zipf-distributed; within a topic, keys skew the partitions (a second Zipf);
* disk = rate × retention, with retention drawn per topic (6 h .. 7 d);
* network-in is the same for every replica; network-out of the leader is consumer fan-out plus the
  followers' replication fetches; followers serve nothing (seed 001, table 1);
* CPU per role from bytes in and out (leader ``0.7·in + 0.15·out``, follower ``0.15·in`` of a unit
  cost), scaled so that the cluster reaches the requested mean utilisation.

Capacities are scaled so that each resource's mean utilisation is ``target_util[r]`` (above θ for an
overloaded cluster). Options add new empty brokers, dead brokers, restarted brokers whose leaders moved
away, and heterogeneous capacities. Everything is drawn from one seeded generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kafka_balancer.model.snapshot import CPU, DISK, NW_IN, NW_OUT, Snapshot
from kafka_balancer.placement.kafka_default import assign_rack_aware, assign_rack_unaware


@dataclass(frozen=True)
class ClusterSpec:
    brokers: int = 48
    brokers_per_host: int = 2
    racks: int = 3  # 0 = no rack set on brokers
    topics: int = 60
    partitions: int = 2000  # total over all topics
    rf: tuple[int, ...] = (2, 3)
    rf_weights: tuple[float, ...] = (0.3, 0.7)
    topic_zipf: float = 1.1
    key_zipf: float = 0.6
    fanout: tuple[int, int] = (1, 3)  # consumer groups per topic, inclusive range
    retention_hours: tuple[float, ...] = (6.0, 24.0, 72.0, 168.0)
    target_util: tuple[float, float, float, float] = (0.35, 0.5, 0.4, 0.4)
    new_brokers: int = 0
    dead_brokers: int = 0
    restarted_brokers: int = 0
    heterogeneous: bool = False
    # hot partitions: in each of the ``hot_topics`` heaviest topics, the heaviest partition carries
    # ``hot_factor`` × (total produce rate ÷ brokers), with the shortest retention and the largest fan-out:
    # its leader alone is above any broker's band on CPU and network-out, while disk and network-in stay
    # coverable. Balance on those two resources is then provably out of reach (``bounds.hot_partitions``).
    hot_topics: int = 0
    hot_factor: float = 0.0
    name: str | None = None
    extra: dict[str, float] = field(default_factory=dict)


PRESETS: dict[str, ClusterSpec] = {
    # Seed 001's testbed: 3 servers x 2 broker VMs, no racks set (Kafka 2.0 defaults), θ=0.8, ε=0.1.
    # Topic and key skew and retention spread chosen so that the default placement's σ per resource is
    # close to the paper's default system (0.043, 0.079, 0.048, 0.036); see docs/planner.md.
    "paper": ClusterSpec(
        brokers=6,
        brokers_per_host=2,
        racks=0,
        topics=10,
        partitions=36,
        topic_zipf=0.8,
        key_zipf=0.6,
        retention_hours=(1.0, 12.0, 48.0, 168.0, 336.0),
        target_util=(0.3, 0.5, 0.35, 0.35),
        name="paper-testbed",
    ),
    "racks48": ClusterSpec(name="48-brokers-3-racks"),
    "new-brokers": ClusterSpec(new_brokers=6, name="48+6-new-brokers"),
    "dead-broker": ClusterSpec(dead_brokers=1, name="48-one-dead"),
    "restarted": ClusterSpec(restarted_brokers=2, name="48-two-restarted"),
    "hetero": ClusterSpec(heterogeneous=True, name="48-heterogeneous"),
    "overloaded": ClusterSpec(target_util=(0.6, 0.9, 0.85, 0.7), name="48-overloaded"),
    "large": ClusterSpec(
        brokers=1000,
        racks=10,
        topics=2000,
        partitions=100_000,
        rf=(3,),
        rf_weights=(1.0,),
        name="1000-brokers-100k-partitions",
    ),
    "huge": ClusterSpec(
        brokers=270,
        racks=9,
        topics=4000,
        partitions=430_000,
        rf=(3,),
        rf_weights=(1.0,),
        name="270-brokers-1.3M-replicas",
    ),
    # The same sizes, harder (issue 13 §4): steeper Zipf skew, mixed replication factors, and hot topics
    # whose heaviest partition no broker can host inside the band on CPU and network-out.
    "large-hard": ClusterSpec(
        brokers=1000,
        racks=10,
        topics=2000,
        partitions=100_000,
        rf=(2, 3, 4),
        rf_weights=(0.2, 0.6, 0.2),
        topic_zipf=1.2,
        key_zipf=0.7,
        hot_topics=5,
        hot_factor=1.6,
        name="1000-brokers-100k-partitions-hard",
    ),
    "huge-hard": ClusterSpec(
        brokers=270,
        racks=9,
        topics=4000,
        partitions=430_000,
        rf=(2, 3, 4),
        rf_weights=(0.25, 0.5, 0.25),
        topic_zipf=1.25,
        key_zipf=0.75,
        hot_topics=1,
        hot_factor=1.6,
        name="270-brokers-1.3M-replicas-hard",
    ),
}


def _zipf_weights(n: int, s: float, rng: np.random.Generator) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    rng.shuffle(w)
    return w / w.sum()


def generate(spec: ClusterSpec, seed: int = 0) -> Snapshot:
    """A snapshot drawn from ``spec`` with generator seed ``seed``."""
    rng = np.random.default_rng(seed)
    n_old = spec.brokers
    n = n_old + spec.new_brokers
    ids = np.arange(n, dtype=np.int64)
    hosts = [f"h{i // spec.brokers_per_host}" for i in range(n)]
    racks: list[str | None] = (
        [f"r{(i // spec.brokers_per_host) % spec.racks}" for i in range(n)] if spec.racks else [None] * n
    )

    # Partitions per topic: proportional to the topic's weight, at least 1 (hot topics get more partitions).
    t_w = _zipf_weights(spec.topics, spec.topic_zipf, rng)
    counts = np.maximum(1, np.floor(0.5 * spec.partitions / spec.topics + 0.5 * spec.partitions * t_w))
    counts = counts.astype(np.int64)
    counts[np.argmax(t_w)] += max(0, spec.partitions - int(counts.sum()))
    while counts.sum() > spec.partitions:
        counts[np.argmax(counts)] -= counts.sum() - spec.partitions
    rfs = rng.choice(np.asarray(spec.rf), size=spec.topics, p=np.asarray(spec.rf_weights))
    rfs = np.minimum(rfs, n_old)
    retention = rng.choice(np.asarray(spec.retention_hours), size=spec.topics) * 3600.0
    fanout = rng.integers(spec.fanout[0], spec.fanout[1] + 1, size=spec.topics)

    old_ids = list(range(n_old))
    rack_of = {b: str(racks[b]) for b in old_ids} if spec.racks else None
    width = int(rfs.max())
    p_total = int(counts.sum())
    replicas = np.full((p_total, width), -1, dtype=np.int32)
    topic_idx = np.repeat(np.arange(spec.topics, dtype=np.int32), counts)
    pnum = np.concatenate([np.arange(c, dtype=np.int32) for c in counts])
    rate = np.empty(p_total)
    row = 0
    for t in range(spec.topics):
        c, rf = int(counts[t]), int(rfs[t])
        start, shift = int(rng.integers(n_old)), int(rng.integers(n_old))
        if rack_of is not None:
            lists = assign_rack_aware(rack_of, c, rf, start_index=start, shift=shift)
            replicas[row : row + c, :rf] = np.asarray(lists, dtype=np.int32)
        else:
            replicas[row : row + c, :rf] = np.asarray(
                assign_rack_unaware(old_ids, c, rf, start_index=start, shift=shift), dtype=np.int32
            )
        rate[row : row + c] = t_w[t] * _zipf_weights(c, spec.key_zipf, rng)
        row += c

    if spec.hot_topics:
        hot_t = np.argsort(-t_w, kind="stable")[: spec.hot_topics]
        retention[hot_t] = min(spec.retention_hours) * 3600.0
        fanout[hot_t] = spec.fanout[1]
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        base = float(rate.sum()) / n_old
        for t in hot_t.tolist():
            rows = np.arange(starts[t], starts[t] + counts[t])
            rate[rows[np.argmax(rate[rows])]] = spec.hot_factor * base
    rf_p = (replicas >= 0).sum(axis=1)
    t_of = topic_idx
    nw_in = rate
    disk = rate * retention[t_of] * rng.uniform(0.7, 1.0, size=p_total)  # segments not yet full / compaction
    consumer_out = rate * fanout[t_of]
    nw_out_leader = consumer_out + rate * (rf_p - 1)
    cpu_leader = 0.7 * nw_in + 0.15 * nw_out_leader
    cpu_follower = 0.15 * nw_in

    leader_load = np.stack([cpu_leader, disk, nw_in, nw_out_leader], axis=1)
    follower_load = np.stack([cpu_follower, disk, nw_in, np.zeros(p_total)], axis=1)

    # Capacity: scaled per broker (heterogeneous) and per resource so that the mean utilisation over all
    # brokers is target_util[r]; then loads and capacities are expressed in the snapshot's units
    # (cpu in percent with 100 for a unit broker, disk in bytes of a 1 TB unit broker, network in bytes/s
    # of a 1 Gbit/s unit broker).
    scale = rng.choice(np.array([0.5, 1.0, 1.0, 1.5, 2.0]), size=n) if spec.heterogeneous else np.ones(n)
    totals = (leader_load + follower_load * (rf_p - 1)[:, None]).sum(axis=0)
    unit_cap = totals / np.asarray(spec.target_util) / scale.sum()  # capacity of a scale-1 broker
    units = np.array([100.0, 1.0e12, 1.25e8, 1.25e8])
    factor = units / unit_cap
    leader_load = leader_load * factor
    follower_load = follower_load * factor
    cap = scale[:, None] * units[None, :]

    alive = np.ones(n, dtype=bool)
    leader = replicas[:, 0].copy()
    chosen_dead: list[int] = (
        [int(x) for x in rng.choice(n_old, size=spec.dead_brokers, replace=False)] if spec.dead_brokers else []
    )
    for b in chosen_dead:
        alive[b] = False
    restarted = [int(b) for b in rng.permutation([x for x in range(n_old) if alive[x]])[: spec.restarted_brokers]]
    away = np.zeros(n, dtype=bool)
    away[list(chosen_dead) + restarted] = True
    # Failover: a partition led by a failed broker is led by its next live replica (Kafka's ISR election).
    for j in np.nonzero(away[leader])[0]:
        nxt = [int(b) for b in replicas[j] if b >= 0 and alive[b] and not away[b]]
        leader[j] = nxt[0] if nxt else -1
    return Snapshot.build(
        broker_ids=ids,
        capacity=cap,
        racks=racks,
        hosts=hosts,
        alive=alive,
        topics=[f"topic-{t:04d}" for t in range(spec.topics)],
        topic_idx=topic_idx,
        partition=pnum,
        replicas=replicas,
        leader=leader,
        leader_load=leader_load,
        follower_load=follower_load,
        name=spec.name,
    )


__all__ = ["CPU", "DISK", "NW_IN", "NW_OUT", "PRESETS", "ClusterSpec", "generate"]
