"""Compaction: undo replica moves the goals turn out not to need.

The move loop fixes the worst violation first, so an early move can become unnecessary once later moves
have settled the cluster (a replica sent to broker 5 because broker 2 was hot, after broker 2 was cooled by
a swap). Compaction walks the replicas that are new to their partition, largest first, and sends each back
to a broker the partition has left, if that breaks no goal and makes no violation grow on either broker.
Every undo saves the replica's whole size in copied bytes. Leadership changes are undone the same way.

Example: partition t-3 moved from brokers [0, 1] to [4, 1] (8 GB). If broker 0 can take it back and broker
4 can let it go while both stay in their bands, the entry for t-3 disappears from the plan.

:func:`compact_evenly` runs once more at the very end, after the count goals and the usage band, whose
moves can make earlier ones unnecessary too. There an undo must also make nothing less even: no resource's
σ grows, no (broker, resource) pair leaves seed 001's goals as measured or the usage band, and the two
brokers' replica and leader counts come no further apart. So it saves bytes and worsens no measure the plan
reports.

Example: the replica-count goal moved a 4 GB replica of t-7 from broker 2 to broker 6. Later goals moved
other replicas onto broker 6 and off broker 2, so broker 6 ends with 41 replicas at disk 2 % over the
target and broker 2 with 39 at 2 % under. Sending t-7 back gives 40 and 40 replicas, with disk about even
on both: 4 GB fewer to copy, and both brokers evener.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kafka_balancer.planner.state import State
from kafka_balancer.planner.strategies.evenness import Evenness

Admit = Callable[[int, int, int], bool]  # (partition, from, to)
Even = Callable[[int, int, np.ndarray], bool]  # (from, to, load moved)


def _harmless(st: State, b: int, delta: np.ndarray) -> bool:
    return not st.alive[b] or not st.grows_at(b, delta)


def compact(st: State, max_passes: int = 3) -> int:
    """Send new replicas back where the goals allow; returns the number undone."""
    return _replicas(st, max_passes) + _leaders(st)


def compact_evenly(st: State, theta: float, eps: float, band: float | None, max_passes: int = 3) -> int:
    """After every goal: send new replicas back where the goals allow and nothing becomes less even (see the
    module; ``band``: the usage band's relative half width, or None when it is not a goal). Leadership stays
    where the goals put it. Returns the number undone."""
    judge = Evenness(st, theta, eps, band)

    def closer(p: int, src: int, dst: int) -> bool:  # the two brokers' counts come no further apart
        if st.rcount[dst] + 1 > st.rcount[src]:
            return False
        return not (st.ldr[p] == src and st.lcount[dst] + 1 > st.lcount[src])

    def even(src: int, dst: int, delta: np.ndarray) -> bool:
        return judge.change(src, dst, delta) is not None

    return _replicas(st, max_passes, (closer, even))


def _replicas(st: State, max_passes: int, extra: tuple[Admit, Even] | None = None) -> int:
    """The replica undos of :func:`compact`; returns how many. ``extra``: two further conditions on each undo,
    one asked before the goals are (cheap), one after."""
    snap = st.snap
    undone = 0
    # An undo refused in one pass is refused again in the next unless something it depends on changed: the
    # loads of its two brokers (``touched``: undos so far on each broker) or the partition's replicas and
    # leader. Budgets and guarded goals depend on the whole state, so with either every undo is re-judged.
    remember = not st.budgeted and not st.guards
    touched = [0] * snap.n_brokers
    refused: dict[tuple[int, int, int], tuple[int, int, tuple[int, ...], int]] = {}
    for _ in range(max_passes):
        old, new = snap.replicas, st.rep
        rows, cols = np.nonzero(st.new_replicas())
        if rows.size == 0:
            break
        order = np.argsort(-st.disk_bytes[rows], kind="stable")
        changed = False
        for k in order.tolist():
            p, src = int(rows[k]), int(new[rows[k], cols[k]])
            if st.rep[p, cols[k]] != src:
                continue
            now = st.rep[p].tolist()
            left = [b for b in old[p].tolist() if b >= 0 and b not in now and st.alive[b]]
            for dst in left:
                seen = (touched[src], touched[dst], tuple(now), int(st.ldr[p]))
                if remember and refused.get((p, src, dst)) == seen:
                    continue
                if extra is not None and not extra[0](p, src, dst):
                    refused[(p, src, dst)] = seen
                    continue
                delta = st.role_load(p, src)
                if (
                    st.spread_ok(p, src, dst) and _harmless(st, src, -delta) and _harmless(st, dst, delta)
                    and (extra is None or extra[1](src, dst, delta))
                ):
                    st.move_replica(p, src, dst)
                    touched[src] += 1
                    touched[dst] += 1
                    undone += 1
                    changed = True
                    break
                refused[(p, src, dst)] = seen
        if not changed:
            break
    return undone


def _leaders(st: State) -> int:
    """Give leadership back to the old leader where it still holds a replica and the goals allow:
    an election costs no bytes, but clients notice it."""
    snap = st.snap
    moved = np.nonzero((st.ldr != snap.leader) & (snap.leader >= 0))[0]
    undone = 0
    for p in moved.tolist():
        old = int(snap.leader[p])
        if not st.alive[old] or old not in st.rep[p] or not st.leader_ok(p, old):
            continue
        cur = int(st.ldr[p])
        delta = st.LF[p]
        if _harmless(st, cur, -delta) and _harmless(st, old, delta):
            st.move_leadership(p, old)
            undone += 1
    return undone
