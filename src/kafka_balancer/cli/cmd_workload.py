"""``kafka-balancer workload``: create topics and run a skewed produce/consume workload on a live cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from kafka_balancer.cli.options import bootstrap, duration, integer, number, seed, timeout
from kafka_balancer.security.option import add_command_config, settings_from_args


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "workload",
        help="skewed traffic on a live cluster: hot topics, hot keys, mixed sizes, consumer groups",
        description="Creates five topics (Kafka places them), writes a backlog, produces at seeded skewed "
        "rates for --duration while three consumer groups read, then waits for the groups to catch up and "
        "reports messages produced and consumed.",
    )
    p.add_argument("--bootstrap", type=bootstrap(), help="host:port (default: the --local-cluster's)")
    p.add_argument("--local-cluster", type=Path, metavar="STATE_DIR", help="a `local-cluster` state dir")
    p.add_argument("--duration", type=duration("--duration", maximum=7 * 86_400), default=60.0,
                   help="timed production, e.g. 90s or 2m (default 60s)")
    p.add_argument("--scale", type=number("--scale", maximum=1000.0), default=1.0,
                   help="multiply every rate and backlog (default 1)")
    p.add_argument("--replication", type=integer("--replication", maximum=32767), default=3,
                   help="cap on topics' replication factor (default 3)")
    p.add_argument("--seed", type=seed(), default=1, help="random seed (keys, sizes) (default 1)")
    p.add_argument("--drain-timeout", type=timeout("--drain-timeout", allow_zero=True), default=60.0,
                   help="seconds to wait for consumers to catch up at the end (default 60)")
    p.add_argument("--timeout", type=timeout(), default=15.0,
                   help="seconds to wait for the cluster (default 15)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_command_config(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.errors import InputError
    from kafka_balancer.sim.workload import skewed_workload
    from kafka_balancer.sim.workload_run import WorkloadRunner

    bootstrap, lc = args.bootstrap, None
    if args.local_cluster is not None:
        from kafka_balancer.localcluster.cluster import open_cluster

        lc = open_cluster(args.local_cluster, "--local-cluster")
        bootstrap = bootstrap or lc.bootstrap
    if not bootstrap:
        raise InputError("workload needs --bootstrap (or --local-cluster STATE_DIR)")
    security = settings_from_args(args, lc)
    duration_s = args.duration
    spec = skewed_workload(scale=args.scale, replication=args.replication)
    print(f"workload: {len(spec.topics)} topics, ~{spec.bytes_per_s() / 1e3:.0f} kB/s for {duration_s:g} s, "
          f"seed {args.seed}", file=sys.stderr)
    res = WorkloadRunner(bootstrap, spec, seed=args.seed, duration_s=duration_s,
                         drain_timeout_s=args.drain_timeout, connect_timeout_s=args.timeout,
                         security=security).run()
    if args.json:
        sys.stdout.write(orjson.dumps(res.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        total = sum(res.produced.values())
        print(f"produced {total} messages ({res.produced_bytes / 1e6:.1f} MB, {res.failed} failed) "
              f"in {res.elapsed_s:.1f} s")
        for t, n in res.produced.items():
            print(f"  {t}: {n}")
        for g, by_topic in res.consumed.items():
            print(f"consumed by {g}: {sum(by_topic.values())} "
                  + ", ".join(f"{t}={n}" for t, n in sorted(by_topic.items())))
        if not res.drained:
            print("note: consumers had not caught up when the drain timeout ended")
    return 0 if res.failed == 0 else 1
