"""The ``kafka-balancer`` console script.

Subcommands live one per module, ``kafka_balancer.cli.cmd_<name>``; each module exposes
``register(subparsers)`` which adds its parser and sets ``func`` to a callable
``(argparse.Namespace) -> int``. Modules are discovered, so adding a command touches one file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from kafka_balancer import __version__
from kafka_balancer.errors import BalancerError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-balancer",
        description="Keeps Apache Kafka clusters balanced: brokers, consumers, and the load model between.",
    )
    parser.add_argument("--version", action="version", version=f"kafka-balancer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    import kafka_balancer.cli as cli_pkg

    for info in sorted(pkgutil.iter_modules(cli_pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            module = importlib.import_module(f"kafka_balancer.cli.{info.name}")
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        rc = args.func(args)
    except BalancerError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
