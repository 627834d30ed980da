"""The exact byte bound: a mixed-integer model of every balanced state, solved with HiGHS (scipy).

The analytic bound of :mod:`bounds` is fractional: it lets a broker shed exactly its excess, as if
replicas could be cut. On small clusters whole replicas matter (six brokers and 36 partitions have few
ways to land inside a 10 % band), and the true minimum can be twice the fractional one. This module
states the problem exactly and lets a MILP solver find the minimum, or at least prove a floor:

* ``x[p, b] = 1`` if broker ``b`` holds a replica of ``p``; ``y[p, b] = 1`` if it leads ``p``;
  ``Σ_b x[p, b] = rf(p)``, ``Σ_b y[p, b] = 1``, ``y ≤ x``; only live brokers;
* broker load per resource = Σ follower load · x + (leader − follower load) · y (seed 001, table 1);
* every live broker within θ and within ``(1 ± ε)`` of the mean utilisation (max γ ≤ ε, hence σ ≤ η);
* the rack and the host spread of each partition at least what it is now (``z[p, g] ≤ Σ_{b∈g} x``,
  ``z ≤ 1``, ``Σ_g z[p, g] ≥`` the partition's present count);
* minimise the bytes of the replicas that are new to their partition.

Every balanced plan is a feasible point, so the solver's dual bound is a lower bound on the bytes any
balanced plan must move, even when the time limit stops it early; a proof of infeasibility is a proof
that no plan can meet the goals under the hard constraints. Partitions with no live replica cannot move
and are left out. Only models up to ``MAX_CELLS`` (partition, broker) pairs, with equal capacities per
resource, are built.

Example: a 6-broker testbed whose fractional bound is 40 GB may have an exact minimum of 70 GB; a plan
moving 90 GB is then 1.29× the exact bound, not 2.25× the fractional one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy.optimize import LinearConstraint

from kafka_balancer.model.snapshot import DISK, NR, Snapshot, on_live

MAX_CELLS = 600  # partitions × live brokers; at 1,000-2,000 cells the root alone took 13-28 s (measured)
NODE_LIMIT = 200  # about 0.1-15 s for a 6-broker, 36-partition testbed on this project's 2-core machine
TIME_LIMIT = 30.0  # a safety net only: hitting it makes the answer depend on timing


@dataclass(frozen=True)
class ExactBound:
    lower: float | None  # proven lower bound on bytes (None: not computed)
    optimal: bool  # the solver proved ``lower`` is the minimum
    infeasible: bool  # the solver proved no balanced state exists under the hard constraints
    seconds: float
    replicas: np.ndarray | None = None  # the best balanced assignment found (same layout as the snapshot's)
    leader: np.ndarray | None = None


class _Builder:
    """Sparse constraint rows, collected as coordinates."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.n = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        self.rows.append(rows + self.n)
        self.cols.append(cols)
        self.vals.append(vals)
        self.lo.append(lo)
        self.hi.append(hi)
        self.n += lo.size

    def constraint(self, n_vars: int) -> LinearConstraint:
        from scipy.optimize import LinearConstraint  # imported when the model is built: 0.3 s of start-up
        from scipy.sparse import coo_matrix, csr_matrix

        a = coo_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.n, n_vars),
        )
        return LinearConstraint(csr_matrix(a), np.concatenate(self.lo), np.concatenate(self.hi))


def exact_bound(
    snap: Snapshot, theta: float, eps: float, node_limit: int = NODE_LIMIT, time_limit: float = TIME_LIMIT
) -> ExactBound:
    """Solve the exact model: ``node_limit`` branch-and-bound nodes keep the answer deterministic;
    ``time_limit`` is only a safety net for a machine much slower than expected."""
    from scipy.optimize import Bounds, milp  # only when the model runs (off by default)

    t0 = time.monotonic()
    live = np.nonzero(snap.alive)[0]
    rep = snap.replicas
    parts = np.nonzero(on_live(snap).any(axis=1))[0]
    n_b, n_p = live.size, parts.size
    if n_b == 0 or n_p == 0 or n_p * n_b > MAX_CELLS or np.any(snap.rf[parts] > n_b):
        return ExactBound(None, False, False, time.monotonic() - t0)
    if not np.allclose(snap.capacity[live], snap.capacity[live][0]):
        # unequal capacities make the band's centre a variable, and HiGHS's root alone then takes up to
        # minutes on a few hundred partitions (measured); the heuristics and the analytic bound serve there
        return ExactBound(None, False, False, time.monotonic() - t0)
    F = snap.follower_load[parts]
    D = snap.leader_load[parts] - F
    cap = snap.capacity[live]
    size = np.maximum(snap.leader_load[parts, DISK], snap.follower_load[parts, DISK])
    unit = float(size.max()) if size.size and size.max() > 0 else 1.0  # objective in units of the largest replica
    cell = np.arange(n_p * n_b).reshape(n_p, n_b)  # x index; y = cell + n_x
    n_x = n_p * n_b
    # utilisation u[b, r] and mean m[r] as continuous helper variables
    u_idx = 2 * n_x + np.arange(n_b * NR).reshape(n_b, NR)
    m_idx = 2 * n_x + n_b * NR + np.arange(NR)
    n_vars = 2 * n_x + n_b * NR + NR
    extra_groups = []
    for group_of in (snap.rack_idx, snap.host_idx):
        if (group_of >= 0).any():
            extra_groups.append(group_of)
    z_blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (z index [P, G], group of live b, need [P])
    for group_of in extra_groups:
        g_live = group_of[live]
        groups, g_code = np.unique(g_live, return_inverse=True)
        now = np.array(
            [len({int(group_of[b]) for b in rep[p] if b >= 0}) for p in parts.tolist()], dtype=np.float64
        )
        need = np.minimum(now, groups.size)
        z = n_vars + np.arange(n_p * groups.size).reshape(n_p, groups.size)
        n_vars += z.size
        z_blocks.append((z, g_code, need))

    c = np.zeros(n_vars)
    old = np.zeros((n_p, n_b), dtype=bool)
    pos = {int(b): k for k, b in enumerate(live.tolist())}
    for i, p in enumerate(parts.tolist()):
        for b in rep[p]:
            if b >= 0 and int(b) in pos:
                old[i, pos[int(b)]] = True
    c[:n_x] = np.where(old, 0.0, size[:, None] / unit).reshape(-1)

    lo_var = np.zeros(n_vars)
    hi_var = np.ones(n_vars)
    hi_var[2 * n_x : 2 * n_x + n_b * NR + NR] = np.inf
    integrality = np.zeros(n_vars)
    integrality[: 2 * n_x] = 1

    bld = _Builder()
    rows_p = np.repeat(np.arange(n_p), n_b)
    ones = np.ones(n_x)
    rf = snap.rf[parts].astype(np.float64)
    bld.add(rows_p, cell.reshape(-1), ones, rf, rf)  # Σ_b x = rf
    bld.add(rows_p, cell.reshape(-1) + n_x, ones, np.ones(n_p), np.ones(n_p))  # Σ_b y = 1
    k = np.arange(n_x)
    bld.add(np.concatenate([k, k]), np.concatenate([k + n_x, k]), np.concatenate([ones, -ones]),
            np.full(n_x, -np.inf), np.zeros(n_x))  # y - x ≤ 0
    for r in range(NR):
        # u[b, r] - Σ_p (F/cap) x - Σ_p (D/cap) y = 0 (in utilisation units, which keeps HiGHS well scaled)
        for j in range(n_b):
            cols = np.concatenate([cell[:, j], cell[:, j] + n_x, [u_idx[j, r]]])
            vals = np.concatenate([-F[:, r] / cap[j, r], -D[:, r] / cap[j, r], [1.0]])
            bld.add(np.zeros(cols.size, dtype=np.int64), cols, vals, np.zeros(1), np.zeros(1))
        # n·m[r] - Σ_b u[b, r] = 0
        cols = np.concatenate([u_idx[:, r], [m_idx[r]]])
        vals = np.concatenate([-np.ones(n_b), [float(n_b)]])
        bld.add(np.zeros(cols.size, dtype=np.int64), cols, vals, np.zeros(1), np.zeros(1))
        # u - (1+ε) m ≤ 0, u - (1-ε) m ≥ 0, u ≤ θ
        rows = np.repeat(np.arange(n_b), 2)
        cols = np.stack([u_idx[:, r], np.full(n_b, m_idx[r])], axis=1).reshape(-1)
        bld.add(rows, cols, np.tile([1.0, -(1.0 + eps)], n_b), np.full(n_b, -np.inf), np.zeros(n_b))
        bld.add(rows, cols, np.tile([1.0, -(1.0 - eps)], n_b), np.zeros(n_b), np.full(n_b, np.inf))
        hi_var[u_idx[:, r]] = theta
        if np.allclose(cap[:, r], cap[0, r]):  # equal capacities: the mean utilisation is fixed
            lo_var[m_idx[r]] = hi_var[m_idx[r]] = float((F[:, r] * rf + D[:, r]).sum() / cap[:, r].sum())
    for z, g_code, need in z_blocks:
        n_g = z.shape[1]
        # z[p, g] - Σ_{b∈g} x[p, b] ≤ 0
        rz = np.arange(z.size).reshape(n_p, n_g)
        rows_x = rz[:, g_code]  # [P, B]: row of (p, group of b)
        bld.add(np.concatenate([rz.reshape(-1), rows_x.reshape(-1)]),
                np.concatenate([z.reshape(-1), cell.reshape(-1)]),
                np.concatenate([np.ones(z.size), -np.ones(n_x)]),
                np.full(z.size, -np.inf), np.zeros(z.size))
        # Σ_g z[p, g] ≥ need
        bld.add(np.repeat(np.arange(n_p), n_g), z.reshape(-1), np.ones(z.size), need, np.full(n_p, np.inf))

    res = milp(
        c,
        constraints=bld.constraint(n_vars),
        integrality=integrality,
        bounds=Bounds(lo_var, hi_var),
        options={"node_limit": node_limit, "time_limit": max(0.1, time_limit - (time.monotonic() - t0)), "disp": False},
    )
    seconds = time.monotonic() - t0
    if res.status == 2:
        return ExactBound(None, False, True, seconds)
    rep_new, ldr_new = (None, None) if res.x is None else _assignment(snap, parts, live, res.x, n_x)
    if res.status == 0:
        return ExactBound(float(res.fun) * unit, True, False, seconds, rep_new, ldr_new)
    dual = getattr(res, "mip_dual_bound", None)
    lower = max(0.0, float(dual)) * unit if dual is not None and np.isfinite(dual) else None
    return ExactBound(lower, False, False, seconds, rep_new, ldr_new)


def _assignment(
    snap: Snapshot, parts: np.ndarray, live: np.ndarray, sol: np.ndarray, n_x: int
) -> tuple[np.ndarray, np.ndarray]:
    """Replica rows and leaders of a solution; a broker that stays keeps its slot in the row."""
    n_b = live.size
    x = sol[:n_x].reshape(-1, n_b) > 0.5
    y = sol[n_x : 2 * n_x].reshape(-1, n_b) > 0.5
    rep = snap.replicas.copy()
    ldr = snap.leader.copy()
    for i, p in enumerate(parts.tolist()):
        chosen = [int(b) for b in live[x[i]].tolist()]
        row = rep[p]
        keep = {int(b) for b in row if b >= 0 and int(b) in chosen}
        incoming = [b for b in chosen if b not in keep]
        for k in range(row.size):
            if row[k] >= 0 and int(row[k]) not in keep:
                row[k] = incoming.pop(0)
        leaders = live[y[i]]
        ldr[p] = int(leaders[0]) if leaders.size else int(row[0])
    return rep, ldr
