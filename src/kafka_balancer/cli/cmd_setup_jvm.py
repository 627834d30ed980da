"""``kafka-balancer setup-jvm``: fetch every Maven artifact set (Kafka broker, JMX exporter, Spark connector).

Idempotent: a set whose stamp matches its pom is skipped without starting Maven, so a second run
returns in well under a second.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "setup-jvm",
        help="fetch the JVM jars (Kafka, JMX exporter, Spark-Kafka connector) into the cache with Maven",
        description="Fetch every artifact set under src/kafka_balancer/jvm/*/pom.xml with "
        "`mvn dependency:copy-dependencies` into $KAFKA_BALANCER_CACHE (default ~/.cache/kafka-balancer). "
        "Sets already fetched from the same pom are skipped.",
    )
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--force", action="store_true", help="fetch again even when the stamp matches")
    p.set_defaults(func=run)


def _tick(bar: Any, fname: str) -> None:
    bar.set_postfix_str(fname[-40:], refresh=False)
    bar.update(1)


def run(args: argparse.Namespace) -> int:
    from kafka_balancer.jvm.artifacts import artifact_sets, cache_root, fetch_set, is_current, set_dir

    sets = artifact_sets()
    todo = [a for a in sets if args.force or not is_current(a)]
    if not args.quiet:
        for a in sets:
            if a not in todo:
                print(f"{a.name}: cached in {set_dir(a.name)}")
    if not todo:
        return 0
    from tqdm import tqdm

    if not args.quiet:
        print(f"fetching {len(todo)} JVM artifact set(s) with Maven into {cache_root()}", file=sys.stderr)
    for a in todo:
        # a bar only for a person watching: not with --quiet, not into a log file or a pipe
        bar = tqdm(desc=f"{a.name}: downloading", unit=" files", file=sys.stderr, leave=False,
                   disable=args.quiet or not sys.stderr.isatty())
        try:
            res = fetch_set(a, on_download=functools.partial(_tick, bar))
        finally:
            bar.close()
        if not args.quiet:
            print(f"{a.name}: {res.jars} jars in {set_dir(a.name)} "
                  f"({res.downloaded} files downloaded, {res.seconds:.1f} s)", file=sys.stderr)
    return 0
