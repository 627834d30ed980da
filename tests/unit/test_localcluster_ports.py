"""Listening ports for local clusters and test servers: free, distinct, and outside the range the kernel
gives outgoing connections (where a client could take one before the broker binds it)."""

from __future__ import annotations

import socket
from pathlib import Path

from kafka_balancer.localcluster.processes import LISTEN_PORTS, ephemeral_range, free_ports, port_free


def test_ports_are_free_distinct_and_outside_the_ephemeral_range() -> None:
    lo, hi = ephemeral_range()
    ports = free_ports(9)
    assert len(set(ports)) == 9
    for p in ports:
        assert not lo <= p <= hi
        assert LISTEN_PORTS[0] <= p < LISTEN_PORTS[1]
        assert port_free(p)


def test_a_port_in_use_is_skipped() -> None:
    (first,) = free_ports(1, pid=12345)
    with socket.socket() as s:
        s.bind(("127.0.0.1", first))
        s.listen()
        again = free_ports(1, pid=12345)  # the same starting point: the search passes the bound port
    assert again != [first]


def test_processes_start_their_search_apart() -> None:
    assert free_ports(1, pid=1) != free_ports(1, pid=2)


def test_unreadable_range_gives_linux_default(tmp_path: Path) -> None:
    assert ephemeral_range(tmp_path / "missing") == (32768, 60999)
    bad = tmp_path / "range"
    bad.write_text("not numbers\n")
    assert ephemeral_range(bad) == (32768, 60999)
    good = tmp_path / "range2"
    good.write_text("40000\t50000\n")
    assert ephemeral_range(good) == (40000, 50000)


def test_successive_searches_do_not_hand_out_a_port_again() -> None:
    # a broker that is down frees its port; a server started meanwhile must not get it
    first = free_ports(3)
    second = free_ports(3)
    assert not set(first) & set(second)
    assert all(port_free(p) for p in first + second)
