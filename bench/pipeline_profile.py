"""Where the batch pipeline's time goes: one ``run_batch`` with Spark's event log on, summed per step.

Every Spark job the pipeline starts is described as ``kafka-balancer: <step>`` (``pipeline/progress.py``,
``step``). This runs the job once on a sample folder (as made by ``bench/pipeline.py --workdir``), reads
the event log back and prints, per step: the wall time its jobs took (first submission to last end), and
the task time (the sum of every task's run time: with 2 cores, at best half of it is wall time). What no
job covers (Python, planning, the driver's own work) is reported as ``driver only``.

    .venv/bin/python bench/pipeline_profile.py /tmp/pipe_bench/sp100900-20 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

PREFIX = "kafka-balancer: "


def run(samples: Path, log_dir: Path, driver_memory: str, shuffle: int,
        conf: dict[str, str]) -> tuple[float, float]:
    """Seconds end to end, and the wall-clock time the run started at."""
    from kafka_balancer.pipeline.session import get_spark, spark_conf
    from pipeline import batch_job  # bench/pipeline.py: the same job as the throughput benchmark

    spark = get_spark(spark_conf(driver_memory=driver_memory, shuffle_partitions=shuffle, extra={
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": log_dir.as_uri(),
        "spark.eventLog.compress": "false", **conf,
    }))
    try:
        spark.range(1).count()  # JVM up, as bench/pipeline.py's start-up
        started = time.time()
        t0 = time.perf_counter()
        res = batch_job(spark, samples, log_dir / "out")
        secs = time.perf_counter() - t0
        res.release()
        return secs, started
    finally:
        spark.stop()


def _events(files: list[Path]) -> Any:
    for path in files:
        with path.open() as f:
            for line in f:
                yield json.loads(line)


def steps(event_logs: list[Path], since: float) -> tuple[dict[str, dict[str, float]], list[list[float]]]:
    """Per step: wall (s), task time (s) and jobs; and every job's (start, end) in seconds; jobs that
    started before ``since`` (epoch seconds: the start-up query) are left out."""
    job_step: dict[int, str] = {}
    job_span: dict[int, list[float]] = {}
    stage_job: dict[int, int] = {}
    task_ms: dict[int, float] = defaultdict(float)
    for e in _events(event_logs):
        kind = e["Event"]
        if kind == "SparkListenerJobStart":
            desc = (e.get("Properties") or {}).get("spark.job.description") or ""
            job = e["Job ID"]
            job_step[job] = desc[len(PREFIX):] if desc.startswith(PREFIX) else "(not described)"
            job_span[job] = [e["Submission Time"] / 1000, e["Submission Time"] / 1000]
            for sid in e.get("Stage IDs", []):
                stage_job[sid] = job
        elif kind == "SparkListenerJobEnd":
            job_span[e["Job ID"]][1] = e["Completion Time"] / 1000
        elif kind == "SparkListenerTaskEnd" and e.get("Task Metrics"):
            task_ms[e["Stage ID"]] += e["Task Metrics"].get("Executor Run Time", 0)
    out: dict[str, dict[str, float]] = defaultdict(lambda: {"first": float("inf"), "last": 0.0, "task_s": 0.0,
                                                            "jobs": 0})
    early = {job for job, span in job_span.items() if span[0] < since}
    for job in early:
        del job_step[job], job_span[job]
    for job, name in job_step.items():
        s = out[name]
        s["first"] = min(s["first"], job_span[job][0])
        s["last"] = max(s["last"], job_span[job][1])
        s["jobs"] += 1
    for sid, ms in task_ms.items():
        if stage_job.get(sid) in job_step:
            out[job_step[stage_job[sid]]]["task_s"] += ms / 1000
    for s in out.values():
        s["wall_s"] = s["last"] - s["first"]
    return dict(out), sorted(job_span.values())


def covered(spans: list[list[float]]) -> float:
    """Seconds covered by at least one job."""
    total, end = 0.0, float("-inf")
    for a, b in sorted((float(x[0]), float(x[1])) for x in spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("samples", help="a sample folder (bench/pipeline.py --workdir keeps them)")
    ap.add_argument("--driver-memory", default="3g")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--json", default=None, help="also write the per-step table here")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="an extra Spark setting, e.g. spark.sql.adaptive.enabled=false (repeatable)")
    args = ap.parse_args()
    samples = Path(args.samples)
    if not (samples / "parquet").is_dir():
        print(f"error: {samples} has no parquet/ folder; make one with bench/pipeline.py --workdir DIR",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kb-profile-") as tmp:
        conf = dict(c.split("=", 1) for c in args.conf)
        secs, started = run(samples, Path(tmp), args.driver_memory, args.shuffle_partitions, conf)
        # Spark 4 writes a folder per application (eventlog_v2_*/events_<n>_*), older versions one file
        logs = sorted(Path(tmp).glob("eventlog_v2_*/events_*")) or [
            p for p in Path(tmp).iterdir() if p.is_file() and not p.name.endswith(".inprogress")]
        table, spans = steps(logs, started)
    busy = covered(spans)
    print(f"end to end {secs:.1f} s; Spark jobs running {busy:.1f} s; driver only {secs - busy:.1f} s")
    print(f"{'step':45s} {'jobs':>5s} {'wall (s)':>9s} {'task (s)':>9s}")
    rows: list[dict[str, Any]] = []
    for name, s in sorted(table.items(), key=lambda kv: kv[1]["first"]):
        print(f"{name:45s} {int(s['jobs']):5d} {s['wall_s']:9.1f} {s['task_s']:9.1f}")
        rows.append({"step": name, "jobs": int(s["jobs"]), "wall_s": s["wall_s"], "task_s": s["task_s"]})
    total_task = sum(r["task_s"] for r in rows)
    print(f"{'total task time':45s} {'':5s} {'':9s} {total_task:9.1f}  (≥ {total_task / 2:.1f} s of wall on 2 cores)")
    if args.json:
        Path(args.json).write_text(json.dumps({"samples": str(samples), "e2e_s": secs, "busy_s": busy,
                                               "steps": rows, "task_s": total_task}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
