"""``kafka-balancer consumers advise``: how many consumers a group needs, with its lag and trend."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from kafka_balancer.cli.options import bootstrap, duration, fraction, integer, no_action, number, text, timeout
from kafka_balancer.consumer.advice import divisor_counts, lag_trend, throughput_count
from kafka_balancer.consumer.loads import committed_offsets, end_offsets, topic_partitions
from kafka_balancer.errors import ClusterError, InputError
from kafka_balancer.security.option import add_command_config, settings_from_args


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("consumers", help="consumer-group advice (counts, lag, trend)")
    kinds = p.add_subparsers(dest="consumers_cmd", metavar="ACTION")
    a = kinds.add_parser("advise", help="k(m±z)=n counts, a throughput-based count, lag and its trend")
    a.add_argument("--group", required=True, type=text("--group"), help="the consumer group id")
    a.add_argument("--bootstrap", required=True, type=bootstrap(), help="host:port of the cluster")
    a.add_argument("--topic", action="append", type=text("--topic"),
                   help="topics (default: what the group's members subscribe to)")
    a.add_argument("--per-consumer", type=number("--per-consumer"),
                   help="messages/s one consumer can process (default: the observed consumption rate per member)")
    a.add_argument("--target-util", type=fraction("--target-util"), default=0.7,
                   help="highest acceptable consumer utilisation")
    a.add_argument("--samples", type=integer("--samples", minimum=2, maximum=1000), default=3,
                   help="offset samples to take")
    a.add_argument("--interval-s", type=duration("--interval-s", maximum=3600), default=2.0,
                   help="seconds between samples")
    a.add_argument("--timeout", type=timeout(), default=15.0,
                   help="seconds to wait for the bootstrap server (default 15)")
    a.add_argument("--json", action="store_true")
    add_command_config(a)
    a.set_defaults(func=run_advise)
    no_action(p, kinds)


def _members_and_topics(session: Any, group: str) -> tuple[int, set[str]]:
    desc = session.call(lambda admin: admin.describe_groups([group])).get(group, {})
    members = desc.get("members", []) or []
    topics: set[str] = set()
    for m in members:
        meta = m.get("member_metadata")
        topics.update(getattr(meta, "topics", None) or (meta.get("topics", []) if isinstance(meta, dict) else []))
    return len(members), topics


def run_advise(args: argparse.Namespace) -> int:
    from kafka_balancer.collect.admin import PATIENT, RenewingAdmin

    if not args.group:
        raise InputError("--group is empty", hint="give the group id, e.g. --group orders-consumers")
    # a broker that died a moment ago stays in the metadata for a while: each call is tried again
    session = RenewingAdmin.connect(args.bootstrap, timeout_s=args.timeout, security=settings_from_args(args),
                                    attempts=PATIENT)
    try:
        n_members, topics = _members_and_topics(session, args.group)
        topics = set(args.topic or []) or topics
        if not topics:
            raise ClusterError(f"group {args.group!r} has no members subscribed to anything",
                               hint="pass --topic, or run while the group is up")
        parts = session.call(lambda admin: topic_partitions(admin, topics))
        samples: list[tuple[float, dict[Any, int], dict[Any, int]]] = []
        for i in range(args.samples):
            samples.append((time.monotonic(), session.call(lambda admin: end_offsets(admin, parts)),
                            session.call(lambda admin: committed_offsets(admin, args.group))))
            if i + 1 < args.samples:
                time.sleep(args.interval_s)
    finally:
        session.close()
    t0, e0, c0 = samples[0]
    t1, e1, c1 = samples[-1]
    dt = t1 - t0
    rates = [max(0, e1[tp] - e0.get(tp, e1[tp])) / dt for tp in parts]
    consumed = sum(max(0, c1.get(tp, 0) - c0.get(tp, 0)) for tp in parts) / dt
    lags = [(t - t0, float(sum(max(0, e[tp] - c.get(tp, 0)) for tp in parts))) for t, e, c in samples]
    per_consumer = args.per_consumer or (consumed / n_members if n_members and consumed > 0 else None)
    below, above = divisor_counts(len(parts), max(n_members, 1))
    out: dict[str, Any] = {
        "group": args.group, "topics": sorted(topics), "partitions": len(parts), "members": n_members,
        "incoming_rate": sum(rates), "consumed_rate": consumed, "lag": lags[-1][1],
        "lag_trend_per_s": lag_trend(lags), "divisor_counts": {"m_minus_z": below, "m_plus_z": above},
    }
    if per_consumer:
        count, hottest = throughput_count(rates, per_consumer, args.target_util)
        out.update(per_consumer=per_consumer, per_consumer_source="given" if args.per_consumer else "observed",
                   throughput_count=count, hottest_partition_util=hottest)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"group {args.group}: {n_members} members, {len(parts)} partitions of {', '.join(sorted(topics))}")
    print(f"incoming {out['incoming_rate']:.1f} msg/s, consumed {consumed:.1f} msg/s, lag {out['lag']:.0f} "
          f"({out['lag_trend_per_s']:+.1f} msg/s trend: "
          f"{'falling behind' if out['lag_trend_per_s'] > 0 else 'keeping up'})")
    print(f"k(m±z)=n: {below} (m-z) or {above} (m+z) consumers divide {len(parts)} partitions evenly")
    if per_consumer:
        print(f"throughput: {out['throughput_count']} consumers keep everyone <= {args.target_util:.0%} "
              f"at {per_consumer:.1f} msg/s each ({out['per_consumer_source']})")
        if out["hottest_partition_util"] > args.target_util:
            print(f"warning: the hottest partition alone needs {out['hottest_partition_util']:.0%} of a consumer; "
                  "add partitions or faster consumers")
    else:
        print("throughput count: pass --per-consumer (msg/s per consumer); nothing was consumed to observe it")
    return 0
