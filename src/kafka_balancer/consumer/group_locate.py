"""Which broker coordinates a consumer group (seed 004), computed the way Kafka computes it.

Kafka maps a group to partition ``Utils.abs(groupId.hashCode()) % partitions(__consumer_offsets)``
and the leader of that partition is the group coordinator. ``hashCode`` is Java's
``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around) and ``Utils.abs`` maps
``Integer.MIN_VALUE`` to 0. Seed 004 writes ``Math.abs(hashCode % n)`` instead: the same number for
every hash except ``Integer.MIN_VALUE``, where Java's ``%`` keeps the sign and the two differ.

Example:
    >>> java_string_hashcode("test-group")
    627841412
    >>> offsets_partition_for("test-group", 50)
    12
    >>> java_string_hashcode("polygenelubricants") == -2**31
    True
    >>> offsets_partition_for("polygenelubricants", 50), seed004_partition_for("polygenelubricants", 50)
    (0, 48)
"""

from __future__ import annotations

INT_MIN = -(2**31)


def java_string_hashcode(s: str) -> int:
    """Java's ``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 units, as int32."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def kafka_utils_abs(n: int) -> int:
    """``org.apache.kafka.common.utils.Utils.abs``: ``0`` for ``Integer.MIN_VALUE``, else ``|n|``."""
    return 0 if n == INT_MIN else abs(n)


def java_rem(a: int, b: int) -> int:
    """Java's ``%`` on ints: the result takes the sign of the dividend."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def offsets_partition_for(group_id: str, n_partitions: int) -> int:
    """The ``__consumer_offsets`` partition holding ``group_id`` (Kafka's formula)."""
    if n_partitions <= 0:
        raise ValueError("n_partitions must be > 0")
    return kafka_utils_abs(java_string_hashcode(group_id)) % n_partitions


def seed004_partition_for(group_id: str, n_partitions: int) -> int:
    """Seed 004's formula ``Math.abs(hashCode % n)`` (Java's ``Math.abs``, Java's ``%``)."""
    return abs(java_rem(java_string_hashcode(group_id), n_partitions))
