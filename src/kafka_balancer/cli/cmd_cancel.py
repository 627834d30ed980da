"""``kafka-balancer cancel``: cancel in-flight reassignments of an execution and clear its throttle."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_balancer.cli.cmd_execute import add_connection_options

    p = subparsers.add_parser(
        "cancel",
        help="cancel an execution's in-flight reassignments and clear the replication throttle",
        description="With the journal of an execution (--journal), cancels only that execution's ongoing "
        "reassignments and clears the throttle it set. With --all, cancels every ongoing reassignment and "
        "removes throttle configs wherever they are set.",
    )
    add_connection_options(p)
    p.add_argument("--all", action="store_true", help="ignore the journal: cancel everything in flight")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.cli.cmd_execute import check_journal
    from kafka_balancer.errors import InputError
    from kafka_balancer.executor.cancel import cancel_execution
    from kafka_balancer.executor.journal import Journal
    from kafka_balancer.executor.kafka_adapter import KafkaAdapter

    if not args.all:
        check_journal(args.journal)
    journal = None if args.all else Journal(args.journal)
    if journal is not None and not journal.state().open:
        raise InputError(f"no unfinished execution in {args.journal}",
                         hint="pass the right --journal, or --all to cancel every ongoing reassignment")
    from kafka_balancer.security.acl import CANCEL_CLUSTER, require_cluster
    from kafka_balancer.security.option import settings_from_args

    security = settings_from_args(args)
    adapter = KafkaAdapter.connect(args.bootstrap, timeout_s=args.timeout, security=security)
    try:
        require_cluster(adapter.admin, CANCEL_CLUSTER, "cancel reassignments",
                        security.who if security is not None else "this client")
        res = cancel_execution(adapter, journal)
    finally:
        adapter.close()
    print(f"cancelled {len(res.cancelled)} reassignment(s)"
          + (f"; throttle cleared on {', '.join(res.throttle_cleared_on)}" if res.throttle_cleared_on else ""))
    for tp, err in sorted(res.refused.items()):
        print(f"  {tp[0]}-{tp[1]}: not cancelled ({err})")
    return 0 if not res.refused else 1
