"""A real Prometheus server (Debian's ``prometheus`` package) for tests, on 127.0.0.1 only.

``prometheus_server(targets)`` starts ``/usr/bin/prometheus`` with its own config and data dir in a
temporary folder, scraping the given exporter endpoints every second, and stops it afterwards. The
Debian service is never used. ``./dev test`` installs the package (``apt-get install prometheus``);
without it the test fails with a message saying so.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson
import pytest

from kafka_balancer.localcluster.processes import free_ports

PROMETHEUS = "/usr/bin/prometheus"


def prometheus_binary() -> str:
    path = shutil.which("prometheus") or (PROMETHEUS if Path(PROMETHEUS).exists() else None)
    if path is None:
        pytest.fail("the prometheus server is not installed: run `./dev test` (it installs Debian's prometheus "
                    "package with apt-get) or `apt-get install -y prometheus`")
    return path


def write_config(path: Path, targets: Sequence[str], interval: str = "1s") -> None:
    lines = ["global:", f"  scrape_interval: {interval}", f"  scrape_timeout: {interval}"]
    if targets:  # none: a server over backfilled blocks only (bench/prometheus_collect.py)
        lines += ["scrape_configs:", "  - job_name: kafka", "    static_configs:", "      - targets:"]
        lines += [f"          - '{t}'" for t in targets]
    path.write_text("\n".join(lines) + "\n")


@contextlib.contextmanager
def prometheus_server(workdir: Path, targets: Sequence[str] = (), data_dir: Path | None = None,
                      interval: str = "1s", extra_args: Sequence[str] = (),
                      pid_out: list[int] | None = None) -> Iterator[str]:
    """Runs Prometheus on a free loopback port; yields its base URL (its pid goes to ``pid_out``)."""
    binary = prometheus_binary()
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    write_config(config, targets, interval)
    (port,) = free_ports(1)
    data = data_dir or workdir / "data"
    log = (workdir / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={data}", f"--web.listen-address=127.0.0.1:{port}",
         "--storage.tsdb.retention.time=30d", *extra_args],
        stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    url = f"http://127.0.0.1:{port}"
    if pid_out is not None:
        pid_out.append(proc.pid)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"prometheus did not start; see {workdir / 'prometheus.log'}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


def up_targets(url: str) -> int:
    """How many scrape targets are up."""
    q = urllib.parse.urlencode({"query": "sum(up)"})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=5) as r:
        res = orjson.loads(r.read())["data"]["result"]
    return int(float(res[0]["value"][1])) if res else 0
