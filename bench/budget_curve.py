"""What a byte budget buys: ``plan --max-bytes`` at a range of budgets, against stopping the unbudgeted plan.

An operator who may move only so many bytes tonight has two ways to use a balancer: ask for a plan within
the budget (``--max-bytes``), or run the unbudgeted plan and cancel it once that many bytes have moved. The
executor submits a plan's partitions in the plan's order, so the second is the longest prefix of the
unbudgeted plan, in its order, that fits the budget. For each case and each budget (a fraction of the
planner's lower bound on the bytes any balanced plan moves) this prints, for both: the bytes moved, the
(broker, resource) pairs outside seed 001's goals (above θ, or γ above ε), the sum over resources of how
far the largest γ is above ε, and Σσ/η over the four resources; it writes them as JSON and a plot.

Command (the table in docs/benchmarks.md)::

    .venv/bin/python bench/budget_curve.py --cases paper,racks48,new-brokers --seed 0 --out docs/budget-bench
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.compare_planners import make_snapshot  # noqa: E402

from kafka_balancer.model.snapshot import Derived, Snapshot  # noqa: E402
from kafka_balancer.planner import plan  # noqa: E402
from kafka_balancer.planner.constraints import Constraints  # noqa: E402
from kafka_balancer.planner.metrics import Metrics, evaluate  # noqa: E402

THETA, EPS = 0.8, 0.1
FRACTIONS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.25)


def measures(m: Metrics, moved: float) -> dict[str, float]:
    """What a plan leaves: pairs outside the goals, the excess of max γ over ε, Σσ/η, and its bytes."""
    out = sum(int(((r.gamma > m.eps + 1e-12) | (r.util > m.theta + 1e-12)).sum()) for r in m.resources.values())
    return {
        "bytes": moved,
        "pairs_out": out,
        "gamma_excess": sum(max(0.0, r.max_gamma - m.eps) for r in m.resources.values()),
        "sigma_over_eta": sum(r.sigma for r in m.resources.values()) / m.eta,
    }


def stopped_at(snap: Snapshot, after: Snapshot, budget: float) -> dict[str, float]:
    """The unbudgeted plan run in its own order (partition order, as the executor submits it) and cancelled
    before the first partition whose copies would take it past ``budget``."""
    disk = Derived(snap).disk_bytes
    rep, ldr = snap.replicas.copy(), snap.leader.copy()
    moved = 0.0
    changed = np.nonzero(np.any(after.replicas != snap.replicas, axis=1) | (after.leader != snap.leader))[0]
    for p in changed.tolist():
        new = [b for b in after.replicas[p].tolist() if b >= 0 and b not in snap.replicas[p].tolist()]
        cost = len(new) * float(disk[p])
        if moved + cost > budget:
            break
        rep[p], ldr[p] = after.replicas[p], after.leader[p]
        moved += cost
    return measures(evaluate(snap, THETA, EPS, rep, ldr), moved)


def run_case(case: str, seed: int, work: Path) -> dict[str, Any]:
    snap = make_snapshot(case, seed, work / f"{case}-{seed}.json")
    full = plan(snap, THETA, EPS)
    bound = full.moved_bytes_lower_bound
    rows = []
    for f in FRACTIONS:
        budget = f * bound
        t = time.process_time()
        r = plan(snap, THETA, EPS, constraints=Constraints(max_bytes=budget))
        cpu = time.process_time() - t
        rows.append({"fraction": f, "budget": budget, "cpu_s": cpu,
                     "budgeted": measures(r.after, r.moved_bytes),
                     "stopped": stopped_at(snap, full.after_snapshot, budget)})
    return {"case": case, "seed": seed, "brokers": snap.n_brokers, "partitions": snap.n_partitions,
            "lower_bound": bound, "before": measures(full.before, 0.0),
            "unbudgeted": measures(full.after, full.moved_bytes), "rows": rows}


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| case | budget (× bound) | GB moved: budgeted / stopped | pairs out: budgeted / stopped | "
             "Σ(max γ − ε): budgeted / stopped | Σσ/η: budgeted / stopped |", "|---|---|---|---|---|---|"]
    for res in results:
        b, u = res["before"], res["unbudgeted"]
        lines.append(f"| {res['case']} s{res['seed']} | before | 0 | {b['pairs_out']} | {b['gamma_excess']:.3f} | "
                     f"{b['sigma_over_eta']:.2f} |")
        for row in res["rows"]:
            x, y = row["budgeted"], row["stopped"]
            lines.append(f"| | {row['fraction']:g} ({row['budget'] / 1e9:,.0f} GB) | {x['bytes'] / 1e9:,.0f} / "
                         f"{y['bytes'] / 1e9:,.0f} | {x['pairs_out']} / {y['pairs_out']} | {x['gamma_excess']:.3f} / "
                         f"{y['gamma_excess']:.3f} | {x['sigma_over_eta']:.2f} / {y['sigma_over_eta']:.2f} |")
        lines.append(f"| | unbudgeted | {u['bytes'] / 1e9:,.0f} | {u['pairs_out']} | {u['gamma_excess']:.3f} | "
                     f"{u['sigma_over_eta']:.2f} |")
    return "\n".join(lines)


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.5 * len(results), 3.6), squeeze=False)
    for ax, res in zip(axes[0], results, strict=True):
        bound = res["lower_bound"]
        lines = (("budgeted", "plan --max-bytes", "o-"), ("stopped", "unbudgeted plan, stopped", "s--"))
        for key, label, style in lines:
            xs = [0.0] + [row[key]["bytes"] / bound for row in res["rows"]]
            ys = [res["before"]["pairs_out"]] + [row[key]["pairs_out"] for row in res["rows"]]
            ax.plot(xs, ys, style, label=label)
        ax.axvline(1.0, color="grey", lw=0.8, ls=":")
        ax.set_title(f"{res['case']} seed {res['seed']} ({res['brokers']} brokers)")
        ax.set_xlabel("bytes moved ÷ lower bound to balance")
        ax.set_ylabel("(broker, resource) pairs outside the goals")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="paper,racks48,new-brokers")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="folder for budget.json and budget.png")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for case in args.cases.split(","):
            print(f"{case} seed {args.seed}: {len(FRACTIONS) + 1} plans", file=sys.stderr, flush=True)
            results.append(run_case(case, args.seed, Path(tmp)))
    print(table(results))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "budget.json").write_text(json.dumps(results, indent=1) + "\n")
        plot(results, args.out / "budget.png")
        print(f"wrote {args.out / 'budget.json'} and {args.out / 'budget.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
