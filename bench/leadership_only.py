"""What `plan --leadership-only` buys: CPU and network-out σ, leader-count CV and leader moves, per case.

No replica moves in that mode, so disk and network-in stay as they are and the measures that can change are
those of leadership. One row per (preset, seed); the snapshots are the comparison's (cached in
``out/compare``). To compare two versions of the planner, run it once per source tree::

    .venv/bin/python bench/leadership_only.py --cases paper,racks48,hetero,new-brokers --seeds 0,1,2
    PYTHONPATH=/path/to/other/tree/src .venv/bin/python bench/leadership_only.py ...

``--cases large --seeds 0`` adds the 1,000-broker case (seconds per plan, and the plan's CPU time).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.compare_planners import make_snapshot, plan_measures  # noqa: E402

from kafka_balancer.planner import plan  # noqa: E402
from kafka_balancer.planner.constraints import Constraints  # noqa: E402

THETA, EPS = 0.8, 0.1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="paper,racks48,hetero,new-brokers")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--work", default=str(ROOT / "out" / "compare"), help="where the snapshots are cached")
    args = ap.parse_args(argv)
    print("| case | seed | σ cpu before → after | σ nw_out before → after | leader CV after | leader moves "
          "| plan CPU (s) |")
    print("|---|---|---|---|---|---|---|")
    for case in filter(None, args.cases.split(",")):
        for seed in (int(s) for s in args.seeds.split(",") if s):
            snap = make_snapshot(case, seed, Path(args.work) / f"{case}-seed{seed}.json")
            t0 = time.process_time()
            result = plan(snap, THETA, EPS, constraints=Constraints(leadership_only=True))
            cpu = time.process_time() - t0
            m, _ = plan_measures(snap, result.plan, THETA, EPS)
            b = result.before.resources
            print(f"| {case} | {seed} | {b['cpu'].sigma:.3e} → {m['sigma_cpu']:.3e} | {b['nw_out'].sigma:.3e} → "
                  f"{m['sigma_nw_out']:.3e} | {m['leader_cv']:.3f} | {m['leader_moves']:.0f} | {cpu:.2f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
