"""``collect.admin.connect_admin`` against a port where nothing listens (loopback port 1): one clear
ClusterError, and no kafka-python I/O thread left behind (kafka-python starts it before bootstrapping and
left it reconnecting for ever when the bootstrap failed; three failed connects left three)."""

from __future__ import annotations

import threading
import time

import pytest

from kafka_balancer.collect.admin import connect_admin
from kafka_balancer.errors import ClusterError


def _io_threads() -> set[int]:
    return {t.ident or 0 for t in threading.enumerate() if t.name.startswith("kafka-io-") and t.is_alive()}


def test_a_failed_connect_leaves_no_io_thread() -> None:
    before = _io_threads()
    for _ in range(3):
        with pytest.raises(ClusterError, match=r"cannot reach Kafka at 127\.0\.0\.1:1 within 0\.3 s"):
            connect_admin("127.0.0.1:1", timeout_s=0.3)
    deadline = time.monotonic() + 5
    while _io_threads() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _io_threads() - before
