"""``--command-config FILE``: the one option every command that talks to a cluster shares.

    add_command_config(parser)                    # in register()
    security = settings_from_args(args, local)    # in run(); None = plaintext

Without the flag, a secured ``--local-cluster`` lends its admin's client.properties.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_balancer.security.settings import SecuritySettings, load_settings

if TYPE_CHECKING:
    from kafka_balancer.localcluster.cluster import LocalCluster

HELP = ("Kafka client.properties with the connection's security settings (security.protocol, sasl.mechanism, "
        "sasl.jaas.config, ssl.truststore.*, ssl.keystore.*), as kafka-reassign-partitions --command-config "
        "takes it; see docs/security.md")


def add_command_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--command-config", type=Path, metavar="FILE", default=None, help=HELP)


def settings_from_args(args: argparse.Namespace, local: LocalCluster | None = None) -> SecuritySettings | None:
    """The settings of ``--command-config`` (validated: InputError on a bad file), else those of a secured
    local cluster's admin, else None (plaintext)."""
    path = getattr(args, "command_config", None)
    if path is not None:
        return load_settings(path)
    if local is not None:
        return local.security("admin")
    return None
