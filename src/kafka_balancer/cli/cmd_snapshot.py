"""``kafka-balancer snapshot``: the batch pipeline under the name issue 3 uses (samples -> snapshot)."""

from __future__ import annotations

from typing import Any

from kafka_balancer.cli.cmd_pipeline import add_batch_arguments, run_batch_cli


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "snapshot", help="build a snapshot from collector samples (same as `pipeline --samples`)",
        description="The batch pipeline: --samples DIR --out snap.json. See `kafka-balancer pipeline -h`.",
    )
    add_batch_arguments(p)
    p.set_defaults(func=run_batch_cli)
