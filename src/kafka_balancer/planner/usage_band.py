"""The usage band: every live broker within ±7.5 % of the target utilisation on every resource.

Seed 001's distribution goal keeps each broker within ε (an absolute band of utilisation, 0.1 by default)
of the mean. On a cluster at 40 % disk that lets one broker sit at 30 % and another at 50 %. The usage band
is relative: ±7.5 % of the target, so 37-43 % on that cluster. It is the last goal of the default policy,
pursued after the count goals and guarded by all of them. It is soft, and it is paid for in bytes. It
spends at most ``SHARE`` × the polishing allowance on the plan as a whole (3 × the byte bound by default)
plus two replicas of the mean size (:func:`allowance`), or what is left of an allowance the operator named
in bytes.

The moves are polishing's (:mod:`kafka_balancer.planner.strategies.polish`): the broker furthest from the
target first, replica moves and swaps that lower the squared relative deviation, each keeping every goal
above and growing no violation. Unlike polishing's first phase, a move need not pay a share of what
balancing removed per byte, but only brokers outside the band are taken up. Leadership tightening
(:mod:`kafka_balancer.planner.strategies.tighten`) then runs once more, under the same guards: it copies
nothing, and the count goals' leadership moves may have left CPU and network-out less even.

Example: 48 brokers at disk 0.30-0.50 of capacity (target 0.40, every one inside ε = 0.1) are outside the
band wherever below 0.37 or above 0.43; a 20 GB replica from a broker at 0.46 to one at 0.34 brings both
closer, and is made if no count goal's band breaks.

The band, 7.5 %, and the allowance were chosen on the comparison cases of seeds 0-3 against Cruise
Control's fast mode (docs/benchmarks.md, "Session 25"): 8 % left `racks48` seed 2's disk σ above Cruise
Control's, and 7 % moved more bytes than it did on `racks48` seed 1.
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.planner.policy import USAGE_BAND as NAME
from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies import polish

__all__ = ["BAND", "GRAIN", "NAME", "SHARE", "allowance", "deviation", "even_out", "violation"]

BAND = 0.075  # relative deviation from the target utilisation
SHARE = 2.0  # × the polishing allowance (its share of the byte bound), for the plan as a whole
GRAIN = 2.0  # replicas of the mean size, on top (see allowance)


def deviation(st: State) -> np.ndarray:
    """[live brokers, resources]: utilisation's deviation from the target, relative to the target."""
    return st.relative_deviation(st.load[st.alive] / st.cap[st.alive])


def violation(st: State) -> tuple[float, str]:
    """(pairs outside the band, a detail naming the largest deviation per resource)."""
    dev = np.abs(deviation(st))
    out = int((dev > BAND + 1e-12).sum())
    worst = "none"
    if dev.size:
        worst = ", ".join(f"{r} {100 * float(dev[:, k].max()):.1f} %" for k, r in enumerate(RESOURCES))
    return float(out), f"{out} (broker, resource) pair(s) more than {BAND * 100:g} % off the target; largest {worst}"


def allowance(polishing: float, st: State) -> float:
    """Bytes the plan as a whole may have moved when the band stops: ``SHARE`` × the polishing allowance
    ``polishing``, plus ``GRAIN`` replicas of the mean size among those that may move. Nothing when there is no
    polishing allowance (``--polish 0``, or a cluster already within seed 001's goals).

    The byte bound behind the polishing allowance is fluid: load poured from broker to broker. Replicas move
    whole, and where they are large against the bound, ``SHARE`` × the allowance can be less than one swap:
    on the 6-broker testbed (`paper` seed 6) the bound is 38 GB and the mean replica 31 GB. The grain lets the
    band make at least one swap of two replicas of mean size there; where replicas are small against the
    bound (`huge`: 0.1 GB each) it adds next to nothing."""
    if polishing <= 0:
        return 0.0
    movable = ~st.frozen
    rf = (st.rep[movable] >= 0).sum(axis=1)
    mean = float((st.disk_bytes[movable] * rf).sum() / rf.sum()) if rf.sum() else 0.0
    return SHARE * polishing + GRAIN * mean


def even_out(st: State, allowance: float, deadline: float, max_moves: int, max_steps: float) -> int:
    """Bring the brokers outside the band closer, within ``allowance`` bytes (none when it is not positive);
    returns the moves made."""
    return polish.polish(st, allowance, deadline, max_moves=max_moves, max_steps=max_steps, min_dev=BAND)
