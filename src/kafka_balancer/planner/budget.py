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

COUNT_STEPS_BASE, COUNT_STEPS_PER_BROKER, COUNT_STEPS_LARGE = 100, 2, 100_000


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
    """Loop steps per unit of count-goal weight (replica count 4, leader count 3, the others 1): 100 + 2 per
    live broker up to 200 brokers, then 100,000 ÷ brokers (a step costs more on larger clusters: its
    candidate ranking passes over the brokers, and topic spread's over every topic and broker). One step
    moves, or fails to move, one broker's replica or leadership. On the 48-broker comparison cases the goals
    end by themselves within it (hetero's replica count excepted); on 1,000 brokers it caps them at about
    what a CPU share of 40 % of the plan used to allow."""
    n = max(1, int(snap.alive.sum()))
    return min(COUNT_STEPS_BASE + COUNT_STEPS_PER_BROKER * n, COUNT_STEPS_LARGE // n)
