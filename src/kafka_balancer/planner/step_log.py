"""Keeping a count goal's steps from breaking seed 001's goals as they are measured.

A count goal (replica count, leader count, ...) checks each of its steps against the state's bands, which
sit around the ideal utilisation (total load ÷ total capacity). Seed 001's goals are measured around the
*arithmetic mean* of the utilisations (γ ≤ ε, σ ≤ η, nothing above θ). With brokers of unequal size the
two differ, so a step that stays inside the state's bands can still take a measured γ above ε.
A lower goal may never break a higher one.

:class:`StepLog` is the goal's budget. Each time the goal asks for its next step, it first looks at what
the previous step changed (the state's journal since the last step began). If seed 001's goals held
before that step and no longer do, it undoes the whole step and keeps the goal off the step's partitions
for the rest of its run, so the goal goes on with other replicas instead of stopping. A step is undone
as a whole, never in part: a swap or an exchange is judged against the higher goals as a whole.

Where seed 001's goals do not hold when the goal starts (balance proven out of reach, say) and brokers
differ in size, the check is narrower: no step may take a (broker, resource) pair that was within θ and
ε as measured out of them (``_breached`` in plan.py). On `hetero` seed 0 the count goals otherwise took
the pairs outside ε from 47 to 55. With brokers of one size the state's bands are the measured ones, and
no check is needed.

Worked example (tests/unit/test_planner_step_log.py): a goal moves partition 0 from broker 0 to 1, then
partition 2 from broker 1 to 2, and the check says "partition 2 may not end on broker 2". When the goal
asks for its third step, the second is undone and partition 2 is frozen; the goal goes on, and the plan
keeps the first move only.

Measured on `hetero` seed 2 (brokers of four sizes): before, all 481 replica-count steps and all 164
leader-count steps were undone for a network-in γ of 0.101 (replica-count CV 0.172, leader-count CV
0.173). With this check alone, 354 and 518 steps are undone one by one and the CVs end at 0.101 and 0.068;
with the count goals also kept to the band around the mean utilisation (``DistributionGoal.towards_mean``,
plan.py), none is undone and both goals are met (0.043 and 0.022).
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_balancer.planner.budget import Budget
from kafka_balancer.planner.state import State


class StepLog(Budget):
    """A :class:`Budget` of ``steps`` that, for the goal it is given to, undoes each step after which
    ``holds()`` turns false (see the module); ``st.journal`` records the steps while it runs."""

    def __init__(self, steps: float, deadline: float, st: State, holds: Callable[[], bool]) -> None:
        super().__init__(steps, deadline)
        self.st, self.holds = st, holds
        self.dropped = 0  # steps undone
        self.mark = 0  # where the journal stood when the current step began
        self._own_frozen = False

    def take(self) -> bool:
        self.settle()
        granted = super().take()
        if self.st.journal is not None:
            self.mark = len(self.st.journal)
        return granted

    def settle(self) -> None:
        """Undo the step since the last mark if it broke ``holds()``, and keep the goal off its partitions
        (frozen, on a copy of the state's mask: the operator's exclusions are shared)."""
        st = self.st
        journal = st.journal
        if journal is None or len(journal) == self.mark or self.holds():
            return
        step = journal[self.mark:]
        del journal[self.mark:]
        st.journal = None
        for change in reversed(step):
            st.undo(change)
        st.journal = journal
        self.dropped += 1
        if not self._own_frozen:
            st.frozen = st.frozen.copy()
            self._own_frozen = True
        st.frozen[[p for _, p, _, _ in step]] = True


def run_holding(share: StepLog, improve: Callable[[Budget], int]) -> tuple[int, int]:
    """Run a count goal (``improve(share)``) with its steps checked against ``share.holds()``, true when it
    starts; returns (steps kept, steps undone). The partitions of undone steps are frozen while the goal
    runs, as an excluded topic's are, and free again when it ends."""
    st = share.st
    frozen = st.frozen
    st.journal, share.mark = [], 0
    try:
        made = improve(share)
        share.settle()
    finally:
        st.frozen = frozen
        st.journal = None
    return made - share.dropped, share.dropped
