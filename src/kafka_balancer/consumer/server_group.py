"""Consumer-protocol (KIP-848) groups for tests and benchmarks: start Java and confluent-kafka members,
read what they consumed, find the group's coordinator, produce and check that nothing was lost.

Both kinds of member write the same file format (see ``GroupConsumer.java`` and
:mod:`.confluent_worker`): ``A <ts_ms> <p,p,...>`` per assignment change, ``R <partition> <offset>
<record ts_ms> <consumed ts_ms>`` per record.

Example:
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "w.txt"
    >>> _ = f.write_text("A 1 0,2\\nR 0 5 10 20\\nR 2 0 11 25\\nA 2 2\\n")
    >>> w = read_worker(f); (sorted(w.assigned), sorted(w.records), w.latencies_ms)
    ([2], [(0, 5), (2, 0)], [10, 14])
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JAVA_CONSUMER_CLASS = "io.github.kafkabalancer.assignor.GroupConsumer"


@dataclass
class WorkerView:
    assigned: set[int] = field(default_factory=set)  # the last assignment it reported
    records: set[tuple[int, int]] = field(default_factory=set)
    latencies_ms: list[int] = field(default_factory=list)
    record_ts_ms: list[int] = field(default_factory=list)  # produce time of each record, as latencies_ms
    assignments: int = 0


def read_worker(path: Path) -> WorkerView:
    """Parse one member's output file (a missing file is an empty view)."""
    v = WorkerView()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return v
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "A":
            v.assigned = set() if parts[2] == "-" else {int(x) for x in parts[2].split(",")}
            v.assignments += 1
        elif len(parts) == 5 and parts[0] == "R":
            v.records.add((int(parts[1]), int(parts[2])))
            v.latencies_ms.append(int(parts[4]) - int(parts[3]))
            v.record_ts_ms.append(int(parts[3]))
    return v


def start_member(kind: str, bootstrap: str, group: str, topic: str, out: Path, *, assignor: str = "kafka-balancer",
                 per_record_ms: float = 0.0) -> subprocess.Popen[bytes]:
    """Start one member: ``kind`` is ``java`` (kafka-clients) or ``confluent`` (librdkafka)."""
    if kind == "java":
        from kafka_balancer.jvm.assignor_harness import classpath

        cmd = ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classpath(),
               JAVA_CONSUMER_CLASS, bootstrap, group, topic, str(out), "--assignor", assignor,
               "--per-record-ms", str(per_record_ms)]
    elif kind == "confluent":
        cmd = [sys.executable, "-m", "kafka_balancer.consumer.confluent_worker", bootstrap, group, topic, str(out),
               "--assignor", assignor, "--per-record-ms", str(per_record_ms)]
    else:
        raise ValueError(f"unknown member kind {kind!r}")
    with open(out.with_suffix(".err"), "ab") as err:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)


def stop_members(procs: Iterable[subprocess.Popen[bytes]], timeout_s: float = 20.0) -> None:
    """SIGTERM, wait, SIGKILL what outlasts ``timeout_s``: the same as the classic group's workers."""
    from kafka_balancer.consumer.group_worker import stop

    stop(list(procs), timeout_s)


def kill_member(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL: the member vanishes without leaving the group (detected after the session timeout)."""
    proc.kill()
    proc.wait()


def produce(bootstrap: str, topic: str, per_partition: Sequence[int]) -> set[tuple[int, int]]:
    """Send ``per_partition[p]`` records to each partition (acks=all); returns their (partition, offset)."""
    from kafka import KafkaProducer
    from kafka_balancer.collect.admin import quiet_kafka_logs

    with quiet_kafka_logs():
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, retries=10)
        try:
            futures = [producer.send(topic, value=b"x" * 64, partition=p)
                       for p, n in enumerate(per_partition) for _ in range(n)]
            producer.flush(timeout=60)
            out = set()
            for f in futures:
                md = f.get(timeout=60)
                out.add((md.partition, md.offset))
        finally:
            producer.close(timeout=5)
    return out


def coordinator_of(admin: Any, group: str, offsets_partitions: int | None = None) -> int:
    """The broker id leading the ``__consumer_offsets`` partition of ``group`` (its group coordinator)."""
    from kafka_balancer.collect.admin import retried
    from kafka_balancer.consumer.group_locate import offsets_partition_for

    meta = retried(lambda: admin.describe_topics(["__consumer_offsets"]))[0]
    parts = {p["partition_index"]: p["leader_id"] for p in meta["partitions"]}
    n = offsets_partitions or len(parts)
    return int(parts[offsets_partition_for(group, n)])


def wait_until(cond: Callable[[], bool], timeout_s: float, what: str, poll_s: float = 0.5) -> float:
    """Poll ``cond`` until true; returns the seconds it took; AssertionError naming ``what`` on timeout."""
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout_s:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)
    return time.monotonic() - t0


def max_over_bound(assignment: Sequence[set[int]], loads: Sequence[float]) -> float:
    """Max member load ÷ lower bound (max(total / members, heaviest partition)) of an assignment."""
    members = [a for a in assignment]
    total = float(sum(loads))
    lb = max(total / len(members), max(loads))
    return max(sum(loads[p] for p in a) for a in members) / lb
