"""What an operator asks of a plan besides balance: the operator modes and budgets (they compose).

* ``add_brokers``: only these brokers receive replicas (new brokers being filled); leadership may move
  anywhere;
* ``remove_brokers``: every replica leaves these brokers (decommissioning); the rest is balanced;
* ``demote_brokers``: no leadership stays on these brokers, and each changed partition lists them last, so
  a preferred-leader election keeps leadership off them;
* ``exclude_topics``: a regular expression (``re.fullmatch`` on the topic name); those partitions never
  move, not even their leadership, but their load still counts. A replica of an excluded topic on a
  broker being removed still leaves it (removal wins; the summary says so);
* ``leadership_only``: no replica moves at all;
* ``max_moves``: at most this many replica copies (a replica placed on a broker that did not hold the
  partition); leadership changes cost no bytes and are not counted;
* ``max_bytes``: at most this many bytes copied.

Example::

    >>> c = Constraints(remove_brokers=frozenset({3}), max_bytes=500e9)
    >>> c.mode
    'remove-brokers'
    >>> c.as_dict()["max_bytes"]
    500000000000.0
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kafka_balancer.errors import InputError
from kafka_balancer.model.snapshot import CPU, NW_OUT, BoolArr, Snapshot

# what a demoted broker is not held to: it leads nothing, so its network-out and leader CPU stay below the band
DEMOTED_EXEMPT: tuple[int, ...] = (CPU, NW_OUT)

# the largest --max-moves / max_moves taken: more replicas than any cluster holds (a larger one is a typo)
MAX_MOVES = 100_000_000


@dataclass(frozen=True)
class Constraints:
    add_brokers: frozenset[int] = frozenset()
    remove_brokers: frozenset[int] = frozenset()
    demote_brokers: frozenset[int] = frozenset()
    exclude_topics: str | None = None
    leadership_only: bool = False
    max_moves: int | None = None
    max_bytes: float | None = None

    @property
    def mode(self) -> str:
        """The operator mode, Strimzi/Cruise Control style: ``full`` or the modes applied, joined by ``+``."""
        parts = [
            name
            for name, on in (
                ("add-brokers", bool(self.add_brokers)),
                ("remove-brokers", bool(self.remove_brokers)),
                ("demote-brokers", bool(self.demote_brokers)),
                ("leadership-only", self.leadership_only),
            )
            if on
        ]
        return "+".join(parts) if parts else "full"

    @property
    def default(self) -> bool:
        return self == Constraints()

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "add_brokers": sorted(self.add_brokers),
            "remove_brokers": sorted(self.remove_brokers),
            "demote_brokers": sorted(self.demote_brokers),
            "exclude_topics": self.exclude_topics,
            "leadership_only": self.leadership_only,
            "max_moves": self.max_moves,
            "max_bytes": self.max_bytes,
            "kept": self.kept(),
        }

    def kept(self) -> list[str]:
        """Every constraint that is set, in words (the terminal's line and the dashboard show these).

        >>> Constraints(remove_brokers=frozenset({3}), max_bytes=5e11, leadership_only=False).kept()
        ['remove brokers 3', 'at most 500.0 GB moved']
        """
        out = []
        for label, ids in (("add", self.add_brokers), ("remove", self.remove_brokers), ("demote", self.demote_brokers)):
            if ids:
                out.append(f"{label} brokers {','.join(str(b) for b in sorted(ids))}")
        if self.exclude_topics is not None:
            out.append(f"excluded topics /{self.exclude_topics}/")
        if self.max_moves is not None:
            out.append(f"at most {self.max_moves} replica moves")
        if self.max_bytes is not None:
            out.append(f"at most {self.max_bytes / 1e9:,.1f} GB moved")
        if self.leadership_only:
            out.append("leadership only")
        return out

    def describe(self, mode: str | None = None) -> str:
        """One line for the terminal: the mode (``mode`` when the plan applied another, e.g. ``heal``) and
        every constraint that is set (the mode already says leadership only)."""
        return "   ".join([f"mode {mode or self.mode}", *(k for k in self.kept() if k != "leadership only")])

    def validate(self, snap: Snapshot) -> None:
        """Raise :class:`InputError` (one line naming the broker, pattern or budget) if these constraints
        do not fit ``snap``."""
        known = {int(b) for b in snap.broker_ids.tolist()}
        for flag, ids in (
            ("--add-brokers", self.add_brokers),
            ("--remove-brokers", self.remove_brokers),
            ("--demote-brokers", self.demote_brokers),
        ):
            unknown = sorted(int(b) for b in ids if int(b) not in known)
            if unknown:
                raise InputError(
                    f"{flag}: broker {unknown[0]} is not in the snapshot",
                    hint=f"the snapshot's brokers are {_id_range(known)}",
                )
        both = sorted(self.add_brokers & self.remove_brokers)
        if both:
            raise InputError(
                f"broker {both[0]} is listed both in --add-brokers and in --remove-brokers",
                hint="a broker is either being filled or being emptied; drop it from one of the two lists",
            )
        if self.leadership_only and self.remove_brokers:
            raise InputError(
                "--remove-brokers needs replica moves, and --leadership-only allows none",
                hint="drop --leadership-only to empty the brokers, or use --demote-brokers to move only leadership "
                "off them",
            )
        if self.leadership_only and self.add_brokers:
            raise InputError(
                "--add-brokers needs replica moves, and --leadership-only allows none",
                hint="drop --leadership-only to fill the brokers, or drop --add-brokers to move only leadership",
            )
        if self.exclude_topics is not None:
            compile_topics(self.exclude_topics)
        if self.max_moves is not None and self.max_moves < 0:
            raise InputError(f"--max-moves {self.max_moves} is negative", hint="give a count of replica moves ≥ 0")
        if self.max_bytes is not None and (not np.isfinite(self.max_bytes) or self.max_bytes < 0):
            raise InputError(f"--max-bytes {self.max_bytes} is negative or not a number", hint="for example 500G")
        live = {int(b) for b, a in zip(snap.broker_ids.tolist(), snap.alive.tolist(), strict=True) if a}
        down = sorted(set(self.add_brokers) - live)
        if down:
            raise InputError(
                f"--add-brokers: broker {down[0]} is down in the snapshot (alive: false), so it cannot receive "
                "replicas",
                hint="drop it from --add-brokers, or take a new snapshot once it is up",
            )
        if self.demote_brokers and not live - set(self.demote_brokers) - set(self.remove_brokers):
            raise InputError(
                "--demote-brokers leaves no live broker to lead: every live broker is demoted or removed",
                hint="demote fewer brokers; each partition needs a broker that may lead it",
            )
        receivers = (set(self.add_brokers) if self.add_brokers else live) - set(self.remove_brokers)
        if not (receivers & live) and not self.leadership_only and (self.add_brokers or self.remove_brokers):
            raise InputError(
                "no live broker is left to receive replicas once the removed brokers are taken out",
                hint="add a live broker with --add-brokers, or remove fewer brokers",
            )


def compile_topics(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InputError(
            f"--exclude-topics {pattern!r} is not a valid regular expression: {e}",
            hint="the pattern must match whole topic names, e.g. '__consumer_offsets|payments\\..*'",
        ) from None


def _id_range(ids: set[int]) -> str:
    s = sorted(ids)
    if len(s) <= 8:
        return ", ".join(str(b) for b in s)
    return f"{s[0]}..{s[-1]} ({len(s)} brokers)"


@dataclass(frozen=True)
class Resolved:
    """Constraints turned into masks over a snapshot's broker and partition positions."""

    constraints: Constraints
    removed: BoolArr  # [N] replicas must leave
    demoted: BoolArr  # [N] may not lead
    receive: BoolArr  # [N] may receive a replica (live, not removed, in the add set when there is one)
    lead: BoolArr  # [N] may lead (live, not removed, not demoted)
    frozen: BoolArr  # [P] excluded partitions: neither replicas nor leadership move
    alive: BoolArr  # [N] the snapshot's own liveness (a removed broker is still a source to copy from)
    max_moves: float = field(default=float("inf"))
    max_bytes: float = field(default=float("inf"))

    @property
    def leadership_only(self) -> bool:
        return self.constraints.leadership_only

    @property
    def restricts_receivers(self) -> bool:
        return bool(self.constraints.add_brokers or self.constraints.remove_brokers or self.constraints.leadership_only)


def resolve(c: Constraints, snap: Snapshot) -> Resolved:
    """Validate ``c`` against ``snap`` and turn it into masks."""
    c.validate(snap)
    pos = snap.broker_pos()
    n = snap.n_brokers

    def mask(ids: frozenset[int]) -> BoolArr:
        m = np.zeros(n, dtype=bool)
        m[[pos[int(b)] for b in ids]] = True
        return m

    removed, demoted = mask(c.remove_brokers), mask(c.demote_brokers)
    receive = snap.alive & ~removed
    if c.add_brokers:
        receive &= mask(c.add_brokers)
    if c.leadership_only:
        receive = np.zeros(n, dtype=bool)
    lead = snap.alive & ~removed & ~demoted
    frozen = np.zeros(snap.n_partitions, dtype=bool)
    if c.exclude_topics is not None:
        rx = compile_topics(c.exclude_topics)
        hit = np.array([rx.fullmatch(t) is not None for t in snap.topics], dtype=bool)
        if hit.size:
            frozen = hit[snap.topic_idx]
    return Resolved(
        constraints=c,
        removed=removed,
        demoted=demoted,
        receive=receive,
        lead=lead,
        frozen=frozen,
        alive=snap.alive.copy(),
        max_moves=float("inf") if c.max_moves is None else float(c.max_moves),
        max_bytes=float("inf") if c.max_bytes is None else float(c.max_bytes),
    )
