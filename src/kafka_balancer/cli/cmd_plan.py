"""``kafka-balancer plan``: snapshot in, kafka-reassign-partitions plan out."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import orjson
from tqdm import tqdm

from kafka_balancer.cli.options import add_goal_options, check_output_file, duration, integer
from kafka_balancer.errors import InputError
from kafka_balancer.model.plan_io import write_plan
from kafka_balancer.model.snapshot_io import read_snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.constraints import MAX_MOVES, Constraints
from kafka_balancer.planner.mode_report import demote_alone
from kafka_balancer.planner.plan import POLISH_SHARE
from kafka_balancer.planner.policy import DEFAULT_GOALS, parse_goals
from kafka_balancer.report.table import plan_table
from kafka_balancer.validate.values import parse_broker_ids, parse_int, parse_polish, parse_regex, parse_size


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
    p.add_argument("--polish", default=str(POLISH_SHARE), metavar="SHARE|SIZE",
                   help="once balanced, keep lowering σ with replica moves until the plan moves SHARE × the byte "
                   f"lower bound, on moves that pay for their bytes (default {POLISH_SHARE}; 0 stops at the "
                   "goals), or until it moves SIZE (e.g. 300G): first on moves that pay, then on any move that "
                   "lowers σ")
    p.add_argument("--exact-nodes", type=integer("--exact-nodes", minimum=0, maximum=2**31 - 1), default=0, metavar="N",
                   help="clusters up to 600 partition x broker cells: also solve the exact model for N "
                   "branch-and-bound nodes (a tighter byte bound and another start; 1-2 s of CPU on 6 brokers; "
                   "default 0: off)")
    m = p.add_argument_group("operator modes (they compose)")
    m.add_argument("--add-brokers", metavar="IDS", help="only these brokers receive replicas (e.g. 7,8: new brokers "
                   "to fill); leadership may move anywhere")
    m.add_argument("--remove-brokers", metavar="IDS", help="every replica leaves these brokers (decommissioning); "
                   "refused, naming the partition, where replication factor, racks or capacity make it impossible")
    m.add_argument("--demote-brokers", metavar="IDS", help="no leadership stays on these brokers; changed "
                   "partitions list them last so a preferred-leader election keeps leadership off them; the rest "
                   "is rebalanced too (add --leadership-only to copy no data, e.g. to patch a broker)")
    m.add_argument("--exclude-topics", metavar="REGEX", help="topics matching REGEX (whole name) never move; "
                   "their load still counts")
    m.add_argument("--leadership-only", action="store_true", help="no replica moves at all, only leadership")
    m.add_argument("--max-moves", metavar="N", help="at most N replica moves (copies; leadership is free)")
    m.add_argument("--max-bytes", metavar="SIZE", help="at most SIZE bytes copied, e.g. 500G; the best plan "
                   "within it, and the summary says what remains unbalanced")
    m.add_argument("--goals", metavar="G1,G2,...", help="the goal policy, highest priority first, or a subset "
                   f"(default {','.join(DEFAULT_GOALS)})")
    p.set_defaults(func=run)


def constraints_from(args: argparse.Namespace) -> Constraints:
    """The operator's modes from the parsed flags (each value parsed here: one line naming the flag)."""

    def ids(text: str | None, flag: str) -> frozenset[int]:
        return frozenset(parse_broker_ids(text, flag)) if text is not None else frozenset()

    if args.exclude_topics is not None:
        parse_regex(args.exclude_topics, "--exclude-topics")
    return Constraints(
        add_brokers=ids(args.add_brokers, "--add-brokers"),
        remove_brokers=ids(args.remove_brokers, "--remove-brokers"),
        demote_brokers=ids(args.demote_brokers, "--demote-brokers"),
        exclude_topics=args.exclude_topics,
        leadership_only=bool(args.leadership_only),
        max_moves=(None if args.max_moves is None
                   else parse_int(args.max_moves, "--max-moves", minimum=0, maximum=MAX_MOVES)),
        max_bytes=None if args.max_bytes is None else float(parse_size(args.max_bytes, "--max-bytes")),
    )


def run(args: argparse.Namespace) -> int:
    constraints = constraints_from(args)
    share, polish_bytes = parse_polish(args.polish, "--polish")
    goals = parse_goals(args.goals) if args.goals is not None else None
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
    constraints.validate(snap)  # before any planning: a typo in a broker id costs nothing
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

    result = plan(
        snap, args.theta, args.eps, polish_share=POLISH_SHARE if share is None else share, polish_bytes=polish_bytes,
        time_limit=args.time_limit, progress=tick, constraints=constraints, goals=goals, exact_nodes=args.exact_nodes,
    )
    if bar is not None:
        bar.close()
    hint = demote_alone(constraints, result.replica_moves, result.moved_bytes)
    if hint:
        result = replace(result, warnings=(*result.warnings, *hint))
    write_plan(result.plan, args.out)
    if args.plot:
        from kafka_balancer.report.plots import utilisation_before_after

        utilisation_before_after(
            result.before,
            result.after,
            snap.broker_ids[snap.alive].tolist(),
            args.plot,
            title=f"{snap.name or args.snapshot}: before and after the plan",
            after_ids=result.after_snapshot.broker_ids[result.after_snapshot.alive].tolist(),
        )
    if args.json:
        sys.stdout.write(orjson.dumps(result.summary, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(plan_table(result))
        print(f"plan written to {args.out}")
    return 0
