"""Samples with known truth: what the collector would see of a simulated cluster, round by round.

The cluster is a :class:`~kafka_balancer.model.snapshot.Snapshot` whose per-partition loads are the
truth. Every ``interval_ms`` a *round* of records is emitted in the sample format
(``docs/samples-format.md``): broker CPU counters, per topic and broker byte counters, partition offsets,
replica sizes and consumer-group offsets. Everything is integral where Kafka's is: a partition grows by
whole messages of its topic's message size, so offsets, sizes and byte counters agree exactly.

What the generator can break, all seeded:

* ``restarts``: a broker process restarts just before a round; its counters start again near zero;
* ``down``: a broker is down for a whole window (no CPU, no counters, no replica sizes; its partitions
  fail over to the next replica) and restarts after it;
* ``missing``: every record is dropped independently with this probability;
* retention: each partition deletes a segment now and then; its log start offset jumps and its size drops.

Truth (:class:`Truth`): per partition the produce rate (``nw_in``), the leader's network out (consumers
plus replication, ``nw_out``), and the replica size at the last round of the last closed window
(``disk``). Rounds run from the start of window 0 to the start of window ``windows`` inclusive, so windows
``0 .. windows-1`` are closed and the last round opens the next one.

Example::

    >>> from kafka_balancer.sim.cluster import ClusterSpec, generate
    >>> snap = generate(ClusterSpec(brokers=3, racks=0, topics=2, partitions=6), seed=1)
    >>> sim = simulate(snap, SampleSpec(windows=2), seed=1)
    >>> len(sim.rounds), sorted(sim.rounds[0])
    (11, ['broker', 'group_offset', 'partition', 'replica', 'topic_broker'])
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from kafka_balancer.files.outputs import ensure_dir, replacing, write_bytes
from kafka_balancer.model.snapshot import CPU, DISK, NW_IN, NW_OUT, Snapshot

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

RECORD_TYPES: tuple[str, ...] = ("broker", "topic_broker", "partition", "replica", "group_offset")


@dataclass(frozen=True)
class SampleSpec:
    cluster: str = "sim"
    window_ms: int = 300_000
    windows: int = 6
    interval_ms: int = 60_000
    start_ms: int = 1_700_000_100_000  # rounded down to a window boundary
    cpu_cores: int = 8
    missing: float = 0.0
    restarts: tuple[tuple[int, int], ...] = ()  # (broker id, round index)
    down: tuple[tuple[int, int], ...] = ()  # (broker id, window index)
    retention: bool = True
    msg_bytes: tuple[int, int] = (100, 1000)  # per-topic message size range


@dataclass(frozen=True)
class Truth:
    topics: list[str]
    partition: I64
    nw_in: F64
    nw_out: F64
    disk: F64
    leader_cpu: F64
    follower_cpu: F64

    def as_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame(
            {
                "topic": self.topics,
                "partition": self.partition,
                "nw_in": self.nw_in,
                "nw_out": self.nw_out,
                "disk": self.disk,
                "leader_cpu": self.leader_cpu,
                "follower_cpu": self.follower_cpu,
            }
        )


@dataclass
class SimulatedSamples:
    spec: SampleSpec
    truth: Truth
    rounds: list[dict[str, pa.Table]] = field(default_factory=list)

    @property
    def n_records(self) -> int:
        return sum(t.num_rows for r in self.rounds for t in r.values())


def simulate(snap: Snapshot, spec: SampleSpec, seed: int = 0) -> SimulatedSamples:
    """All rounds of samples for ``snap`` (kept in memory; see :func:`iter_rounds` for large runs)."""
    truth, it = _prepare(snap, spec, seed)
    return SimulatedSamples(spec, truth, list(it))


def iter_rounds(snap: Snapshot, spec: SampleSpec, seed: int = 0) -> tuple[Truth, Iterator[dict[str, pa.Table]]]:
    """The truth and a lazy iterator over the rounds (for sample sets that do not fit in memory)."""
    return _prepare(snap, spec, seed)


def _prepare(snap: Snapshot, spec: SampleSpec, seed: int) -> tuple[Truth, Iterator[dict[str, pa.Table]]]:
    rng = np.random.default_rng(seed)
    w = spec.window_ms
    if w % spec.interval_ms:
        raise ValueError("window_ms must be a multiple of interval_ms")
    per_window = w // spec.interval_ms
    n_rounds = spec.windows * per_window + 1
    start = spec.start_ms // w * w
    dt = spec.interval_ms / 1000.0
    p_count = snap.n_partitions
    msg = rng.integers(spec.msg_bytes[0], spec.msg_bytes[1] + 1, size=len(snap.topics))[snap.topic_idx]
    msg = msg.astype(np.int64)
    nw_in = snap.leader_load[:, NW_IN].copy()
    rf = snap.rf.astype(np.int64)
    consumer = np.maximum(snap.leader_load[:, NW_OUT] - nw_in * (rf - 1), 0.0)
    # Consumer groups per topic: enough that no group reads faster than the topic is written; the
    # consumer bytes of a partition are shared equally among its topic's groups.
    ratio = np.divide(consumer, nw_in, out=np.zeros(p_count), where=nw_in > 0)
    groups_t = np.zeros(len(snap.topics), dtype=np.int64)
    for t in range(len(snap.topics)):
        sel = snap.topic_idx == t
        top = float(ratio[sel].max()) if sel.any() else 0.0
        groups_t[t] = int(np.ceil(top - 1e-9)) if top > 0 else 0
    groups = groups_t[snap.topic_idx]

    # Messages written since the first round (whole messages) and the retention dynamics.
    e_last = (n_rounds - 2) * dt  # last round of the last closed window
    msgs_rate = nw_in / msg
    seg = np.maximum(1, np.floor(msgs_rate * 0.5 * w / 1000.0)).astype(np.int64)  # 150 s of writes
    phase = rng.integers(0, seg) if spec.retention else np.zeros(p_count, dtype=np.int64)

    def written(e: float) -> I64:
        return np.floor(msgs_rate * e).astype(np.int64)

    def deleted(e: float) -> I64:
        if not spec.retention:
            return np.zeros(p_count, dtype=np.int64)
        return seg * ((written(e) + phase) // seg) - seg * (phase // seg)

    want = np.floor(snap.leader_load[:, DISK] / msg).astype(np.int64)
    s0 = want - written(e_last) + deleted(e_last)
    s0 = np.maximum(s0, seg + 1)
    lso0 = rng.integers(0, 10**9, size=p_count)
    disk_truth = (s0 + written(e_last) - deleted(e_last)) * msg

    truth = Truth(
        topics=[snap.topics[t] for t in snap.topic_idx.tolist()],
        partition=snap.partition.astype(np.int64),
        nw_in=nw_in,
        nw_out=snap.leader_load[:, NW_OUT].copy(),
        disk=disk_truth.astype(np.float64),
        leader_cpu=snap.leader_load[:, CPU].copy(),
        follower_cpu=snap.follower_load[:, CPU].copy(),
    )

    pos = snap.broker_pos()
    down_rounds: dict[int, set[int]] = {}
    for bid, win in spec.down:
        b = pos[bid]
        down_rounds.setdefault(b, set()).update(range(win * per_window, (win + 1) * per_window))
    restart_rounds: dict[int, set[int]] = {}
    for bid, rnd in spec.restarts:
        restart_rounds.setdefault(pos[bid], set()).add(rnd)
    for b, rounds in down_rounds.items():  # back after the window: a fresh process
        restart_rounds.setdefault(b, set()).update(r + 1 for r in rounds if r + 1 not in rounds)

    return truth, _rounds(snap, spec, rng, start, n_rounds, dt, msg, nw_in, consumer, groups, s0, lso0,
                          written, deleted, down_rounds, restart_rounds)


def _rounds(
    snap: Snapshot, spec: SampleSpec, rng: np.random.Generator, start: int, n_rounds: int, dt: float,
    msg: I64, nw_in: F64, consumer: F64, groups: I64, s0: I64, lso0: I64,
    written: Any, deleted: Any, down_rounds: dict[int, set[int]], restart_rounds: dict[int, set[int]],
) -> Iterator[dict[str, pa.Table]]:
    p_count, n = snap.n_partitions, snap.n_brokers
    n_topics = len(snap.topics)
    rep = snap.replicas
    bids = snap.broker_ids
    topic_names = pa.array(list(snap.topics), type=pa.string())
    racks = [snap.rack_names[i] if i >= 0 else None for i in snap.rack_idx.tolist()]
    hosts = [snap.host_names[i] if i >= 0 else None for i in snap.host_idx.tolist()]
    # Counters are cumulative since each broker process started: start them at some uptime.
    cpu_sec = rng.uniform(1e4, 1e6, size=n)
    b_in = np.zeros((n, n_topics))
    b_out = np.zeros((n, n_topics))
    m_in = np.zeros((n, n_topics))
    b_in[:] = rng.uniform(1e9, 1e12, size=(n, 1))
    # A broker has BrokerTopicMetrics series only for the topics it hosts a replica of (Kafka creates them
    # when the broker serves the topic and removes them when it stops hosting it): one topic_broker record
    # per hosted (broker, topic) pair, not one per broker and topic of the cluster.
    hosted = np.zeros((n, n_topics), dtype=bool)
    hp, hs = np.nonzero(rep >= 0)
    hosted[rep[hp, hs], snap.topic_idx[hp]] = True
    b_in[~hosted] = 0.0
    b_out[:] = b_in * 0.5
    m_in[:] = b_in / 500.0
    g_max = int(groups.max()) if p_count else 0
    cons_msgs_rate = np.divide(consumer, groups * msg, out=np.zeros(p_count), where=groups > 0)
    lag0 = rng.integers(0, 1000, size=(p_count, max(g_max, 1)))
    prev_w = written(0.0)
    prev_c = np.floor(cons_msgs_rate * 0.0).astype(np.int64)
    # Replica slots: (partition, slot) with a broker.
    rr, rc = np.nonzero(rep >= 0)
    rep_b = rep[rr, rc]
    cpu_leader = snap.leader_load[:, CPU]
    cpu_follower = snap.follower_load[:, CPU]
    dead = ~snap.alive
    for k in range(n_rounds):
        e = k * dt
        ts = start + k * spec.interval_ms
        down = dead.copy()
        for b, rounds in down_rounds.items():
            if k in rounds:
                down[b] = True
        restarted = np.array([k in restart_rounds.get(b, ()) for b in range(n)], dtype=bool)
        # Leaders: the snapshot's, or the next replica that is up (Kafka's failover).
        leader = snap.leader.copy()
        for j in np.nonzero((leader < 0) | down[np.maximum(leader, 0)])[0]:
            nxt = [int(b) for b in rep[j] if b >= 0 and not down[b]]
            leader[j] = nxt[0] if nxt else -1
        has_leader = leader >= 0
        w_now = written(e)
        d_msgs = np.where(has_leader, w_now - prev_w, 0)
        prev_w = w_now
        c_now = np.floor(cons_msgs_rate * e).astype(np.int64)
        d_cons = np.where(has_leader, (c_now - prev_c) * groups, 0)
        prev_c = c_now
        if k > 0:
            lb = np.maximum(leader, 0)
            inc_in = np.zeros((n, n_topics))
            inc_out = np.zeros((n, n_topics))
            inc_m = np.zeros((n, n_topics))
            np.add.at(inc_in, (lb[has_leader], snap.topic_idx[has_leader]), (d_msgs * msg)[has_leader])
            np.add.at(inc_out, (lb[has_leader], snap.topic_idx[has_leader]), (d_cons * msg)[has_leader])
            np.add.at(inc_m, (lb[has_leader], snap.topic_idx[has_leader]), d_msgs[has_leader])
            cpu = np.zeros(n)
            np.add.at(cpu, lb[has_leader], cpu_leader[has_leader])
            is_f = (rep_b != leader[rr]) & ~down[rep_b]
            np.add.at(cpu, rep_b[is_f], cpu_follower[rr[is_f]])
            inc_cpu = cpu / 100.0 * spec.cpu_cores * dt
            # A restart just before this round: only the last half interval is counted again.
            keep = np.where(restarted, 0.0, 1.0)[:, None]
            half = np.where(restarted, 0.5, 1.0)
            b_in = b_in * keep + inc_in * half[:, None]
            b_out = b_out * keep + inc_out * half[:, None]
            m_in = m_in * keep + inc_m * half[:, None]
            cpu_sec = cpu_sec * keep[:, 0] + inc_cpu * half
        yield _round_tables(
            snap, spec, rng, ts, down, leader, bids, racks, hosts, topic_names, cpu_sec, b_in, b_out, m_in,
            s0, lso0, w_now, deleted(e), msg, groups, c_now, lag0, rr, rep_b,
        )


def _drop(rng: np.random.Generator, n: int, p: float) -> npt.NDArray[np.bool_]:
    return rng.random(n) >= p if p > 0 else np.ones(n, dtype=bool)


def _round_tables(
    snap: Snapshot, spec: SampleSpec, rng: np.random.Generator, ts: int, down: npt.NDArray[np.bool_],
    leader: npt.NDArray[np.int32], bids: I64, racks: list[str | None], hosts: list[str | None],
    topic_names: pa.Array, cpu_sec: F64, b_in: F64, b_out: F64, m_in: F64, s0: I64, lso0: I64, w_now: I64,
    d_now: I64, msg: I64, groups: I64, c_now: I64, lag0: npt.NDArray[np.int64], rr: I64,
    rep_b: npt.NDArray[np.int32],
) -> dict[str, pa.Table]:
    n, p_count = snap.n_brokers, snap.n_partitions
    cl = spec.cluster
    miss = spec.missing
    out: dict[str, pa.Table] = {}

    keep = _drop(rng, n, miss)
    up = ~down
    out["broker"] = _table(
        {
            "broker": pa.array(bids[keep]),
            "rack": pa.array([racks[i] for i in np.nonzero(keep)[0]], type=pa.string()),
            "host": pa.array([hosts[i] for i in np.nonzero(keep)[0]], type=pa.string()),
            "alive": pa.array(up[keep]),
            "cpu_seconds": pa.array(np.where(up, cpu_sec, np.nan)[keep], from_pandas=True),
            "cpu_cores": pa.array(np.where(up, spec.cpu_cores, 0)[keep], mask=down[keep]),
        },
        "broker", cl, ts,
    )

    bb, tt = np.nonzero((b_in > 0) & up[:, None])
    keep = _drop(rng, len(bb), miss)
    bb, tt = bb[keep], tt[keep]
    out["topic_broker"] = _table(
        {
            "broker": pa.array(bids[bb]),
            "topic": pa.DictionaryArray.from_arrays(pa.array(tt.astype(np.int32)), topic_names),
            "bytes_in": pa.array(b_in[bb, tt]),
            "bytes_out": pa.array(b_out[bb, tt]),
            "messages_in": pa.array(m_in[bb, tt]),
        },
        "topic_broker", cl, ts,
    )

    lso = lso0 + d_now
    leo = lso0 + s0 + w_now
    size = (s0 + w_now - d_now) * msg
    keep = _drop(rng, p_count, miss)
    idx = np.nonzero(keep)[0]
    rep_ids = np.where(snap.replicas >= 0, bids[np.maximum(snap.replicas, 0)], -1)
    isr_ok = (snap.replicas >= 0) & ~down[np.maximum(snap.replicas, 0)]
    out["partition"] = _table(
        {
            "topic": pa.DictionaryArray.from_arrays(pa.array(snap.topic_idx[idx]), topic_names),
            "partition": pa.array(snap.partition[idx]),
            "replicas": _lists(rep_ids[idx], snap.replicas[idx] >= 0),
            "leader": pa.array(np.where(leader >= 0, bids[np.maximum(leader, 0)], -1)[idx]),
            "isr": _lists(rep_ids[idx], isr_ok[idx]),
            "log_end_offset": pa.array(leo[idx]),
            "log_start_offset": pa.array(lso[idx]),
        },
        "partition", cl, ts,
    )

    ok = ~down[rep_b]
    keep = ok & _drop(rng, len(rr), miss)
    r_p, r_b = rr[keep], rep_b[keep]
    out["replica"] = _table(
        {
            "topic": pa.DictionaryArray.from_arrays(pa.array(snap.topic_idx[r_p]), topic_names),
            "partition": pa.array(snap.partition[r_p]),
            "broker": pa.array(bids[r_b]),
            "size": pa.array(size[r_p]),
            "log_dir": pa.array(np.full(len(r_p), "/var/lib/kafka/data", dtype=object), type=pa.string()),
        },
        "replica", cl, ts,
    )

    gp, gg = np.nonzero(np.arange(max(int(groups.max()) if p_count else 0, 1))[None, :] < groups[:, None])
    keep = _drop(rng, len(gp), miss)
    gp, gg = gp[keep], gg[keep]
    committed = lso0[gp] + s0[gp] - lag0[gp, gg] + c_now[gp]
    group_names = pa.array([f"group-{g}" for g in range(max(int(groups.max()) if p_count else 0, 1))])
    out["group_offset"] = _table(
        {
            "group": pa.DictionaryArray.from_arrays(
                pa.array(gg.astype(np.int32)), group_names
            ),
            "topic": pa.DictionaryArray.from_arrays(pa.array(snap.topic_idx[gp]), topic_names),
            "partition": pa.array(snap.partition[gp]),
            "committed": pa.array(committed),
        },
        "group_offset", cl, ts,
    )
    return out


def _lists(values: npt.NDArray[Any], mask: npt.NDArray[np.bool_]) -> pa.Array:
    counts = mask.sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    flat = values[mask].astype(np.int64)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat))


def _table(cols: dict[str, pa.Array], rtype: str, cluster: str, ts: int) -> pa.Table:
    rows = len(next(iter(cols.values())))
    head = {
        "v": pa.array(np.ones(rows, dtype=np.int32)),
        "type": pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array([rtype])),
        "cluster": pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array([cluster])),
        "ts": pa.array(np.full(rows, ts, dtype=np.int64)),
    }
    return pa.table({**head, **cols})


def write_jsonl(rounds: list[dict[str, pa.Table]] | Iterator[dict[str, pa.Table]], out_dir: str | Path,
                rounds_per_file: int = 10) -> int:
    """Write rounds as ``samples-<first ts>-<seq>.jsonl`` files; returns the number of records. Each file is
    written through :mod:`kafka_balancer.files.outputs` (a temporary name, then a rename; a folder, pipe or
    device at a file's name is refused, and nothing else in the folder is touched)."""
    out = ensure_dir(out_dir, "--out")
    total = 0
    buf: list[bytes] = []
    first_ts: int | None = None
    seq = 0

    def flush() -> None:
        nonlocal buf, first_ts, seq
        if buf:
            write_bytes(out / f"samples-{first_ts}-{seq:04d}.jsonl", b"".join(buf), "--out")
            seq += 1
        buf, first_ts = [], None

    for i, rnd in enumerate(rounds):
        for rtype in RECORD_TYPES:
            tbl = rnd[rtype]
            for rec in tbl.to_pylist():
                if first_ts is None:
                    first_ts = int(rec["ts"])
                clean = {k: (None if isinstance(v, float) and v != v else v) for k, v in rec.items()}
                buf.append(orjson.dumps(clean) + b"\n")
                total += 1
        if (i + 1) % rounds_per_file == 0:
            flush()
    flush()
    return total


def write_parquet(rounds: list[dict[str, pa.Table]] | Iterator[dict[str, pa.Table]], out_dir: str | Path,
                  rounds_per_file: int = 8) -> int:
    """Write rounds as Parquet, one folder per type (``DIR/parquet/<type>/part-<seq>.parquet``), each file
    through :mod:`kafka_balancer.files.outputs` as :func:`write_jsonl` does."""
    base = Path(out_dir) / "parquet"
    pending: dict[str, list[pa.Table]] = {t: [] for t in RECORD_TYPES}
    seqs = dict.fromkeys(RECORD_TYPES, 0)
    total = 0

    def flush(rtype: str) -> None:
        if pending[rtype]:
            d = ensure_dir(base / rtype, "--out")
            tbl = pa.concat_tables(pending[rtype], promote_options="permissive").drop_columns(["type"])
            with replacing(d / f"part-{seqs[rtype]:05d}.parquet", "--out") as tmp:
                pq.write_table(tbl, tmp, compression="snappy")
            seqs[rtype] += 1
            pending[rtype] = []

    for i, rnd in enumerate(rounds):
        for rtype in RECORD_TYPES:
            tbl = rnd[rtype]
            total += tbl.num_rows
            pending[rtype].append(tbl.cast(_plain_schema(tbl.schema)))
        if (i + 1) % rounds_per_file == 0:
            for rtype in RECORD_TYPES:
                flush(rtype)
    for rtype in RECORD_TYPES:
        flush(rtype)
    return total


_INT32 = {"v", "broker", "partition", "leader", "cpu_cores"}


def _plain_schema(schema: pa.Schema) -> pa.Schema:
    """The sample format's types: int ids as int32, lists of int32; strings dictionary-encoded."""
    fields = []
    for f in schema:
        if pa.types.is_dictionary(f.type):
            t: pa.DataType = pa.dictionary(pa.int32(), pa.string())
        elif f.name in _INT32:
            t = pa.int32()
        elif f.name in ("replicas", "isr"):
            t = pa.list_(pa.int32())
        else:
            t = f.type
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)
