"""Argument types shared by several commands (each rejects bad values with a clear message)."""

from __future__ import annotations

import argparse


def fraction(name: str, *, allow_one: bool = True):  # type: ignore[no-untyped-def]
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (0 < v < 1 or (allow_one and v == 1)):
            raise argparse.ArgumentTypeError(f"{name} must be in (0, 1{']' if allow_one else ')'}, got {v}")
        return v

    return parse


def add_goal_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--theta", type=fraction("--theta"), default=0.8, help="capacity goal θ (default 0.8)")
    p.add_argument(
        "--eps",
        type=fraction("--eps", allow_one=False),
        default=0.1,
        help="distribution goal ε (default 0.1)",
    )
