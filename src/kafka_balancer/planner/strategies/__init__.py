"""Move strategies, cheapest first: leadership (logical), then replica moves, then swaps.

Each strategy tries to fix one (broker, resource) violation and returns whether it changed the state.
"""
