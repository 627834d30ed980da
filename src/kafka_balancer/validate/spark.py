"""Spark settings (``--master``, ``--driver-memory``), checked before a JVM is started.

Spark itself answers a master it cannot use with a JVM stack trace and a Python one; these settings are
checked first, and a Spark that still does not start is one line. Both are environment failures (exit 1):
the work asked for cannot be done with this Spark.

    >>> check_master("local[2]")
    'local[2]'
    >>> check_memory("3g")
    '3g'
"""

from __future__ import annotations

import re

from kafka_balancer.errors import BalancerError

_MASTER = re.compile(
    r"^(local|local\[([1-9]\d{0,4}|\*)(,\d{1,4})?\]|local-cluster\[\d+,\d+,\d+\]|yarn|"
    r"spark://[A-Za-z0-9.\-_\[\]:]+:\d{1,5}(,[A-Za-z0-9.\-_\[\]:]+:\d{1,5})*|k8s://\S+)$"
)
_MEMORY = re.compile(r"^[1-9]\d{0,6}[kmgt]?b?$", re.IGNORECASE)
MASTER_HINT = "use local[N] (N cores on this machine), local[*], spark://HOST:PORT, yarn or k8s://URL"


class SparkStartError(BalancerError):
    """Spark cannot start with the settings given. Exit code 1."""

    exit_code = 1


def check_master(master: str) -> str:
    """A Spark master URL Spark accepts (its own forms), or SparkStartError naming ``--master``."""
    if not master.isascii() or not _MASTER.match(master):
        raise SparkStartError(f"Spark cannot start with --master {master!r}: not a Spark master URL",
                              hint=MASTER_HINT)
    return master


def check_memory(memory: str) -> str:
    """A JVM memory size (``512m``, ``3g``), or SparkStartError naming ``--driver-memory``."""
    if not memory.isascii() or not _MEMORY.match(memory):
        raise SparkStartError(f"Spark cannot start with --driver-memory {memory!r}: not a memory size",
                              hint="give a size such as 1g or 512m")
    return memory


def start_failure(master: str, exc: BaseException) -> SparkStartError:
    """The one line for a Spark that did not start (the first line of Spark's own message)."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return SparkStartError(f"Spark did not start (--master {master}): {first[:200]}",
                           hint="check --master and --driver-memory, and that Java 17+ is installed")
