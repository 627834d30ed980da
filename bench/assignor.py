"""Benchmark: every consumer assignor on Zipf loads, 1k..1M partitions x 10..2,000 consumers.

    .venv/bin/python bench/assignor.py [--quick] [--skew 1.0] [--out out/bench-assignor]

Prints a Markdown table (time, max/mean load, max/lower bound) and writes JSON. Also times
kafka-python's own StickyAssignmentExecutor where it finishes in reasonable time (capped: at most
10k partitions and 100 consumers; larger cells are skipped and marked), and the ``assign`` CLI on
100k x 1,000 end to end (JSON in, JSON out, in a child process).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from kafka_balancer.consumer.assignors import STRATEGIES, run
from kafka_balancer.consumer.invariants import check_result
from kafka_balancer.consumer.problem import problem_from_arrays
from kafka_balancer.consumer.result import stats
from kafka_balancer.consumer.workloads import zipf_loads

PARTITIONS = (1_000, 10_000, 100_000, 1_000_000)
CONSUMERS = (10, 100, 1_000, 2_000)
SKEW = 1.0
KP_MAX_PARTITIONS, KP_MAX_CONSUMERS = 10_000, 100


def _kafka_python_sticky(P: int, M: int, loads: np.ndarray) -> float:
    from kafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyAssignmentExecutor,
        StickyAssignorMemberMetadataV1,
    )

    class Meta:
        def topics(self) -> set[str]:
            return {"t"}

        def partitions_for_topic(self, topic: str) -> set[int]:
            return set(range(P))

    members = {f"c{i}": StickyAssignorMemberMetadataV1(subscription=["t"], partitions=[], generation=1)
               for i in range(M)}
    t = time.perf_counter()
    ex = StickyAssignmentExecutor(Meta(), members)
    ex.perform_initial_assignment()
    ex.balance()
    return time.perf_counter() - t


def cli_time(P: int, M: int) -> float:
    loads = zipf_loads(P, SKEW, seed=7)
    doc = {"members": [{"id": f"c{i}", "topics": ["t"]} for i in range(M)],
           "partitions": [{"topic": "t", "partition": p, "load": float(v)} for p, v in enumerate(loads)]}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "in.json"
        path.write_text(json.dumps(doc))
        cmd = [str(Path(sys.executable).parent / "kafka-balancer"), "assign", "--input", str(path),
               "--strategy", "balanced", "--json"]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="only up to 100k partitions")
    ap.add_argument("--out", default="out/bench-assignor")
    ap.add_argument("--skew", type=float, default=SKEW, help="Zipf exponent of the loads")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI timing")
    ap.add_argument("--anchor", action="store_true",
                    help="10,000 members (the KIP-848 uniform assignor's anchor) at 10k/100k/1M partitions instead")
    args = ap.parse_args()
    parts = PARTITIONS[:3] if args.quick else PARTITIONS
    rows = []
    cells = [(P, M) for P in parts for M in CONSUMERS]
    if args.anchor:
        cells = [(P, 10_000) for P in (10_000, 100_000, 1_000_000)]
        args.no_cli = True
    for P, M in tqdm(cells, desc="assignor grid", file=sys.stderr):
        loads = zipf_loads(P, args.skew, seed=P + M)
        problem = problem_from_arrays(M, loads)
        for name in STRATEGIES:
            t = time.perf_counter()
            res = run(name, problem)
            dt = time.perf_counter() - t
            check_result(problem, res)
            st = stats(problem, res.owner)
            rows.append({"partitions": P, "consumers": M, "strategy": name, "seconds": dt,
                         "max_over_mean": st.max_load / st.mean_load, "max_over_lb": st.ratio})
        if P <= KP_MAX_PARTITIONS and M <= KP_MAX_CONSUMERS:
            rows.append({"partitions": P, "consumers": M, "strategy": "kafka-python sticky",
                         "seconds": _kafka_python_sticky(P, M, loads), "max_over_mean": None, "max_over_lb": None})
    cli = float("nan") if args.no_cli else cli_time(100_000, 1_000)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"rows": rows, "cli_100k_1000_s": cli}, indent=2))
    print("| partitions | consumers | strategy | time (s) | max / mean | max / lower bound |")
    print("|---:|---:|---|---:|---:|---:|")
    for r in rows:
        mm = "" if r["max_over_mean"] is None else f"{r['max_over_mean']:.3f}"
        ml = "" if r["max_over_lb"] is None else f"{r['max_over_lb']:.3f}"
        print(f"| {r['partitions']:,} | {r['consumers']:,} | {r['strategy']} | {r['seconds']:.3f} | {mm} | {ml} |")
    print(f"\nCLI `assign --strategy balanced` on 100,000 x 1,000 (JSON in/out, child process): {cli:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
