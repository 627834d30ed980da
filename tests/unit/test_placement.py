"""Kafka's default placement against Kafka's own documented examples."""

import numpy as np
import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.placement.kafka_default import assign, assign_rack_aware, assign_rack_unaware, rack_alternated


def test_rack_unaware_matches_kafka_table() -> None:
    # Kafka's example: 5 brokers, 10 partitions, RF 3, start index 0 and shift 0.
    got = assign_rack_unaware([0, 1, 2, 3, 4], 10, 3, start_index=0, shift=0)
    by_broker_first = {b: [p for p, r in enumerate(got) if r[0] == b] for b in range(5)}
    by_broker_second = {b: [p for p, r in enumerate(got) if r[1] == b] for b in range(5)}
    by_broker_third = {b: [p for p, r in enumerate(got) if r[2] == b] for b in range(5)}
    assert by_broker_first == {0: [0, 5], 1: [1, 6], 2: [2, 7], 3: [3, 8], 4: [4, 9]}
    assert by_broker_second == {0: [4, 8], 1: [0, 9], 2: [1, 5], 3: [2, 6], 4: [3, 7]}
    assert by_broker_third == {0: [3, 7], 1: [4, 8], 2: [0, 9], 3: [1, 5], 4: [2, 6]}


def test_rack_alternated_list_matches_kafka() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated(racks) == [0, 3, 1, 5, 4, 2]


def test_rack_aware_matches_kafka_example() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    got = assign_rack_aware(racks, 7, 3, start_index=0, shift=0)
    assert got[:6] == [[0, 3, 1], [3, 1, 5], [1, 5, 4], [5, 4, 2], [4, 2, 0], [2, 0, 3]]
    assert got[6] == [0, 4, 2]  # after one round the followers shift


def test_rack_aware_spreads_over_racks() -> None:
    racks = {b: f"r{b % 3}" for b in range(9)}
    for lists in (assign_rack_aware(racks, 50, 3, start_index=s, shift=t) for s in range(3) for t in range(3)):
        for r in lists:
            assert len({racks[b] for b in r}) == 3


def test_random_start_and_shift_are_seedable() -> None:
    a = assign(list(range(6)), None, 12, 2, np.random.default_rng(7))
    b = assign(list(range(6)), None, 12, 2, np.random.default_rng(7))
    c = assign(list(range(6)), None, 12, 2, np.random.default_rng(8))
    assert a == b
    assert a != c or a == assign(list(range(6)), None, 12, 2, start_index=0, shift=0)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InputError, match="replication factor 4"):
        assign_rack_unaware([0, 1, 2], 3, 4, start_index=0, shift=0)
    with pytest.raises(InputError, match="broker 2 has no rack"):
        assign([0, 1, 2], {0: "a", 1: "b", 2: None}, 3, 2)
