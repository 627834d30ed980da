"""Baseline rebalancers the planner is compared against in ``bench/compare_planners.py``."""
