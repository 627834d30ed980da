"""The skewed workload definition (no cluster)."""

from __future__ import annotations

import random

from kafka_balancer.sim.workload import KeyChooser, message_size, skewed_workload


def test_scaling_multiplies_rates_and_backlog():
    a, b = skewed_workload(1.0), skewed_workload(0.5)
    assert b.bytes_per_s() == a.bytes_per_s() * 0.5
    assert [t.prefill_mb for t in b.topics] == [t.prefill_mb * 0.5 for t in a.topics]


def test_replication_cap():
    assert max(t.replication for t in skewed_workload(replication=2).topics) == 2


def test_hot_keys_are_seeded_and_skewed():
    spec = skewed_workload()
    orders = spec.topics[0]
    k1 = [KeyChooser(orders, random.Random(5)).next() for _ in range(1)]
    keys = KeyChooser(orders, random.Random(5))
    seq = [keys.next() for _ in range(2000)]
    assert seq[0] == k1[0]
    hot = sum(1 for k in seq if k.startswith(b"hot-"))
    assert 0.65 < hot / len(seq) < 0.75
    sizes = [message_size(orders, random.Random(i)) for i in range(50)]
    assert min(sizes) >= orders.size * 0.75 and max(sizes) <= orders.size * 1.25
