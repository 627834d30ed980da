"""Placing unowned partitions, heaviest first, onto the least-loaded eligible member.

Two paths:
  * homogeneous subscriptions (every member may take every partition): a heap-driven greedy
    (LPT) over the heavy head only, then a vectorised water-fill of the light tail: members'
    remaining room up to their fair share is laid end to end and the tail's cumulative load is cut
    at those boundaries (``np.searchsorted``). Each member then overshoots its share by at most half
    of one tail partition, and tail partitions are small by construction.
  * mixed subscriptions: one lazily-updated heap per subscription class (members' loads only grow
    during the fill, so an entry whose key is stale is simply re-pushed).

Example:
    >>> import numpy as np
    >>> owner = np.full(4, -1)
    >>> fill_homogeneous(np.array([5.0, 4.0, 3.0, 3.0]), np.arange(4), np.zeros(2), np.ones(2), owner)
    >>> owner.tolist()
    [0, 1, 1, 0]
"""

from __future__ import annotations

import heapq

import numpy as np

from kafka_balancer.consumer.problem import FloatArray, IntArray
from kafka_balancer.consumer.result import seq_sum

# Partitions heavier than this fraction of a member's fair share go through the heap; lighter ones
# through the vectorised fill (their rounding error is at most half of one such partition).
HEAD_FRACTION = 1.0 / 64.0


class _Chooser:
    """Least ``(load + l) / capacity`` member among a set, exactly, with one heap per capacity value.

    Within a capacity value the best member is the one with the least load, so a min-heap per value
    suffices; across values the heap tops are compared directly. Loads only grow while filling, so
    stale heap entries are re-pushed lazily when popped.
    """

    def __init__(self, members: list[int], curl: list[float], capl: list[float]) -> None:
        groups: dict[float, list[tuple[float, int]]] = {}
        for m in members:
            groups.setdefault(capl[m], []).append((curl[m], m))
        self.heaps = [(c, h) for c, h in sorted(groups.items())]
        for _c, h in self.heaps:
            heapq.heapify(h)
        self.curl = curl

    def take(self, load: float) -> int:
        curl = self.curl
        best_m, best_v, best_h = -1, np.inf, -1
        for i, (c, h) in enumerate(self.heaps):
            while True:
                key, m = h[0]
                if key == curl[m]:
                    break
                heapq.heapreplace(h, (curl[m], m))
            v = (key + load) / c
            if v < best_v:
                best_m, best_v, best_h = m, v, i
        curl[best_m] += load
        h = self.heaps[best_h][1]
        heapq.heapreplace(h, (curl[best_m], best_m))
        return best_m


def _heap_place(items: list[int], loads: list[float], cur: FloatArray, cap: FloatArray,
                members: IntArray, owner: IntArray) -> None:
    curl = cur.tolist()
    chooser = _Chooser(members.tolist(), curl, cap.tolist())
    for p, load in zip(items, loads, strict=True):
        owner[p] = chooser.take(load)
    cur[:] = curl


def fill_homogeneous(
    load: FloatArray, items: IntArray, cur: FloatArray, cap: FloatArray, owner: IntArray
) -> None:
    """Assign partitions ``items`` (any order) to members; updates ``owner`` and ``cur`` in place.

    ``cur`` holds each member's current raw load; ``cap`` its capacity.
    """
    if items.size == 0:
        return
    M = cur.shape[0]
    il = load[items]
    order = np.argsort(-il, kind="stable")  # equal loads keep partition order (as the plugin does)
    items = items[order]
    il = il[order]
    total = seq_sum(np.concatenate([cur, il]))
    share = total / M if M else 0.0
    n_head = int(np.searchsorted(-il, -share * HEAD_FRACTION, side="left"))
    n_head = min(n_head, items.size)
    if n_head:
        _heap_place(items[:n_head].tolist(), il[:n_head].tolist(), cur, cap, np.arange(M), owner)
    tail = items[n_head:]
    if tail.size == 0:
        return
    tl = il[n_head:]
    tail_sum = seq_sum(tl)
    target = cap * (total / seq_sum(cap))
    room = np.maximum(target - cur, 0.0)
    takers = np.flatnonzero(room > 0)
    if takers.size == 0:
        takers = np.array([int(np.argmin(cur / cap))])
        room = np.zeros(M)
        room[takers] = tail_sum
    # scale the rooms to the tail's load, so a light tail spreads over every member with room
    # (in proportion to it) instead of filling the first rooms only
    bounds = np.cumsum(room[takers])
    bounds *= tail_sum / float(bounds[-1])
    mid = np.cumsum(tl) - tl / 2.0
    slot = np.minimum(np.searchsorted(bounds, mid, side="right"), takers.size - 1)
    dest = takers[slot]
    owner[tail] = dest
    cur += np.bincount(dest, weights=tl, minlength=M)


def fill_by_class(load: FloatArray, items: IntArray, cur: FloatArray, cap: FloatArray, owner: IntArray,
                  class_of: IntArray, members_of: list[IntArray]) -> None:
    """Mixed subscriptions: heaviest first, each to the least-loaded member of its class."""
    if items.size == 0:
        return
    order = np.argsort(-load[items], kind="stable")
    items = items[order]
    capl = cap.tolist()
    curl = cur.tolist()
    choosers = [_Chooser(mem.tolist(), curl, capl) for mem in members_of]
    for p, k, lp in zip(items.tolist(), class_of[items].tolist(), load[items].tolist(), strict=True):
        owner[p] = choosers[k].take(lp)
    cur[:] = curl
