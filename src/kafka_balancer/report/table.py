"""Plain-text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.planner.plan import PlanResult


def render(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for k, row in enumerate(cells):
        lines.append(
            "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        )
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(c: object) -> str:
    if isinstance(c, float):
        return f"{c:.4f}" if abs(c) < 10 else f"{c:,.0f}"
    return str(c)


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1000.0
    return f"{n:.1f} PB"


def plan_table(result: PlanResult) -> str:
    """Before/after per resource (σ, max γ, max utilisation, brokers over θ), then the moves."""
    rows = []
    for res in RESOURCES:
        b, a = result.before.resources[res], result.after.resources[res]
        red = 100.0 * (1.0 - a.sigma / b.sigma) if b.sigma > 0 else 0.0
        rows.append(
            [
                res,
                b.sigma,
                a.sigma,
                f"{red:.1f}%",
                b.max_gamma,
                a.max_gamma,
                b.max_util,
                a.max_util,
                b.over_theta,
                a.over_theta,
            ]
        )
    head = [
        "resource",
        "σ before",
        "σ after",
        "σ reduction",
        "max γ before",
        "max γ after",
        "max util before",
        "max util after",
        "over θ before",
        "over θ after",
    ]
    lines = [render(head, rows), ""]
    lines.append(
        f"η = ε/N = {result.after.eta:.4f}   θ = {result.after.theta}   ε = {result.after.eps}   "
        f"balanced: before {'yes' if result.before.balanced() else 'no'}, "
        f"after {'yes' if result.after.balanced() else 'no'}"
    )
    lb = result.moved_bytes_lower_bound
    ratio = f" ({result.moved_bytes / lb:.2f}× the bound)" if lb > 0 else ""
    # a heal's bound is what the failure forces any heal to copy; otherwise what any balanced plan copies
    bound = "the failure forces" if result.mode == "heal" else "lower bound to balance"
    lines.append(
        f"partitions changed {len(result.plan)}   replica moves {result.replica_moves}   "
        f"leader moves {result.leader_moves}   bytes to move {human_bytes(result.moved_bytes)}   "
        f"{bound} {human_bytes(lb)}{ratio}   planned in {result.seconds:.2f} s"
    )
    lines.append(result.constraints.describe(result.mode) + "   " + _polishing(result))
    if result.goals:
        lines.append("")
        lines.append(goal_table(result))
        lines.append("")
    # (a cluster above θ as a whole is said once, by the planner's warning that names how many brokers to add)
    for w in result.warnings:
        lines.append(f"warning: {w}")
    if result.unresolved:
        more = f" (+{len(result.unresolved) - 5} more)" if len(result.unresolved) > 5 else ""
        lines.append("not reached: " + "; ".join(result.unresolved[:5]) + more)
    for line in result.remaining:
        lines.append(f"remains unbalanced: {line}")
    return "\n".join(lines)


def _polishing(result: PlanResult) -> str:
    """How far polishing (lowering σ once the goals hold) was allowed to go."""
    how = result.extra.get("polish") or {}
    if how.get("bytes") is not None:
        return f"polishing up to {human_bytes(how['bytes'])} moved (moves that pay, then any that lowers σ)"
    share = how.get("share", 0.0)
    return f"polishing up to {share:g}× the bound (moves that pay)" if share > 0 else "no polishing"


def goal_table(result: PlanResult) -> str:
    """The goal policy, highest priority first: each goal's violation before and after, and its measure."""
    width = max(len(g.name) for g in result.goals)
    lines = ["goal policy (highest first)   violation before -> after"]
    for g in result.goals:
        _, _, after = g.detail.partition(" -> ")
        state = "met" if g.met_after else "NOT met"
        head = f"  {g.priority}. {g.name:<{width}}  {_num(g.before):>9} -> {_num(g.after):<9} {state:<7}"
        lines.append(f"{head}  {after}")
    return "\n".join(lines)


def _num(v: float) -> str:
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.3f}"
