"""Broker-side planner (seed 001): goals, strategies, bounds; ``plan(snapshot) -> PlanResult``."""

from kafka_balancer.planner.plan import PlanResult, plan

__all__ = ["PlanResult", "plan"]
