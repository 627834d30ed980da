"""``kafka-balancer demo``: the planner on seed 001's testbed, with the paper's figure-6 comparison."""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_balancer.model.plan_io import write_plan
from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.model.snapshot_io import write_snapshot
from kafka_balancer.planner import plan
from kafka_balancer.report.table import plan_table, render
from kafka_balancer.sim.cluster import PRESETS, generate

# Seed 001, section 4.2 and figure 6: σ of the default system and of the paper's strategy.
PAPER_SIGMA = {
    "cpu": (0.043, 0.012),
    "disk": (0.079, 0.011),
    "nw_in": (0.048, 0.010),
    "nw_out": (0.036, 0.013),
}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="run the demo (planner on the paper's testbed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out", help="folder for the snapshot, plan and plot (default out/)")
    p.set_defaults(func=run)


def figure6_rows(result_before: dict[str, float], result_after: dict[str, float]) -> list[list[object]]:
    rows: list[list[object]] = []
    for res in RESOURCES:
        pb, pa = PAPER_SIGMA[res]
        b, a = result_before[res], result_after[res]
        rows.append([res, b, a, f"{100 * (1 - a / b):.1f}%" if b else "-", pb, pa, f"{100 * (1 - pa / pb):.1f}%"])
    return rows


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    snap = generate(PRESETS["paper"], seed=args.seed)
    write_snapshot(snap, out / "paper-testbed.json")
    result = plan(snap, 0.8, 0.1)
    write_plan(result.plan, out / "paper-testbed-plan.json")
    print("seed 001 testbed: 6 brokers on 3 hosts, θ=0.8, ε=0.1 (simulated load; Kafka's default placement)\n")
    print(plan_table(result))
    print("\nfigure 6: σ per resource, default placement vs plan (ours), next to the paper's numbers\n")
    before = {r: m.sigma for r, m in result.before.resources.items()}
    after = {r: m.sigma for r, m in result.after.resources.items()}
    print(
        render(
            [
                "resource",
                "σ default",
                "σ planned",
                "reduction",
                "paper default",
                "paper planned",
                "paper reduction",
            ],
            figure6_rows(before, after),
        )
    )
    print(f"\nη = {result.after.eta:.4f} (paper: 0.017)")
    from kafka_balancer.report.plots import utilisation_before_after

    utilisation_before_after(
        result.before,
        result.after,
        snap.broker_ids.tolist(),
        out / "paper-testbed.png",
        title="seed 001 testbed: per-broker utilisation, default placement vs plan",
    )
    print(f"snapshot, plan and plot written to {out}/")
    return 0
