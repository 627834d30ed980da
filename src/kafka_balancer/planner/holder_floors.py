"""Holder floors: how low a broker holding a given partition can go on one resource while it stays inside
the ε band on every other resource.

A broker that leads a heavy partition can shed everything else it carries on CPU, but not below what it
must keep to stay inside the band on network-in and disk: whatever it keeps there brings CPU with it. The
least CPU that carries a given network-in (or disk) is a fractional knapsack over every replica role in the
cluster, cheapest in CPU per unit of network-in first (each role at most once: a relaxation, since a
broker holds at most one replica of a partition, in one role). So, on a broker ``b`` holding ``p`` in role
``R``::

    floor_r(b) = (R_p[r] + max over s != r of knapsack_r/s(bottom_s × cap_b[s] − R_p[s])) / cap_b[r]

with ``bottom_s`` the lowest the band can sit on ``s`` and the knapsack taken over the cheapest roles.
Whoever holds ``p`` in that role is at least ``min over b of floor_r(b)`` on ``r``, or outside the band on
another resource. When that minimum is above the band's highest possible top, balance is out of reach for
every holder of ``p`` in that role, which generalises a partition too hot for any broker (the knapsack
term 0).

Example: the band on CPU tops out at 0.385 and on network-in bottoms out at 0.361 of a broker's capacity.
A partition whose leader puts 0.359 CPU and 0.142 network-in on a broker leaves 0.219 network-in for the
rest; if the cheapest replicas in the cluster bring 0.235 CPU per unit of network-in, that rest costs at
least 0.052 CPU, so whoever leads the partition sits at 0.411 CPU or more: above the band, although the
partition alone (0.359) is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_balancer.model.snapshot import RESOURCES, Derived, Snapshot
from kafka_balancer.planner.bounds import mean_util_range


@dataclass(frozen=True)
class Floor:
    """Whoever holds ``partition`` (its leader only, unless ``everyone``) is at ``util`` or more on
    ``resource`` while inside the band elsewhere; ``via`` is the resource whose band forces the rest (-1:
    the partition alone is above the top)."""

    partition: int
    resource: int
    everyone: bool
    util: float
    top: float
    via: int
    must_hold: float  # utilisation of ``via`` the holder must keep (0 when via is -1)

    def line(self, label: str) -> str:
        res = RESOURCES[self.resource]
        who = "holds" if self.everyone else "leads"
        why = (
            "its own load"
            if self.via < 0
            else f"its own load plus the least {res} that carries the {RESOURCES[self.via]} {self.must_hold:.3f} "
            "the band needs"
        )
        return (
            f"partition {label}: whoever {who} it is at {res} {self.util:.3f} or more, above the band top "
            f"{self.top:.3f} ({why})"
        )


class _Knapsack:
    """Least load on ``r`` that carries a given load on ``s``, from the cheapest roles first."""

    def __init__(self, r_load: np.ndarray, s_load: np.ndarray, cover: float) -> None:
        """Only the cheapest items that together carry ``cover`` on ``s`` are kept (sorting them all cost
        most of the time on a million replicas); a need beyond what they carry gets what they cost, which
        is still a lower bound."""
        keep = np.nonzero(s_load > 0)[0]
        ratio = r_load[keep] / s_load[keep]
        # the cheapest, by a threshold read off every 64th item: a comparison, not a sort, of the whole pool
        sample = np.sort(ratio[::64])
        j = 64
        while True:
            first = np.nonzero(ratio <= sample[j])[0] if j < sample.size else np.arange(keep.size)
            if j >= sample.size or float(s_load[keep[first]].sum()) >= cover:
                break
            j *= 4
        order = first[np.argsort(ratio[first], kind="stable")]
        self.ratio = ratio[order]
        self.s = s_load[keep][order]
        self.r = r_load[keep][order]
        self.cum_s = np.cumsum(self.s)
        self.cum_r = np.cumsum(self.r)
        self.pos = np.full(r_load.size, -1, dtype=np.int64)  # an item's place in cheapest-first order
        self.pos[keep[order]] = np.arange(order.size)

    def least_many(self, need: np.ndarray) -> np.ndarray:
        """:meth:`least` of many needs at once, nothing dropped."""
        need = np.maximum(need, 0.0)
        n = self.cum_s.size
        if n == 0:
            return np.zeros_like(need)
        k = np.minimum(np.searchsorted(self.cum_s, need), n - 1)
        before_s = np.where(k > 0, self.cum_s[k - 1], 0.0)
        before_r = np.where(k > 0, self.cum_r[k - 1], 0.0)
        part = np.minimum(need - before_s, self.cum_s[k] - before_s)
        return np.where(need > 0, before_r + part * self.ratio[k], 0.0)

    def least(self, need: float, drop: tuple[int, ...] = ()) -> float:
        """The least load on ``r`` carrying ``need`` on ``s``, without the items ``drop`` (a broker holding
        a partition holds no other replica of it)."""
        n = self.cum_s.size
        if need <= 0 or n == 0:
            return 0.0
        gone = sorted(int(self.pos[j]) for j in drop if self.pos[j] >= 0)
        skipped = 0.0
        k = n
        for i, nxt in enumerate([*gone, n]):  # between two dropped items, the prefix sums lack those before
            k = int(np.searchsorted(self.cum_s, need + skipped))
            if k < nxt:
                break
            if i < len(gone):
                skipped += float(self.s[gone[i]])
        before = [q for q in gone if q < k]
        s_before = (float(self.cum_s[k - 1]) if k > 0 else 0.0) - sum(float(self.s[q]) for q in before)
        r_before = (float(self.cum_r[k - 1]) if k > 0 else 0.0) - sum(float(self.r[q]) for q in before)
        if k >= n:  # not enough in the whole cluster: what there is
            return r_before
        return r_before + (need - s_before) * float(self.ratio[k])


def holder_floors(snap: Snapshot, eps: float, view: Derived | None = None) -> list[Floor]:
    """Every (partition, resource, role) whose holders are provably outside the band; heaviest first."""
    view = view if view is not None else Derived(snap)
    alive = snap.alive
    if not alive.any():
        return []
    caps = snap.capacity[alive]
    rows = np.unique(caps, axis=0)  # brokers of one size have one floor
    totals = view.totals
    n_res = len(RESOURCES)
    top = np.zeros(n_res)
    bottom = np.zeros(n_res)
    active = totals > 0
    for r in range(n_res):
        if active[r]:
            m_lo, m_hi = mean_util_range(float(totals[r]), caps[:, r], eps)
            top[r], bottom[r] = (1 + eps) * m_hi, (1 - eps) * m_lo
    live = view.has_live
    leader, follower = snap.leader_load[live], snap.follower_load[live]
    pool = np.vstack([leader, follower])  # every role once (a relaxation: a broker holds one of them)
    parts = np.nonzero(live)[0]
    n = parts.size
    own = pool[:n] + pool[n:]  # what a partition's own two roles bring, per resource
    found: list[Floor] = []
    for r in np.nonzero(active)[0].tolist():
        others = [s for s in np.nonzero(active)[0].tolist() if s != r]
        # the largest need: the band's bottom on the largest broker, plus a partition's own two roles
        sacks = {
            s: _Knapsack(pool[:, r], pool[:, s], float(bottom[s] * rows[:, s].max() + 2 * pool[:, s].max()))
            for s in others
        }
        for everyone, load in ((False, leader), (True, follower)):
            if everyone and not (follower[:, r] > 0).any():
                continue
            # a pre-filter, all partitions at once: the most the rest can cost is the least that carries the
            # need plus what the partition's own two roles bring (they are the items the exact sum leaves out)
            most = np.zeros(n)
            for row in rows:
                rest_most = np.zeros(n)
                for s in others:
                    rest_most = np.maximum(rest_most, sacks[s].least_many(bottom[s] * row[s] - load[:, s] + own[:, s]))
                most = np.maximum(most, (load[:, r] + rest_most) / row[r])
            cand = np.nonzero(most > top[r] + 1e-9)[0]
            for i in cand.tolist():
                best = (np.inf, -1, 0.0)
                for row in rows:
                    rest, via, hold = 0.0, -1, 0.0
                    for s in others:
                        cost = sacks[s].least(bottom[s] * row[s] - float(load[i, s]), (i, n + i))
                        if cost > rest:
                            rest, via, hold = cost, s, float(bottom[s])
                    u = (load[i, r] + rest) / row[r]
                    if u < best[0]:
                        best = (u, via if load[i, r] / row[r] <= top[r] else -1, hold)
                if best[0] > top[r] + 1e-9:
                    found.append(Floor(int(parts[i]), r, everyone, float(best[0]), float(top[r]), best[1], best[2]))
    found.sort(key=lambda f: (-f.util, f.partition, f.resource))
    return found


def lines(snap: Snapshot, floors: tuple[Floor, ...] | list[Floor], limit: int = 10) -> list[str]:
    """One line per floor that the partition alone does not explain (those are the too-hot partitions,
    which ``bounds.hot_partitions`` reports), at most ``limit`` and a count of the rest."""
    held = {(f.partition, f.resource) for f in floors if f.everyone}
    found = [f for f in floors if f.via >= 0 and (f.everyone or (f.partition, f.resource) not in held)]
    out = [f.line(snap.partition_label(f.partition)) for f in found[:limit]]
    if len(found) > limit:
        out.append(f"{len(found) - limit} more holder floor(s) above the band")
    return out
