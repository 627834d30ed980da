"""Leadership movement (seed 001, definition 1): a follower becomes the leader. No data moves.

It shifts only what the leader role costs above the follower role: CPU and network-out (table 1).
Destinations are the partition's live followers in ascending order of load on the resource (§3.1 (3)).
"""

from __future__ import annotations

import numpy as np

from kafka_balancer.planner.state import State

MAX_CANDIDATES = 64


def shed(st: State, src: int, r: int) -> bool:
    """Move leadership off ``src`` (too loaded on resource ``r``), heaviest leader first."""
    leaders = st.leaders_of(src)
    if leaders.size == 0:
        return False
    gain = st.LF[leaders, r]
    order = np.argsort(-gain, kind="stable")[:MAX_CANDIDATES]
    util_r = st.load[:, r] / st.cap[:, r]
    for p in leaders[order].tolist():
        if st.LF[p, r] <= 0:
            break
        row = st.rep[p]
        followers = [int(b) for b in row if b >= 0 and b != src and st.alive[b]]
        followers.sort(key=lambda b: util_r[b])
        delta = st.LF[p]
        for f in followers:
            if st.accept([(src, -delta), (f, delta)]) is not None and st.leader_ok(p, f):
                st.move_leadership(p, f)
                return True
    return False


def attract(st: State, dst: int, r: int) -> bool:
    """Move leadership onto ``dst`` (too idle on ``r``) from partitions it follows, heaviest first."""
    m = st.members_arr(dst)
    if m.size == 0:
        return False
    lead = st.ldr[m]
    m = m[(lead != dst) & (lead >= 0)]
    if m.size == 0:
        return False
    gain = st.LF[m, r]
    order = np.argsort(-gain, kind="stable")[:MAX_CANDIDATES]
    for p in m[order].tolist():
        if st.LF[p, r] <= 0:
            break
        src = int(st.ldr[p])
        delta = st.LF[p]
        if st.accept([(src, -delta), (dst, delta)]) is not None and st.leader_ok(p, dst):
            st.move_leadership(p, dst)
            return True
    return False


def restore_preferred(st: State) -> int:
    """Give leadership back to ``replicas[0]`` where a failure moved it away and no goal suffers."""
    restored = 0
    first = st.rep[:, 0]
    candidates = np.nonzero((st.ldr != first) & (first >= 0))[0]
    for p in candidates.tolist():
        pref = int(first[p])
        if not st.alive[pref] or not st.leader_ok(p, pref):
            continue
        src = int(st.ldr[p])
        delta = st.LF[p]
        changes = [(pref, delta)] if src < 0 else [(src, -delta), (pref, delta)]
        if _no_new_violation(st, changes):
            st.move_leadership(p, pref)
            restored += 1
    return restored


def _no_new_violation(st: State, changes: list[tuple[int, np.ndarray]]) -> bool:
    before = after = 0.0
    for b, delta in changes:
        v0 = st.violation_of(st.load[b] / st.cap[b])
        v1 = st.violation_of((st.load[b] + delta) / st.cap[b])
        if np.any((v0 <= 1e-12) & (v1 > 1e-12)):
            return False
        before += float(v0.sum())
        after += float(v1.sum())
    return after <= before + 1e-12


def demote(st: State) -> list[int]:
    """Move leadership off brokers that may not lead (demoted), to the live follower where it adds the
    least violation. Returns the partitions that have no follower able to lead (left as they are)."""
    bad = np.nonzero((st.ldr >= 0) & ~st.may_lead[np.maximum(st.ldr, 0)] & st.alive[np.maximum(st.ldr, 0)])[0]
    stuck: list[int] = []
    for p in bad.tolist():
        if st.frozen[p]:
            stuck.append(p)
            continue
        src = int(st.ldr[p])
        delta = st.LF[p]
        best, best_cost = -1, np.inf
        for f in [int(b) for b in st.rep[p] if b >= 0 and b != src]:
            if not st.leader_ok(p, f):
                continue
            v0 = st.violation_of(st.load[f] / st.cap[f]).sum()
            v1 = st.violation_of((st.load[f] + delta) / st.cap[f]).sum()
            cost = float(v1 - v0) + 1e-6 * float((st.load[f] / st.cap[f]).max())
            if cost < best_cost:
                best, best_cost = f, cost
        if best < 0:
            stuck.append(p)
        else:
            st.move_leadership(p, best)
    return stuck
