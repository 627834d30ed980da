"""Honest lower bounds: bytes any balanced plan must move, and brokers the cluster must add.

**Bytes.** Moving a replica copies its whole log, so bytes moved = Σ disk of added replicas. Any plan
that ends with every live broker inside the ε band must move at least:

* every byte of every replica on a dead broker (it must be copied to a live one);
* from each live broker above the band: the largest of its disk excess over the band's top, the fewest
  bytes that can carry its network-in excess (network-in moves only with replicas; a fractional knapsack
  over its replicas, densest in network-in per byte first, is a valid bound), and the fewest bytes that
  carry the part of its CPU excess that giving away every leadership it has could not shed. Network-out
  can always be shed by leadership alone, so it adds nothing;
* into the live brokers below the band: their disk deficit.

Sources are disjoint, so the first two add up; the third bounds the same total from the other side; the
bound is the larger of the two. The band's centre is the mean utilisation the final state will have: with
equal capacities it is total ÷ capacity exactly; with unequal ones the widest possible range of that mean
is used, so the bound stays a bound.
"""

from __future__ import annotations

import math

import numpy as np

from kafka_balancer.model.snapshot import CPU, DISK, NR, NW_IN, RESOURCES, Derived, Snapshot


def mean_util_range(total: float, caps: np.ndarray, eps: float) -> tuple[float, float]:
    """Smallest and largest possible mean utilisation of a state with every broker within ±ε of it."""
    if total <= 0 or caps.size == 0:
        return 0.0, 0.0
    c = np.sort(caps)
    half = c.size // 2
    # mean m with B(j) = m (1 + ε s_j), Σ s_j = 0: Σ c_j B(j) = total  ->  m = total / (C + ε Σ c_j s_j)
    low_sum = -c[:half].sum() + c[c.size - half :].sum()  # s = -1 on small, +1 on large: Σ c s max
    high_sum = c[:half].sum() - c[c.size - half :].sum()  # s = +1 on small: Σ c s min
    big_c = float(c.sum())
    return total / (big_c + eps * low_sum), total / (big_c + eps * high_sum)


def moved_bytes_lower_bound(snap: Snapshot, eps: float, view: Derived | None = None) -> float:
    view = view if view is not None else Derived(snap)
    alive = snap.alive
    if not alive.any():
        return 0.0
    disk = view.disk_bytes
    rep = snap.replicas
    live_slot = view.live_slot
    on_dead = (rep >= 0) & ~live_slot
    has_live = live_slot.any(axis=1)
    dead_bytes = float((on_dead.sum(axis=1) * disk * has_live).sum())

    loads = view.loads
    caps = snap.capacity[alive]
    totals = view.totals
    live_ids = np.nonzero(alive)[0]
    src_bytes = np.zeros(live_ids.size)
    deficit = 0.0
    rows_of = view.rows_by_broker
    for r in (DISK, NW_IN, CPU):
        m_lo, m_hi = mean_util_range(float(totals[r]), caps[:, r], eps)
        top = (1 + eps) * m_hi * caps[:, r]
        excess = np.maximum(0.0, loads[alive, r] - top)
        if r == DISK:
            src_bytes = np.maximum(src_bytes, excess)
            bottom = (1 - eps) * m_lo * caps[:, r]
            deficit = float(np.maximum(0.0, bottom - loads[alive, r]).sum())
            continue
        for k in np.nonzero(excess > 0)[0]:
            b = int(live_ids[k])
            amount = float(excess[k])
            if r == CPU:
                # leadership can shed at most what every leader on b costs above a follower; only the
                # rest must leave with replicas (each carrying at least its follower CPU)
                mine = rows_of[b]
                led = mine[snap.leader[mine] == b]
                amount -= float((snap.leader_load[led, CPU] - snap.follower_load[led, CPU]).sum())
                if amount <= 0:
                    continue
            src_bytes[k] = max(src_bytes[k], _min_bytes_carrying(snap, rows_of[b], amount, disk, r))
    return max(dead_bytes + float(src_bytes.sum()), deficit)


def _min_bytes_carrying(snap: Snapshot, rows: np.ndarray, amount: float, disk: np.ndarray, r: int = NW_IN) -> float:
    """Fewest bytes whose replicas (partitions ``rows`` on one broker) carry ``amount`` of resource ``r`` in
    their follower role (fractional knapsack: densest first); network-in is the same in both roles."""
    nw = snap.follower_load[rows, r]
    size = disk[rows]
    keep = nw > 0
    nw, size = nw[keep], size[keep]
    order = np.argsort(size / nw, kind="stable")
    cum_nw = np.cumsum(nw[order])
    cum_size = np.cumsum(size[order])
    k = int(np.searchsorted(cum_nw, amount))
    if k >= nw.size:
        return float(cum_size[-1]) if nw.size else 0.0
    prev_nw = cum_nw[k - 1] if k else 0.0
    prev_size = cum_size[k - 1] if k else 0.0
    return float(prev_size + (amount - prev_nw) * size[order][k] / nw[order][k])


def brokers_to_add(snap: Snapshot, theta: float, view: Derived | None = None) -> int:
    """Brokers of the present (mean) size the cluster needs so that the mean utilisation is ≤ θ."""
    alive = snap.alive
    n = int(alive.sum())
    if n == 0:
        return 0
    totals = (view if view is not None else Derived(snap)).totals
    mean_cap = snap.capacity[alive].mean(axis=0)
    need = 0
    for r in range(NR):
        if totals[r] > 0:
            need = max(need, math.ceil(totals[r] / (theta * mean_cap[r]) - 1e-9) - n)
    return max(0, need)


def rack_infeasibility(snap: Snapshot, eps: float, view: Derived | None = None) -> list[str]:
    """Proofs that the ε band cannot be reached without breaking rack awareness, one line per rack.

    A partition that spans every rack must keep a replica in every rack (its spread may not shrink),
    so each rack carries at least the follower load of all such partitions. If that alone puts a rack's
    utilisation above the band's highest possible top, no plan can balance the cluster.
    """
    alive = snap.alive
    racks = snap.rack_idx
    if not (racks >= 0).any() or not alive.any():
        return []
    live_racks = np.unique(racks[alive & (racks >= 0)])
    n_racks = live_racks.size
    if n_racks < 2:
        return []
    rep = snap.replicas
    g = np.where(rep >= 0, racks[np.maximum(rep, 0)], -1)
    g_sorted = np.sort(g, axis=1)
    span = ((g_sorted[:, 1:] != g_sorted[:, :-1]) & (g_sorted[:, 1:] >= 0)).sum(axis=1) + (g_sorted[:, 0] >= 0)
    forced = snap.follower_load[span >= n_racks].sum(axis=0)
    totals = (view if view is not None else Derived(snap)).totals
    caps = snap.capacity[alive]
    out = []
    for rk in live_racks.tolist():
        cap = snap.capacity[alive & (racks == rk)].sum(axis=0)
        for r, res in enumerate(RESOURCES):
            if totals[r] <= 0:
                continue
            _, m_hi = mean_util_range(float(totals[r]), caps[:, r], eps)
            top = (1 + eps) * m_hi
            if forced[r] / cap[r] > top + 1e-12:
                out.append(
                    f"rack {snap.rack_names[rk]} must keep one replica of every partition that spans all racks: "
                    f"{res} utilisation at least {forced[r] / cap[r]:.3f} against a band top of {top:.3f}"
                )
    return out


def partition_infeasibility(snap: Snapshot, eps: float, limit: int = 10, view: Derived | None = None) -> list[str]:
    """Partitions too hot for any broker: whoever leads (or holds) one ends above the band's highest top.

    For each resource, a partition's lightest possible footprint on a broker is its follower load (its
    leader load for the leader, which some live replica must be); on the largest live broker that still
    exceeds the top if the partition is too hot for the cluster's broker size. One line per partition,
    naming every resource it is too hot for.
    """
    return hot_partitions(snap, eps, view, limit)[0]


def hot_partitions(
    snap: Snapshot, eps: float, view: Derived | None = None, limit: int = 10
) -> tuple[list[str], tuple[tuple[int, int, bool], ...]]:
    """(lines, roles): :func:`partition_infeasibility`'s lines, and the (partition, resource, everyone)
    roles that put whoever holds them provably out of the band whatever the plan: the leader of a too-hot
    partition on that resource (any leader would be; moving the leadership only moves the problem), and
    with ``everyone`` each of its replicas (disk and network-in, where a follower is as heavy as the
    leader). The roles follow the partition: the broker holding one is exempt while it holds it."""
    view = view if view is not None else Derived(snap)
    alive = snap.alive
    if not alive.any():
        return [], ()
    caps = snap.capacity[alive]
    totals = view.totals
    found: dict[int, list[str]] = {}
    roles: list[tuple[int, int, bool]] = []
    for r, res in enumerate(RESOURCES):
        if totals[r] <= 0:
            continue
        _, m_hi = mean_util_range(float(totals[r]), caps[:, r], eps)
        top = (1 + eps) * m_hi * float(caps[:, r].max())
        hot = np.nonzero((snap.leader_load[:, r] > top) & view.has_live)[0]
        for p in hot[np.argsort(-snap.leader_load[hot, r], kind="stable")].tolist():
            found.setdefault(p, []).append(
                f"{res} {snap.leader_load[p, r] / caps[:, r].max():.3f} (band top {top / caps[:, r].max():.3f})"
            )
            # disk and network-in: every replica is as heavy as the leader
            roles.append((int(p), r, bool(snap.follower_load[p, r] > top)))
    lines = [
        f"partition {snap.partition_label(p)} puts {' and '.join(parts)} of the largest broker on its leader, "
        "above the band top, whoever leads it"
        for p, parts in list(found.items())[:limit]
    ]
    if len(found) > limit:
        lines.append(f"{len(found) - limit} more partition(s) too hot for any broker")
    return lines, tuple(roles)


def spread_lp_infeasibility(snap: Snapshot, theta: float, eps: float, view: Derived | None = None) -> list[str]:
    """Proofs, by a small linear programme per resource, that rack or host spread rules out balance.

    Relaxation of every balanced state: live broker utilisations ``u`` within θ and within ``(1 ± ε)``
    of their arithmetic mean, carrying the cluster's total load; and for each rack (host) a load between
    what the spread rules force into it and the most they allow. A partition that must span every group
    puts at least its follower load in each; in any group it can put at most one leader and
    ``rf − (spread − 1) − 1`` followers. With unequal capacities this catches what
    :func:`rack_infeasibility` cannot: the mean moves with the assignment, and the LP follows it.
    """
    from scipy.optimize import linprog  # only needed here
    from scipy.sparse import csr_matrix

    alive = snap.alive
    live = np.nonzero(alive)[0]
    n = live.size
    if n < 2:
        return []
    rep = snap.replicas
    view = view if view is not None else Derived(snap)
    has_live = view.has_live
    F, L = snap.follower_load[has_live], snap.leader_load[has_live]
    rf = snap.rf[has_live].astype(np.int64)
    totals = (L + F * (rf - 1)[:, None]).sum(axis=0)
    cap = snap.capacity[live]
    out: list[str] = []
    for kind, group_of, names in (("rack", snap.rack_idx, snap.rack_names), ("host", snap.host_idx, snap.host_names)):
        if not (group_of >= 0).any():
            continue
        g_live = group_of[live]
        groups = np.unique(g_live)
        n_g = groups.size
        if n_g < 2:
            continue
        rows = np.where(rep[has_live] >= 0, group_of[np.maximum(rep[has_live], 0)], -(10**6))
        srt = np.sort(rows, axis=1)
        spread = ((srt[:, 1:] != srt[:, :-1]) & (srt[:, 1:] > -(10**6))).sum(axis=1) + (srt[:, 0] > -(10**6))
        spread = np.minimum(spread, n_g)
        pinned = spread >= n_g
        lo_of = F[pinned].sum(axis=0)
        hi_of: dict[tuple[int, int], float] = {}  # (brokers in the group, resource) -> most load it can hold
        for r, res in enumerate(RESOURCES):
            if totals[r] <= 0:
                continue
            # variables: u[0..n-1], m; rows: u - (1+ε)m ≤ 0, (1-ε)m - u ≤ 0, then per group -load ≤ -lo, load ≤ hi
            j = np.arange(n)
            r_idx = [np.repeat(np.arange(2 * n), 2)]
            c_idx = [np.stack([j, np.full(n, n), j, np.full(n, n)], axis=1).reshape(-1)]
            vals = [np.tile([1.0, -(1.0 + eps), -1.0, 1.0 - eps], n)]
            b_ub = [np.zeros(2 * n)]
            forced_util = []
            row0 = 2 * n
            for gk in groups.tolist():
                in_g = np.nonzero(g_live == gk)[0]
                n_k = in_g.size
                lo = lo_of[r]
                if (n_k, r) not in hi_of:
                    extra = np.maximum(np.minimum(rf - spread + 1, n_k) - 1, 0)
                    hi_of[n_k, r] = float((np.maximum(L[:, r], F[:, r]) + extra * F[:, r]).sum())
                hi = hi_of[n_k, r]
                r_idx.append(np.concatenate([np.full(n_k, row0), np.full(n_k, row0 + 1)]))
                c_idx.append(np.concatenate([in_g, in_g]))
                vals.append(np.concatenate([-cap[in_g, r], cap[in_g, r]]))
                b_ub.append(np.array([-lo, hi]))
                row0 += 2
                forced_util.append((lo / float(cap[in_g, r].sum()), int(gk)))
            a_ub = csr_matrix(
                (np.concatenate(vals), (np.concatenate(r_idx), np.concatenate(c_idx))), shape=(row0, n + 1)
            )
            a_eq = np.zeros((2, n + 1))
            a_eq[0, :n] = cap[:, r]
            a_eq[1, :n], a_eq[1, n] = -1.0, float(n)
            res_lp = linprog(
                np.zeros(n + 1), A_ub=a_ub, b_ub=np.concatenate(b_ub), A_eq=csr_matrix(a_eq),
                b_eq=np.array([float(totals[r]), 0.0]), bounds=[(0.0, theta)] * n + [(0.0, None)], method="highs",
            )
            if res_lp.status == 2:
                worst_u, worst_g = max(forced_util)
                out.append(
                    f"{kind} spread: no {res} utilisation profile within θ and the ε band exists (linear relaxation "
                    f"proven infeasible); {kind} {names[worst_g]} must carry {res} utilisation of at least "
                    f"{worst_u:.3f} from partitions that span every {kind}"
                )
    return out


def heal_sigma_floor(snap: Snapshot, copies: np.ndarray, view: Derived | None = None) -> dict[int, float]:
    """resource -> the least σ that disk or network-in can have after copying ``copies[p]`` replicas of each
    partition ``p`` to live brokers and moving nothing else (a heal: the replicas on dead brokers).

    Those resources move only with replicas, so each live broker ends with its present load plus what it
    receives. However the copies are placed, σ (the spread of the brokers' shares) is no lower than when
    their load is poured like a fluid into the emptiest brokers up to a common level: with the sum fixed,
    that is what minimises the sum of squares. Given only where it is exact: live brokers of one capacity on
    the resource, and leader and follower roles of equal load on it (then moving leadership changes nothing).

    Example: live disk utilisations 0.3, 0.5, 0.7 and copies worth 0.3 of one broker. Poured, they lift the
    first broker to 0.5 and then the first two to 0.55: σ of 0.55, 0.55, 0.7 is 0.0393. Any real placement
    does no better; all of it on the emptiest broker (0.6, 0.5, 0.7) gives 0.0454.
    """
    view = view if view is not None else Derived(snap)
    live = np.nonzero(snap.alive)[0]
    out: dict[int, float] = {}
    if live.size < 2 or not copies.any():
        return out
    for r in (DISK, NW_IN):
        cap = snap.capacity[live, r]
        if not np.all(cap == cap[0]) or not np.array_equal(snap.leader_load[:, r], snap.follower_load[:, r]):
            continue
        util = view.loads[live, r] / cap[0]
        pour = float((copies * snap.follower_load[:, r]).sum()) / float(cap[0])
        if pour <= 0:
            continue
        after = poured(util, pour)
        out[r] = float(after.std() / after.sum())
    return out


def poured(util: np.ndarray, amount: float) -> np.ndarray:
    """``util`` with ``amount`` (in the same units, summed over brokers) poured like a fluid into the lowest
    values up to a common level: the level ``h`` with Σ max(0, h − u) = ``amount``, found by bisection.

    >>> poured(np.array([0.3, 0.5, 0.7]), 0.3).round(6).tolist()
    [0.55, 0.55, 0.7]
    """
    lo, hi = float(util.min()), float(util.max()) + amount
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(np.maximum(mid - util, 0.0).sum()) < amount else (lo, mid)
    return np.maximum(util, lo)
