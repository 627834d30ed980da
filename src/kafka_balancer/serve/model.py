"""The live load model: per-partition loads from the pipeline's latest snapshot, laid over the topology
of the latest sampling round.

The pipeline gives each partition's leader and follower load (docs/snapshot-format.md) from closed
windows, so it lags by a window or more; replica lists, leaders and which brokers are alive change faster
(an execution, a dead broker). The model takes loads from the pipeline and everything else from the last
round, so a finished execution or a dead broker shows at once. A partition the pipeline has not seen
yet (new topic) counts with zero load until it has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kafka_balancer.model.snapshot import NR, RESOURCES, FloatArr, Snapshot
from kafka_balancer.planner.metrics import Metrics, evaluate
from kafka_balancer.serve.observation import TP, Observation


@dataclass(frozen=True)
class PartitionLoads:
    """What the pipeline measured: loads by partition, capacity by broker."""

    leader: dict[TP, FloatArr] = field(default_factory=dict)
    follower: dict[TP, FloatArr] = field(default_factory=dict)
    capacity: dict[int, FloatArr] = field(default_factory=dict)
    built_at: float = 0.0
    windows: int = 0


def loads_from_document(doc: Mapping[str, Any], built_at: float) -> PartitionLoads:
    """From a snapshot document (the pipeline's output)."""
    lead: dict[TP, FloatArr] = {}
    foll: dict[TP, FloatArr] = {}
    for p in doc.get("partitions", []):
        tp = (str(p["topic"]), int(p["partition"]))
        load = p["load"]
        lead[tp] = np.array([float(load["leader"][r]) for r in RESOURCES])
        foll[tp] = np.array([float(load["follower"][r]) for r in RESOURCES])
    cap = {int(b["id"]): np.array([float(b["capacity"][r]) for r in RESOURCES]) for b in doc.get("brokers", [])}
    windows = int((doc.get("extra") or {}).get("windows", 0)) if isinstance(doc.get("extra"), dict) else 0
    return PartitionLoads(lead, foll, cap, built_at, windows)


def live_snapshot(loads: PartitionLoads | None, obs: Observation, known: set[int] | frozenset[int],
                  default_capacity: Mapping[str, float], racks: Mapping[int, str | None],
                  hosts_are_racks: bool = True, removed: frozenset[int] = frozenset()) -> Snapshot:
    """A snapshot of the cluster as the last round saw it, with the pipeline's loads. ``removed``: brokers
    the operator removed (serve/broker_history.py), outside the cluster for every plan: not alive here."""
    ids = sorted(set(known) | obs.brokers())
    default = np.array([float(default_capacity[r]) for r in RESOURCES])
    cap = np.array([(loads.capacity.get(b, default) if loads else default) for b in ids]).reshape(len(ids), NR)
    pos = {b: i for i, b in enumerate(ids)}
    tps = sorted(obs.partitions)
    width = max((len(obs.partitions[tp].replicas) for tp in tps), default=1)
    rep = np.full((len(tps), width), -1, dtype=np.int32)
    lead = np.full(len(tps), -1, dtype=np.int32)
    lload = np.zeros((len(tps), NR))
    fload = np.zeros((len(tps), NR))
    topics: dict[str, int] = {}
    tidx = np.empty(len(tps), dtype=np.int32)
    pnum = np.empty(len(tps), dtype=np.int32)
    for j, tp in enumerate(tps):
        p = obs.partitions[tp]
        tidx[j] = topics.setdefault(tp[0], len(topics))
        pnum[j] = tp[1]
        for k, b in enumerate(p.replicas):
            rep[j, k] = pos[b]
        lead[j] = pos[p.leader] if p.leader in p.replicas else -1
        if loads is not None and tp in loads.leader:
            lload[j] = loads.leader[tp]
            fload[j] = loads.follower[tp]
    rack_list = [racks.get(b) for b in ids]
    snap = Snapshot.build(
        broker_ids=ids, capacity=cap, topics=list(topics), topic_idx=tidx, partition=pnum, replicas=rep,
        leader=lead, leader_load=lload, follower_load=fload, racks=rack_list,
        hosts=rack_list if hosts_are_racks else None,
        alive=np.array([b in obs.alive and b not in removed for b in ids]),
        name="live",
    )
    return snap


def load_view(snap: Snapshot, metrics: Metrics) -> dict[str, Any]:
    """Per broker and resource: load, capacity, utilisation, γ; per resource σ, η, mean, θ and the ε band."""
    from kafka_balancer.model.snapshot import broker_loads

    loads = broker_loads(snap)
    live = [i for i in range(snap.n_brokers) if snap.alive[i]]
    res_out = {}
    for res in RESOURCES:
        m = metrics.resources[res]
        res_out[res] = {"sigma": m.sigma, "eta": metrics.eta, "mean_util": m.mean, "max_gamma": m.max_gamma,
                        "theta": metrics.theta, "band_low": m.mean * (1 - metrics.eps),
                        "band_high": m.mean * (1 + metrics.eps), "over_theta": m.over_theta,
                        "balanced": bool(m.sigma <= metrics.eta + 1e-12 and m.max_gamma <= metrics.eps + 1e-12
                                         and m.over_theta == 0)}
    brokers = []
    gamma_pos = {i: k for k, i in enumerate(live)}
    flat = snap.replicas[snap.replicas >= 0]
    rep_count = np.bincount(flat, minlength=snap.n_brokers)
    lead_count = np.bincount(snap.leader[snap.leader >= 0], minlength=snap.n_brokers)
    util = loads / snap.capacity
    for i in range(snap.n_brokers):
        row: dict[str, Any] = {"id": int(snap.broker_ids[i]), "alive": bool(snap.alive[i]),
                               "rack": snap.rack_names[snap.rack_idx[i]] if snap.rack_idx[i] >= 0 else None,
                               "replicas": int(rep_count[i]), "leaders": int(lead_count[i]),
                               "resources": {}}
        for r, res in enumerate(RESOURCES):
            k = gamma_pos.get(i)
            row["resources"][res] = {
                "load": float(loads[i, r]), "capacity": float(snap.capacity[i, r]),
                "util": float(util[i, r]),
                "gamma": float(metrics.resources[res].gamma[k]) if k is not None else None,
            }
        brokers.append(row)
    return {"theta": metrics.theta, "eps": metrics.eps, "eta": metrics.eta, "n_live": metrics.n_live,
            "balanced": metrics.balanced(), "resources": res_out, "brokers": brokers}


def model_metrics(snap: Snapshot, theta: float, eps: float) -> Metrics:
    return evaluate(snap, theta, eps)


def goal_metrics(snap: Snapshot, theta: float, eps: float, demoted: frozenset[int]) -> Metrics:
    """The metrics the goal detector judges: :func:`model_metrics`, except that on network-out and cpu
    (``DEMOTED_EXEMPT``, what the planner does not hold a demoted broker to) the brokers the operator demoted
    are left out: a demoted broker leads nothing, and no plan may change that. Each such resource has its own
    η (ε over the brokers it is measured on)."""
    from dataclasses import replace

    from kafka_balancer.model.snapshot import broker_loads
    from kafka_balancer.planner.constraints import DEMOTED_EXEMPT
    from kafka_balancer.planner.metrics import resource_metrics

    m = evaluate(snap, theta, eps)
    out = snap.alive & np.isin(snap.broker_ids, np.fromiter(demoted, dtype=np.int64, count=len(demoted)))
    keep = snap.alive & ~out
    if not out.any() or not keep.any():
        return m
    util = broker_loads(snap)[keep] / snap.capacity[keep]
    res = {name: resource_metrics(util[:, r], theta, eps) if r in DEMOTED_EXEMPT else m.resources[name]
           for r, name in enumerate(RESOURCES)}
    return replace(m, resources=res)
