"""Argument types shared by several commands (each rejects bad values with a clear message)."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from kafka_balancer.errors import InputError


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


def number(name: str, *, minimum: float = 0.0, inclusive: bool = False) -> Callable[[str], float]:
    """A finite float above ``minimum`` (or at it, with ``inclusive``); NaN and infinities are refused."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        ok = math.isfinite(v) and (v >= minimum if inclusive else v > minimum)
        if not ok:
            bound = f">= {minimum:g}" if inclusive else f"> {minimum:g}"
            raise argparse.ArgumentTypeError(f"{name} must be a finite number {bound}, got {text!r}")
        return v

    return parse


def integer(name: str, *, minimum: int = 1) -> Callable[[str], int]:
    """An integer >= ``minimum``."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be at least {minimum}, got {v}")
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


def _nearest_existing(p: Path) -> Path:
    q = p
    while not q.exists() and q != q.parent:
        q = q.parent
    return q


def check_output_file(path: str | Path, flag: str) -> None:
    """Refuse, before any work is done, an output file that cannot be written: it is a directory, or its
    folder cannot be created (a parent is a regular file, or not writable). Creates nothing."""
    p = Path(path).absolute()
    if p.is_dir():
        raise InputError(f"{flag} {path} is a directory", hint=f"give {flag} a file name, e.g. {p / 'out.json'}")
    _check_creatable(p.parent, flag, path)
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"{flag} {path} is not writable", hint="check its permissions or pick another path")


def check_output_dir(path: str | Path, flag: str) -> None:
    """Refuse, before any work is done, an output folder that cannot be created or written. Creates nothing."""
    p = Path(path).absolute()
    if p.exists() and not p.is_dir():
        raise InputError(f"{flag} {path} is a file, not a directory", hint=f"give {flag} a folder")
    _check_creatable(p, flag, path)


def _check_creatable(folder: Path, flag: str, shown: str | Path) -> None:
    base = _nearest_existing(folder)
    if not base.is_dir():
        raise InputError(
            f"{flag} {shown}: {base} is a file, so the folder cannot be created",
            hint=f"pick another {flag} path",
        )
    try:  # a real probe: permission bits say little for root or on special file systems such as /proc
        with tempfile.NamedTemporaryFile(dir=base, prefix=".kafka-balancer-probe-"):
            pass
    except OSError as exc:
        raise InputError(
            f"{flag} {shown}: cannot write under {base} ({exc.strerror})", hint=f"pick another {flag} path"
        ) from None
