"""Work budgets: the planner's stopping rules count work, not seconds.

A loop that stops on a clock gives a different plan on a loaded machine than on a quiet one. Each loop
of the planner that could run long instead takes a :class:`Budget` of steps (one step: one attempt of the
loop's body, whatever it finds), sized from the input (docs/planner.md, "Budgets"), so the same snapshot
gives the same plan wherever it runs. A wall-clock deadline remains only as a safety net for the caller's
``time_limit``; it is far above what any budget needs on this project's clusters.

>>> b = Budget(2)
>>> b.take(), b.take(), b.take(), b.used
(True, True, False, 2)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from kafka_balancer.model.snapshot import Snapshot

COUNT_STEPS_BASE, COUNT_STEPS_PER_BROKER, COUNT_STEPS_LARGE = 100, 6, 100_000
COUNT_STEPS_REPLICAS, COUNT_STEPS_MIN = 50_000, 10


@dataclass
class Budget:
    steps: float  # steps allowed (math.inf: until the loop ends by itself)
    deadline: float = math.inf  # time.monotonic() safety net
    used: int = 0

    def take(self) -> bool:
        """Spend one step; False (nothing spent) once the steps or the safety net are used up."""
        if self.used >= self.steps or time.monotonic() > self.deadline:
            return False
        self.used += 1
        return True

    def charge(self, steps: int) -> bool:
        """Count ``steps`` more for an attempt costlier than a plain step; True, so that it can guard the
        attempt in a condition (``budget.charge(4) and costly()``)."""
        self.used += steps
        return True

    def left(self) -> bool:
        """Whether a step is still available, without spending it."""
        return self.used < self.steps and time.monotonic() <= self.deadline


def count_goal_steps(snap: Snapshot) -> int:
    """Loop steps per unit of count-goal weight (replica count 12, leader count 9, topic spread 0.5, the others 1).

    100 + 6 per live broker, but at most 100,000 ÷ brokers and 50,000 ÷ replicas per live broker (a step's
    candidate ranking passes over the brokers and over one broker's replicas), and at least 10. One step
    moves, or fails to move, one broker's replica or leadership. The 48-broker comparison cases get
    100 + 6N = 388; 1,000 brokers / 100k partitions get 100; 1.3M replicas on 270 brokers (4,700 per broker)
    get 10. Until session 27 it was 100 + 2N and 30,000 ÷ replicas per broker: the goals of brokers of one
    size end by themselves within that, but on brokers of four sizes (`hetero`) the replica-count goal was
    still evening counts when it ran out (seed 10: CV 0.101 against 0.068 with twice the steps)."""
    n = max(1, int(snap.alive.sum()))
    per_broker = max(1.0, float((snap.replicas >= 0).sum()) / n)
    steps = min(COUNT_STEPS_BASE + COUNT_STEPS_PER_BROKER * n, COUNT_STEPS_LARGE // n,
                int(COUNT_STEPS_REPLICAS // per_broker))
    return max(COUNT_STEPS_MIN, steps)
