"""``kafka-balancer group locate|doctor``: find a group's coordinator; check consumer settings."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kafka_balancer.cli.options import bootstrap, integer, no_action, number, text, timeout
from kafka_balancer.consumer.group_doctor import diagnose, read_properties
from kafka_balancer.consumer.group_locate import (
    java_string_hashcode,
    offsets_partition_for,
    seed004_partition_for,
)
from kafka_balancer.errors import ClusterError, InputError
from kafka_balancer.security.option import add_command_config, settings_from_args

MAX_MS = 30 * 86_400_000.0  # 30 days: a longer time per poll, record or restart is a typo


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("group", help="consumer-group tools: locate the coordinator, doctor a config")
    kinds = p.add_subparsers(dest="group_cmd", metavar="ACTION")
    loc = kinds.add_parser("locate", help="which broker coordinates a group (seed 004's formula)")
    loc.add_argument("--group", required=True, type=text("--group"),
                     help="the consumer group id")
    loc.add_argument("--bootstrap", type=bootstrap(),
                     help="cluster to ask for __consumer_offsets' partition count and leaders")
    loc.add_argument("--partitions", type=integer("--partitions", maximum=2**31 - 1),
                     help="offline: __consumer_offsets partition count (e.g. 50)")
    loc.add_argument("--timeout", type=timeout(), default=15.0,
                     help="seconds to wait for the bootstrap server (default 15)")
    loc.add_argument("--json", action="store_true")
    add_command_config(loc)
    loc.set_defaults(func=run_locate)
    doc = kinds.add_parser("doctor", help="check session/heartbeat/poll/static-membership settings")
    doc.add_argument("--config", required=True, help="consumer.properties ('-' for stdin)")
    doc.add_argument("--processing-ms", type=number("--processing-ms", inclusive=True, maximum=MAX_MS),
                     help="measured time to process one poll's batch")
    doc.add_argument("--per-record-ms", type=number("--per-record-ms", inclusive=True, maximum=MAX_MS),
                     help="measured processing time per record")
    doc.add_argument("--restart-ms", type=number("--restart-ms", inclusive=True, maximum=MAX_MS),
                     help="how long a rolling restart of one instance takes")
    doc.add_argument("--json", action="store_true")
    doc.set_defaults(func=run_doctor)
    no_action(p, kinds)


def run_locate(args: argparse.Namespace) -> int:
    if not args.group:
        raise InputError("--group is empty", hint="give the group id, e.g. --group orders-consumers")
    h = java_string_hashcode(args.group)
    out: dict[str, Any] = {"group": args.group, "hash_code": h}
    if args.bootstrap:
        from kafka_balancer.collect.admin import PATIENT, RenewingAdmin

        # a broker that died a moment ago stays in the metadata for a while: each call is tried again
        session = RenewingAdmin.connect(args.bootstrap, timeout_s=args.timeout, security=settings_from_args(args),
                                        attempts=PATIENT)
        try:
            topics = session.call(lambda admin: admin.describe_topics(["__consumer_offsets"]))
            parts = {int(p["partition_index"]): p for t in topics for p in t.get("partitions", [])}
            if not parts:
                raise ClusterError("the cluster has no __consumer_offsets topic yet",
                                   hint="it is created when the first group commits or joins; run a consumer first")
            n = len(parts)
            pid = offsets_partition_for(args.group, n)
            out.update(partitions=n, offsets_partition=pid, coordinator=int(parts[pid]["leader_id"]))
            try:
                out["find_coordinator"] = int(session.call(  # a cross-check: not worth the long wait
                    lambda admin: admin._manager.run(admin._find_coordinator_id, args.group), attempts=4))
            except Exception as exc:  # informational cross-check only
                out["find_coordinator_error"] = str(exc)
        finally:
            session.close()
    elif args.partitions is not None:
        n = args.partitions
        out.update(partitions=n, offsets_partition=offsets_partition_for(args.group, n))
    else:
        raise InputError("give --bootstrap (live cluster) or --partitions (offline)",
                         hint="e.g. --partitions 50")
    out["seed004_formula_partition"] = seed004_partition_for(args.group, out["partitions"])
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"group {args.group!r}: hashCode {h} -> __consumer_offsets partition "
          f"{out['offsets_partition']} of {out['partitions']}")
    if "coordinator" in out:
        print(f"coordinator: broker {out['coordinator']} (leader of that partition)"
              + (f"; FindCoordinator says broker {out['find_coordinator']}" if "find_coordinator" in out else ""))
    if out["seed004_formula_partition"] != out["offsets_partition"]:
        print(f"note: seed 004's Math.abs(hash % n) gives {out['seed004_formula_partition']}; Kafka uses "
              "Utils.abs(hash) % n, which differs only for hashCode == Integer.MIN_VALUE")
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    findings = diagnose(read_properties(args.config), processing_ms=args.processing_ms,
                        per_record_ms=args.per_record_ms, restart_ms=args.restart_ms)
    if args.json:
        print(json.dumps([f.as_dict() for f in findings], indent=2))
    else:
        for f in findings:
            print(f"[{f.level.upper():5}] {f.rule}: {f.message}\n        {f.explanation}")
    return 1 if any(f.level == "error" for f in findings) else 0
