"""Event queue with a deterministic order and an injectable clock.

Events fire by ``(time_ms, priority, sequence)``: equal times resolve by priority (lower first),
then by insertion order, so a run never depends on hash order or wall time.

Example:
    >>> q = EventQueue()
    >>> q.push(10, 1, "b"); q.push(10, 0, "a"); q.push(5, 9, "c")
    >>> [q.pop()[2] for _ in range(3)], q.now_ms
    (['c', 'a', 'b'], 10)
"""

from __future__ import annotations

import heapq
from typing import Any


class EventQueue:
    """A min-heap of events; ``now_ms`` is the clock, advanced only by :meth:`pop`."""

    def __init__(self, start_ms: int = 0) -> None:
        self._heap: list[tuple[int, int, int, Any]] = []
        self._seq = 0
        self.now_ms = start_ms

    def push(self, time_ms: int, priority: int, payload: Any) -> None:
        if time_ms < self.now_ms:
            raise ValueError(f"event at {time_ms} ms is in the past (now {self.now_ms} ms)")
        heapq.heappush(self._heap, (time_ms, priority, self._seq, payload))
        self._seq += 1

    def pop(self) -> tuple[int, int, Any]:
        time_ms, priority, _seq, payload = heapq.heappop(self._heap)
        self.now_ms = time_ms
        return time_ms, priority, payload

    def __len__(self) -> int:
        return len(self._heap)
