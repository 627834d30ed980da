"""After our plan, how many more bytes would a disk-only greedy need to reach a disk σ?

Evidence for docs/cruise-control-notes.md: on the `huge` case Cruise Control ends at disk σ 1.290e-4 after
35.6 GB; ours stops inside the band at 1.316e-4 after 11.6 GB. This script continues from our plan with the
most byte-efficient disk moves it can find (the most loaded broker on disk gives one replica to one of the
20 least loaded, the move lowering the squared relative deviation of disk and network-in most per byte; no
other goal or constraint is checked, so it is an optimistic frontier) and prints the bytes spent against σ.

It first prints a bound no plan can beat: disk treated as a fluid that can be poured from any broker to any
other, the least disk to move so that σ reaches the target is what lowers the fullest brokers to a common
level and fills the emptiest to another (cutting peaks and filling valleys lowers the sum of squares most per
byte). Real replicas come in sizes and carry other loads, so a real plan needs at least this much.

Command: ``.venv/bin/python bench/disk_frontier.py --snapshot huge.json --target 1.29e-4`` (snapshot from
``simulate cluster --preset huge --seed 1``).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kafka_balancer.model.snapshot import DISK, NW_IN, Derived
from kafka_balancer.model.snapshot_io import read_snapshot
from kafka_balancer.planner import plan
from kafka_balancer.planner.bounds import poured

COLS = [DISK, NW_IN]


def sigma_of(util: np.ndarray) -> float:
    """Seed 001's σ of the utilisations ``util``: their standard deviation over their sum."""
    return float(util.std() / util.sum())


def sigma(load: np.ndarray, cap: np.ndarray, col: int) -> float:
    return sigma_of(load[:, col] / cap[:, col])


def fluid_bound(util: np.ndarray, cap: float, target: float) -> float:
    """Least bytes (of capacity ``cap`` per broker) to move for the σ of ``util`` to reach ``target``: cap
    the top at a level h and raise the bottom to a level l holding the same amount, the shallowest pair that
    gets there (bisection on h; for each h, bisection on l)."""
    def after(h: float) -> tuple[np.ndarray, float]:
        cut = float(np.maximum(util - h, 0.0).sum())
        return np.minimum(poured(util, cut), h), cut  # what the peaks lose fills the valleys

    top, bottom = float(util.max()), float(util.mean())
    if sigma_of(util) <= target:
        return 0.0
    for _ in range(60):
        mid = (top + bottom) / 2
        v, _ = after(mid)
        top, bottom = (mid, bottom) if sigma_of(v) > target else (top, mid)
    return after(bottom)[1] * cap


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--target", type=float, default=1.29e-4, help="disk σ to reach")
    ap.add_argument("--max-moves", type=int, default=400)
    args = ap.parse_args()
    snap = read_snapshot(args.snapshot)
    live0 = snap.alive
    util0 = Derived(snap).loads[live0, DISK] / snap.capacity[live0, DISK]
    cap0 = float(snap.capacity[live0, DISK].mean())
    if np.ptp(snap.capacity[live0, DISK]) == 0:  # the bound assumes equal disks
        print(f"fluid bound from the snapshot: at least {fluid_bound(util0, cap0, args.target) / 1e9:.1f} GB "
              f"to reach disk σ {args.target:.4g} (now {sigma_of(util0):.4g})")
    res = plan(snap)
    after = res.after_snapshot
    load, cap = Derived(after).loads.copy(), after.capacity
    rep, ldr = after.replicas.copy(), after.leader.copy()
    members = [set(np.nonzero((rep == b).any(axis=1))[0].tolist()) for b in range(after.n_brokers)]
    live = after.alive
    print(f"after our plan: {res.moved_bytes / 1e9:.1f} GB, disk σ {sigma(load[live], cap[live], DISK):.4g}, "
          f"nw_in σ {sigma(load[live], cap[live], NW_IN):.4g}")
    spent = 0.0
    for n in range(1, args.max_moves + 1):
        u = load / cap
        t = u[live].mean(axis=0)
        dev = np.where(live[:, None], (u - t) / t, 0.0)
        hi = int(np.argmax(dev[:, DISK]))
        m = np.array(sorted(members[hi]))
        role = np.where((ldr[m] == hi)[:, None], after.leader_load[m], after.follower_load[m])
        best: tuple[float, int, int] | None = None
        for lo in np.argsort(np.where(live, dev[:, DISK], np.inf))[:20].tolist():
            ok = ~(rep[m] == lo).any(axis=1)
            d0 = (dev[hi, COLS] ** 2).sum() + (dev[lo, COLS] ** 2).sum()
            uh = ((load[hi, COLS] - role[:, COLS]) / cap[hi, COLS] - t[COLS]) / t[COLS]
            ul = ((load[lo, COLS] + role[:, COLS]) / cap[lo, COLS] - t[COLS]) / t[COLS]
            gain = np.where(ok, d0 - (uh**2).sum(axis=1) - (ul**2).sum(axis=1), -1.0) / (role[:, DISK] + 1e8)
            k = int(np.argmax(gain))
            if gain[k] > 0 and (best is None or gain[k] > best[0]):
                best = (float(gain[k]), int(m[k]), int(lo))
        if best is None:
            break
        _, p, lo = best
        delta = after.leader_load[p] if ldr[p] == hi else after.follower_load[p]
        load[hi] -= delta
        load[lo] += delta
        spent += float(delta[DISK])
        rep[p][rep[p] == hi] = lo
        if ldr[p] == hi:
            ldr[p] = lo
        members[hi].discard(p)
        members[lo].add(p)
        s_disk = sigma(load[live], cap[live], DISK)
        if n % 20 == 0 or s_disk <= args.target:
            print(f"{n} more moves, {spent / 1e9:.1f} GB more ({(res.moved_bytes + spent) / 1e9:.1f} GB in all): "
                  f"disk σ {s_disk:.4g}, nw_in σ {sigma(load[live], cap[live], NW_IN):.4g}")
        if s_disk <= args.target:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
