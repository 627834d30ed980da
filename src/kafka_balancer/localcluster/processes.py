"""Process and port helpers for the local cluster: only ever touch processes we started.

A pid from the state file is trusted only while ``/proc/<pid>/cmdline`` still names that node's
``server.properties``; a reused pid belongs to someone else and is left alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Sequence
from pathlib import Path

from kafka_balancer.errors import InputError


def pid_runs(pid: int | None, marker: str) -> bool:
    """True when ``pid`` is alive, not a zombie, and its command line contains ``marker``.

    A process that is just being exec'd (or is exiting) shows an empty ``cmdline`` for a moment; that
    is read again for up to half a second rather than taken as "not ours"."""
    if not pid:
        return False
    for _ in range(25):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        state = stat.rsplit(")", 1)[-1].split()[0] if ")" in stat else "?"
        if state == "Z":
            return False
        if cmdline:
            return marker in cmdline.replace(b"\0", b" ").decode(errors="replace")
        time.sleep(0.02)
    return False


def pid_gone(pid: int) -> bool:
    """True when ``pid`` has fully exited (no process, or a zombie whose resources are released)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] == "Z" if ")" in stat else False


def reap(pid: int) -> None:
    """Collect the exit status if ``pid`` is our child (avoids zombies); no-op otherwise."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def stop_pid(pid: int, marker: str, timeout_s: float = 30.0, hard: bool = False) -> bool:
    """SIGTERM (or SIGKILL when ``hard``) ``pid`` if it is ours; SIGKILL after ``timeout_s``.

    Returns True if a process was signalled."""
    if not pid_runs(pid, marker):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL if hard else signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reap(pid)
        if pid_gone(pid):
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    for _ in range(200):
        reap(pid)
        if pid_gone(pid):
            break
        time.sleep(0.05)
    return True


def stop_many(targets: Sequence[tuple[int, str]], timeout_s: float = 30.0) -> list[int]:
    """SIGTERM every ``(pid, marker)`` that is ours at once, wait for all, SIGKILL what is left after
    ``timeout_s``. Returns the pids that were signalled."""
    mine = [(pid, m) for pid, m in targets if pid_runs(pid, m)]
    for pid, _ in mine:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    left = list(mine)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        for pid, _ in left:
            reap(pid)
        left = [(pid, m) for pid, m in left if not pid_gone(pid)]
    for pid, m in left:
        stop_pid(pid, m, hard=True)
    return [pid for pid, _ in mine]


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on ``host:port`` and we may bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def require_free(ports: Sequence[int], wait_s: float = 0.0) -> None:
    """Raise InputError naming the first port in use (after waiting up to ``wait_s`` for it)."""
    deadline = time.monotonic() + wait_s
    for p in ports:
        while not port_free(p) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not port_free(p):
            raise InputError(
                f"port {p} on 127.0.0.1 is in use",
                hint="pick other ports with --base-port, or stop what listens there "
                "(`kafka-balancer local-cluster status` shows a running local cluster)",
            )


LISTEN_PORTS = (20000, 32768)  # where listening ports are looked for, below the kernel's ephemeral range
PORT_STRIDE = 7919  # a prime: processes started together begin their search at different ports
_search_from: list[int] = []  # where this process's next search starts: after the ports it handed out last


def ephemeral_range(path: Path = Path("/proc/sys/net/ipv4/ip_local_port_range")) -> tuple[int, int]:
    """The kernel's range for the local ports of outgoing connections (Linux's default where unreadable)."""
    try:
        lo, hi = (int(x) for x in path.read_text().split())
    except (OSError, ValueError):
        return 32768, 60999
    return lo, hi


def free_ports(n: int, host: str = "127.0.0.1", pid: int | None = None) -> list[int]:
    """``n`` distinct ports free right now, outside the kernel's ephemeral range.

    A port the kernel hands out for ``bind(0)`` comes from the range it also gives every outgoing
    connection: between picking it and a broker binding it seconds later, a client (another test worker's,
    or the cluster's own nodes connecting to each other) may take it as its local port, and the broker fails
    with "Address already in use". Listening ports are taken from ``LISTEN_PORTS`` instead, less what the
    ephemeral range covers, searching from a point set by the process id so that parallel workers start
    apart. Each search goes on after the ports the last one handed out, so a port of a broker that is down
    for a while (a test restarting it) is not handed to a server started meanwhile. The kernel's choice is
    the fallback when that range is too small or full. ``pid`` (tests) sets the starting point explicitly."""
    lo, hi = LISTEN_PORTS
    eph_lo, eph_hi = ephemeral_range()
    candidates = [p for p in range(lo, hi) if not eph_lo <= p <= eph_hi]
    found: list[int] = []
    if candidates:
        size = len(candidates)
        if pid is not None:
            start = (pid * PORT_STRIDE) % size
        else:
            start = _search_from[0] % size if _search_from else (os.getpid() * PORT_STRIDE) % size
        for k in range(size):
            port = candidates[(start + k) % size]
            if port_free(port, host):
                found.append(port)
                if len(found) == n:
                    if pid is None:
                        _search_from[:] = [start + k + 1]
                    return found
    socks: list[socket.socket] = []
    try:
        while len(found) + len(socks) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return found + [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def tail(path: Path, lines: int = 5) -> str:
    """Last lines of a log file, for error messages."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return " | ".join(ln.strip() for ln in text[-lines:] if ln.strip())
