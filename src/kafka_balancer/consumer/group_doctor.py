"""``group doctor``: check a consumer's configuration against seed 004's rules, and explain.

Rules (defaults are Kafka 3.x/4.x client defaults):
  * ``session.timeout.ms >= 3 × heartbeat.interval.ms``: at least three heartbeats fit in a session,
    so one lost heartbeat does not get a live member evicted;
  * the session timeout lies within the broker's ``group.min/max.session.timeout.ms`` (6 s / 30 min);
  * ``max.poll.interval.ms`` exceeds the measured time to process one poll's batch (with margin):
    a slower batch makes the member leave the group and triggers a rebalance;
  * static membership (``group.instance.id``) for rolling restarts: a restarted member that comes
    back within the session timeout gets its partitions back without a rebalance.

Example:
    >>> fs = diagnose({"session.timeout.ms": "6000", "heartbeat.interval.ms": "3000"})
    >>> [(f.level, f.rule) for f in fs][:2]
    [('error', 'session-vs-heartbeat'), ('ok', 'session-in-broker-range')]
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from kafka_balancer.errors import InputError

DEFAULTS = {
    "session.timeout.ms": 45000,
    "heartbeat.interval.ms": 3000,
    "max.poll.interval.ms": 300000,
    "max.poll.records": 500,
}
READ_KEYS = (*DEFAULTS, "group.instance.id")  # the settings the rules read
BROKER_MIN_SESSION_MS = 6000
BROKER_MAX_SESSION_MS = 1800000
POLL_MARGIN = 1.5


@dataclass(frozen=True)
class Finding:
    level: str  # "ok" | "info" | "warn" | "error"
    rule: str
    message: str
    explanation: str

    def as_dict(self) -> dict[str, Any]:
        return {"level": self.level, "rule": self.rule, "message": self.message, "explanation": self.explanation}


def read_properties(path: str) -> dict[str, str]:
    """Java-style ``key=value`` (or ``key: value``) lines; ``#`` and ``!`` start comments."""
    from kafka_balancer.files.inputs import read_text

    text = read_text(path, "--config", "a consumer.properties file of key=value lines", allow_stdin=True)
    out: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep <= 0:
            raise InputError(f"--config {path}:{n}: cannot parse {raw!r}", hint="write key=value")
        key = line[:sep].strip()
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in key):
            # no consumer setting has one: the file is damaged, and the key would be ignored
            raise InputError(f"--config {path}:{n}: the key {key!r} holds a control character",
                             hint="retype the key (consumer settings are plain words such as session.timeout.ms)")
        out[key] = line[sep + 1:].strip()
    return out


def misspelt(props: dict[str, str]) -> list[Finding]:
    """A warning for each key that is not one the rules read but is close to one (``sesion.timeout.ms``):
    the consumer ignores it, and the rule judges the default instead."""
    out = []
    for key in sorted(props):
        if key in READ_KEYS:
            continue
        near = difflib.get_close_matches(key, READ_KEYS, n=1, cutoff=0.85)
        if near:
            default = DEFAULTS.get(near[0])
            used = f"the default {default} is used" if default is not None else f"{near[0]} is not set"
            out.append(Finding("warn", "misspelt-key", f"{key} is not a consumer setting; did you mean {near[0]}?",
                               f"The consumer ignores an unknown key, so {used}. Correct the key's spelling."))
    return out


def _int(props: dict[str, str], key: str) -> tuple[int, bool]:
    if key not in props:
        return DEFAULTS[key], False
    unit = "a count" if key == "max.poll.records" else "milliseconds"
    try:
        value = int(props[key])
    except ValueError:
        raise InputError(f"{key}={props[key]!r} is not an integer", hint=f"write {key} in {unit}") from None
    if value < 1:
        raise InputError(f"{key}={props[key]!r} must be at least 1", hint=f"write {key} in {unit}, > 0")
    return value, True


def diagnose(props: dict[str, str], *, processing_ms: float | None = None, per_record_ms: float | None = None,
             restart_ms: float | None = None) -> list[Finding]:
    """All findings for one consumer configuration; measured times are optional."""
    out: list[Finding] = misspelt(props)
    session, s_set = _int(props, "session.timeout.ms")
    hb, h_set = _int(props, "heartbeat.interval.ms")
    poll, _ = _int(props, "max.poll.interval.ms")
    records, _ = _int(props, "max.poll.records")
    src = "" if (s_set and h_set) else " (defaults used for unset keys)"
    if session < 3 * hb:
        out.append(Finding("error", "session-vs-heartbeat",
                           f"session.timeout.ms={session} < 3 x heartbeat.interval.ms={hb}{src}",
                           "Fewer than three heartbeats fit in one session, so a single delayed heartbeat can "
                           "get a live consumer evicted and trigger a rebalance. "
                           f"Set heartbeat.interval.ms <= {session // 3}."))
    else:
        out.append(Finding("ok", "session-vs-heartbeat",
                           f"session.timeout.ms={session} >= 3 x heartbeat.interval.ms={hb}{src}",
                           "At least three heartbeats fit in a session."))
    if not BROKER_MIN_SESSION_MS <= session <= BROKER_MAX_SESSION_MS:
        out.append(Finding("error", "session-in-broker-range",
                           f"session.timeout.ms={session} outside the broker's default range "
                           f"[{BROKER_MIN_SESSION_MS}, {BROKER_MAX_SESSION_MS}]",
                           "The broker rejects JoinGroup with INVALID_SESSION_TIMEOUT unless "
                           "group.min.session.timeout.ms/group.max.session.timeout.ms were changed."))
    else:
        out.append(Finding("ok", "session-in-broker-range", f"session.timeout.ms={session} within broker defaults",
                           "The broker accepts this session timeout with its default bounds."))
    batch_ms = processing_ms
    how = "measured per poll"
    if batch_ms is None and per_record_ms is not None:
        batch_ms = per_record_ms * records
        how = f"{per_record_ms:g} ms/record x max.poll.records={records}"
    if batch_ms is None:
        out.append(Finding("info", "poll-interval",
                           f"max.poll.interval.ms={poll}; no processing time given",
                           "Pass --processing-ms (time to process one poll's batch) or --per-record-ms to check "
                           "that a slow batch cannot push the consumer out of the group."))
    elif batch_ms * POLL_MARGIN > poll:
        level = "error" if batch_ms > poll else "warn"
        out.append(Finding(level, "poll-interval",
                           f"processing {batch_ms:.0f} ms ({how}) vs max.poll.interval.ms={poll}",
                           "When processing one batch takes longer than max.poll.interval.ms the consumer leaves the "
                           "group and a rebalance follows. Raise max.poll.interval.ms above "
                           f"{batch_ms * POLL_MARGIN:.0f} or lower max.poll.records."))
    else:
        out.append(Finding("ok", "poll-interval", f"processing {batch_ms:.0f} ms ({how}) "
                           f"< max.poll.interval.ms={poll} / {POLL_MARGIN}",
                           "Batches finish well within the poll interval."))
    instance = props.get("group.instance.id", "").strip()
    if not instance:
        out.append(Finding("warn", "static-membership", "group.instance.id is not set",
                           "Without static membership every restart (e.g. a rolling deploy) is a leave and a join: "
                           "two rebalances per instance. Set a stable, unique group.instance.id per instance."))
    else:
        if restart_ms is not None and restart_ms >= session:
            out.append(Finding("warn", "static-membership",
                               f"group.instance.id={instance!r} but a restart takes {restart_ms:.0f} ms "
                               f">= session.timeout.ms={session}",
                               "A static member only avoids the rebalance when it returns within the session timeout; "
                               "raise session.timeout.ms above the restart time."))
        else:
            out.append(Finding("ok", "static-membership", f"group.instance.id={instance!r}",
                               "Restarts within the session timeout keep the assignment without a rebalance."))
    return out
