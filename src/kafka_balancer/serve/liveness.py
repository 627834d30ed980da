"""Each broker's liveness, probed on its own schedule apart from the sampling round.

A round that spans a broker's death waits out its requests to that broker (offsets and log dirs, with
timeouts of seconds) and reads once more, so the round alone dates the first sign of a dead broker 7-10 s
after the death. The probe opens a TCP connection to each broker's JMX exporter (it runs inside the
broker's JVM) or, on a plaintext cluster without exporters, to its Kafka listener, every second, and
closes it at once: a killed broker refuses the connection at the next probe. It never sends a request,
so a broker logs nothing for it. On a TLS listener a bare connection would end in a failed handshake,
which brokers log, so those brokers are not probed (the round and the controller's fencing remain).

    >>> probe = LivenessProbe(check=lambda t, timeout: t.port != 2, clock=lambda: 100.0)
    >>> probe.aim({1: Target("127.0.0.1", 1), 2: Target("127.0.0.1", 2)})
    >>> probe.probe_once()
    >>> probe.down_since()
    {2: 100.0}
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

PERIOD_S = 1.0  # between two probes of a broker (at most the sampling interval)
TIMEOUT_S = 1.0  # a connection not made by then counts as refused
WORKERS = 8  # brokers probed at once (a host that vanished costs a whole timeout)
# a broker refusing the probe for longer than this while the controller still lists it is not dying (the
# controller fences a broker that stops heartbeating within seconds): the probe cannot see it, and its
# refusals no longer date anything
TRUST_S = 60.0


@dataclass(frozen=True)
class Target:
    host: str
    port: int


def reachable(target: Target, timeout_s: float) -> bool:
    """Does ``target`` accept a TCP connection within ``timeout_s``? Closed at once, nothing sent."""
    try:
        with socket.create_connection((target.host, target.port), timeout=timeout_s):
            return True
    except OSError:
        return False


def targets(brokers: Iterable[int], listeners: Mapping[int, tuple[str, int]], metrics_urls: Mapping[int, str],
            plaintext: bool) -> dict[int, Target]:
    """What to probe per broker: its exporter's address when known, else its Kafka listener (``listeners``:
    host and port as describe_cluster last gave them) on a plaintext cluster, else nothing.

        >>> targets([1, 2], {1: ("h1", 9092), 2: ("h2", 9092)}, {1: "http://h1:7071/metrics"}, plaintext=False)
        {1: Target(host='h1', port=7071)}
    """
    out: dict[int, Target] = {}
    for b in brokers:
        parts = urlsplit(metrics_urls.get(b, ""))
        if parts.hostname and parts.port:
            out[b] = Target(parts.hostname, parts.port)
        elif plaintext and b in listeners:
            out[b] = Target(*listeners[b])
    return out


def first_sign(ts: float, listed: bool, unreachable: bool, scraped: bool, refused_at: float | None) -> float | None:
    """When the first sign of broker death shows, as one round at ``ts`` and the probe tell it, or None when
    neither shows one. ``listed``: the controller lists the broker; ``unreachable``: listed, but its exporter
    did not answer the round; ``scraped``: its exporter answered the round; ``refused_at``: when the probe
    began to find it refusing (None: it answers). A refusal older than :data:`TRUST_S` while the broker is
    listed, or older than the round's own read of a live exporter, dates nothing.

        >>> first_sign(100.0, listed=True, unreachable=False, scraped=False, refused_at=93.0)  # before fencing
        93.0
        >>> first_sign(100.0, listed=False, unreachable=False, scraped=False, refused_at=None)  # fenced
        100.0
        >>> first_sign(100.0, listed=True, unreachable=False, scraped=True, refused_at=95.0) is None
        True
    """
    if refused_at is not None and listed and (ts - refused_at > TRUST_S or (scraped and ts > refused_at)):
        refused_at = None
    if listed and not unreachable:
        return refused_at
    return ts if refused_at is None else min(ts, refused_at)


class LivenessProbe:
    """Probes the brokers it is aimed at every ``period_s`` and keeps, per broker that refuses, when it first
    refused in the current streak (cleared by the next connection that succeeds)."""

    def __init__(self, period_s: float = PERIOD_S, timeout_s: float = TIMEOUT_S,
                 check: Callable[[Target, float], bool] = reachable, clock: Callable[[], float] = time.time) -> None:
        self.period_s = period_s
        self.timeout_s = timeout_s
        self._check = check
        self._clock = clock
        self._lock = threading.Lock()
        self._targets: dict[int, Target] = {}
        self._down: dict[int, float] = {}

    def aim(self, new: Mapping[int, Target]) -> None:
        """Probe these brokers from now on (a broker no longer aimed at is forgotten)."""
        with self._lock:
            self._targets = dict(new)
            self._down = {b: t for b, t in self._down.items() if b in self._targets}

    def down_since(self) -> dict[int, float]:
        """Broker -> when it first refused, for the brokers refusing now."""
        with self._lock:
            return dict(self._down)

    def probe_once(self, pool: ThreadPoolExecutor | None = None) -> None:
        with self._lock:
            aimed = sorted(self._targets.items())
        if pool is None or len(aimed) < 2:
            answers = [self._check(t, self.timeout_s) for _, t in aimed]
        else:
            answers = list(pool.map(lambda t: self._check(t, self.timeout_s), [t for _, t in aimed]))
        now = self._clock()  # dated when the refusal was seen, never before
        with self._lock:
            for (b, t), ok in zip(aimed, answers, strict=True):
                if self._targets.get(b) != t:
                    continue  # re-aimed meanwhile
                if ok:
                    self._down.pop(b, None)
                else:
                    self._down.setdefault(b, now)

    def run(self, stop: threading.Event) -> None:
        """Probe until ``stop`` is set."""
        with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="serve-liveness") as pool:
            while not stop.is_set():
                t0 = time.monotonic()
                self.probe_once(pool)
                stop.wait(max(0.0, self.period_s - (time.monotonic() - t0)))
