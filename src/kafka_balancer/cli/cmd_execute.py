"""``kafka-balancer execute``: apply a plan to a live cluster, safely (dry run unless --yes)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from kafka_balancer.cli.options import bootstrap, check_output_file, duration, integer, size, timeout
from kafka_balancer.errors import InputError
from kafka_balancer.security.option import add_command_config, settings_from_args

DEFAULT_JOURNAL = Path("out/executor/journal.jsonl")


def add_connection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bootstrap", required=True, type=bootstrap(),
                   help="host:port of the cluster (comma-separated for several)")
    p.add_argument("--timeout", type=timeout(), default=15.0,
                   help="seconds to wait for the bootstrap server before giving up (default 15)")
    p.add_argument("--journal", type=Path, default=DEFAULT_JOURNAL,
                   help=f"the execution journal (default {DEFAULT_JOURNAL})")
    add_command_config(p)


def _rights(adapter: Any, plan: Any, throttle: bool, security: Any) -> InputError | None:
    """The missing ACL that would stop this execution (checked before anything changes), if any."""
    from kafka_balancer.security.acl import check_execute_rights

    if plan is None:
        topics: list[str] = []
    elif hasattr(plan, "entries"):
        topics = sorted({e.topic for e in plan.entries})
    else:  # the journal's [((topic, partition), replicas), ...]
        topics = sorted({tp[0] for tp, _ in plan})
    who = security.who if security is not None else "this client"
    try:
        check_execute_rights(adapter.admin, topics, throttle, who)
    except InputError as exc:
        return exc
    return None


def check_journal(path: Path) -> None:
    """An existing --journal must be a regular file (a pipe or a device would block or be replaced)."""
    from kafka_balancer.files.inputs import check_input_file

    if path.exists() or path.is_symlink():
        check_input_file(path, "--journal", "the execution journal (a .jsonl file)")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "execute",
        help="apply a plan to a live cluster (dry run unless --yes; --resume after a crash)",
        description="Validate the plan against the live cluster (topics, partitions, brokers, RF, no dead "
        "destination), then, with --yes, submit reassignments in batches under a per-broker cap with a "
        "replication throttle (cleared afterwards, whatever happens), poll to completion, elect preferred "
        "leaders and verify. Every step goes to --journal; --resume continues an interrupted execution.",
    )
    p.add_argument("--plan", type=Path, help="plan JSON (kafka-reassign-partitions format)")
    add_connection_options(p)
    p.add_argument("--yes", action="store_true", help="apply (without it: only show what would happen)")
    p.add_argument("--resume", action="store_true", help="continue the execution recorded in --journal")
    p.add_argument("--throttle", type=size("--throttle", per_second=True), default=50_000_000,
                   help="replication throttle per broker in bytes/s, e.g. 50M (default 50M; 0 = none)")
    p.add_argument("--max-per-broker", type=integer("--max-per-broker", maximum=10_000), default=5,
                   help="concurrent replica moves a broker may take part in (default 5)")
    p.add_argument("--max-in-flight", type=integer("--max-in-flight", maximum=1_000_000), default=50,
                   help="concurrent reassignments in total (default 50)")
    p.add_argument("--poll", type=duration("--poll", maximum=3600), default=1.0,
                   help="seconds between polls (default 1)")
    p.add_argument("--stall-timeout", type=duration("--stall-timeout"), default=600.0,
                   help="give up (resumably) after this many seconds without progress (default 600)")
    p.add_argument("--json", action="store_true", help="print the final report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.errors import InputError
    from kafka_balancer.executor.journal import Journal
    from kafka_balancer.executor.kafka_adapter import KafkaAdapter
    from kafka_balancer.executor.runner import ExecOptions, Executor, describe_plan
    from kafka_balancer.model.plan_io import read_plan

    if not args.resume and args.plan is None:
        raise InputError("execute needs --plan PLAN.json (or --resume)")
    if args.resume and args.plan is not None:
        raise InputError("--resume takes the plan from the journal; drop --plan")
    check_journal(args.journal)
    if args.plan is not None:
        from kafka_balancer.files.inputs import check_input_file

        check_input_file(args.plan, "--plan", "a plan JSON file")
    plan = read_plan(args.plan) if args.plan is not None else None
    # Everything that can be checked offline is checked before the cluster is touched.
    if args.resume and not Journal(args.journal).state().open:
        raise InputError(f"no unfinished execution in {args.journal}",
                         hint="pass the journal of the interrupted execution with --journal, or drop --resume")
    if args.yes:
        check_output_file(args.journal, "--journal", inputs=[("--plan", args.plan)])
    opts = ExecOptions(throttle=args.throttle, max_per_broker=args.max_per_broker,
                       max_in_flight=args.max_in_flight, poll_s=args.poll,
                       stall_timeout_s=args.stall_timeout, progress=not args.no_progress)
    security = settings_from_args(args)
    if plan is not None and not plan.entries:  # e.g. `plan` on a cluster that already meets its goals
        return _nothing_to_execute(args.plan, args.json)
    adapter = KafkaAdapter.connect(args.bootstrap, timeout_s=args.timeout, security=security)
    try:
        ex = Executor(adapter, Journal(args.journal), opts)
        rights_problem = _rights(adapter, plan if plan is not None else Journal(args.journal).state().plan,
                                 args.throttle > 0, security)
        if rights_problem is not None and (args.yes or args.resume):
            raise rights_problem
        if not args.yes:
            if plan is None:
                st = Journal(args.journal).state()
                print(f"would resume {len(st.plan)} partitions from {args.journal}; add --yes")
                return 0
            tasks, _ = ex.prepare(plan)
            for line in describe_plan(tasks):
                print(line)
            moving = sum(t.bytes_to_move for t in tasks)
            print(f"dry run: {len(tasks)} partitions, {sum(len(t.adding) for t in tasks)} replica moves "
                  f"({moving / 1e6:.2f} MB), {sum(1 for t in tasks if t.current[0] != t.target[0])} leader "
                  f"changes; the plan is valid for this cluster. Add --yes to apply.")
            if rights_problem is not None:
                print(f"note: --yes would be refused: {rights_problem.message}")
            return 0
        report = ex.resume() if args.resume else ex.run(plan)  # type: ignore[arg-type]
    finally:
        adapter.close()
    if args.json:
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(f"{'verified' if report.verified else 'NOT verified'}: {report.partitions} partitions, "
              f"{report.replica_moves} replica moves, {report.leader_moves} leader changes, "
              f"{report.bytes_moved / 1e6:.2f} MB moved in {report.elapsed_s:.1f} s")
        for line in report.problems[:20]:
            print(f"  problem: {line}")
    return 0 if report.verified else 1


def _nothing_to_execute(path: Path, as_json: bool) -> int:
    """An empty plan: said, and the cluster is not contacted (there is nothing to validate or to move)."""
    from kafka_balancer.executor.machine import Phase
    from kafka_balancer.executor.runner import ExecReport

    note = f"{path} moves nothing (0 partitions): nothing to execute; the cluster was not contacted"
    if as_json:
        report = ExecReport(0, 0, 0, 0, verified=True, notes=[note], phase=Phase.FINISHED.value)
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(note)
    return 0
