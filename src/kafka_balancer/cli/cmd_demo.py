"""``kafka-balancer demo``: the planner on seed 001's testbed, with the paper's figure-6 comparison."""

from __future__ import annotations

import argparse
from pathlib import Path

from kafka_balancer.cli.options import check_output_dir, duration, number, seed
from kafka_balancer.model.plan_io import write_plan
from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.model.snapshot_io import write_snapshot
from kafka_balancer.planner import plan
from kafka_balancer.report.table import plan_table, render
from kafka_balancer.sim.cluster import PRESETS, generate

MIN_COLLECT_S = 40.0  # two of the live pipeline's 20 s windows

# Seed 001, section 4.2 and figure 6: σ of the default system and of the paper's strategy.
PAPER_SIGMA = {
    "cpu": (0.043, 0.012),
    "disk": (0.079, 0.011),
    "nw_in": (0.048, 0.010),
    "nw_out": (0.036, 0.013),
}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "demo",
        help="the whole loop on a throwaway local cluster (--offline: planner on the paper's testbed)",
        description="Default: start a 6-broker local Kafka cluster, run a skewed workload, collect, build the "
        "snapshot with the Spark pipeline, plan, execute, collect again, print figure 6 (σ per resource "
        "measured on the live cluster before and after), write plots and out/demo/report.html, stop the "
        "cluster. --offline: only the planner on a simulated seed-001 testbed.",
    )
    p.add_argument("--offline", action="store_true", help="no cluster: planner on the simulated paper testbed")
    p.add_argument("--seed", type=seed(), default=None,
                   help="random seed (default 0 offline, 1 live)")
    p.add_argument("--out", default=None, help="output folder (default out/ offline, out/demo live)")
    p.add_argument("--collect", type=duration("--collect", maximum=86_400), default=60.0,
                   help=f"live: seconds of sampling per phase (default 60, at least {MIN_COLLECT_S:g})")
    p.add_argument("--scale", type=number("--scale", maximum=1000.0), default=1.0,
                   help="live: workload rate multiplier (default 1)")
    p.set_defaults(func=run)


def figure6_rows(result_before: dict[str, float], result_after: dict[str, float]) -> list[list[object]]:
    rows: list[list[object]] = []
    for res in RESOURCES:
        pb, pa = PAPER_SIGMA[res]
        b, a = result_before[res], result_after[res]
        rows.append([res, b, a, f"{100 * (1 - a / b):.1f}%" if b else "-", pb, pa, f"{100 * (1 - pa / pb):.1f}%"])
    return rows


def run(args: argparse.Namespace) -> int:
    check_output_dir(args.out or ("out" if args.offline else "out/demo"), "--out")
    if not args.offline:
        return run_live(args)
    out = Path(args.out or "out")
    snap = generate(PRESETS["paper"], seed=args.seed or 0)
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


def run_live(args: argparse.Namespace) -> int:
    from kafka_balancer.errors import InputError
    from kafka_balancer.localcluster.demo import FIG6_HEADERS, DemoOptions, figure6_rows, run_demo

    if args.collect < MIN_COLLECT_S:
        # Checked before anything starts: a shorter phase would only fail minutes later, at the Spark step.
        raise InputError(f"demo --collect {args.collect:g} is too short: the pipeline builds the snapshot from "
                         "20 s windows, and a phase shorter than two of them may leave no closed window",
                         hint=f"use --collect {MIN_COLLECT_S:g} or more")

    opt = DemoOptions(out=Path(args.out or "out/demo"), collect_s=args.collect, scale=args.scale,
                      seed=1 if args.seed is None else args.seed)
    res = run_demo(opt)
    print("\nfigure 6: σ per resource measured on the live cluster, before and after execution\n")
    print(render(FIG6_HEADERS, figure6_rows(res)))
    ex = res.exec_report
    print(f"\nplan: {res.plan_size} partitions; executed {ex.get('replica_moves', 0)} replica moves, "
          f"{ex.get('leader_moves', 0)} leader changes, {ex.get('bytes_moved', 0) / 1e6:.1f} MB, "
          f"verified={ex.get('verified')}")
    print(f"workload: {res.workload}")
    print(f"timings (s): {res.timings}")
    print(f"report: {opt.out / 'report.html'}")
    return 0 if ex.get("verified", True) else 1
