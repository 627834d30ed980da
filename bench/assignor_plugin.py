"""Benchmark: the broker-side assignor ``kafka-balancer`` next to Kafka's ``uniform`` on the same groups.

Runs the plugin's plain timed harness (``Bench`` main class: both assignors, same input, one JVM per
configuration, 2 warm-up runs then REPS timed runs) for

* speed: 10,000 members x 100,000 partitions (100 topics) and 1,000 x 10,000, fresh and after 1 % of
  the members left (each assignor sticky from its own previous result); 30 / 300 untimed warm-up runs
  of the same call, then 30 / 300 timed runs (min, median, p90);
* quality: Zipf-skewed loads over many seeds: max member load / lower bound (lower bound =
  max(total / members, heaviest partition)) for both.

    .venv/bin/python bench/assignor_plugin.py [--quick] [--out out/bench-assignor-plugin]

Prints a table and writes results.json. Timings are noisy on a shared machine: ``uptime`` is
recorded next to them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

from kafka_balancer.jvm.assignor_harness import classpath

# (members, partitions, topics, zipf s, timed runs, seeds, warm-up runs): the warm-up runs the same call
# untimed until the JIT has compiled the whole path (a few warm-ups leave parts interpreted and time them)
SPEED = [(10_000, 100_000, 100, 1.0, 30, 1, 30), (1_000, 10_000, 10, 1.0, 300, 1, 300)]
QUALITY = [(6, 24, 1, 1.0, 1, 30, 1), (6, 24, 1, 0.6, 1, 30, 1), (20, 200, 4, 0.8, 1, 30, 1),
           (100, 2_000, 10, 0.6, 1, 20, 1)]


def run(cfg: tuple[int, int, int, float, int, int, int], heap: str) -> list[dict[str, Any]]:
    m, p, t, s, reps, seeds, warm = cfg
    cmd = ["java", f"-Xmx{heap}", "-cp", classpath(), "io.github.kafkabalancer.assignor.Bench",
           str(m), str(p), str(t), str(s), str(reps), str(seeds), str(warm)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=3600).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller speed case and fewer seeds")
    ap.add_argument("--out", type=Path, default=Path("out/bench-assignor-plugin"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    speed = SPEED[1:] if a.quick else SPEED
    rows: list[dict[str, Any]] = []
    print("## speed (ms; min / median / p90 over timed runs, after warm-up)")
    for cfg in speed:
        load = os.getloadavg()
        got = run(cfg, "3g")
        for r in got:
            r["loadavg"] = [round(x, 1) for x in load]
            rows.append({**r, "kind": "speed"})
            print(f"{r['assignor']:>15} {r['round']:>8} {r['members']:>6} x {r['partitions']:>7}: "
                  f"{r['min_ms']:8.2f} / {r['median_ms']:8.2f} / {r['p90_ms']:8.2f} ms  "
                  f"pair ratio {r['median_pair_ratio']:6.2f}  entries {r['topic_entries']:>6}  "
                  f"max/LB {r['max_over_lb']:.4f}  "
                  f"(load avg {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    print("\n## quality (Zipf loads; max member load / lower bound over seeds)")
    for cfg in QUALITY if not a.quick else QUALITY[:2]:
        got = run(cfg, "1g")
        for r in got:
            rows.append({**r, "kind": "quality"})
        for name in ("kafka-balancer", "uniform"):
            for rnd in ("fresh", "1%-left"):
                v = [r["max_over_lb"] for r in got if r["assignor"] == name and r["round"] == rnd]
                within = sum(x <= 1.05 for x in v)
                print(f"{cfg[0]:>4} members {cfg[1]:>5} partitions s={cfg[3]:.1f} {name:>15} {rnd:>8}: "
                      f"median {statistics.median(v):.3f}  max {max(v):.3f}  <=1.05 in {within}/{len(v)}")
    (a.out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"\nraw rows: {a.out / 'results.json'}")


if __name__ == "__main__":
    main()
