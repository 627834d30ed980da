"""Issue 13's quality floors for our default plans, against Cruise Control's recorded plans.

Cruise Control's plans do not change with ours, so its measures can be read from the harness's JSON output
(``bench/compare_planners.py --json``) rather than run again (its fast mode takes minutes on the big cases).
This script plans each case of those files with our defaults, judges the plan with the harness's own code,
and prints one row per case with every floor: σ per resource ÷ the peer's, bytes ÷ the peer's, replica-count
and leader-count CV against the peer's, and hard-constraint violations. A floor that fails is in bold, and
the last line counts them.

Command (the seed-1 table and every other seed's file; ``--skip large,huge`` leaves out the two big cases)::

    .venv/bin/python bench/floors_at_defaults.py docs/compare-bench/results.json \\
        docs/compare-bench/seeds/small-seed0.json docs/compare-bench/seeds/small-seed2.json \\
        docs/compare-bench/seeds/small-seed3.json docs/compare-bench/seeds/small-seed4.json \\
        docs/compare-bench/seeds/small-seed5.json docs/compare-bench/seeds/small-seed6.json \\
        docs/compare-bench/seeds/small-seed7.json docs/compare-bench/seeds/small-seed8.json \\
        docs/compare-bench/seeds/small-seed9.json docs/compare-bench/seeds/small-seed10.json \\
        docs/compare-bench/seeds/small-seed11.json

``--only hetero --goals capacity,replica_count`` plans one preset under another goal policy (session 26's
table of goal orders on ``hetero``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.compare_planners import make_snapshot, plan_measures  # noqa: E402

from kafka_balancer.planner import plan  # noqa: E402
from kafka_balancer.planner.policy import parse_goals  # noqa: E402

RES = ("cpu", "disk", "nw_in", "nw_out")
TOL = 1e-9  # relative: a ratio this close to 1 is a tie (the harness rounds nothing)


def _cell(text: str, ok: bool) -> str:
    return text if ok else f"**{text}**"


def floors_row(preset: str, seed: int, peer: dict[str, float], ours: dict[str, float],
               violations: int) -> tuple[str, int]:
    """One markdown row and how many floors it fails. The last column, (broker, resource) pairs above θ
    after each plan, is context, not a floor: the issue ranks θ first, and Cruise Control's plans may leave
    pairs above it."""
    cells, failed = [], 0
    for r in RES:
        ratio = ours[f"sigma_{r}"] / peer[f"sigma_{r}"] if peer[f"sigma_{r}"] > 0 else 0.0
        ok = ratio <= 1 + TOL
        failed += not ok
        cells.append(_cell(f"{ratio:.3f}", ok))
    checks = [
        (f"{ours['bytes_moved'] / 1e9:,.1f} / {peer['bytes_moved'] / 1e9:,.1f}",
         ours["bytes_moved"] <= peer["bytes_moved"] * (1 + TOL)),
        (f"{ours['replica_cv']:.3f} / {peer['replica_cv']:.3f}", ours["replica_cv"] <= peer["replica_cv"] + TOL),
        (f"{ours['leader_cv']:.3f} / {peer['leader_cv']:.3f}", ours["leader_cv"] <= peer["leader_cv"] + TOL),
        (str(violations), violations == 0),
    ]
    for text, ok in checks:
        failed += not ok
        cells.append(_cell(text, ok))
    cells.append(f"{ours['over_theta_pairs']:.0f} / {peer['over_theta_pairs']:.0f}")
    return f"| {preset} | {seed} | {' / '.join(cells[:4])} | {' | '.join(cells[4:])} |", failed


def cases(results: dict[str, Any], peer: str) -> list[tuple[str, dict[str, float]]]:
    """(preset, the peer's measures) for every case of a harness JSON where the peer finished."""
    out = []
    for r in results["results"]:
        for o in r["outcomes"]:
            if o["planner"] == peer and o["status"] == "ok":
                out.append((r["case"]["preset"], o["measures"]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="JSON files written by bench/compare_planners.py --json")
    ap.add_argument("--peer", default="cc-fast")
    ap.add_argument("--skip", default="", help="comma-separated presets to leave out (the big ones take minutes)")
    ap.add_argument("--only", default="", help="comma-separated presets: only these")
    ap.add_argument("--goals", default=None, help="our goal policy, as plan --goals (default: the default policy)")
    ap.add_argument("--work", default=str(ROOT / "out" / "compare"), help="where the snapshots are cached")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    only = set(filter(None, args.only.split(",")))
    goals = parse_goals(args.goals) if args.goals is not None else None
    lines = [
        "| case | seed | σ ours ÷ peer (cpu / disk / nw_in / nw_out) | GB ours / peer | replica CV ours / peer "
        "| leader CV ours / peer | violations | pairs > θ ours / peer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    failed = 0
    for path in args.results:
        results = json.loads(Path(path).read_text())
        seed, theta, eps = int(results["seed"]), float(results["theta"]), float(results["eps"])
        for preset, peer in cases(results, args.peer):
            if preset in skip or (only and preset not in only):
                continue
            snap = make_snapshot(preset, seed, Path(args.work) / f"{preset}-seed{seed}.json")
            t0 = time.monotonic()
            ours, viol = plan_measures(snap, plan(snap, theta, eps, goals=goals).plan, theta, eps)
            line, n = floors_row(preset, seed, peer, ours, viol.total())
            print(f"{preset} seed {seed}: {time.monotonic() - t0:.1f} s, {n} floor(s) missed", file=sys.stderr)
            lines.append(line)
            failed += n
    lines.append(f"\n{failed} floor(s) missed (in bold).")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
