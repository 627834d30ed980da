"""What ``pipeline`` and ``snapshot`` share: the batch options, the Spark options, and the summary."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import orjson

from kafka_balancer.cli.options import duration_text, integer, text
from kafka_balancer.errors import InputError
from kafka_balancer.files.inputs import read_bytes
from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.pipeline.config import PipelineConfig, parse_capacity, parse_duration_ms
from kafka_balancer.validate.samples import check_sample_folder
from kafka_balancer.validate.spark import check_master, check_memory


def _ratio(name: str) -> Any:
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not 0 <= v <= 1:
            raise argparse.ArgumentTypeError(f"{name} must be in [0, 1], got {v}")
        return v

    return parse


def _capacity_text(text: str) -> str:
    """--capacity checked when parsed (the error names the flag); passed on as given. Given empty, it is
    refused (left out, the defaults apply)."""
    if not text.strip():
        raise InputError("--capacity is empty",
                         hint="e.g. --capacity cpu=100,disk=5e11, or leave it out for the defaults")
    try:
        parse_capacity(text)
    except InputError as exc:
        raise InputError(f"--capacity: {exc.message}", hint=exc.hint) from None
    return text


def add_window_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window", type=duration_text("--window", maximum=86_400), default="5m",
                   help="window length (default 5m; e.g. 60s, 1h)")
    p.add_argument("--windows", type=integer("--windows", maximum=100_000), default=6,
                   help="how many windows make the snapshot (default 6)")
    p.add_argument("--cluster", type=text("--cluster"), default=None,
                   help="cluster label to use when the samples hold several")
    p.add_argument("--min-sample-ratio", type=_ratio("--min-sample-ratio"), default=0.5,
                   help="a window counts with at least this share of the rounds seen in it (default 0.5)")
    p.add_argument("--min-valid-windows", type=integer("--min-valid-windows", maximum=100_000), default=None,
                   help="a partition counts with this many valid windows (default: half of --windows)")
    p.add_argument("--min-valid-ratio", type=_ratio("--min-valid-ratio"), default=0.95,
                   help="fail when fewer partitions than this share count (default 0.95)")
    p.add_argument("--capacity", type=_capacity_text, default=None,
                   help="broker capacity for every broker, e.g. cpu=100,disk=5e11,nw_in=1.25e8,nw_out=1.25e8 "
                        "(defaults: cpu 100, disk 1e12 B, network 1.25e8 B/s)")
    p.add_argument("--capacities", default=None,
                   help='JSON file {"default": {...}, "brokers": {"<id>": {"disk": ...}}} of capacities')
    # checked when parsed, so a typo is refused before anything else runs (validate/spark.py; exit 1)
    p.add_argument("--master", type=check_master, default="local[2]", help="Spark master (default local[2])")
    p.add_argument("--driver-memory", type=check_memory, default="1g",
                   help="Spark driver memory (default 1g)")


def _capacity_value(path: str, where: str, key: str, value: object) -> float:
    """One capacity from a --capacities file: a known resource and a finite positive number."""
    if key not in RESOURCES:
        raise InputError(f"--capacities {path}: {where}: unknown resource {key!r}", hint=f"use {', '.join(RESOURCES)}")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InputError(f"--capacities {path}: {where}: {key} is {value!r}",
                         hint="capacities are finite positive numbers in the snapshot's units")
    return float(value)


def config_from_args(args: argparse.Namespace) -> PipelineConfig:
    check_master(args.master)  # Spark settings it cannot start with: one line, before anything starts
    check_memory(args.driver_memory)
    if getattr(args, "samples", None):  # Parquet sample files of the wrong shape, before Spark starts
        check_sample_folder(args.samples)
    if args.windows < 1:
        raise InputError(f"--windows must be at least 1, got {args.windows}", hint="e.g. --windows 6")
    if args.min_valid_windows is not None and not 1 <= args.min_valid_windows <= args.windows:
        raise InputError(f"--min-valid-windows must be between 1 and --windows ({args.windows})",
                         hint="a partition cannot have more valid windows than the snapshot uses")
    capacity, per_broker, _ = capacities_from_args(args)
    return PipelineConfig(
        window_ms=parse_duration_ms(args.window),
        windows=args.windows,
        min_sample_ratio=args.min_sample_ratio,
        min_valid_windows=args.min_valid_windows,
        min_valid_ratio=args.min_valid_ratio,
        cluster=args.cluster,
        capacity=capacity,
        broker_capacity=per_broker,
    )


def capacities_from_args(
    args: argparse.Namespace,
) -> tuple[dict[str, float], dict[int, dict[str, float]], dict[str, Any]]:
    """Capacities by precedence: --capacity, then the --capacities file, then the brokers' own disk
    report (``broker-capacity.json`` the collector wrote next to --samples), then the defaults. Returns
    the capacity of every broker, per-broker overrides and where each value came from."""
    from kafka_balancer.collect.capacity import read_capacity_file, resolve
    from kafka_balancer.pipeline.config import DEFAULT_CAPACITY

    given = {part.split("=", 1)[0].strip() for part in str(args.capacity or "").split(",") if part.strip()}
    parsed = parse_capacity(args.capacity or "")
    flag = {k: parsed[k] for k in given if k in parsed}
    file_default: dict[str, float] = {}
    per_broker: dict[int, dict[str, float]] = {}
    if args.capacities:
        try:
            doc = orjson.loads(read_bytes(args.capacities, "--capacities", "a JSON file of capacities"))
        except orjson.JSONDecodeError as exc:
            raise InputError(f"cannot read --capacities {args.capacities}: {exc}",
                             hint="give a JSON file with 'default' and/or 'brokers'") from None
        if not isinstance(doc, dict):
            raise InputError(f"--capacities {args.capacities} must be a JSON object",
                             hint='e.g. {"default": {"cpu": 100}, "brokers": {"3": {"disk": 2e12}}}')
        default = doc.get("default") or {}
        brokers = doc.get("brokers") or {}
        if not isinstance(default, dict) or not isinstance(brokers, dict):
            raise InputError(f"--capacities {args.capacities}: 'default' and 'brokers' must be objects",
                             hint='e.g. {"default": {"cpu": 100}, "brokers": {"3": {"disk": 2e12}}}')
        for k, v in default.items():
            file_default[k] = _capacity_value(args.capacities, "default", k, v)
        for bid, caps in brokers.items():
            try:
                broker = int(bid)
            except ValueError:
                raise InputError(f"--capacities {args.capacities}: broker id {bid!r} is not an integer",
                                 hint="key 'brokers' by broker id, e.g. \"3\"") from None
            if not isinstance(caps, dict):
                raise InputError(f"--capacities {args.capacities}: broker {bid} must map resources to numbers")
            per_broker[broker] = {k: _capacity_value(args.capacities, f"broker {bid}", k, v) for k, v in caps.items()}
    samples = getattr(args, "samples", None)
    cluster_disk = read_capacity_file(Path(samples)) if samples and Path(samples).is_dir() else {}
    return resolve(DEFAULT_CAPACITY, flag, file_default, per_broker, cluster_disk)


def spark_from_args(args: argparse.Namespace, kafka: bool = False) -> Any:
    """The SparkSession of the command's --master and --driver-memory. With ``kafka`` (streaming from
    ``--from-kafka``), the cluster and its ``--topic`` are checked first: one that cannot be reached fails
    within its timeout, before Spark starts."""
    from kafka_balancer.pipeline.session import connector_jars, get_spark, spark_conf

    if kafka:
        from kafka_balancer.pipeline.streaming import check_kafka_source

        check_kafka_source(args.from_kafka, args.topic)
    jars = connector_jars(required=kafka)
    return get_spark(spark_conf(master=args.master, driver_memory=args.driver_memory, jars=jars))


def summary_lines(report: dict[str, Any]) -> list[str]:
    m = report["cpu_model"]
    w = m["normalised"]
    if m["fitted"]:
        r2 = "n/a" if m["r2"] is None else f"{m['r2']:.4f}"
        fit = (f"cpu model: fitted on {m['observations']} broker-windows: leader in {w[0]:.3f}, leader out "
               f"{w[1]:.3f}, follower in {w[2]:.3f} (rmse {m['rmse']:.3g} % cpu, r2 {r2})")
    else:
        fit = f"cpu model: fixed weights 0.7/0.15/0.15 ({m['reason']})"
    lines = [
        f"cluster {report['cluster']}: {len(report['windows'])} windows, "
        f"{report['valid_partitions']}/{report['partitions']} partitions valid "
        f"({100 * report['valid_ratio']:.1f} %)",
        fit,
    ]
    for b in report["brokers"][:10]:
        lines.append(f"  broker {int(b['broker'])}: {int(b['invalid'])} invalid partitions led, CPU in "
                     f"{int(b['cpu_valid_windows'])}/{len(report['windows'])} windows")
    for t in report["topics"][:10]:
        lines.append(f"  topic {t['topic']}: {int(t['valid'])}/{int(t['partitions'])} partitions valid")
    return lines
