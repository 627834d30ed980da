"""Normal output of a Spark command carries no library noise: no JVM start-up notice ("Using incubator
modules"), no Spark "Setting default log level" notice, no log4j banner or WARN line, no pandas
FutureWarning, while a real error of the JVM still reaches stderr.

One real process (only it shows what the JVM prints while it starts), with warnings enabled as a developer
would (``PYTHONWARNINGS=default``); the rest on the session-scoped Spark."""

from __future__ import annotations

import re
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
