"""Many clusters planned in parallel on Spark, the same planner (``kafka_balancer.planner.plan``) for each.

* :func:`plan_fleet`: a DataFrame of snapshots (one JSON document per cluster) -> one row per cluster
  (one cluster per ``applyInPandas`` group): σ before/after (the largest over the four resources), replica
  and leader moves, bytes moved.
* :func:`whatif_sweep`: simulated clusters (generated on the worker from a seed, by a swappable
  ``make_cluster``; :func:`tiny_cluster` for sweeps over thousands; ``mapInPandas``, one cluster at a
  time) planned for every (θ, ε) of a grid, then run through ``steps`` rounds of load drift (each
  partition's load multiplied by a log-normal factor) with a re-plan after each. Per (cluster, θ, ε):
  moves per drift step (the *thrashing* of seed 001 §3.2 when thresholds are low) and how often the
  re-planned cluster still misses a reference goal (θ 0.8, ε 0.1 by default; the *sluggishness* when
  thresholds are high).

Example::

    >>> table = whatif_sweep(spark, clusters=8, thetas=[0.7, 0.9], epss=[0.05, 0.3])   # doctest: +SKIP
    >>> table.groupby(["theta", "eps"])["drift_moves"].mean()                          # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import orjson
import pandas as pd
from pyspark.sql import DataFrame, SparkSession

from kafka_balancer.model.snapshot import RESOURCES, Snapshot

FLEET_SCHEMA = (
    "cluster string, brokers int, partitions int, theta double, eps double, "
    "sigma_before double, sigma_after double, max_util_before double, max_util_after double, "
    "balanced_before boolean, balanced_after boolean, replica_moves int, leader_moves int, "
    "moved_bytes double, seconds double, error string"
)
SWEEP_SCHEMA = (
    "cluster_id long, brokers int, partitions int, theta double, eps double, "
    "sigma_before double, sigma_after double, replica_moves int, leader_moves int, moved_bytes double, "
    "drift_moves double, drift_replica_moves double, drift_bytes double, drift_sigma double, "
    "drift_max_util double, ref_miss double"
)


def _sigma(metrics: Any) -> float:
    return float(max(metrics.resources[r].sigma for r in RESOURCES))


def _max_util(metrics: Any) -> float:
    return float(max(metrics.resources[r].max_util for r in RESOURCES))


def plan_one(snap: Snapshot, theta: float, eps: float, time_limit: float = 60.0) -> dict[str, Any]:
    """One cluster through the planner: the fleet table's row (without the cluster label)."""
    from kafka_balancer.planner import plan

    res = plan(snap, theta, eps, time_limit=time_limit)
    return {
        "brokers": snap.n_brokers,
        "partitions": snap.n_partitions,
        "theta": theta,
        "eps": eps,
        "sigma_before": _sigma(res.before),
        "sigma_after": _sigma(res.after),
        "max_util_before": _max_util(res.before),
        "max_util_after": _max_util(res.after),
        "balanced_before": bool(res.before.balanced()),
        "balanced_after": bool(res.after.balanced()),
        "replica_moves": int(res.replica_moves),
        "leader_moves": int(res.leader_moves),
        "moved_bytes": float(res.moved_bytes),
        "seconds": float(res.seconds),
    }


def _plan_snapshot_group(theta: float, eps: float, time_limit: float, pdf: pd.DataFrame) -> pd.DataFrame:
    from kafka_balancer.errors import BalancerError
    from kafka_balancer.model.snapshot_io import snapshot_from_dict

    rows = []
    for cluster, doc in zip(pdf["cluster"], pdf["snapshot"], strict=True):
        try:
            snap = snapshot_from_dict(orjson.loads(doc), source=str(cluster))
            rows.append({"cluster": cluster, **plan_one(snap, theta, eps, time_limit), "error": None})
        except BalancerError as exc:  # one bad snapshot is reported in its row, not fatal for the fleet
            rows.append({"cluster": cluster, "theta": theta, "eps": eps, "error": exc.message})
    return pd.DataFrame(rows, columns=[f.split()[0] for f in FLEET_SCHEMA.split(", ")])


def plan_fleet(snapshots: DataFrame, theta: float = 0.8, eps: float = 0.1, time_limit: float = 60.0) -> DataFrame:
    """``snapshots``: columns ``cluster`` (label) and ``snapshot`` (the JSON text)."""
    def plan_group(pdf: pd.DataFrame) -> pd.DataFrame:
        # a function, not a functools.partial: PySpark reads the body's type hints and warns on a partial
        return _plan_snapshot_group(theta, eps, time_limit, pdf)

    return snapshots.groupBy("cluster").applyInPandas(plan_group, schema=FLEET_SCHEMA)


# --- what-if sweeps -------------------------------------------------------------------------------

ClusterMaker = Callable[[int], Snapshot]


def default_cluster(seed: int) -> Snapshot:
    """A small cluster drawn from the simulator (6..12 brokers, 60..240 partitions, Kafka's placement)."""
    from kafka_balancer.sim.cluster import ClusterSpec, generate

    rng = np.random.default_rng(seed)
    brokers = int(rng.integers(6, 13))
    spec = ClusterSpec(
        brokers=brokers, brokers_per_host=2, racks=int(rng.choice([0, 3])), topics=int(rng.integers(6, 16)),
        partitions=int(rng.integers(60, 241)), key_zipf=float(rng.uniform(0.4, 1.0)),
        target_util=(float(rng.uniform(0.3, 0.6)), float(rng.uniform(0.4, 0.7)),
                     float(rng.uniform(0.3, 0.6)), float(rng.uniform(0.3, 0.6))),
        name=f"sim-{seed}",
    )
    return generate(spec, seed=seed)


def tiny_cluster(seed: int) -> Snapshot:
    """A tiny cluster (4..8 brokers, 16..64 partitions over 3..8 topics, one broker per host, no racks or 3),
    for sweeps over thousands of clusters: the planner takes tens of milliseconds on it."""
    from kafka_balancer.sim.cluster import ClusterSpec, generate

    rng = np.random.default_rng(seed)
    spec = ClusterSpec(
        brokers=int(rng.integers(4, 9)), brokers_per_host=1, racks=int(rng.choice([0, 3])),
        topics=int(rng.integers(3, 9)), partitions=int(rng.integers(16, 65)), key_zipf=float(rng.uniform(0.4, 1.0)),
        target_util=(float(rng.uniform(0.3, 0.6)), float(rng.uniform(0.4, 0.7)),
                     float(rng.uniform(0.3, 0.6)), float(rng.uniform(0.3, 0.6))),
        name=f"tiny-{seed}",
    )
    return generate(spec, seed=seed)


CLUSTER_MAKERS: dict[str, ClusterMaker] = {"tiny": tiny_cluster, "small": default_cluster}


def drift(snap: Snapshot, noise: float, rng: np.random.Generator) -> Snapshot:
    """Every partition's load times a log-normal factor (median 1); the assignment is unchanged."""
    f = rng.lognormal(0.0, noise, size=snap.n_partitions)[:, None]
    return replace(snap, leader_load=snap.leader_load * f, follower_load=snap.follower_load * f)


@dataclass(frozen=True)
class SweepSpec:
    thetas: tuple[float, ...]
    epss: tuple[float, ...]
    steps: int = 3
    noise: float = 0.15
    ref_theta: float = 0.8
    ref_eps: float = 0.1
    time_limit: float = 1.0  # per plan; small clusters plan in ~20 ms, an unreachable goal stops here


def sweep_cluster(cluster_id: int, snap: Snapshot, spec: SweepSpec) -> list[dict[str, Any]]:
    """Every (θ, ε) of the grid on one cluster: an initial plan, then ``steps`` rounds of drift + re-plan."""
    from kafka_balancer.planner import plan
    from kafka_balancer.planner.metrics import evaluate

    rows = []
    for theta in spec.thetas:
        for eps in spec.epss:
            rng = np.random.default_rng(cluster_id * 7919 + 17)  # same drift for every (θ, ε)
            first = plan(snap, theta, eps, time_limit=spec.time_limit)
            cur = first.after_snapshot
            moves, rmoves, moved, sig, util, miss = [], [], [], [], [], []
            for _ in range(spec.steps):
                cur = drift(cur, spec.noise, rng)
                res = plan(cur, theta, eps, time_limit=spec.time_limit)
                cur = res.after_snapshot
                moves.append(res.replica_moves + res.leader_moves)
                rmoves.append(res.replica_moves)
                moved.append(res.moved_bytes)
                sig.append(_sigma(res.after))
                util.append(_max_util(res.after))
                miss.append(0.0 if evaluate(cur, spec.ref_theta, spec.ref_eps).balanced() else 1.0)
            rows.append({
                "cluster_id": cluster_id, "brokers": snap.n_brokers, "partitions": snap.n_partitions,
                "theta": theta, "eps": eps,
                "sigma_before": _sigma(first.before), "sigma_after": _sigma(first.after),
                "replica_moves": int(first.replica_moves), "leader_moves": int(first.leader_moves),
                "moved_bytes": float(first.moved_bytes),
                "drift_moves": float(np.mean(moves)), "drift_replica_moves": float(np.mean(rmoves)),
                "drift_bytes": float(np.mean(moved)), "drift_sigma": float(np.mean(sig)),
                "drift_max_util": float(np.mean(util)), "ref_miss": float(np.mean(miss)),
            })
    return rows


def _sweep_partition(spec: SweepSpec, make_cluster: ClusterMaker, batches: Iterator[pd.DataFrame]
                     ) -> Iterator[pd.DataFrame]:
    """``mapInPandas`` body: every cluster id of the Spark partition, one cluster at a time."""
    cols = [f.split()[0] for f in SWEEP_SCHEMA.split(", ")]
    for pdf in batches:
        for cid in pdf["cluster_id"].tolist():
            yield pd.DataFrame(sweep_cluster(int(cid), make_cluster(int(cid)), spec), columns=cols)


def whatif_sweep(
    spark: SparkSession,
    clusters: int,
    thetas: Sequence[float],
    epss: Sequence[float],
    steps: int = 3,
    noise: float = 0.15,
    seed: int = 0,
    make_cluster: ClusterMaker = tiny_cluster,
    chunks: int = 1,
    progress: Callable[[int], None] | None = None,
    time_limit: float = 0.5,
    parallelism: int | None = None,
) -> pd.DataFrame:
    """One row per (cluster, θ, ε); clusters are seeds ``seed .. seed + clusters - 1``.

    Each chunk of cluster ids is one Spark job: ``mapInPandas`` over a range split into ``parallelism``
    partitions (default: four per core, so that slow clusters even out), each partition planning its
    clusters one after the other. There is no shuffle, so adaptive execution cannot merge the tiny input
    into one task. ``progress`` is called with the number of clusters done after each chunk."""
    spec = SweepSpec(tuple(thetas), tuple(epss), steps, noise, time_limit=time_limit)
    fn = partial(_sweep_partition, spec, make_cluster)
    slots = parallelism or 4 * spark.sparkContext.defaultParallelism
    parts: list[pd.DataFrame] = []
    for lo, hi in _chunks(seed, seed + clusters, chunks):
        ids = spark.range(lo, hi, numPartitions=max(1, min(hi - lo, slots))).withColumnRenamed("id", "cluster_id")
        parts.append(ids.mapInPandas(fn, schema=SWEEP_SCHEMA).toPandas())
        if progress is not None:
            progress(hi - lo)
    return pd.concat(parts, ignore_index=True).sort_values(["cluster_id", "theta", "eps"]).reset_index(drop=True)


def _chunks(lo: int, hi: int, n: int) -> Iterator[tuple[int, int]]:
    edges = np.linspace(lo, hi, max(1, n) + 1).astype(int)
    for a, b in itertools.pairwise(edges.tolist()):
        if b > a:
            yield int(a), int(b)


def sweep_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean over clusters per (θ, ε)."""
    cols = ["sigma_after", "replica_moves", "leader_moves", "moved_bytes", "drift_moves", "drift_replica_moves",
            "drift_bytes", "drift_sigma", "drift_max_util", "ref_miss"]
    return table.groupby(["theta", "eps"])[cols].mean().reset_index()


def plot_sweep(summary: pd.DataFrame, path: str) -> None:
    """Two panels over ε, one line per θ: moves per drift step (thrash) and how often the re-planned
    cluster misses the reference goal (sluggish)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for theta, grp in summary.groupby("theta"):
        g = grp.sort_values("eps")
        axes[0].plot(g["eps"], g["drift_moves"], marker="o", label=f"θ = {theta:g}")
        axes[1].plot(g["eps"], g["drift_bytes"] / 1e9, marker="o", label=f"θ = {theta:g}")
        axes[2].plot(g["eps"], 100 * g["ref_miss"], marker="o", label=f"θ = {theta:g}")
    axes[0].set_title("thrash: moves per drift step (replica + leader)")
    axes[1].set_title("bytes moved per drift step (GB)")
    axes[2].set_title("sluggish: % of steps missing θ=0.8, ε=0.1 after re-plan")
    ticks = sorted(summary["eps"].unique())
    for ax in axes:
        ax.set_xlabel("ε")
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks])
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle("What-if: θ × ε over simulated clusters with load drift (seed 001 §3.2)")
    fig.tight_layout()
    from kafka_balancer.report.plots import save_figure

    save_figure(fig, path, "--out")
    plt.close(fig)
