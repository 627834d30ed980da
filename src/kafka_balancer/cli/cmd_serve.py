"""``kafka-balancer serve``: the long-running balancer (detect anomalies, heal, HTTP API, dashboard)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from kafka_balancer.cli.options import bootstrap, duration, integer, text
from kafka_balancer.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "serve",
        help="run the balancer as a service: continuous sampling, anomaly detection, self-healing, HTTP API",
        description="Samples the cluster continuously, keeps the load model current with the Spark pipeline, "
        "evaluates the goals every window, detects anomalies (dead broker, new brokers, goal violation, disk "
        "above θ, lost preferred leaders), heals those whose type is enabled, and serves the API and dashboard "
        "(http://127.0.0.1:8080/ by default). Settings: --config TOML, overridden by the flags. See docs/serve.md.",
    )
    p.add_argument("--config", type=Path, help="TOML settings file (docs/serve.md)")
    p.add_argument("--bootstrap", type=bootstrap(), help="HOST:PORT of the cluster to balance")
    p.add_argument("--command-config", type=Path, help="client properties (TLS/SASL) for the cluster")
    p.add_argument("--local-cluster", type=Path, metavar="DIR", help="balance the local cluster in DIR")
    p.add_argument("--host", type=text("--host"), help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=integer("--port", minimum=0, maximum=65535), help="HTTP port (default 8080)")
    p.add_argument("--state-dir", type=Path, help="samples, journal and history (default out/serve)")
    p.add_argument("--self-healing", metavar="TYPES",
                   help="broker_failure,new_brokers,goal_violation,disk,leaders or all (default: none)")
    p.add_argument("--grace", type=duration("--grace", allow_zero=True), metavar="DURATION",
                   help="how long a broker must be dead before it counts (2m)")
    p.add_argument("--token", type=text("--token"),
                   help="bearer token for the write endpoints (prefer the config file: flags show in the process list)")
    p.add_argument("--dry-run", action="store_true", help="only propose: never execute")
    p.add_argument("--model", choices=("pipeline", "sizes"), default="pipeline",
                   help="loads from the Spark pipeline (default) or from replica sizes only (no Spark)")
    p.set_defaults(func=run)


def settings(args: argparse.Namespace) -> object:
    from kafka_balancer.files.inputs import check_input_file
    from kafka_balancer.files.outputs import check_output_dir
    from kafka_balancer.serve.config import ServeConfig, check, load_config, parse_self_healing

    # Every path before anything starts: a named pipe is never waited on, a device is not a settings file,
    # and a state folder that is a file fails now rather than at the first write.
    if args.config is not None:
        check_input_file(args.config, "--config", "a TOML settings file (docs/serve.md)")
    if args.command_config is not None:
        check_input_file(args.command_config, "--command-config", "the client.properties file")
    if args.state_dir is not None:
        check_output_dir(args.state_dir, "--state-dir")
    if args.local_cluster is not None:
        from kafka_balancer.localcluster.cluster import open_cluster

        open_cluster(args.local_cluster, "--local-cluster")
    if args.self_healing is not None and not args.self_healing.strip():
        raise InputError("--self-healing is empty", hint="give --self-healing broker_failure,new_brokers,"
                         "goal_violation,disk,leaders or all; leave it out for none")
    cfg = load_config(args.config, ServeConfig())
    over: dict[str, object] = {}
    for name in ("bootstrap", "host", "port", "token"):
        if getattr(args, name) is not None:
            over[name] = getattr(args, name)
    for name in ("command_config", "local_cluster", "state_dir"):
        if getattr(args, name) is not None:
            over[name] = getattr(args, name)
    if args.self_healing is not None:
        over["self_healing"] = parse_self_healing(args.self_healing)
    if args.grace is not None:
        over["grace_s"] = float(args.grace)
    if args.dry_run:
        over["dry_run"] = True
    return check(dataclasses.replace(cfg, **over))  # type: ignore[arg-type]


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.serve.runtime import run_forever

    cfg = settings(args)
    return run_forever(cfg, model_source=args.model, say=lambda m: print(m, file=sys.stderr, flush=True))  # type: ignore[arg-type]
