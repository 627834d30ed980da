"""Normal output of a Spark command carries no library noise: no JVM start-up notice ("Using incubator
modules"), no Spark "Setting default log level" notice, no log4j banner or WARN line, no pandas
FutureWarning, while a real error of the JVM still reaches stderr.

One real process (only it shows what the JVM prints while it starts), with warnings enabled as a developer
would (``PYTHONWARNINGS=default``); the rest on the session-scoped Spark."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_balancer.sim.cluster import ClusterSpec, generate
from kafka_balancer.sim.samples import SampleSpec, simulate, write_jsonl

from .harness import check, run_subprocess

pytestmark = [pytest.mark.spark]

NOISE = re.compile(r"warn|incubator|log4j|setLogLevel|default log level", re.IGNORECASE)


def _samples(out: Path) -> Path:
    snap = generate(ClusterSpec(brokers=5, racks=0, topics=2, partitions=10, name="q"), seed=3)
    write_jsonl(simulate(snap, SampleSpec(cluster="q", windows=3), seed=3).rounds, out)
    return out


@pytest.mark.slow
def test_a_spark_command_prints_no_library_noise(tmp_path: Path) -> None:
    samples = _samples(tmp_path / "samples")
    out = tmp_path / "o"
    run = run_subprocess(["snapshot", "--samples", str(samples), "--out", str(out / "s.json"), "--windows", "3"],
                         watch=[tmp_path], timeout=900)
    check(run, 0, outputs=[out])
    noisy = [line for line in run.err.splitlines() if NOISE.search(line)]
    assert not noisy, run.err
    # What is left on stderr is the command's own progress, every line of it marked as such.
    assert all(line.startswith("pipeline: ") for line in run.err.splitlines()), run.err


def test_the_jvm_stderr_filter_drops_only_the_start_up_notice(spark: Any, capfd: pytest.CaptureFixture[str]) -> None:
    """The gateway JVM's stderr goes through the filter: a real error line and any other line still get
    through (the notice itself is dropped)."""
    import time

    err = spark._jvm.System.err
    err.println("WARNING: Using incubator modules: jdk.incubator.vector")
    err.println("a line the JVM prints")
    spark._jvm.org.apache.logging.log4j.LogManager.getLogger("kafka_balancer.probe").error("a real JVM error")
    spark._jvm.org.apache.logging.log4j.LogManager.getLogger("kafka_balancer.probe").warn("a WARN line")
    err.flush()
    got = ""
    for _ in range(50):  # the forwarding thread copies lines as they come
        got += capfd.readouterr().err
        if "a real JVM error" in got:
            break
        time.sleep(0.1)
    assert "a line the JVM prints" in got and "a real JVM error" in got, got
    assert "incubator" not in got and "a WARN line" not in got, got


@pytest.mark.slow
def test_the_services_load_model_starts_spark_without_library_noise(tmp_path: Path) -> None:
    """The balancer service's pipeline model (serve/pipeline_model.py) starts its own SparkSession inside the
    service: its stderr carries no library notice either (it once had a log4j2 profile of its own, without
    the gateway's logger, and printed Spark's "Setting default log level" notice in the demo)."""
    samples = _samples(tmp_path / "samples")
    code = ("import sys\n"
            "from pathlib import Path\n"
            "from kafka_balancer.cli.main import quiet_known_warnings\n"
            "from kafka_balancer.serve.pipeline_model import PipelineModel\n"
            "quiet_known_warnings()  # as the CLI does before every command, serve included\n"
            "m = PipelineModel(Path(sys.argv[1]), window_s=300.0, windows=3, capacity={'cpu': 100.0, "
            "'disk': 1e12, 'nw_in': 1e9, 'nw_out': 1e9}, cluster='q')\n"
            "loads = m.refresh()\n"
            "m.close()\n"
            "print('partitions', len(loads.leader))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(samples)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONWARNINGS": "default"}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("partitions "), proc.stdout
    noisy = [line for line in proc.stderr.splitlines() if NOISE.search(line)]
    assert not noisy, proc.stderr
