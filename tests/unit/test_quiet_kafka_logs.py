"""quiet_kafka_logs: nested and overlapping spans (the service's threads) restore the level from before the
first span, never one another span set."""

from __future__ import annotations

import logging
import threading
import time

from kafka_balancer.collect.admin import quiet_kafka_logs


def test_overlapping_spans_restore_the_original_level() -> None:
    logger = logging.getLogger("kafka")
    before = logger.level
    logger.setLevel(logging.INFO)
    try:
        gate = threading.Barrier(8)

        def span(i: int) -> None:
            gate.wait()
            with quiet_kafka_logs():
                time.sleep(0.002 * i)

        threads = [threading.Thread(target=span, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert logger.level == logging.INFO
        with quiet_kafka_logs(), quiet_kafka_logs(logging.ERROR):
            assert logger.level == logging.CRITICAL  # the strictest open span wins
        assert logger.level == logging.INFO
    finally:
        logger.setLevel(before)
