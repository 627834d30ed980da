"""``kafka-balancer simulate cluster|consumers``: generated clusters and consumer-group experiments."""

from __future__ import annotations

import argparse
import importlib
from dataclasses import replace

from kafka_balancer.cli.options import check_output_file, integer, no_action, seed
from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot_io import write_snapshot
from kafka_balancer.sim.cluster import PRESETS, generate
from kafka_balancer.sim.sizing import cluster_bytes
from kafka_balancer.validate.resources import check_memory
from kafka_balancer.validate.values import INT32_MAX


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("simulate", help="generate clusters, or run consumer-group experiments")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    c = kinds.add_parser(
        "cluster",
        help="generate a realistic cluster snapshot (Kafka's own placement)",
        description=f"Presets: {', '.join(PRESETS)}. Flags override the preset.",
    )
    c.add_argument("--preset", default="racks48", choices=sorted(PRESETS))
    c.add_argument("--seed", type=seed(), default=0, help="random seed, 0..2^32-1 (default 0)")
    c.add_argument("--out", required=True, help="where to write the snapshot JSON ('-' for stdout)")
    for flag, least, what in (
        ("brokers", 1, "brokers"),
        ("topics", 1, "topics"),
        ("partitions", 1, "partitions over all topics"),
        ("racks", 0, "racks (0: no rack set)"),
        ("brokers-per-host", 1, "brokers per simulated host"),
        ("new-brokers", 0, "new, empty brokers added"),
        ("dead-brokers", 0, "brokers that are down"),
        ("restarted-brokers", 0, "restarted brokers whose leaders moved away"),
    ):
        c.add_argument(f"--{flag}", type=integer(f"--{flag}", minimum=least, maximum=INT32_MAX),
                       help=f"{what} (default: the preset's)")
    c.add_argument("--heterogeneous", action="store_true", default=None)
    c.set_defaults(func=run_cluster)
    try:
        consumer_cli = importlib.import_module("kafka_balancer.sim.consumer_cli")
    except ModuleNotFoundError:
        return
    k = kinds.add_parser("consumers", help="consumer-group experiments (seed 000)")
    consumer_cli.add_arguments(k)
    k.set_defaults(func=consumer_cli.run)
    no_action(p, kinds)


def run_cluster(args: argparse.Namespace) -> int:
    spec = PRESETS[args.preset]
    overrides = {
        k: getattr(args, k)
        for k in (
            "brokers",
            "topics",
            "partitions",
            "racks",
            "brokers_per_host",
            "new_brokers",
            "dead_brokers",
            "restarted_brokers",
            "heterogeneous",
        )
        if getattr(args, k) is not None
    }
    for k, v in overrides.items():
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
            raise InputError(f"--{k.replace('_', '-')} must not be negative (got {v})")
    spec = replace(spec, **overrides)
    if spec.brokers < 1:
        raise InputError("--brokers must be at least 1")
    if spec.dead_brokers >= spec.brokers:
        raise InputError("--dead-brokers must leave at least one live broker")
    if spec.restarted_brokers > spec.brokers - spec.dead_brokers:
        raise InputError(f"--restarted-brokers {spec.restarted_brokers} is more than the live brokers "
                         f"({spec.brokers - spec.dead_brokers})", hint="restart at most the brokers that are alive")
    if spec.brokers_per_host < 1:
        raise InputError("--brokers-per-host must be at least 1", hint="e.g. --brokers-per-host 2")
    if spec.topics < 1:
        raise InputError("--topics must be at least 1", hint="e.g. --topics 10")
    if spec.partitions < spec.topics:
        raise InputError(f"--partitions {spec.partitions} is fewer than --topics {spec.topics}",
                         hint="every topic has at least one partition")
    check_output_file(args.out, "--out", allow_stdout=True)
    check_memory(cluster_bytes(spec.brokers + spec.new_brokers, spec.partitions, spec.topics, max(spec.rf)),
                 f"simulate cluster with {spec.brokers + spec.new_brokers} brokers and {spec.partitions} partitions",
                 hint="use smaller --partitions / --brokers / --topics")
    snap = generate(spec, seed=args.seed)
    write_snapshot(snap, args.out)
    if args.out == "-":
        return 0
    print(
        f"wrote {args.out}: {snap.n_brokers} brokers, {snap.n_partitions} partitions, "
        f"{snap.n_replicas} replicas (preset {args.preset}, seed {args.seed})"
    )
    return 0
