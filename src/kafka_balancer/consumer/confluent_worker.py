"""A consumer on confluent-kafka (librdkafka) in a KIP-848 group: the server-side assignor's Python client.

``python -m kafka_balancer.consumer.confluent_worker BOOTSTRAP GROUP TOPIC OUT_FILE [--assignor NAME]
[--per-record-ms MS]`` joins GROUP with ``group.protocol=consumer`` and ``group.remote.assignor=NAME``
(default ``kafka-balancer``) and writes the same lines as the Java ``GroupConsumer``:
``A <ts_ms> <p,p,...>`` on each assignment change and ``R <partition> <offset> <record ts_ms> <consumed
ts_ms>`` per record, flushed before each synchronous commit, so a killed process never committed a record
it did not write. SIGTERM stops it.

The client settings a user needs are in :func:`consumer_config`:
    >>> consumer_config("127.0.0.1:9092", "g")["group.remote.assignor"]
    'kafka-balancer'
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import time
from typing import Any, TextIO


def consumer_config(bootstrap: str, group: str, assignor: str = "kafka-balancer") -> dict[str, Any]:
    """confluent-kafka settings for a member of a consumer-protocol group using ``assignor``."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": "consumer",
        "group.remote.assignor": assignor,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }


def _report(out: TextIO, mine: set[int]) -> None:
    out.write(f"A {int(time.time() * 1000)} {','.join(map(str, sorted(mine))) or '-'}\n")
    out.flush()


def run(bootstrap: str, group: str, topic: str, out_path: str, assignor: str, per_record_ms: float) -> int:
    from confluent_kafka import Consumer, KafkaException

    stop = False

    def on_term(_sig: int, _frame: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    mine: set[int] = set()
    with open(out_path, "a", encoding="utf-8") as out:
        def assigned(_c: Any, parts: list[Any]) -> None:
            mine.update(tp.partition for tp in parts)
            _report(out, mine)

        def revoked(_c: Any, parts: list[Any]) -> None:
            mine.difference_update(tp.partition for tp in parts)
            _report(out, mine)

        consumer = Consumer(consumer_config(bootstrap, group, assignor))
        consumer.subscribe([topic], on_assign=assigned, on_revoke=revoked, on_lost=revoked)
        try:
            while not stop:
                msgs = consumer.consume(num_messages=100, timeout=0.5)
                got = False
                for m in msgs:
                    if m.error():
                        continue
                    if per_record_ms > 0:
                        time.sleep(per_record_ms / 1000.0)
                    ts = m.timestamp()[1]
                    out.write(f"R {m.partition()} {m.offset()} {ts} {int(time.time() * 1000)}\n")
                    got = True
                if got:
                    out.flush()
                    # a failed commit means the partitions moved away: their new owner consumes them again
                    with contextlib.suppress(KafkaException):
                        consumer.commit(asynchronous=False)
        finally:
            out.flush()
            consumer.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="confluent_worker", description=__doc__.split("\n\n")[0])
    ap.add_argument("bootstrap")
    ap.add_argument("group")
    ap.add_argument("topic")
    ap.add_argument("out")
    ap.add_argument("--assignor", default="kafka-balancer")
    ap.add_argument("--per-record-ms", type=float, default=0.0)
    a = ap.parse_args(argv)
    return run(a.bootstrap, a.group, a.topic, a.out, a.assignor, a.per_record_ms)


if __name__ == "__main__":
    raise SystemExit(main())
