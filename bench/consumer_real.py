"""Seed 000's experiment on a real local cluster: 6 consumer processes, then k of them SIGKILLed.

    .venv/bin/python bench/consumer_real.py [--strategies balanced,balanced:cooperative,range,paper] [--kills 1,3]
                                            [--out out/consumer-real]

Starts its own 3-broker local cluster (free ports; stopped at the end), one topic with 12
partitions and Zipf-skewed produce rates, six ``group_worker`` processes whose per-record
processing time caps their throughput, kills ``k`` of them after the warm-up, and measures from the
kill on: throughput, end-to-end latency p50/p99 (consume time − producer timestamp), max lag
(sampled with the admin API every second), recovery time (kill → last assignment), and
produced = consumed (unique partition/offset pairs). Each worker's record log and its stderr
(kafka-python's INFO log) stay in the printed work directory.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from kafka.admin import NewTopic

from kafka import KafkaProducer
from kafka_balancer.consumer import group_worker
from kafka_balancer.consumer.loads import committed_offsets, end_offsets
from kafka_balancer.consumer.workloads import zipf_loads
from kafka_balancer.localcluster.cluster import LocalCluster
from kafka_balancer.localcluster.spec import ClusterSpec

PARTITIONS = 12
WORKERS = 6


def _produce(bootstrap: str, topic: str, rates: np.ndarray, stop: threading.Event, sent: list[int]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
    credit = np.zeros_like(rates)
    tick = 0.05
    while not stop.is_set():
        t = time.monotonic()
        credit += rates * tick
        for p in range(len(rates)):
            while credit[p] >= 1:
                producer.send(topic, value=b"m", partition=p)
                credit[p] -= 1
                sent[0] += 1
        time.sleep(max(0.0, tick - (time.monotonic() - t)))
    producer.flush()
    producer.close()


def one_run(bootstrap: str, admin: Any, strategy: str, killed: int, run_id: int, work: Path,
            rate_total: float, process_ms: float, warmup_s: float, after_s: float) -> dict[str, Any]:
    topic, group = f"real-{run_id}", f"real-group-{run_id}"
    admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=2)])
    time.sleep(2)
    rates = zipf_loads(PARTITIONS, 1.0, seed=3) * (rate_total / PARTITIONS)
    outs = [work / f"{run_id}-w{i}.log" for i in range(WORKERS)]
    procs = []
    for out in outs:
        name, _, protocol = strategy.partition(":")  # e.g. "balanced:cooperative"
        extra = ["--process-ms", str(process_ms)]
        if protocol:
            extra += ["--protocol", protocol]
        if name == "balanced":
            extra.append("--live-loads")
        # kafka-python's INFO log (joins, elected leader, assignments set) stays next to the worker's log
        extra += ["--log-level", "INFO"]
        procs.append(group_worker.spawn(bootstrap, group, topic, out, name, extra))
        time.sleep(0.3)
    stop, sent = threading.Event(), [0]
    lags: list[tuple[float, int]] = []
    try:
        deadline = time.time() + 90
        while time.time() < deadline and not all(o.exists() and "# assigned" in o.read_text() for o in outs):
            time.sleep(0.5)
        prod = threading.Thread(target=_produce, args=(bootstrap, topic, rates, stop, sent), daemon=True)
        prod.start()
        parts = [(topic, p) for p in range(PARTITIONS)]
        t_end_warm = time.time() + warmup_s
        while time.time() < t_end_warm:
            time.sleep(1)
        kill_t = time.time()
        rng = np.random.default_rng(run_id)
        victims = sorted(rng.choice(WORKERS, size=killed, replace=False).tolist())
        for v in victims:
            procs[v].send_signal(signal.SIGKILL)
        t_stop = kill_t + after_s
        while time.time() < t_stop:
            e, c = end_offsets(admin, parts), committed_offsets(admin, group)
            lags.append((time.time() - kill_t, sum(max(0, e[tp] - c.get(tp, 0)) for tp in parts)))
            time.sleep(1)
        stop.set()
        prod.join(timeout=20)
        # drain: until everything produced is consumed, or nothing moves for 30 s (at most 10 minutes); a
        # backlog left by 5 killed members takes a minute or more for the survivor
        total = sent[0]
        last, last_t, hard = -1, time.time(), time.time() + 600
        while time.time() < hard:
            n = len(_seen(outs))
            if n >= total:
                break
            if n > last:
                last, last_t = n, time.time()
            elif time.time() - last_t > 30:
                break
            time.sleep(1)
    finally:
        group_worker.stop(procs, timeout_s=20)
    seen, recs, events = _parse(outs)
    window = [(c, ts) for c, ts in recs if c >= kill_t]
    lat = np.asarray([c - ts / 1000.0 for c, ts in window]) if window else np.zeros(0)
    in_win = [c for c, _ in window if c <= kill_t + after_s]
    assigned_after = [t for kind, t in events if kind == "assigned" and t > kill_t]
    return {
        "strategy": strategy, "killed": killed, "alive": WORKERS - killed, "victims": victims,
        "produced": total, "consumed_unique": len(seen), "lost": max(0, total - len(seen)),
        "throughput": len(in_win) / after_s,
        "arrival_rate": float(rates.sum()),
        "latency_p50_s": float(np.percentile(lat, 50)) if lat.size else float("nan"),
        "latency_p99_s": float(np.percentile(lat, 99)) if lat.size else float("nan"),
        "max_lag": max((x for _, x in lags), default=0),
        "recovery_s": (max(assigned_after) - kill_t) if assigned_after else float("nan"),
    }


def _seen(outs: list[Path]) -> set[tuple[int, int]]:
    return _parse(outs)[0]


def _parse(outs: list[Path]) -> tuple[set[tuple[int, int]], list[tuple[float, int]], list[tuple[str, float]]]:
    seen: set[tuple[int, int]] = set()
    recs: list[tuple[float, int]] = []
    events: list[tuple[str, float]] = []
    for o in outs:
        if not o.exists():
            continue
        for line in o.read_text().splitlines():
            f = line.split()
            if not f:
                continue
            if f[0] == "#":
                events.append((f[1], float(f[2])))
            elif len(f) >= 4:
                key = (int(f[0]), int(f[1]))
                if key not in seen:
                    seen.add(key)
                    recs.append((float(f[2]), int(f[3])))
    return seen, recs, events


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--strategies", default="balanced,range,paper")
    ap.add_argument("--kills", default="1,3")
    ap.add_argument("--rate", type=float, default=600.0, help="total messages/s produced")
    ap.add_argument("--process-ms", type=float, default=4.0, help="per-record processing time (caps a worker)")
    ap.add_argument("--warmup-s", type=float, default=15.0)
    ap.add_argument("--after-s", type=float, default=35.0)
    ap.add_argument("--out", default="out/consumer-real")
    ap.add_argument("--render", default="", help="only render these results.json files (comma-separated; a later "
                    "file's (strategy, killed) rows replace an earlier one's) into --out")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.render:
        merged: dict[tuple[str, int], dict[str, Any]] = {}
        for f in args.render.split(","):
            for r in json.loads(Path(f).read_text()):
                merged[r["strategy"], r["killed"]] = r
        order = {s: i for i, s in enumerate(dict.fromkeys(r["strategy"] for r in merged.values()))}
        rows = sorted(merged.values(), key=lambda r: (r["killed"], order[r["strategy"]]))
        _write(rows, out, f"merged from {args.render} (each file written by this script)")
        return 0
    work = Path(tempfile.mkdtemp(prefix="consumer-real-"))
    print(f"worker logs (<run>-w<i>.log, stderr in <run>-w<i>.err): {work}", flush=True)
    cluster = LocalCluster(work / "cluster", ClusterSpec(brokers=3, controllers=1, brokers_per_host=1, heap_mb=256),
                           base_port=None)
    rows = []
    try:
        cluster.up(fresh=True, timeout_s=180)
        admin = cluster.admin()
        run_id = 0
        for k in [int(x) for x in args.kills.split(",")]:
            for s in args.strategies.split(","):
                run_id += 1
                row = one_run(cluster.bootstrap, admin, s, k, run_id, work, args.rate, args.process_ms,
                              args.warmup_s, args.after_s)
                print(json.dumps(row), flush=True)
                rows.append(row)
        admin.close()
    finally:
        cluster.down(wipe=True)
    _write(
        rows,
        out,
        f"Command: `.venv/bin/python bench/consumer_real.py --strategies {args.strategies} --kills {args.kills} "
        f"--after-s {args.after_s:g} --out {args.out}` (3-broker local cluster, 12 partitions, Zipf rates "
        f"{args.rate:g} msg/s in all, {args.process_ms:g} ms per record per worker; 2 shared cores).",
    )
    return 0


def _write(rows: list[dict[str, Any]], out: Path, head: str) -> None:
    (out / "results.json").write_text(json.dumps(rows, indent=2))
    lines = [
        head,
        "",
        "| killed | strategy | thr msg/s (arrival) | p50 s | p99 s | max lag | recovery s | produced | lost |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['killed']} | {r['strategy']} | {r['throughput']:.0f} ({r['arrival_rate']:.0f}) | "
            f"{r['latency_p50_s']:.3f} | {r['latency_p99_s']:.2f} | {r['max_lag']} | {r['recovery_s']:.2f} | "
            f"{r['produced']} | {r['lost']} |"
        )
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    _plot(rows, out / "consumer-real.png")


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Throughput, p99 latency, max lag and recovery time against consumers killed, one line a strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("throughput", "consumed msg/s after the kill"), ("latency_p99_s", "e2e latency p99 (s)"),
              ("max_lag", "max lag (messages)"), ("recovery_s", "kill to last assignment (s)")]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax, (key, label) in zip(axes.flat, panels, strict=True):
        for strat in sorted({r["strategy"] for r in rows}):
            pts = sorted((r["killed"], r[key]) for r in rows if r["strategy"] == strat)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=strat)
        ax.set_xlabel("consumers killed (of 6)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("seed 000's experiment on a real local cluster")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
