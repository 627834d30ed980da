"""API latency of the balancer service on a 1,000-broker model: GET /api/load and GET /api/proposal at a
fixed 50 requests/s (alternating), loopback only, bounded in time.

    .venv/bin/python bench/serve_api.py [--seconds 30] [--rate 50] [--preset large]

The model is the simulator's ``large`` preset (1,000 brokers, 100k partitions) loaded into a service
with no cluster behind it. The proposal is planned once before the measurement (the first request
after a model change pays for the plan, later ones are served from the cache until the model changes
again: that first plan's time is reported separately). Requests are sent on an open-loop schedule (a
slow answer does not delay the next request), each on its own keep-alive connection from a pool of
workers. Prints p50/p90/p99/max per endpoint and the load averages before and after.
"""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import sys
import threading
import time
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--preset", default="large")
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()

    from kafka_balancer.serve.api import create_app
    from kafka_balancer.serve.config import ServeConfig
    from kafka_balancer.serve.http import start_in_thread
    from kafka_balancer.serve.service import Service
    from kafka_balancer.sim.cluster import PRESETS, generate

    load0 = os.getloadavg()
    t0 = time.monotonic()
    snap = generate(PRESETS[args.preset], seed=0)
    t_gen = time.monotonic() - t0
    state = Path("out/bench-serve")
    cfg = ServeConfig(bootstrap="127.0.0.1:1", state_dir=state, token="bench", port=0)
    svc = Service(cfg, model_source="sizes")
    svc.set_model(snap)
    t0 = time.monotonic()
    p, _ = svc.proposal()
    t_plan = time.monotonic() - t0
    http_srv = start_in_thread(create_app(svc, "bench"), cfg, port=0)
    print(f"model: {snap.n_brokers} brokers, {snap.n_partitions} partitions, {snap.n_replicas} replicas "
          f"(generated in {t_gen:.1f} s); first proposal planned in {t_plan:.1f} s ({len(p.plan)} partitions)",
          flush=True)

    paths = ["/api/load", "/api/proposal"]
    lat: dict[str, list[float]] = {x: [] for x in paths}
    sizes: dict[str, int] = {}
    errors: list[str] = []
    jobs: queue.Queue[tuple[str, float] | None] = queue.Queue()

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", http_srv.port, timeout=120)
        while True:
            job = jobs.get()
            if job is None:
                return
            path, due = job
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read()
                done = time.monotonic()
                if r.status != 200:
                    errors.append(f"{path}: HTTP {r.status}")
                sizes[path] = len(body)
                lat[path].append(done - due)  # from when it was due: queueing counts
            except OSError as exc:
                errors.append(f"{path}: {exc}")
                conn = http.client.HTTPConnection("127.0.0.1", http_srv.port, timeout=120)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.workers)]
    for t in threads:
        t.start()
    for path in paths:  # warm-up: one request each
        jobs.put((path, time.monotonic()))
    time.sleep(3)
    for x in paths:
        lat[x].clear()
    n = int(args.seconds * args.rate)
    start = time.monotonic() + 0.5
    for i in range(n):
        due = start + i / args.rate
        time.sleep(max(0.0, due - time.monotonic()))
        jobs.put((paths[i % 2], due))
    for _ in threads:
        jobs.put(None)
    for t in threads:
        t.join(timeout=300)
    http_srv.stop()
    load1 = os.getloadavg()
    print(f"{n} requests in {args.seconds:g} s at {args.rate:g}/s; errors: {len(errors)} {errors[:3]}")
    print("| endpoint | requests | response | p50 ms | p90 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|---|")
    for x in paths:
        a = np.array(lat[x]) * 1000
        print(f"| GET {x} | {len(a)} | {sizes.get(x, 0) / 1e3:.0f} kB | {np.percentile(a, 50):.1f} | "
              f"{np.percentile(a, 90):.1f} | {np.percentile(a, 99):.1f} | {a.max():.1f} |")
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
          f"after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} ({os.cpu_count()} cores)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
