"""Our plan with the polishing allowance named in bytes, at no more bytes than Cruise Control moved.

The comparison table (``bench/compare_planners.py``) runs every planner with its defaults. Where Cruise
Control ends with a lower σ it also moves more bytes; this script asks what our planner reaches when the
operator names Cruise Control's bytes as the polishing allowance (``plan --polish SIZE``): the largest
allowance on a short grid (1.0, 0.97, 0.94, 0.9, 0.85, 0.8 × its bytes) whose whole plan, count goals
included, moves no more than Cruise Control's plan did. Cruise Control's numbers are read from the
harness's JSON output (its fast mode: the same plans as normal mode on these cases); every plan is judged
by the harness's own code.

Command (the seed-1 table's results, and the other seeds' files)::

    .venv/bin/python bench/polish_at_peer_bytes.py --results docs/compare-bench/results.json \\
        --cases racks48,huge --md OUT.md
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

GRID = (1.0, 0.97, 0.94, 0.9, 0.85, 0.8)
RES = ("cpu", "disk", "nw_in", "nw_out")


def peer_of(results: dict[str, Any], preset: str, peer: str) -> tuple[dict[str, Any], dict[str, float]] | None:
    """(the case, the peer's measures) from a harness JSON, or None where the peer did not finish."""
    for r in results["results"]:
        if r["case"]["preset"] == preset:
            for o in r["outcomes"]:
                if o["planner"] == peer and o["status"] == "ok":
                    return r["case"], o["measures"]
    return None


def row(preset: str, seed: int, peer: dict[str, float], ours: dict[str, float], mine: dict[str, float],
        share: float) -> str:
    def ratios(m: dict[str, float]) -> str:
        return " / ".join(f"{m[f'sigma_{r}'] / peer[f'sigma_{r}']:.3f}" for r in RES)

    return (
        f"| {preset} | {seed} | {peer['bytes_moved'] / 1e9:,.1f} "
        f"| {ratios(ours)} ({ours['bytes_moved'] / 1e9:,.1f} GB) "
        f"| {share:g} | {ratios(mine)} | {mine['bytes_moved'] / peer['bytes_moved']:.3f} "
        f"| {mine['replica_cv']:.3f} / {peer['replica_cv']:.3f} | {mine['leader_cv']:.3f} / {peer['leader_cv']:.3f} "
        f"| {mine['max_gamma']:.3f} / {peer['max_gamma']:.3f} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, help="a JSON file written by bench/compare_planners.py --json")
    ap.add_argument("--cases", required=True, help="comma-separated presets of that file")
    ap.add_argument("--peer", default="cc-fast")
    ap.add_argument("--work", default=str(ROOT / "out" / "compare"), help="where the snapshots are cached")
    ap.add_argument("--md", default=None, help="also write the table here")
    args = ap.parse_args(argv)
    results = json.loads(Path(args.results).read_text())
    seed, theta, eps = int(results["seed"]), float(results["theta"]), float(results["eps"])
    lines = [
        "| case | seed | peer GB | σ ours ÷ peer, default (GB) | allowance × peer bytes | σ ours ÷ peer at ≤ its "
        "bytes (cpu / disk / nw_in / nw_out) | bytes ours ÷ peer | replica CV ours / peer | leader CV ours / peer "
        "| max γ ours / peer |",
        "|---|---|---:|---|---:|---|---:|---|---|---|",
    ]
    for preset in args.cases.split(","):
        found = peer_of(results, preset, args.peer)
        if found is None:
            print(f"{preset}: {args.peer} has no plan in {args.results}; skipped", file=sys.stderr)
            continue
        _case, peer = found
        snap = make_snapshot(preset, seed, Path(args.work) / f"{preset}-seed{seed}.json")
        t0 = time.monotonic()
        ours, _ = plan_measures(snap, plan(snap, theta, eps).plan, theta, eps)
        for share in GRID:
            mine, viol = plan_measures(snap, plan(snap, theta, eps, polish_bytes=share * peer["bytes_moved"]).plan,
                                       theta, eps)
            if mine["bytes_moved"] <= peer["bytes_moved"] and viol.total() == 0:
                break
        print(f"{preset} seed {seed}: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        lines.append(row(preset, seed, peer, ours, mine, share))
    text = "\n".join(lines)
    print(text)
    if args.md:
        Path(args.md).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
