"""A consumer process for real-group experiments and tests: consume, record, commit.

``python -m kafka_balancer.consumer.group_worker --bootstrap B --group G --topic T --out FILE``
joins group G with one of our assignors, appends ``partition offset`` for each record it
processes to FILE (flushed before the offsets are committed: at-least-once, so a kill loses
nothing), and ``# assigned ...`` / ``# revoked ...`` lines on rebalances. Stops on SIGTERM or after
``--idle-exit-s`` seconds without records.
"""

from __future__ import annotations

import argparse
import logging
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kafka import ConsumerRebalanceListener, KafkaConsumer
from kafka_balancer.collect.admin import connect_admin
from kafka_balancer.consumer.kafka_adapter import LoadAwareAssignor, keep_join_pending
from kafka_balancer.consumer.loads import LiveLoads
from kafka_balancer.errors import BalancerError
from kafka_balancer.security.clients import kafka_kwargs
from kafka_balancer.security.option import add_command_config, settings_from_args


class _Log(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, fh: Any) -> None:
        self.fh = fh

    def _write(self, what: str, parts: Any) -> None:
        items = ",".join(f"{tp.topic}-{tp.partition}" for tp in sorted(parts))
        self.fh.write(f"# {what} {time.time():.3f} {items}\n")
        self.fh.flush()

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._write("revoked", revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._write("assigned", assigned)

    def on_partitions_lost(self, lost: Any) -> None:
        self._write("lost", lost)


def err_path(out: Path) -> Path:
    """Where a spawned worker's stderr (kafka-python's log) goes: beside its output, ``.err``."""
    return out.with_suffix(".err")


def spawn(bootstrap: str, group: str, topic: str, out: Path, strategy: str,
          extra: Sequence[str] = (), command_config: Path | None = None) -> subprocess.Popen[bytes]:
    """Start a worker process (6 s session, 1 s heartbeat) writing to ``out``; ``extra`` are more flags;
    ``command_config``: a client.properties for a secured cluster (the path is passed, never its content)."""
    cmd = [sys.executable, "-m", "kafka_balancer.consumer.group_worker", "--bootstrap", bootstrap, "--group", group,
           "--topic", topic, "--out", str(out), "--strategy", strategy, "--session-ms", "6000",
           "--heartbeat-ms", "1000", *extra]
    if command_config is not None:
        cmd += ["--command-config", str(command_config)]
    with open(err_path(out), "w") as err:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)


def stop(procs: Sequence[subprocess.Popen[bytes]], timeout_s: float = 15.0) -> None:
    """SIGTERM every worker still running, wait for each, SIGKILL those that outlast ``timeout_s``."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="group_worker")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--strategy", default="balanced")
    p.add_argument("--protocol", default=None)
    p.add_argument("--capacity", type=float, default=1.0)
    p.add_argument("--session-ms", type=int, default=6000)
    p.add_argument("--heartbeat-ms", type=int, default=1000)
    p.add_argument("--idle-exit-s", type=float, default=0.0)
    p.add_argument("--process-ms", type=float, default=0.0, help="simulated processing time per record")
    p.add_argument("--live-loads", action="store_true")
    p.add_argument("--log-level", default="WARNING", help="Python logging level on stderr (DEBUG shows kafka-python's "
                   "group protocol)")
    add_command_config(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s.%(msecs)03d %(threadName)s %(name)s %(levelname)s %(message)s",
                        datefmt="%H:%M:%S")
    try:
        security = settings_from_args(args)
        if security is not None:  # fail with one line on bad settings, before the consumer retries forever
            connect_admin(args.bootstrap, timeout_s=15.0, security=security).close()
    except BalancerError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    loads = (LiveLoads(args.bootstrap, args.group, [args.topic], interval_s=2.0, security=security)
             if args.live_loads else None)
    assignor = LoadAwareAssignor(args.strategy, protocol=args.protocol, loads=loads, capacity=args.capacity)
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap, group_id=args.group, enable_auto_commit=False,
        auto_offset_reset="earliest", partition_assignment_strategy=[assignor],
        session_timeout_ms=args.session_ms, heartbeat_interval_ms=args.heartbeat_ms,
        client_id=f"worker-{args.out.rsplit('/', 1)[-1]}", **kafka_kwargs(security),
    )
    keep_join_pending(consumer)
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(flag=True))
    last = time.monotonic()
    with open(args.out, "a", buffering=1) as fh:
        consumer.subscribe([args.topic], listener=_Log(fh))
        while not stop["flag"]:
            batch = consumer.poll(timeout_ms=200)
            n = 0
            for tp, records in batch.items():
                for r in records:
                    if args.process_ms:
                        time.sleep(args.process_ms / 1000.0)
                    fh.write(f"{tp.partition} {r.offset} {time.time():.4f} {r.timestamp}\n")
                    n += 1
            if n:
                fh.flush()
                consumer.commit()
                last = time.monotonic()
            elif args.idle_exit_s and time.monotonic() - last > args.idle_exit_s:
                break
    consumer.close()
    if loads is not None:
        loads.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
