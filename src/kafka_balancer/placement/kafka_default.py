"""Apache Kafka's own replica placement (the "default system" of seed 001).

This is the assignment ``kafka-topics --create`` used before KRaft and ``kafka-reassign-partitions
--generate`` still uses (Kafka's ``AdminUtils.assignReplicasToBrokers``). KRaft controllers place new
topics with a different, striped placer; this module reproduces AdminUtils only.

Rack-unaware: the first replica of partition ``p`` goes to broker ``(p + start) mod n``; the others follow
at an offset ``1 + (shift + j) mod (n - 1)``, where ``shift`` grows by one after every ``n`` partitions.
Rack-aware: the same walk over a *rack-alternated* broker list (racks sorted by name, brokers of a rack
sorted by id, taken one rack at a time), skipping a broker whose rack already holds a replica while some
rack holds none, and a broker already used while some broker is unused.

Kafka draws ``start`` and ``shift`` at random; here both come from a seedable generator, or are fixed.

Example (Kafka's documented 5-broker case, start 0, shift 0)::

    >>> assign_rack_unaware([0, 1, 2, 3, 4], 10, 3, start_index=0, shift=0)[:2]
    [[0, 1, 2], [1, 2, 3]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from kafka_balancer.errors import InputError


def _check(n_brokers: int, n_partitions: int, rf: int) -> None:
    if n_partitions <= 0:
        raise InputError(f"number of partitions must be larger than 0 (got {n_partitions})")
    if rf <= 0:
        raise InputError(f"replication factor must be larger than 0 (got {rf})")
    if rf > n_brokers:
        raise InputError(f"replication factor {rf} is larger than the {n_brokers} available brokers")


def _replica_offset(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def assign_rack_unaware(
    brokers: Sequence[int],
    n_partitions: int,
    rf: int,
    *,
    start_index: int,
    shift: int,
    start_partition: int = 0,
) -> list[list[int]]:
    """Replica lists for partitions ``start_partition ..`` in Kafka's rack-unaware order (vectorised)."""
    n = len(brokers)
    _check(n, n_partitions, rf)
    arr = np.asarray(brokers, dtype=np.int64)
    p = np.arange(max(0, start_partition), max(0, start_partition) + n_partitions, dtype=np.int64)
    first = (p + start_index) % n
    cols = [first]
    if rf > 1:
        s = shift + p // n  # Kafka bumps the shift each time the partition id wraps the broker list
        for j in range(rf - 1):
            cols.append((first + 1 + (s + j) % (n - 1)) % n)
    idx = np.stack(cols, axis=1)
    result: list[list[int]] = arr[idx].tolist()
    return result


def rack_alternated(rack_of: Mapping[int, str]) -> list[int]:
    """Brokers taken one rack at a time (racks by name, brokers of a rack by id)."""
    by_rack: dict[str, list[int]] = {}
    for b, r in rack_of.items():
        by_rack.setdefault(r, []).append(b)
    queues = [sorted(by_rack[r]) for r in sorted(by_rack)]
    out: list[int] = []
    depth = 0
    while len(out) < len(rack_of):
        for q in queues:
            if depth < len(q):
                out.append(q[depth])
        depth += 1
    return out


def assign_rack_aware(
    rack_of: Mapping[int, str],
    n_partitions: int,
    rf: int,
    *,
    start_index: int,
    shift: int,
    start_partition: int = 0,
) -> list[list[int]]:
    """Replica lists in Kafka's rack-aware order. ``rack_of`` maps every broker id to its rack."""
    arranged = rack_alternated(rack_of)
    n = len(arranged)
    _check(n, n_partitions, rf)
    n_racks = len(set(rack_of.values()))
    result: list[list[int]] = []
    pid = max(0, start_partition)
    s = shift
    for _ in range(n_partitions):
        if pid > 0 and pid % n == 0:
            s += 1
        first = (pid + start_index) % n
        lead = arranged[first]
        chosen = [lead]
        racks_used = {rack_of[lead]}
        used = {lead}
        k = 0
        for _ in range(rf - 1):
            while True:
                b = arranged[_replica_offset(first, s * n_racks, k, n)]
                r = rack_of[b]
                k += 1
                rack_ok = r not in racks_used or len(racks_used) == n_racks
                broker_ok = b not in used or len(used) == n
                if rack_ok and broker_ok:
                    chosen.append(b)
                    racks_used.add(r)
                    used.add(b)
                    break
        result.append(chosen)
        pid += 1
    return result


def assign(
    brokers: Sequence[int],
    racks: Mapping[int, str | None] | None,
    n_partitions: int,
    rf: int,
    rng: np.random.Generator | None = None,
    *,
    start_index: int | None = None,
    shift: int | None = None,
) -> list[list[int]]:
    """Kafka's choice between the two: rack-aware when every broker has a rack, unaware when none has.

    ``start_index`` and ``shift`` default to draws from ``rng`` (Kafka draws both in ``[0, n)``).
    """
    ids = sorted(brokers)
    n = len(ids)
    gen = rng if rng is not None else np.random.default_rng(0)
    start = int(gen.integers(n)) if start_index is None else start_index
    sh = int(gen.integers(n)) if shift is None else shift
    have = [b for b in ids if racks and racks.get(b) is not None]
    if not have:
        return assign_rack_unaware(ids, n_partitions, rf, start_index=start, shift=sh)
    if len(have) != n:
        missing = next(b for b in ids if not racks or racks.get(b) is None)
        raise InputError(
            f"broker {missing} has no rack while others have one",
            hint="Kafka's rack-aware placement needs a rack on every broker, or on none",
        )
    rack_of = {b: str(racks[b]) for b in ids} if racks else {}
    return assign_rack_aware(rack_of, n_partitions, rf, start_index=start, shift=sh)
