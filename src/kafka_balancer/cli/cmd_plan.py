"""``kafka-balancer plan``: snapshot in, kafka-reassign-partitions plan out."""

from __future__ import annotations

import argparse
import sys

import orjson
from tqdm import tqdm

from kafka_balancer.cli.options import add_goal_options, check_output_file, duration, number
from kafka_balancer.errors import InputError
from kafka_balancer.model.plan_io import write_plan
from kafka_balancer.model.snapshot_io import read_snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.plan import POLISH_SHARE
from kafka_balancer.report.table import plan_table


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "plan",
        help="plan a rebalance of a snapshot (seed 001)",
        description="Plan leadership and replica moves that bring every live broker within θ "
        "and the ε band on cpu, disk, nw_in and nw_out. Writes only the changed partitions.",
    )
    p.add_argument("--snapshot", required=True, help="snapshot JSON (snapshot-format.md)")
    p.add_argument("--out", required=True, help="where to write the plan (kafka-reassign-partitions JSON)")
    add_goal_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of the table")
    p.add_argument("--plot", metavar="FILE.png",
                   help="per-broker utilisation before/after, one panel a resource (.png, .svg, .pdf, ...)")
    p.add_argument("--time-limit", type=duration("--time-limit", maximum=7 * 86_400), default=600.0,
                   help="seconds the search may take (default 600)")
    p.add_argument("--polish", type=number("--polish", inclusive=True, maximum=1e6),
                   default=POLISH_SHARE, metavar="SHARE",
                   help="once balanced, keep lowering σ with replica moves until the plan moves SHARE × the byte "
                   f"lower bound (default {POLISH_SHARE}; 0 stops at the goals)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.files.inputs import check_input_file
    from kafka_balancer.files.outputs import distinct_outputs, plot_formats

    # Every path is checked before the snapshot is read and long before planning: an output that is the
    # snapshot, a plot format matplotlib cannot write, a folder that cannot be written.
    check_input_file(args.snapshot, "--snapshot", "a snapshot JSON file")
    inputs = [("--snapshot", args.snapshot)]
    distinct_outputs([("--out", args.out), ("--plot", args.plot)])
    check_output_file(args.out, "--out", inputs=inputs)
    if args.plot:
        check_output_file(args.plot, "--plot", inputs=inputs, formats=plot_formats())
    snap = read_snapshot(args.snapshot)
    if not snap.alive.any():
        raise InputError(
            f"snapshot {args.snapshot} has no live broker: every broker has alive: false",
            hint="nothing can be planned until a broker is back; check the brokers' alive fields",
        )
    bar = None
    if snap.n_replicas >= 100_000 and sys.stderr.isatty():
        bar = tqdm(desc="planning moves", unit="move", file=sys.stderr)

    def tick(_moves: int) -> None:
        if bar is not None:
            bar.update(1)

    result = plan(snap, args.theta, args.eps, polish_share=args.polish, time_limit=args.time_limit, progress=tick)
    if bar is not None:
        bar.close()
    write_plan(result.plan, args.out)
    if args.plot:
        from kafka_balancer.report.plots import utilisation_before_after

        utilisation_before_after(
            result.before,
            result.after,
            snap.broker_ids[snap.alive].tolist(),
            args.plot,
            title=f"{snap.name or args.snapshot}: before and after the plan",
        )
    if args.json:
        sys.stdout.write(orjson.dumps(result.summary, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(plan_table(result))
        print(f"plan written to {args.out}")
    return 0
