"""Seed 001's testbed: σ reduction per resource over many seeds, against the paper's figure 6.

Run:  .venv/bin/python bench/paper_testbed.py [--seeds 20] [--shares 0,1.25,1.4,1.5] [--write-doc]

Two populations of the `paper` preset (6 brokers, 2 per host, 36 partitions, Kafka's placement):

* **paper-like starts**: the first ``--seeds`` seeds whose default placement has σ within 0.75-1.33× the
  paper's "before" σ on all four resources (0.043 / 0.079 / 0.048 / 0.036). A reduction in percent only
  means something against a start as skewed as the paper's; about 1.4 % of seeds qualify.
* **any start**: seeds 0 .. ``--seeds``-1 as drawn, including starts far less skewed than the paper's.

For each: the reduction per resource (✗ below the paper's), balance, and bytes ÷ the lower bound (which
on this size is the exact minimum, or the solver's proven floor, see planner/exact.py). Then the trade-off
of the polishing allowance (`plan(..., polish_share=s)`).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from docsection import write_section
from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.planner import plan
from kafka_balancer.planner.exact import NODE_LIMIT
from kafka_balancer.planner.metrics import evaluate
from kafka_balancer.planner.plan import POLISH_SHARE
from kafka_balancer.sim.cluster import PRESETS, generate

PAPER_BEFORE = {"cpu": 0.043, "disk": 0.079, "nw_in": 0.048, "nw_out": 0.036}
PAPER_REDUCTION = {"cpu": 72.1, "disk": 86.1, "nw_in": 79.2, "nw_out": 63.9}
PAPER_AFTER = {"cpu": 0.012, "disk": 0.011, "nw_in": 0.010, "nw_out": 0.013}


@dataclass(frozen=True)
class Row:
    seed: int
    before: dict[str, float]
    after: dict[str, float]
    reduction: dict[str, float]
    balanced: bool
    ratio: float
    optimal: bool
    seconds: float

    @property
    def meets(self) -> bool:
        return all(self.reduction[k] >= PAPER_REDUCTION[k] for k in RESOURCES)


def paper_like_seeds(n: int, scan: int = 20_000) -> list[int]:
    out = []
    for seed in range(scan):
        m = evaluate(generate(PRESETS["paper"], seed=seed))
        if all(0.75 * PAPER_BEFORE[k] <= m.resources[k].sigma <= 1.33 * PAPER_BEFORE[k] for k in RESOURCES):
            out.append(seed)
            if len(out) == n:
                break
    return out


def run(seed: int, share: float) -> Row:
    # the exact model (off by default for speed) gives the byte bound its meaning on this size
    r = plan(generate(PRESETS["paper"], seed=seed), polish_share=share, exact_nodes=NODE_LIMIT,
             goals="capacity,distribution")
    before = {k: r.before.resources[k].sigma for k in RESOURCES}
    after = {k: r.after.resources[k].sigma for k in RESOURCES}
    red = {k: 100 * (1 - after[k] / before[k]) for k in RESOURCES}
    ratio = r.moved_bytes / r.moved_bytes_lower_bound if r.moved_bytes_lower_bound else float("nan")
    return Row(seed, before, after, red, r.after.balanced(), ratio, bool(r.extra["exact_optimal"]), r.seconds)


def table(rows: list[Row]) -> list[str]:
    lines = [
        "| seed | σ before (cpu, disk, nw_in, nw_out) | reduction cpu | disk | nw_in | nw_out | balanced "
        "| bytes ÷ bound | bound proven minimal | plan s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [f"{r.reduction[k]:.1f}%{'' if r.reduction[k] >= PAPER_REDUCTION[k] else ' ✗'}" for k in RESOURCES]
        lines.append(
            f"| {r.seed} | {', '.join(f'{r.before[k]:.3f}' for k in RESOURCES)} | {' | '.join(cells)} "
            f"| {r.balanced} | {r.ratio:.2f} | {'yes' if r.optimal else 'no'} | {r.seconds:.1f} |"
        )
    return lines


def summary(name: str, rows: list[Row]) -> str:
    n = len(rows)
    med = {k: float(np.median([r.reduction[k] for r in rows])) for k in RESOURCES}
    meets = {k: sum(r.reduction[k] >= PAPER_REDUCTION[k] for r in rows) for k in RESOURCES}
    ratios = np.array([r.ratio for r in rows])
    return (
        f"**{name}** ({n} seeds). Median reduction: " + ", ".join(f"{k} {med[k]:.1f} %" for k in RESOURCES)
        + ". Seeds meeting the paper's reduction: " + ", ".join(f"{k} {meets[k]}/{n}" for k in RESOURCES)
        + f"; all four at once: {sum(r.meets for r in rows)}/{n}. Balanced (σ ≤ η and max γ ≤ ε on all four): "
        f"{sum(r.balanced for r in rows)}/{n}. Bytes ÷ bound: median {np.nanmedian(ratios):.2f}, max "
        f"{np.nanmax(ratios):.2f}, ≤ 1.5 in {int((ratios <= 1.5).sum())}/{n}; the bound is the proven minimum "
        f"on {sum(r.optimal for r in rows)}/{n}. σ after, median (paper's): "
        + ", ".join(f"{k} {np.median([r.after[k] for r in rows]):.4f} ({PAPER_AFTER[k]})" for k in RESOURCES)
        + f". Planning time: median {np.median([r.seconds for r in rows]):.1f} s, max "
        f"{max(r.seconds for r in rows):.1f} s."
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--shares", default="0,1.25,1.4,1.5", help="polishing allowances for the trade-off table")
    ap.add_argument("--write-doc", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    like = paper_like_seeds(args.seeds)
    anyseed = list(range(args.seeds))
    pops = {"paper-like starts": like, "any start": anyseed}
    main_rows = {name: [run(s, POLISH_SHARE) for s in tqdm(seeds, desc=name)] for name, seeds in pops.items()}
    trade = [
        "",
        "Trade-off: the polishing allowance (`plan(..., polish_share=s)`: once balanced, replica moves may go on "
        "lowering σ until the plan moves s × the bound; 0 stops at the goals).",
        "",
        "| s | population | all four paper reductions | ≤ 1.5 × bound | median bytes ÷ bound "
        "| median σ after (cpu, disk, nw_in, nw_out) |",
        "|---|---|---|---|---|---|",
    ]
    for share in (float(a) for a in args.shares.split(",")):
        for name, seeds in pops.items():
            rows = main_rows[name] if share == POLISH_SHARE else [run(s, share) for s in tqdm(seeds, desc=f"s={share}")]
            ratios = np.array([r.ratio for r in rows])
            sig = ", ".join(f"{np.median([r.after[k] for r in rows]):.4f}" for k in RESOURCES)
            trade.append(
                f"| {share} | {name} | {sum(r.meets for r in rows)}/{len(rows)} | {int((ratios <= 1.5).sum())}/"
                f"{len(rows)} | {np.nanmedian(ratios):.2f} | {sig} |"
            )
    head = (
        f"Paper (figure 6): cpu 72.1 %, disk 86.1 %, nw_in 79.2 %, nw_out 63.9 % from σ 0.043/0.079/0.048/0.036 "
        f"to 0.012/0.011/0.010/0.013. Default polishing allowance {POLISH_SHARE}. Paper-like seeds: {like}.\n\n"
        + "\n\n".join(summary(name, rows) for name, rows in main_rows.items())
    )
    text = head + "\n"
    for name, rows in main_rows.items():
        text += f"\n{name}:\n\n" + "\n".join(table(rows)) + "\n"
    text += "\n".join(trade) + f"\n\n(whole run {time.time() - t0:.0f} s)"
    print(text)
    if args.write_doc:
        write_section(
            "PAPER",
            "## Seed 001 testbed\n\nCommand: "
            f"`.venv/bin/python bench/paper_testbed.py --seeds {args.seeds} --shares {args.shares} --write-doc` "
            f"(✗: below the paper's reduction).\n\n{text}",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
