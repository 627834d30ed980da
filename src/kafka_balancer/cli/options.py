"""argparse glue: argument types built on :mod:`kafka_balancer.validate.values` (each raises InputError naming
the flag, printed by ``main`` as ``error: …`` / ``hint: …``), and the shared goal options.

The checks themselves live in ``validate/`` (values) and ``files/`` (paths); nothing is checked here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from kafka_balancer.errors import InputError
from kafka_balancer.files.outputs import check_output_dir, check_output_file
from kafka_balancer.validate import values as v

__all__ = [
    "add_goal_options", "bootstrap", "broker_ids", "check_output_dir", "check_output_file", "duration",
    "duration_text",
    "float_list", "fraction", "int_list", "integer", "no_action", "number", "regex", "seed", "size", "text",
    "timeout",
]


def fraction(name: str, *, allow_one: bool = True, allow_zero: bool = False) -> Callable[[str], float]:
    """A share in (0, 1] (or (0, 1) without ``allow_one``, [0, ...] with ``allow_zero``)."""
    return lambda s: v.parse_fraction(s, name, allow_one=allow_one, allow_zero=allow_zero)


def number(name: str, *, minimum: float = 0.0, inclusive: bool = False,
           maximum: float | None = None) -> Callable[[str], float]:
    """A finite float above ``minimum`` (or at it, with ``inclusive``), at most ``maximum``."""
    return lambda s: v.parse_float(s, name, minimum=minimum, maximum=maximum, inclusive=inclusive)


def integer(name: str, *, minimum: int = 1, maximum: int | None = None) -> Callable[[str], int]:
    """A whole number in ``[minimum, maximum]``."""
    return lambda s: v.parse_int(s, name, minimum=minimum, maximum=maximum)


def seed(name: str = "--seed") -> Callable[[str], int]:
    return lambda s: v.parse_seed(s, name)


def duration(name: str, *, maximum: float = v.MAX_DURATION_S, allow_zero: bool = False) -> Callable[[str], float]:
    """Seconds, from ``30s`` / ``2m`` / ``6h`` / plain seconds."""
    return lambda s: v.parse_duration_s(s, name, maximum=maximum, allow_zero=allow_zero)


def duration_text(name: str, *, maximum: float = v.MAX_DURATION_S) -> Callable[[str], str]:
    """A duration checked like :func:`duration`, passed on as whole milliseconds (``"300000ms"``) for code
    that parses duration text itself."""

    def parse(s: str) -> str:
        ms = round(v.parse_duration_s(s, name, maximum=maximum) * 1000)
        if ms < 1:
            raise v.InputError(f"{name} {s.strip()} is shorter than a millisecond", hint=f"e.g. {name} 5m")
        return f"{ms}ms"

    return parse


def timeout(name: str = "--timeout", *, maximum: float = v.MAX_TIMEOUT_S,
            allow_zero: bool = False) -> Callable[[str], float]:
    return lambda s: v.parse_timeout_s(s, name, maximum=maximum, allow_zero=allow_zero)


def size(name: str, *, per_second: bool = False) -> Callable[[str], int]:
    return lambda s: v.parse_size(s, name, per_second=per_second)


def bootstrap(name: str = "--bootstrap") -> Callable[[str], str]:
    return lambda s: v.parse_bootstrap(s, name)


def broker_ids(name: str) -> Callable[[str], tuple[int, ...]]:
    return lambda s: v.parse_broker_ids(s, name)


def int_list(name: str, *, minimum: int | None = None, maximum: int | None = None,
             unique: bool = True) -> Callable[[str], tuple[int, ...]]:
    return lambda s: v.parse_int_list(s, name, minimum=minimum, maximum=maximum, unique=unique)


def float_list(name: str, **bounds: Any) -> Callable[[str], tuple[float, ...]]:
    return lambda s: v.parse_float_list(s, name, **bounds)


def text(name: str, *, allow_empty: bool = False) -> Callable[[str], str]:
    """A name (group, topic, cluster label): UTF-8, no control characters."""
    return lambda s: v.check_text(s, name, allow_empty=allow_empty)


def regex(name: str) -> Callable[[str], Any]:
    return lambda s: v.parse_regex(s, name)


def add_goal_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--theta", type=fraction("--theta"), default=0.8, help="capacity goal θ (default 0.8)")
    p.add_argument(
        "--eps",
        type=fraction("--eps", allow_one=False),
        default=0.1,
        help="distribution goal ε (default 0.1)",
    )


def no_action(parser: argparse.ArgumentParser, kinds: Any) -> None:
    """A command group (``consumers``, ``group``, ``simulate``) run without an action: exit 2 with the list."""

    def refuse(_args: argparse.Namespace) -> int:
        names = ", ".join(kinds.choices)
        raise InputError(f"{parser.prog} needs an action: one of {names}",
                         hint=f"e.g. {parser.prog} {next(iter(kinds.choices))} (see {parser.prog} --help)")

    parser.set_defaults(func=refuse)
