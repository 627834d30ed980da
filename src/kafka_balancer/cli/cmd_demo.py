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

MIN_WINDOW_S = 10.0  # two sampling rounds of 5 s

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
        help="the balancer service on a throwaway local cluster (--offline: planner on the paper's testbed)",
        description="Default: start a local Kafka cluster (6 brokers and a stopped spare), start the balancer "
        "service with self-healing on, run a workload skewed by placement and let the service rebalance it, "
        "kill broker 6 and let it be evacuated after the grace period, start broker 7 and let it be filled; "
        "print the service's timeline, write out/demo/report.html and the dashboard screenshot, stop the "
        "cluster. --offline: only the planner on a simulated seed-001 testbed.",
    )
    p.add_argument("--offline", action="store_true", help="no cluster: planner on the simulated paper testbed")
    p.add_argument("--seed", type=seed(), default=None,
                   help="random seed (default 0 offline, 1 live)")
    p.add_argument("--out", default=None, help="output folder (default out/ offline, out/demo live)")
    p.add_argument("--window", type=duration("--window", maximum=3600), default=20.0,
                   help=f"live: load-model window, e.g. 20s (default 20 s, at least {MIN_WINDOW_S:g} s)")
    p.add_argument("--grace", type=duration("--grace", maximum=3600), default=45.0,
                   help="live: how long a broker must be dead before the service evacuates it (default 45 s)")
    p.add_argument("--scale", type=number("--scale", maximum=1000.0), default=1.0,
                   help="live: workload rate multiplier (default 1)")
    p.add_argument("--no-screenshot", action="store_true", help="live: skip the dashboard screenshot")
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
    from kafka_balancer.demo.report import timeline_lines
    from kafka_balancer.demo.story import StoryOptions, run_story, sigma_line
    from kafka_balancer.errors import InputError

    if args.window < MIN_WINDOW_S:
        # Checked before anything starts: a shorter window holds fewer than two sampling rounds.
        raise InputError(f"demo --window {args.window:g} is too short: a window must hold at least two "
                         "5 s sampling rounds", hint=f"use --window {MIN_WINDOW_S:g} or more")
    opt = StoryOptions(out=Path(args.out or "out/demo"), window_s=args.window, grace_s=args.grace,
                       scale=args.scale, seed=1 if args.seed is None else args.seed,
                       screenshot=not args.no_screenshot)
    res = run_story(opt)
    print("\ntimeline (from the balancer service):")
    for line in timeline_lines(res):
        print("  " + line)
    print()
    for p in res.phases:
        ex = p.execution or {}
        print(f"{p.name}: {'ok' if p.ok else 'FAILED'}; anomaly {(p.anomaly or {}).get('id', '-')} -> execution "
              f"{ex.get('id', '-')}: {ex.get('partitions', 0)} partitions, "
              f"{float(ex.get('bytes_moved') or 0) / 1e6:.1f} MB, verified={ex.get('verified')}; {sigma_line(ex)}"
              + (f"; {p.note}" if p.note else ""))
    w = res.workload
    print(f"workload: produced {sum(w.get('produced', {}).values())} messages; consumed per group "
          f"{w.get('consumed')} (expected {w.get('expected')}); failed {w.get('failed')}; "
          f"produced = consumed: {res.produced_equals_consumed}")
    print(f"timings (s): {res.timings}")
    if res.screenshot:
        print(f"dashboard screenshot: {res.screenshot}")
    print(f"report: {res.report}")
    return 0 if res.ok else 1
