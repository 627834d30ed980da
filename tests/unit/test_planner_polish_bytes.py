"""Polishing with an allowance in bytes (``plan(polish_bytes=...)``, ``kafka-balancer plan --polish 300G``):
the plan stops at the bytes named, spends them first as the default does (on moves that pay for their
bytes), then on any move that lowers σ, and keeps every goal."""

from __future__ import annotations

import pytest

from kafka_balancer.planner import plan
from kafka_balancer.planner.plan import PlanResult
from kafka_balancer.report.table import plan_table
from kafka_balancer.sim.cluster import PRESETS, generate

GOALS = "capacity,distribution"  # count goals spend bytes of their own, after polishing


def _sq_sigma(r: PlanResult) -> float:
    """Σ σ² over the resources: on brokers of one size, proportional to polishing's squared deviation."""
    return sum(m.sigma**2 for m in r.after.resources.values())


@pytest.fixture(scope="module")
def default() -> PlanResult:
    return plan(generate(PRESETS["racks48"], seed=1), goals=GOALS)


def test_a_larger_allowance_buys_a_lower_sigma_and_stops_at_the_bytes_named(default: PlanResult) -> None:
    allowance = 2 * default.moved_bytes
    sized = plan(generate(PRESETS["racks48"], seed=1), goals=GOALS, polish_bytes=allowance)
    assert sized.after.balanced()
    assert default.moved_bytes < sized.moved_bytes <= allowance * (1 + 1e-9)
    assert _sq_sigma(sized) < _sq_sigma(default)
    assert sized.summary["polish"] == {"bytes": allowance}
    assert default.summary["polish"] == {"share": 1.5}


def test_the_default_plans_own_bytes_give_the_default_plan(default: PlanResult) -> None:
    # the moves that pay come first, so an allowance of what the default moved makes the same moves; a
    # billionth more absorbs the rounding of the running byte count
    same = plan(generate(PRESETS["racks48"], seed=1), goals=GOALS, polish_bytes=default.moved_bytes * (1 + 1e-9))
    assert same.plan == default.plan


def test_the_table_says_how_far_polishing_went(default: PlanResult) -> None:
    sized = plan(generate(PRESETS["racks48"], seed=1), goals=GOALS, polish_bytes=2e12)
    assert "polishing up to 2.0 TB moved (moves that pay, then any that lowers σ)" in plan_table(sized)
    assert "polishing up to 1.5× the bound (moves that pay)" in plan_table(default)
    off = plan(generate(PRESETS["paper"], seed=1), polish_share=0.0)
    assert "no polishing" in plan_table(off)


def test_an_allowance_of_nothing_is_no_polishing() -> None:
    snap = generate(PRESETS["racks48"], seed=1)
    none = plan(snap, goals=GOALS, polish_bytes=0.0)
    off = plan(snap, goals=GOALS, polish_share=0.0)
    assert none.plan == off.plan and none.moved_bytes == off.moved_bytes
