"""``kafka-balancer pipeline``: samples -> snapshot on Spark (batch from a folder, or streaming from Kafka)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kafka_balancer.cli.options import bootstrap, check_output_dir, check_output_file, duration_text, integer, text
from kafka_balancer.collect.capacity import add_to_report, describe_sources
from kafka_balancer.errors import InputError
from kafka_balancer.files.inputs import check_input_dir, check_input_file
from kafka_balancer.files.outputs import distinct_outputs, refuse_overlap
from kafka_balancer.pipeline.cli_common import (
    add_window_options,
    capacities_from_args,
    config_from_args,
    spark_from_args,
    summary_lines,
)
from kafka_balancer.security.option import add_command_config, settings_from_args


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "pipeline", help="turn collector samples into a snapshot with PySpark (batch or streaming)",
        description="Batch: --samples DIR --out snap.json (also writes the window tables as Parquet and a "
                    "completeness report). Streaming: --from-kafka BOOTSTRAP [--topic T] --out-dir DIR "
                    "(a fresh snapshot per window; restartable from --state).",
    )
    add_batch_arguments(p)
    p.add_argument("--from-kafka", type=bootstrap("--from-kafka"), default=None, metavar="BOOTSTRAP",
                   help="stream samples from this cluster")
    p.add_argument("--topic", type=text("--topic"), default="__kafka_balancer_samples",
                   help="samples topic (streaming)")
    p.add_argument("--out-dir", default=None, help="streaming: snapshots and window tables go here "
                   "(default out/pipeline)")
    p.add_argument("--state", default=None, help="streaming: checkpoints and aggregates (default OUT_DIR/state)")
    p.add_argument("--lateness", type=duration_text("--lateness", maximum=7 * 86_400), default="1m",
                   help="streaming: watermark delay (default 1m)")
    p.add_argument("--poll", type=duration_text("--poll", maximum=86_400), default="10s",
                   help="streaming: trigger interval (default 10s)")
    p.add_argument("--max-polls", type=integer("--max-polls", maximum=10**9), default=None,
                   help="streaming: stop after this many polls")
    add_command_config(p)
    p.add_argument("--publish-loads", type=bootstrap("--publish-loads"), default=None, metavar="BOOTSTRAP",
                   help="also publish each snapshot's per-partition loads to __kafka_balancer_partition_loads "
                   "on this cluster (read by the broker-side assignor kafka-balancer)")
    p.set_defaults(func=run)


def add_batch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--samples", default=None, help="folder of samples (*.jsonl and/or parquet/<type>/)")
    p.add_argument("--out", default=None, help="snapshot JSON to write")
    p.add_argument("--tables", default=None, help="window tables folder (default: <out without .json>.windows)")
    p.add_argument("--report", default=None, help="completeness report JSON (default: <out>.report.json)")
    add_window_options(p)


def run(args: argparse.Namespace) -> int:
    settings_from_args(args)  # a bad --command-config fails now, not after the Spark job
    if getattr(args, "publish_loads", None):
        from kafka_balancer.collect.admin import check_bootstrap

        check_bootstrap(args.publish_loads)  # a bad address fails now, not after the Spark job
    if args.from_kafka:
        return run_streaming(args)
    return run_batch_cli(args)


@contextmanager
def progress_lines() -> Iterator[logging.Logger]:
    """Each finished pipeline step as a line on stderr (``pipeline: replica aggregate: 17.1 s``); yields the
    pipeline's logger, for lines of the caller's own."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("pipeline: %(message)s"))
    log = logging.getLogger("kafka_balancer.pipeline")
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False  # printed once, here, whatever the root logger does
    try:
        yield log
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def run_batch_cli(args: argparse.Namespace) -> int:
    from kafka_balancer.pipeline.batch import run_batch

    streaming_only = [f for f, v in (("--out-dir", getattr(args, "out_dir", None)), ("--state", getattr(args, "state",
                      None)), ("--max-polls", getattr(args, "max_polls", None))) if v is not None]
    if streaming_only:
        raise InputError(f"{streaming_only[0]} applies to streaming (--from-kafka) only",
                         hint=f"drop {streaming_only[0]}, or add --from-kafka BOOTSTRAP")
    if not args.samples or not args.out:
        raise InputError("give --samples DIR and --out snap.json (or --from-kafka BOOTSTRAP to stream)",
                         hint="e.g. kafka-balancer pipeline --samples out/samples --out out/snap.json")
    check_input_dir(args.samples, "--samples", "the folder `kafka-balancer collect --out` wrote")
    out = Path(args.out)
    stem = out.with_suffix("") if out.suffix == ".json" else out
    tables = Path(args.tables) if args.tables else stem.with_name(stem.name + ".windows")
    report = Path(args.report) if args.report else stem.with_name(stem.name + ".report.json")
    # Every path before Spark starts: an output that is an input (a sample, the capacities file), two
    # outputs at one path, a folder that cannot be written.
    if args.capacities:
        check_input_file(args.capacities, "--capacities", "a JSON file of capacities")
    inputs = [("--samples", args.samples), ("--capacities", args.capacities)]
    distinct_outputs([("--out", out), ("--tables", tables), ("--report", report)])
    check_output_file(args.out, "--out", inputs=inputs)
    check_output_file(report, "--report", inputs=inputs)
    check_output_dir(tables, "--tables", inputs=inputs)
    refuse_overlap("--out", out, [("--tables", tables)])
    refuse_overlap("--report", report, [("--tables", tables)])
    cfg = config_from_args(args)
    with progress_lines() as log:
        log.info("starting Spark (%s)", args.master)
        spark = spark_from_args(args)
        result = run_batch(spark, args.samples, cfg, out=out, tables_dir=tables, report_path=report)
    result.release()  # everything is written; the stored tables are not needed any more
    for line in summary_lines(result.report):
        print(line)
    _, _, cap_sources = capacities_from_args(args)
    add_to_report(report, cap_sources)
    print(describe_sources(cap_sources))
    print(f"snapshot: {out}  window tables: {tables}  report: {report}")
    _publish(args, out)
    return 0


def _publish(args: argparse.Namespace, snapshot: Path) -> None:
    if getattr(args, "publish_loads", None):
        from kafka_balancer.consumer.load_topic import LOADS_TOPIC, publish_snapshot

        n = publish_snapshot(args.publish_loads, snapshot, settings_from_args(args))
        print(f"published {n} partition loads to {LOADS_TOPIC} on {args.publish_loads}", flush=True)


def run_streaming(args: argparse.Namespace) -> int:
    from kafka_balancer.collect.admin import check_bootstrap
    from kafka_balancer.pipeline import streaming
    from kafka_balancer.pipeline.config import parse_duration_ms
    from kafka_balancer.security.clients import spark_options

    check_bootstrap(args.from_kafka)
    args.out_dir = args.out_dir or "out/pipeline"
    check_output_dir(args.out_dir, "--out-dir")
    security = settings_from_args(args)
    if args.state:
        check_output_dir(args.state, "--state")
    if args.capacities:
        check_input_file(args.capacities, "--capacities", "a JSON file of capacities")
    cfg = config_from_args(args)
    out = Path(args.out_dir)
    state = Path(args.state) if args.state else out / "state"
    spark = spark_from_args(args, kafka=True)
    source = streaming.kafka_source(spark, args.from_kafka, args.topic, options=spark_options(security))
    poll_s = parse_duration_ms(args.poll) / 1000.0
    print(f"streaming {args.topic} from {args.from_kafka}"
          + (f" ({security.describe()})" if security is not None else "")
          + f": snapshots in {out}, state in {state} (Ctrl-C stops)")

    def on_emit(windows: list[int]) -> None:
        print(f"windows {windows}: wrote {out / f'snapshot-{windows[-1]}.json'}", flush=True)
        _publish(args, out / f"snapshot-{windows[-1]}.json")

    streaming.run_forever(spark, source, cfg, state, out, parse_duration_ms(args.lateness), poll_s, on_emit,
                          args.max_polls, say=lambda line: print(f"pipeline: {line}", file=sys.stderr, flush=True))
    return 0
