"""``kafka-balancer simulate consumers``: seed 000's experiment in the consumer-group simulator.

The lead's ``cmd_simulate`` calls :func:`add_arguments` and :func:`run`; the module also runs alone:
``python -m kafka_balancer.sim.consumer_cli --out out/sim-consumers``.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import orjson
from tqdm import tqdm

from kafka_balancer.cli.options import duration, int_list, integer, number, seed
from kafka_balancer.errors import InputError
from kafka_balancer.sim.consumer.experiment import VARIANTS, GridSpec, compare, run_grid
from kafka_balancer.sim.sizing import consumers_bytes
from kafka_balancer.validate.resources import check_memory

COLUMNS = [("killed", "killed", "{:.0f}"), ("variant", "assignor/protocol", "{}"),
           ("throughput", "thr msg/s", "{:.0f}"), ("latency_p50_s", "p50 s", "{:.3f}"),
           ("latency_p99_s", "p99 s", "{:.2f}"), ("max_lag", "max lag", "{:.0f}"),
           ("downtime_per_rebalance_s", "downtime/rebal s", "{:.2f}"), ("recovery_s", "recovery s", "{:.2f}"),
           ("keeps_up", "keeps up", "{:.2f}"), ("max_member_util", "max util", "{:.2f}")]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Deterministic discrete-event simulation of one consumer group: 6 consumers, then "
                     "1..5 killed, per assignor; prints a table, writes JSON, Markdown and a plot.")
    d = GridSpec()
    p.add_argument("--consumers", type=integer("--consumers", maximum=100_000), default=d.consumers,
                   help=f"consumers in the group (default {d.consumers})")
    p.add_argument("--partitions", type=integer("--partitions", maximum=1_000_000), default=d.partitions,
                   help=f"partitions consumed (default {d.partitions})")
    p.add_argument("--skew", type=number("--skew", inclusive=True, maximum=10.0), default=d.skew,
                   help="Zipf exponent of partition rates")
    p.add_argument("--utilisation", type=number("--utilisation", maximum=100.0), default=d.utilisation,
                   help="total arrival rate / total capacity of all consumers")
    p.add_argument("--capacity", type=number("--capacity", minimum=1e-3, inclusive=True, maximum=1e9),
                   default=d.capacity, help="messages/s per consumer (0.001 to 1e9)")
    p.add_argument("--kills", type=int_list("--kills", minimum=0), default=(0, 1, 2, 3, 4, 5),
                   help="comma-separated numbers of consumers to kill")
    p.add_argument("--strategies", default=",".join(f"{a}/{p}" for a, p in VARIANTS),
                   help="comma-separated assignor/protocol pairs")
    p.add_argument("--kill-sets", type=integer("--kill-sets", maximum=1000), default=d.kill_sets,
                   help="random victim sets averaged per cell")
    p.add_argument("--heartbeat-ms", type=integer("--heartbeat-ms", maximum=3_600_000), default=d.heartbeat_ms,
                   help=f"heartbeat.interval.ms (default {d.heartbeat_ms})")
    p.add_argument("--session-timeout-ms", type=integer("--session-timeout-ms", maximum=86_400_000),
                   default=d.session_timeout_ms, help=f"session.timeout.ms (default {d.session_timeout_ms})")
    p.add_argument("--duration-s", type=duration("--duration-s"), default=d.duration_ms / 1000,
                   help=f"simulated seconds (default {d.duration_ms / 1000:g})")
    p.add_argument("--kill-at-s", type=duration("--kill-at-s", allow_zero=True), default=d.kill_at_ms / 1000,
                   help=f"when the consumers are killed, in simulated seconds (default {d.kill_at_ms / 1000:g})")
    p.add_argument("--seed", type=seed(), default=0, help="random seed (default 0)")
    p.add_argument("--out", default="out/sim-consumers", help="directory for results.json, table.md, plot")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")


def _check_numbers(args: argparse.Namespace) -> None:
    """Counts and times the simulation divides by or loops over: refused with the flag's name."""
    for flag, value, least in (("--consumers", args.consumers, 1), ("--partitions", args.partitions, 1),
                               ("--kill-sets", args.kill_sets, 1), ("--heartbeat-ms", args.heartbeat_ms, 1),
                               ("--session-timeout-ms", args.session_timeout_ms, 1)):
        if value < least:
            raise InputError(f"{flag} must be at least {least}, got {value}")
    for flag, fvalue in (("--skew", args.skew), ("--utilisation", args.utilisation), ("--capacity", args.capacity),
                         ("--duration-s", args.duration_s), ("--kill-at-s", args.kill_at_s)):
        if not math.isfinite(fvalue) or fvalue < 0:
            raise InputError(f"{flag} must be a finite number >= 0, got {fvalue}")
    if args.capacity <= 0:
        raise InputError(f"--capacity must be > 0, got {args.capacity}", hint="messages/s per consumer")


def _spec(args: argparse.Namespace) -> GridSpec:
    _check_numbers(args)
    kills = tuple(args.kills)
    variants = tuple(tuple(v.strip().split("/", 1)) for v in str(args.strategies).split(",") if v.strip())
    if not variants:
        raise InputError("--strategies is empty", hint="e.g. balanced/eager,range/eager")
    if any(len(v) != 2 for v in variants):
        raise InputError(f"bad --strategies {args.strategies!r}", hint="e.g. balanced/eager,range/eager")
    from kafka_balancer.consumer.assignors import STRATEGIES

    for assignor, protocol in variants:
        if assignor not in STRATEGIES:
            raise InputError(f"--strategies: unknown assignor {assignor!r}",
                             hint="choose from " + ", ".join(STRATEGIES))
        if protocol not in ("eager", "cooperative"):
            raise InputError(f"--strategies: unknown protocol {protocol!r} for {assignor}",
                             hint="eager or cooperative, e.g. balanced/eager")
    if any(not 0 <= k < args.consumers for k in kills):
        raise InputError(f"--kills must be within 0..{args.consumers - 1} (fewer than --consumers {args.consumers})",
                         hint="kill fewer consumers, or give more --consumers")
    if args.duration_s <= args.kill_at_s:
        raise InputError("--duration-s must exceed --kill-at-s", hint="e.g. --kill-at-s 20 --duration-s 80")
    if args.session_timeout_ms < args.heartbeat_ms:
        raise InputError(f"--session-timeout-ms {args.session_timeout_ms} is shorter than --heartbeat-ms "
                         f"{args.heartbeat_ms}", hint="Kafka wants session.timeout.ms >= 3 x heartbeat.interval.ms")
    check_memory(consumers_bytes(int(args.duration_s * 1000), GridSpec().tick_ms, args.partitions, args.consumers),
                 f"simulate consumers --duration-s {args.duration_s:g} with {args.partitions} partitions",
                 hint="simulate a shorter --duration-s or fewer --partitions")
    return GridSpec(
        consumers=args.consumers, partitions=args.partitions, skew=args.skew, utilisation=args.utilisation,
        capacity=args.capacity, kills=kills, variants=variants,  # type: ignore[arg-type]
        kill_at_ms=int(args.kill_at_s * 1000), duration_ms=int(args.duration_s * 1000),
        heartbeat_ms=args.heartbeat_ms, session_timeout_ms=args.session_timeout_ms, seed=args.seed,
        kill_sets=args.kill_sets,
    )


def table(rows: list[dict[str, Any]]) -> str:
    head = "| " + " | ".join(c[1] for c in COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    lines = [head, sep]
    for r in rows:
        r = {**r, "variant": f"{r['assignor']}/{r['protocol']}"}
        lines.append("| " + " | ".join(fmt.format(r[k]) for k, _, fmt in COLUMNS) + " |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    spec = _spec(args)
    from kafka_balancer.files.outputs import check_output_dir, ensure_dir, write_bytes, write_text

    check_output_dir(args.out, "--out")  # before the grid runs, not after
    with tqdm(total=len(spec.kills) * len(spec.variants), desc="simulate consumers", file=sys.stderr) as bar:
        rows = run_grid(spec, progress=bar.update)
    out = ensure_dir(args.out, "--out")
    write_bytes(out / "results.json", orjson.dumps({"spec": spec.__dict__, "rows": rows},
                                                   option=orjson.OPT_INDENT_2), "--out")
    md = table(rows)
    write_text(out / "table.md", md + "\n", "--out")
    from kafka_balancer.sim.consumer.plots import plot_grid  # matplotlib only when plotting

    plot = plot_grid(rows, out / "consumers.png",
                     f"{spec.consumers} consumers, {spec.partitions} partitions (Zipf {spec.skew}), "
                     f"utilisation {spec.utilisation}")
    if args.json:
        write_bytes("-", orjson.dumps(rows, option=orjson.OPT_INDENT_2) + b"\n", "--json", allow_stdout=True)
        return 0
    print(md)
    lat = compare(rows, "paper/eager", "range/eager")
    if lat:
        print("\npaper vs range, p50 latency (positive = paper lower): "
              + ", ".join(f"{k} killed: {v:+.1%}" for k, v in lat.items()))
    print(f"\nwrote {out / 'results.json'}, {out / 'table.md'}, {plot}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="simulate consumers")
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except InputError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
