"""``kafka-balancer local-cluster up|down|status|kill-broker ID|start-broker ID``: a real local Kafka."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kafka_balancer.cli.options import check_output_dir, integer, timeout

ACTIONS = ("up", "down", "status", "kill-broker", "start-broker")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "local-cluster",
        help="start/stop a real local Apache Kafka 4.x (KRaft) cluster on 127.0.0.1",
        description="A real Kafka cluster on 127.0.0.1 from the jars `setup-jvm` fetched: N KRaft nodes "
        "(the first --controllers are combined broker+controller nodes), broker.rack = simulated host, a "
        "Prometheus JMX exporter per broker. Pids, ports and logs live in --state-dir.",
    )
    p.add_argument("action", nargs="?", choices=ACTIONS, help=f"one of {', '.join(ACTIONS)}")
    p.add_argument("broker_id", nargs="?", type=integer("broker id", minimum=0, maximum=2**31 - 1),
                   help="broker id for kill-broker / start-broker")
    p.add_argument("--state-dir", type=Path, default=Path("out/local-cluster"),
                   help="where pids, ports, configs, data and logs live (default: out/local-cluster)")
    p.add_argument("--brokers", type=integer("--brokers", maximum=64), default=6, help="number of brokers (default 6)")
    p.add_argument("--controllers", type=integer("--controllers", maximum=64), default=3,
                   help="how many of the brokers are also KRaft controllers (default 3)")
    p.add_argument("--brokers-per-host", type=integer("--brokers-per-host", maximum=64), default=2,
                   help="brokers per simulated host; broker.rack = host label (default 2)")
    p.add_argument("--base-port", type=integer("--base-port", minimum=1024, maximum=65535), default=19092,
                   help="broker listeners at BASE.., metrics at BASE+100.., controllers at BASE+200.. "
                   "(default 19092)")
    p.add_argument("--heap-mb", type=integer("--heap-mb", minimum=128, maximum=1_048_576), default=320,
                   help="JVM heap per node in MB (default 320)")
    p.add_argument("--security", choices=("plaintext", "ssl", "sasl_ssl"), default="plaintext",
                   help="up: plaintext (default); ssl (mutual TLS, ACLs on) or sasl_ssl (SCRAM over TLS, ACLs on): "
                   "writes admin.properties and reader.properties for --command-config (docs/security.md)")
    p.add_argument("--assignor", action="store_true",
                   help="up: run our server-side consumer assignor: its jar on the brokers' classpath and "
                   "group.consumer.assignors=uniform,range,<ours> (clients pick it with "
                   "group.remote.assignor=kafka-balancer)")
    p.add_argument("--fresh", action="store_true", help="up: wipe an existing cluster in --state-dir first")
    p.add_argument("--wipe", action="store_true", help="down: also delete the state dir (data and logs)")
    p.add_argument("--timeout", type=timeout(), default=180.0,
                   help="seconds to wait for readiness (default 180)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.errors import InputError
    from kafka_balancer.localcluster.cluster import LocalCluster, open_cluster
    from kafka_balancer.localcluster.spec import ClusterSpec

    def say(msg: str) -> None:
        print(msg, file=sys.stderr)

    if args.action is None:
        raise InputError("local-cluster needs an action: one of " + ", ".join(ACTIONS),
                         hint="e.g. kafka-balancer local-cluster up (see kafka-balancer local-cluster --help)")
    if args.action not in ("kill-broker", "start-broker") and args.broker_id is not None:
        raise InputError(f"local-cluster {args.action} takes no broker id (got {args.broker_id})",
                         hint="only kill-broker and start-broker take one")
    if args.action in ("kill-broker", "start-broker") and args.broker_id is None:
        raise InputError(f"{args.action} needs a broker id", hint=f"e.g. local-cluster {args.action} 3")
    if args.action == "up":
        check_output_dir(args.state_dir, "--state-dir")
        spec = ClusterSpec(brokers=args.brokers, controllers=args.controllers,
                           brokers_per_host=args.brokers_per_host, heap_mb=args.heap_mb,
                           security=args.security)
        if args.assignor:
            from kafka_balancer.localcluster.assignor import with_assignor

            spec = with_assignor(spec)
        if args.base_port is not None:
            from kafka_balancer.localcluster.spec import ports_from_base

            ports_from_base(spec, args.base_port)  # raises on an out-of-range --base-port
        spec.validate()  # also when --state-dir holds a cluster already: bad flags are never silently ignored
        from kafka_balancer.validate.resources import check_memory

        # a node's JVM takes its heap plus about 200 MB of metaspace, threads and direct buffers
        check_memory(args.brokers * (args.heap_mb + 200) * 2**20,
                     f"local-cluster up with {args.brokers} brokers of --heap-mb {args.heap_mb}",
                     hint="use fewer --brokers or a smaller --heap-mb")
        cluster = LocalCluster(args.state_dir, spec, base_port=args.base_port, log=say)
        if args.assignor and not args.fresh and cluster.exists:
            from kafka_balancer.localcluster.assignor import uses_plugin

            if not uses_plugin(cluster.spec):
                raise InputError(f"the cluster in {args.state_dir} was created without --assignor",
                                 hint="add --fresh to recreate it with the assignor (its data is wiped)")
        secs = cluster.up(fresh=args.fresh, timeout_s=args.timeout)
        say(f"local cluster ready in {secs:.1f} s: {len(cluster.nodes)} brokers")
        if cluster.secured:
            say(f"{cluster.spec.security}: client settings in {cluster.client_properties('admin')} (admin) and "
                f"{cluster.client_properties('reader')} (read-only); pass one with --command-config")
        print(cluster.bootstrap)
        return 0
    if args.state_dir.exists():
        from kafka_balancer.files.inputs import check_input_dir

        check_input_dir(args.state_dir, "--state-dir", "the folder `local-cluster up` used")
    cluster = open_cluster(args.state_dir)
    cluster._log = say
    if args.action == "down":
        stopped = cluster.down(wipe=args.wipe)
        say(f"stopped {len(stopped)} node(s)" + (f": {stopped}" if stopped else " (none was running)"))
    elif args.action == "status":
        print(f"cluster {cluster.cluster_id} in {cluster.state_dir}")
        print(f"bootstrap {cluster.bootstrap}")
        print(f"{'id':>3} {'roles':<18} {'rack':<8} {'broker':>6} {'metrics':>7} {'ctrl':>6} {'pid':>8}"
              "  state")
        for st in cluster.status():
            n = st.node
            print(f"{n.node_id:>3} {n.roles:<18} {n.rack:<8} {n.broker_port:>6} {n.metrics_port:>7} "
                  f"{n.controller_port or '-':>6} {st.pid or '-':>8}  "
                  f"{'running' if st.running else 'stopped'}")
    elif args.action == "kill-broker":
        cluster.kill_broker(args.broker_id)
    elif args.action == "start-broker":
        secs = cluster.start_broker(args.broker_id, timeout_s=args.timeout)
        say(f"broker {args.broker_id} back in {secs:.1f} s")
    return 0
