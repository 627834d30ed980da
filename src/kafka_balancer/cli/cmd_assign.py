"""``kafka-balancer assign``: run a consumer assignor offline on a JSON description of a group."""

from __future__ import annotations

import argparse
from typing import Any

import orjson

from kafka_balancer.cli.options import integer, number
from kafka_balancer.consumer.assignors import STRATEGIES
from kafka_balancer.consumer.assignors import run as run_strategy
from kafka_balancer.consumer.invariants import violations
from kafka_balancer.consumer.result import COOPERATIVE, assignment_lists, member_loads, stats
from kafka_balancer.errors import InputError
from kafka_balancer.validate.consumer_input import parse_consumer_input


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "assign", help="assign partitions to consumers offline (paper, balanced, range, ...)",
        description="Read members and partition loads from a JSON file and print an assignment. "
                    "Input: {\"members\": [{\"id\", \"topics\", \"start_ms\"?, \"capacity\"?, \"owned\"?}], "
                    "\"partitions\": [{\"topic\", \"partition\", \"load\"}]}.",
    )
    p.add_argument("--input", required=True, help="JSON file ('-' for stdin)")
    p.add_argument("--strategy", required=True, choices=sorted(STRATEGIES), help="assignor to run")
    p.add_argument("--protocol", choices=["eager", "cooperative"], default=None,
                   help="rebalance protocol (default: the strategy's own; cooperative-sticky is cooperative)")
    p.add_argument("--max-moves", type=integer("--max-moves", minimum=0, maximum=2**31 - 1), default=None,
                   help="balanced only: at most this many previously-owned partitions change owner")
    p.add_argument("--tolerance", type=number("--tolerance", inclusive=True), default=None,
                   help="balanced only: stop moving owned partitions once max load <= (1+tol) x lower bound")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _read(path: str) -> bytes:
    from kafka_balancer.files.inputs import read_bytes

    return read_bytes(path, "--input", "a JSON description of the group", allow_stdin=True)


def run(args: argparse.Namespace) -> int:
    problem = parse_consumer_input(_read(args.input), f"--input {args.input}")
    options: dict[str, Any] = {}
    if args.max_moves is not None or args.tolerance is not None:
        if args.strategy != "balanced":
            raise InputError("--max-moves and --tolerance apply to --strategy balanced only",
                             hint="drop them or use --strategy balanced")
        if args.max_moves is not None:
            if args.max_moves < 0:
                raise InputError("--max-moves must be >= 0", hint="e.g. --max-moves 10")
            options["max_moves"] = args.max_moves
        if args.tolerance is not None:
            if args.tolerance < 0:
                raise InputError("--tolerance must be >= 0", hint="e.g. --tolerance 0.02")
            options["tolerance"] = args.tolerance
    result = run_strategy(args.strategy, problem, protocol=args.protocol, **options)
    bad = violations(problem, result.owner, result.round1 if result.protocol == COOPERATIVE else None)
    if bad:  # a bug, not bad input: say so loudly
        raise AssertionError("assignment breaks invariants: " + "; ".join(bad))
    st = stats(problem, result.owner)
    loads = member_loads(problem, result.owner)
    doc: dict[str, Any] = {
        "strategy": result.strategy,
        "protocol": result.protocol,
        "assignment": assignment_lists(problem, result.owner),
        **st.as_dict(),
        "member_loads": {m: float(v) for m, v in zip(problem.member_ids, loads.tolist(), strict=True)},
    }
    if result.protocol == COOPERATIVE:
        doc["round1"] = assignment_lists(problem, result.round1)
        doc["revoked_in_round1"] = int((result.round1 < 0).sum())
    if args.json:
        from kafka_balancer.files.outputs import write_bytes

        write_bytes("-", orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n", "--json", allow_stdout=True)
        return 0
    print(f"strategy {result.strategy} ({result.protocol}): max load {st.max_load:.4g}, "
          f"lower bound {st.lower_bound:.4g} (x{st.ratio:.4f}), moved {st.moved} "
          f"(load {st.moved_load:.4g})")
    width = max(len(m) for m in problem.member_ids)
    for m, parts in doc["assignment"].items():
        shown = ", ".join(f"{t}-{n}" for t, n in parts[:8]) + (" ..." if len(parts) > 8 else "")
        print(f"  {m:<{width}}  load {doc['member_loads'][m]:>10.4g}  {len(parts):>6} partitions  {shown}")
    return 0
