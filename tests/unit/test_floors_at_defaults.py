"""The floors table of bench/floors_at_defaults.py: which cells fail, and that θ is shown but not counted."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.floors_at_defaults import floors_row  # noqa: E402


def _measures(sigma: float, gb: float, rcv: float, lcv: float, over: float) -> dict[str, float]:
    m = {f"sigma_{r}": sigma for r in ("cpu", "disk", "nw_in", "nw_out")}
    return m | {"bytes_moved": gb * 1e9, "replica_cv": rcv, "leader_cv": lcv, "over_theta_pairs": over}


def test_a_plan_better_everywhere_fails_nothing() -> None:
    line, failed = floors_row("paper", 1, _measures(2.0, 900, 0.08, 0.1, 5), _measures(1.0, 800, 0.05, 0.1, 0), 0)
    assert failed == 0
    assert "**" not in line
    assert line.endswith("| 0 / 5 |")  # pairs above θ: ours / peer, context only


def test_each_failing_cell_is_bold_and_counted() -> None:
    peer = _measures(1.0, 800, 0.05, 0.10, 0)
    ours = _measures(1.0, 800, 0.05, 0.10, 3) | {"sigma_disk": 1.2, "bytes_moved": 801e9, "replica_cv": 0.06}
    line, failed = floors_row("racks48", 5, peer, ours, 2)
    # disk σ, bytes, replica CV and the hard-constraint violations; a tie (CPU σ, leader CV) passes, and
    # pairs above θ are not a floor
    assert failed == 4
    assert "**1.200**" in line and "**801.0 / 800.0**" in line and "**0.060 / 0.050**" in line and "**2**" in line
    assert "1.000 / **1.200**" in line and "0.100 / 0.100" in line and "| 3 / 0 |" in line
