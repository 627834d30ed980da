"""Message flow: per-partition FIFO backlogs, consumer service with processor sharing, latency.

Each tick adds a seeded Poisson number of messages (mean ``rate × dt``) to a partition as one
batch stamped with the middle of the tick (messages arrive spread over it).
A consumer serves the partitions it may consume now (owned and not paused),
sharing its service rate equally among those with a backlog (water-filling the unused share).
Every consumed piece of a batch records ``(now - batch time, amount)`` for latency percentiles.

Example:
    >>> f = Flow(rates=[10.0, 0.0], tick_ms=100, seed=1)
    >>> f.arrive(100); f.serve(100, {0: [0, 1]}, [5.0])
    >>> f.arrived, round(f.backlog(), 3), f.consumed
    (2.0, 1.5, 0.5)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

import numpy as np

from kafka_balancer.consumer.problem import FloatArray


class Flow:
    def __init__(self, rates: Sequence[float], tick_ms: int, seed: int = 0) -> None:
        self.rates = [float(r) for r in rates]
        self._rng = np.random.default_rng(seed)
        self._mean = np.asarray(self.rates, dtype=np.float64) * (tick_ms / 1000.0)
        self.dt = tick_ms / 1000.0
        self.queues: list[deque[list[float]]] = [deque() for _ in self.rates]
        self.lag = [0.0] * len(self.rates)
        self.consumed = 0.0
        self.arrived = 0.0
        self._lat: list[float] = []
        self._amt: list[float] = []
        self.recording = True

    def arrive(self, now_ms: int) -> None:
        t = now_ms / 1000.0 - self.dt / 2.0
        counts = self._rng.poisson(self._mean).tolist()
        for p, n in enumerate(counts):
            if n > 0:
                self.queues[p].append([t, n])
                self.lag[p] += n
                self.arrived += n

    def _take(self, p: int, amount: float, now_s: float) -> float:
        q = self.queues[p]
        done = 0.0
        while q and amount > 1e-12:
            batch = q[0]
            use = min(batch[1], amount)
            if self.recording:
                self._lat.append(now_s - batch[0])
                self._amt.append(use)
            batch[1] -= use
            amount -= use
            done += use
            if batch[1] <= 1e-12:
                q.popleft()
        self.lag[p] -= done
        if not q:
            self.lag[p] = 0.0
        return done

    def serve(self, now_ms: int, active: Mapping[int, Sequence[int]], capacity: Sequence[float]) -> None:
        """``active[c]`` = partitions consumer ``c`` consumes this tick; ``capacity[c]`` msgs/s."""
        now_s = now_ms / 1000.0
        for c, parts in active.items():
            budget = capacity[c] * self.dt
            todo = [p for p in parts if self.lag[p] > 1e-12]
            while todo and budget > 1e-12:
                share = budget / len(todo)
                nxt = []
                for p in todo:
                    got = self._take(p, share, now_s)
                    budget -= got
                    if self.lag[p] > 1e-12:
                        nxt.append(p)
                if len(nxt) == len(todo):
                    break  # everyone took a full share; budget is spent
                todo = nxt
        self.consumed = self.arrived - self.backlog()

    def backlog(self) -> float:
        return float(sum(self.lag))

    def latencies(self) -> tuple[FloatArray, FloatArray]:
        return np.asarray(self._lat, dtype=np.float64), np.asarray(self._amt, dtype=np.float64)


def weighted_percentile(values: FloatArray, weights: FloatArray, q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values`` weighted by ``weights``; nan when empty.

    Example:
        >>> weighted_percentile(np.array([1.0, 2.0, 10.0]), np.array([1.0, 1.0, 2.0]), 50)
        2.0
    """
    if values.size == 0 or weights.sum() <= 0:
        return float("nan")
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    idx = int(np.searchsorted(cum, q / 100.0 * cum[-1], side="left"))
    return float(values[order][min(idx, values.size - 1)])
