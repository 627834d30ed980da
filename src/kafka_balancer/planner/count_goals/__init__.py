"""Count goals (Cruise Control's, as soft goals below seed 001's), one class per invariant, one module per goal.

Each goal measures a violation (0 = met), can act as a *guard* (a move made for a lower goal may not make
its violation grow) and has a strategy that lowers its violation with moves that keep every higher goal:

* :class:`ReplicaCountGoal` — replicas per live broker within ``mean ± max(1, 5 %)``; the strategy keeps
  going past the band while a move from the fullest broker to one at least two replicas emptier is
  acceptable, so counts end as even as the higher goals allow;
* :class:`LeaderCountGoal` — leaders per broker that may lead within ``mean ± max(1, 2 %)``, by
  leadership moves (no data moves), from the broker with most leaders or onto the one with fewest;
* :class:`RackRepairGoal` — a partition with two replicas in one rack while a rack it misses has a broker
  that may receive it;
* :class:`PotentialNwOutGoal` — the network-out a broker would serve if every replica it holds led stays
  ≤ θ (failover headroom); swaps keep counts unchanged;
* :class:`TopicSpreadGoal` — each topic's replicas per broker within ±1 of the topic's mean; swaps of
  replicas of similar size keep loads and counts unchanged.

The moves are chosen to disturb resource balance least: among acceptable (replica, destination) pairs, the
one that raises the squared relative deviation from the ideal utilisation least, and small replicas are
preferred (few bytes). Example: brokers with 20, 16 and 12 replicas (mean 16, band 15..17) get two of the
first broker's smallest replicas moved to the third, if no resource band breaks: counts 18, 16, 14 ... 16, 16, 16.
"""

from __future__ import annotations

from kafka_balancer.planner.count_goals.base import CountGoal
from kafka_balancer.planner.count_goals.leader_count import LeaderCountGoal
from kafka_balancer.planner.count_goals.potential_nw_out import PotentialNwOutGoal
from kafka_balancer.planner.count_goals.rack_repair import RackRepairGoal
from kafka_balancer.planner.count_goals.replica_count import ReplicaCountGoal
from kafka_balancer.planner.count_goals.topic_spread import TopicSpreadGoal

__all__ = [
    "CountGoal",
    "LeaderCountGoal",
    "PotentialNwOutGoal",
    "RackRepairGoal",
    "ReplicaCountGoal",
    "TopicSpreadGoal",
    "make_goal",
]


def make_goal(name: str, theta: float) -> CountGoal:
    classes: dict[str, CountGoal] = {
        "replica_count": ReplicaCountGoal(),
        "leader_count": LeaderCountGoal(),
        "rack_repair": RackRepairGoal(),
        "potential_nw_out": PotentialNwOutGoal(theta),
        "topic_spread": TopicSpreadGoal(),
    }
    return classes[name]
