"""``kafka-balancer collect``: sample a live cluster into sample files (docs/samples-format.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kafka_balancer.cli.options import bootstrap, check_output_dir, duration, integer, text, timeout
from kafka_balancer.security.option import add_command_config, settings_from_args
from kafka_balancer.validate.values import http_url, parse_http_url, parse_id_map


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "collect",
        help="sample a live cluster every interval into sample files (and optionally a topic)",
        description="Every --interval: brokers/racks/liveness, replicas/leaders/ISR, replica sizes "
        "(describe_log_dirs), log start/end offsets, consumer-group committed offsets and each broker's "
        "JMX exporter (process CPU, BytesIn/BytesOut/MessagesIn per topic). See docs/samples-format.md.",
    )
    p.add_argument("--bootstrap", type=bootstrap(), help="host:port of the cluster (default: the --local-cluster's)")
    p.add_argument("--local-cluster", type=Path, metavar="STATE_DIR",
                   help="take bootstrap, metrics endpoints and hosts from a `local-cluster` state dir")
    p.add_argument("--interval", type=duration("--interval", maximum=86_400), default=10.0,
                   help="time between rounds, e.g. 10s (default 10s)")
    p.add_argument("--rounds", type=integer("--rounds", maximum=10**9), help="stop after this many rounds")
    p.add_argument("--duration", type=duration("--duration"), help="stop after this long, e.g. 2m")
    p.add_argument("--out", type=Path, required=True, help="directory for the sample files")
    p.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl",
                   help="jsonl: DIR/samples-*.jsonl, one line per record, written every round (default); "
                   "parquet: DIR/parquet/<type>/*.parquet, written every 10 rounds and when collect stops, "
                   "which the pipeline reads several times faster (docs/pipeline.md)")
    p.add_argument("--cluster", type=text("--cluster"), default="local",
                   help="cluster label in the records (default local)")
    p.add_argument("--metrics", type=lambda s: parse_id_map(s, "--metrics", value=http_url("--metrics")), default={},
                   help="broker JMX exporter endpoints: 1=http://host:port/metrics,2=...")
    p.add_argument("--hosts", type=lambda s: parse_id_map(s, "--hosts"), default={},
                   help="physical host per broker: 1=hostA,2=hostA,3=hostB (default: advertised host)")
    p.add_argument("--topic", nargs="?", type=text("--topic"), const="__kafka_balancer_samples", default=None,
                   help="also produce records to this topic (default name __kafka_balancer_samples)")
    p.add_argument("--include-internal", action="store_true", help="also sample topics starting with __")
    p.add_argument("--timeout", type=timeout(), default=15.0,
                   help="seconds to wait for the cluster (default 15)")
    p.add_argument("--prometheus", metavar="URL", type=lambda s: parse_http_url(s, "--prometheus"),
                   help="read the metrics history from this Prometheus server instead of scraping the brokers "
                   "(with --since; --interval is then the step between rounds); docs/prometheus.md")
    p.add_argument("--since", type=duration("--since"), help="with --prometheus: how much history to read, e.g. 6h")
    p.add_argument("--prometheus-mapping", type=Path, metavar="FILE",
                   help="JSON file overriding the default metric-name mapping (docs/prometheus.md)")
    add_command_config(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.collect.collector import CollectOptions, collect
    from kafka_balancer.errors import InputError

    bootstrap, metrics, hosts = args.bootstrap, dict(args.metrics), dict(args.hosts)
    lc = None
    if args.local_cluster is not None:
        from kafka_balancer.localcluster.cluster import open_cluster

        lc = open_cluster(args.local_cluster, "--local-cluster")
        bootstrap = bootstrap or lc.bootstrap
        metrics = metrics or lc.metrics_urls()
        hosts = hosts or lc.hosts()
    if not bootstrap:
        raise InputError("collect needs --bootstrap (or --local-cluster STATE_DIR)")
    security = settings_from_args(args, lc)
    if args.prometheus or args.since or args.prometheus_mapping:
        return _run_prometheus(args, bootstrap, metrics, hosts, security)
    interval_s, duration_s = args.interval, args.duration
    check_output_dir(args.out, "--out")
    if not metrics:
        print("note: no --metrics endpoints: cpu_seconds and topic byte counters will be null", file=sys.stderr)
    opt = CollectOptions(
        bootstrap=bootstrap, out_dir=args.out, interval_s=interval_s, rounds=args.rounds,
        duration_s=duration_s, cluster=args.cluster,
        metrics_urls=metrics, hosts=hosts, topic=args.topic, include_internal=args.include_internal,
        timeout_s=args.timeout, file_format=args.format, security=security,
    )
    res = collect(opt)
    print(f"{res.rounds} rounds, {res.records} records in {len(res.files)} file(s) under {args.out}")
    return 0


def _run_prometheus(args: argparse.Namespace, bootstrap: str, metrics: dict[int, str], hosts: dict[int, str],
                    security: Any) -> int:
    """``collect --prometheus``: history from Prometheus; the Admin API part uses ``--command-config``."""
    import time

    from kafka_balancer.collect.prometheus.history import HistoryOptions, collect_history
    from kafka_balancer.errors import InputError

    if not args.prometheus:
        raise InputError("--since and --prometheus-mapping need --prometheus URL",
                         hint="e.g. collect --prometheus http://127.0.0.1:9090 --since 6h --bootstrap HOST:PORT")
    if not args.since:
        raise InputError("--prometheus needs --since, the span of history to read", hint="e.g. --since 6h")
    if args.prometheus_mapping is not None:
        from kafka_balancer.files.inputs import check_input_file

        check_input_file(args.prometheus_mapping, "--prometheus-mapping", "a JSON file of metric names")
    if args.rounds or args.duration or args.topic:
        raise InputError("--rounds, --duration and --topic are for live collection, not with --prometheus",
                         hint="the span is --since; --interval is the step between rounds")
    check_output_dir(args.out, "--out")
    step_ms = round(args.interval * 1000)
    end_ms = int(time.time() * 1000)
    res = collect_history(HistoryOptions(
        prometheus_url=args.prometheus, bootstrap=bootstrap, out_dir=args.out,
        start_ms=end_ms - round(args.since * 1000), end_ms=end_ms, step_ms=step_ms, cluster=args.cluster,
        metrics_urls=metrics, hosts=hosts, mapping_path=args.prometheus_mapping,
        include_internal=args.include_internal, timeout_s=args.timeout, file_format=args.format,
        security=security))
    print(f"{res.rounds} rounds, {res.records} records in {len(res.files)} file(s) under {args.out} "
          f"(from {args.prometheus}: {res.requests} requests, {res.bytes_read / 1e6:.1f} MB)")
    return 0
