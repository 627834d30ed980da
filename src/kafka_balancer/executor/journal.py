"""The executor's on-disk journal: one JSON object per line, appended and flushed at every step.

It records the plan, the replica lists before the plan, the throttle that was set, every submission,
every partition that finished, and how the execution ended. After a crash or Ctrl-C,
``execute --resume`` replays it (:func:`replay`) to know the plan and what to clear, and reconciles the
task states with the live cluster (the cluster, not the journal, is the truth about replicas).

    >>> st = replay([{"e": "start", "plan": [["t", 0, [2, 1]]], "original": [["t", 0, [1, 2]]]},
    ...              {"e": "submit", "tps": [["t", 0]]}])
    >>> st.finished, st.submitted
    (False, {('t', 0)})
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from kafka_balancer.executor.throttle import ThrottleConfigs
from kafka_balancer.executor.view import TP
from kafka_balancer.model.fileio import read_input_bytes
from kafka_balancer.validate.journal import FORMAT_VERSION, parse_journal
from kafka_balancer.validate.journal import WHAT as JOURNAL_WHAT


@dataclass
class JournalState:
    """What a journal says happened."""

    plan: list[tuple[TP, tuple[int, ...]]] = field(default_factory=list)
    original: dict[TP, tuple[int, ...]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    submitted: set[TP] = field(default_factory=set)
    moved: set[TP] = field(default_factory=set)
    throttle: ThrottleConfigs | None = None  # set and not yet cleared
    started: bool = False
    finished: bool = False
    cancelled: bool = False
    last_event: str | None = None
    sizes: dict[TP, int] = field(default_factory=dict)

    @property
    def open(self) -> bool:
        """Started and neither finished nor cancelled: something to resume or cancel."""
        return self.started and not self.finished and not self.cancelled


def _tp(x: Any) -> TP:
    return (str(x[0]), int(x[1]))


def replay(events: Iterable[dict[str, Any]]) -> JournalState:
    """Fold journal events (as :func:`~kafka_balancer.validate.journal.parse_journal` checked them) into a
    :class:`JournalState`."""
    st = JournalState()
    for ev in events:
        kind = ev.get("e")
        st.last_event = kind
        if kind == "start":
            st = JournalState(started=True, last_event=kind)
            st.plan = [(_tp(x), tuple(int(b) for b in x[2])) for x in ev["plan"]]
            st.original = {_tp(x): tuple(int(b) for b in x[2]) for x in ev["original"]}
            st.sizes = {_tp(x): int(x[2]) for x in ev.get("sizes", [])}
            st.options = dict(ev.get("options", {}))
        elif kind == "throttle_set":
            st.throttle = ThrottleConfigs.from_dict(ev["throttle"])
        elif kind == "throttle_cleared":
            st.throttle = None
        elif kind == "submit":
            st.submitted |= {_tp(x) for x in ev["tps"]}
        elif kind == "moved":
            st.moved |= {_tp(x) for x in ev["tps"]}
        elif kind == "finished":
            st.finished = True
        elif kind == "cancelled":
            st.cancelled = True
    return st


class Journal:
    """Append-only JSON-lines file; every record gets ``ts`` (ms) and is flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def read(self) -> list[dict[str, Any]]:
        """The journal's records (none when the file does not exist), validated by
        :func:`kafka_balancer.validate.journal.parse_journal`."""
        if not self.path.exists() and not self.path.is_symlink():
            return []
        return parse_journal(read_input_bytes(self.path, JOURNAL_WHAT, "--journal"), str(self.path))

    def state(self) -> JournalState:
        return replay(self.read())

    def append(self, kind: str, **fields: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        rec = {"e": kind, "ts": int(time.time() * 1000), **fields}
        if kind == "start":
            rec["v"] = FORMAT_VERSION
        with self.path.open("ab") as f:
            f.write(orjson.dumps(rec) + b"\n")
            f.flush()
            os.fsync(f.fileno())

    def rotate(self) -> Path | None:
        """Move a finished journal aside (``journal.<ts>.jsonl``) so a new execution starts clean."""
        if not self.path.exists():
            return None
        dest = self.path.with_name(f"{self.path.stem}.{int(time.time())}{self.path.suffix}")
        self.path.rename(dest)
        return dest
