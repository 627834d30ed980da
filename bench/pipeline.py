"""Pipeline throughput: sample rows per second on Spark local[2] vs the same aggregation in plain pandas.

Sample sets come from ``kafka_balancer.sim.samples`` (Parquet, one folder per record type): clusters with
100 partitions per broker, RF 3, 6 windows of 5 minutes sampled every ``--interval-s`` (20 s: 91 rounds),
from about 1M rows up to about 64M rows (about 1,000 brokers and 100,000 partitions sampled every 30 s:
issue 4's 60M case).

For each size:

* **spark end to end**: ``run_batch`` (read Parquet, window aggregates, rates, loads, completeness, CPU fit
  and split, snapshot written and validated, window tables written as Parquet), on a fresh local[2]
  session (JVM start excluded, first action included);
* **spark aggregation**: only the first stage (window aggregates of every record type, counted);
* **pandas aggregation**: the same first stage with pandas ``groupby`` on the same Parquet files
  (read included), single-threaded. Skipped above ``--pandas-max`` rows (memory).

    .venv/bin/python bench/pipeline.py --sizes 1,4,16,64 --write-doc
    .venv/bin/python bench/pipeline.py --sizes "" --whatif 100 --write-doc   # the θ × ε what-if sweep

Results are kept in docs/pipeline-bench/ (throughput.json, whatif.csv, whatif-summary.csv, whatif.png);
``--write-doc`` rewrites the ``## Pipeline`` section of docs/benchmarks.md from whatever is there.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))

W_MS = 300_000
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "pipeline-bench"


ROWS_PER_PARTITION_ROUND = 10.4  # partition + 3 replicas + group offsets + topic-broker share (measured)


def make_samples(target_m: float, out: Path, interval_s: int = 20, seed: int = 0) -> tuple[int, int, int]:
    from kafka_balancer.sim.cluster import ClusterSpec, generate
    from kafka_balancer.sim.samples import SampleSpec, iter_rounds, write_parquet

    rounds = 6 * 300 // interval_s + 1
    partitions = round(target_m * 1e6 / rounds / ROWS_PER_PARTITION_ROUND / 100) * 100
    brokers = max(6, partitions // 100)
    spec = ClusterSpec(brokers=brokers, racks=min(10, max(3, brokers // 100)), topics=max(10, partitions // 50),
                       partitions=partitions, rf=(3,), rf_weights=(1.0,), name=f"bench-{partitions}")
    snap = generate(spec, seed=seed)
    _truth, it = iter_rounds(snap, SampleSpec(cluster="bench", windows=6, interval_ms=interval_s * 1000), seed=seed)
    rows = write_parquet(tqdm(it, total=rounds, desc=f"generate {partitions} partitions", leave=False), out)
    return rows, brokers, partitions


def pandas_aggregation(d: Path) -> float:
    """The window-aggregate stage in pandas: per type, group by key and window; first/last by time."""
    t0 = time.perf_counter()
    keys = {
        "broker": ["broker"], "topic_broker": ["broker", "topic"], "partition": ["topic", "partition"],
        "replica": ["topic", "partition", "broker"], "group_offset": ["group", "topic", "partition"],
    }
    vals = {
        "broker": ["cpu_seconds"], "topic_broker": ["bytes_in", "bytes_out"],
        "partition": ["log_end_offset", "log_start_offset", "leader"], "replica": ["size"],
        "group_offset": ["committed"],
    }
    out = 0
    for t, k in keys.items():
        df = pq.read_table(d / "parquet" / t, columns=["cluster", "ts", *k, *vals[t]]).to_pandas()
        df["window"] = df["ts"] // W_MS * W_MS
        df = df.sort_values("ts", kind="stable")
        g = df.groupby(["cluster", *k, "window"], observed=True, sort=False)
        agg = g.agg(n=("ts", "size"), first_ts=("ts", "first"), last_ts=("ts", "last"),
                    **{f"first_{v}": (v, "first") for v in vals[t]}, **{f"last_{v}": (v, "last") for v in vals[t]})
        if t in ("broker", "topic_broker"):
            g[vals[t][0]].apply(list)  # the points a counter keeps
        out += len(agg)
        del df, g, agg
        gc.collect()
    assert out > 0
    return time.perf_counter() - t0


def spark_run(d: Path, driver_memory: str, shuffle: int) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from kafka_balancer.pipeline.aggregate import AGGREGATORS
    from kafka_balancer.pipeline.batch import run_batch
    from kafka_balancer.pipeline.config import PipelineConfig
    from kafka_balancer.pipeline.read import read_samples_by_type
    from kafka_balancer.pipeline.session import get_spark, spark_conf

    spark = get_spark(spark_conf(driver_memory=driver_memory, shuffle_partitions=shuffle))
    try:
        spark.range(1).count()  # JVM up
        t0 = time.perf_counter()
        by_type = read_samples_by_type(spark, d)
        n = 0
        for t, df in by_type.items():
            n += AGGREGATORS[t](df, W_MS).agg(F.count(F.lit(1))).first()[0]
        t_agg = time.perf_counter() - t0
        out = d / "out"
        t0 = time.perf_counter()
        res = run_batch(spark, d, PipelineConfig(window_ms=W_MS, windows=6), out=out / "snap.json",
                        tables_dir=out / "tables", report_path=out / "report.json")
        t_e2e = time.perf_counter() - t0
        return {"agg_s": t_agg, "e2e_s": t_e2e, "valid_ratio": res.report["valid_ratio"],
                "cpu_fitted": res.cpu_model.fitted, "agg_rows": n}
    finally:
        spark.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,4,16,64", help="target millions of rows")
    ap.add_argument("--pandas-max", type=float, default=20.0, help="skip pandas above this many million rows")
    ap.add_argument("--interval-s", type=int, default=20, help="sampling interval of the simulated collector")
    ap.add_argument("--driver-memory", default="3g")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--workdir", default=None, help="where sample sets go (default: a temp dir, removed)")
    ap.add_argument("--whatif", type=int, default=0, help="also run the θ × ε what-if sweep on N clusters")
    ap.add_argument("--steps", type=int, default=2, help="what-if drift steps")
    ap.add_argument("--write-doc", action="store_true", help="write the results into docs/benchmarks.md")
    args = ap.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.whatif:
        run_whatif(args.whatif, args.steps)
    rows_out = []
    sizes = [float(x) for x in args.sizes.split(",") if x.strip()]
    base = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="kb-bench-pipeline-"))
    try:
        for size in sizes:
            d = base / f"s{size:g}"
            shutil.rmtree(d, ignore_errors=True)
            t0 = time.perf_counter()
            rows, brokers, partitions = make_samples(size, d, args.interval_s)
            gen_s = time.perf_counter() - t0
            sp = spark_run(d, args.driver_memory, args.shuffle_partitions)
            pd_s = pandas_aggregation(d) if rows / 1e6 <= args.pandas_max else float("nan")
            r = {"rows": rows, "brokers": brokers, "partitions": partitions, "gen_s": gen_s, **sp, "pandas_s": pd_s}
            rows_out.append(r)
            print(f"{rows:>11,} rows ({brokers} brokers, {partitions} partitions): spark e2e {sp['e2e_s']:.1f} s "
                  f"= {rows / sp['e2e_s'] / 1e6:.2f} M rows/s; spark agg {sp['agg_s']:.1f} s; pandas agg "
                  f"{pd_s:.1f} s; valid {sp['valid_ratio']:.3f}", flush=True)
            shutil.rmtree(d, ignore_errors=True)
    finally:
        if not args.workdir:
            shutil.rmtree(base, ignore_errors=True)
    if rows_out:
        import orjson

        # Merged with earlier runs (one row per cluster size; a new run replaces the same size).
        path = RESULTS / "throughput.json"
        old = orjson.loads(path.read_bytes()) if path.exists() else {"commands": [], "rows": []}
        keep = [r for r in old["rows"] if r["partitions"] not in {x["partitions"] for x in rows_out}]
        cmds = [*old.get("commands", []), "bench/pipeline.py " + " ".join(sys.argv[1:])]
        path.write_bytes(orjson.dumps(
            {"commands": cmds, "rows": sorted(keep + rows_out, key=lambda r: r["rows"])},
            option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    if args.write_doc:
        write_doc()
    return 0


THETAS = (0.6, 0.7, 0.8, 0.95)
EPSS = (0.02, 0.05, 0.1, 0.3)


def run_whatif(clusters: int, steps: int) -> None:
    from kafka_balancer.pipeline.fleet import plot_sweep, sweep_summary, whatif_sweep
    from kafka_balancer.pipeline.session import get_spark, spark_conf

    spark = get_spark(spark_conf(driver_memory="1g", shuffle_partitions=4))
    try:
        t0 = time.perf_counter()
        with tqdm(total=clusters, desc="what-if clusters") as bar:
            def advance(n: int) -> None:
                bar.update(n)

            table = whatif_sweep(spark, clusters, THETAS, EPSS, steps=steps, chunks=max(1, clusters // 25),
                                 progress=advance)
        secs = time.perf_counter() - t0
    finally:
        spark.stop()
    table.to_csv(RESULTS / "whatif.csv", index=False)
    summary = sweep_summary(table)
    summary.to_csv(RESULTS / "whatif-summary.csv", index=False)
    plot_sweep(summary, str(RESULTS / "whatif.png"))
    (RESULTS / "whatif-meta.txt").write_text(
        f"clusters={clusters} steps={steps} plans={clusters * len(THETAS) * len(EPSS) * (steps + 1)} "
        f"seconds={secs:.0f}\n")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def write_doc() -> None:
    import orjson

    from docsection import write_section

    lines = ["## Pipeline", ""]
    tp = RESULTS / "throughput.json"
    if tp.exists():
        doc = orjson.loads(tp.read_bytes())
        lines += _throughput_lines(doc["rows"], doc["commands"])
    summ = RESULTS / "whatif-summary.csv"
    if summ.exists():
        lines += _whatif_lines(pd.read_csv(summ), (RESULTS / "whatif-meta.txt").read_text().strip())
    write_section("PIPELINE", "\n".join(lines) + "\n")
    print("wrote docs/benchmarks.md (## Pipeline)")


def _whatif_lines(s: pd.DataFrame, meta: str) -> list[str]:
    lines = [
        "### What-if: θ × ε (seed 001 §3.2)",
        "",
        f"Command: `.venv/bin/python bench/pipeline.py --sizes '' --whatif N --write-doc` ({meta}); the same "
        "sweep as `kafka-balancer fleet --whatif N`. Each simulated cluster (6..12 brokers, 60..240 partitions, "
        "Kafka's placement) is planned for every (θ, ε), then goes through drift steps (every partition's load "
        "× log-normal, σ 0.15) with a re-plan after each. Means over clusters: moves and bytes per drift step "
        "(thrash), σ and the hottest broker after the re-plan, and the share of steps after which the cluster "
        "misses the reference goals θ 0.8 / ε 0.1 (sluggish). Plot: `docs/pipeline-bench/whatif.png`.",
        "",
        "| θ | ε | moves / step | replica moves / step | GB / step | σ after | max util after | misses θ0.8/ε0.1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in s.sort_values(["theta", "eps"]).to_dict(orient="records"):
        lines.append(
            f"| {r['theta']:g} | {r['eps']:g} | {r['drift_moves']:.1f} | {r['drift_replica_moves']:.1f} | "
            f"{r['drift_bytes'] / 1e9:.2f} | {r['drift_sigma']:.4f} | {r['drift_max_util']:.3f} | "
            f"{100 * r['ref_miss']:.0f} % |"
        )
    e_lo, e_hi = s["eps"].min(), s["eps"].max()
    t_lo, t_hi = s["theta"].min(), s["theta"].max()

    def at(theta: float, eps: float, col: str) -> float:
        return float(s[(s["theta"] == theta) & (s["eps"] == eps)][col].iloc[0])

    lines += [
        "",
        f"Reading: ε drives the trade-off. At θ 0.8, going from ε {e_lo:g} to ε {e_hi:g} cuts the moves per drift "
        f"step from {at(0.8, e_lo, 'drift_moves'):.0f} to {at(0.8, e_hi, 'drift_moves'):.0f} (replica moves "
        f"{at(0.8, e_lo, 'drift_replica_moves'):.0f} to {at(0.8, e_hi, 'drift_replica_moves'):.1f}, bytes "
        f"{at(0.8, e_lo, 'drift_bytes') / 1e9:.0f} GB to {at(0.8, e_hi, 'drift_bytes') / 1e9:.0f} GB): with a low "
        "threshold the planner chases the noise of the drift (thrashing). With the high ε the re-planned "
        f"cluster misses the reference goals after {100 * at(0.8, e_hi, 'ref_miss'):.0f} % of the steps and σ "
        f"stays {at(0.8, e_hi, 'drift_sigma') / at(0.8, e_lo, 'drift_sigma'):.1f}× higher (sluggish). θ matters "
        f"less on these clusters (mean utilisation 0.3-0.7): from θ {t_lo:g} to θ {t_hi:g} the replica moves per "
        f"step at ε {e_lo:g} fall from {at(t_lo, e_lo, 'drift_replica_moves'):.0f} to "
        f"{at(t_hi, e_lo, 'drift_replica_moves'):.0f} and the hottest broker after re-planning at ε {e_hi:g} "
        f"rises from {at(t_lo, e_hi, 'drift_max_util'):.2f} to {at(t_hi, e_hi, 'drift_max_util'):.2f}. "
        "About 37-42 % of steps miss the reference even with tight goals: on these small, skewed clusters the "
        "planner (1 s per plan) does not always reach ε 0.1 on all four resources. Only 30 clusters were run "
        "here (1,440 plans in 363 s on the shared 2 cores), not the thousands the issue names; the same "
        "command takes any N.",
    ]
    return [*lines, ""]


def _throughput_lines(rows: list[dict[str, Any]], commands: list[str]) -> list[str]:
    cmd = "; ".join(f"`.venv/bin/python {c}`" for c in commands)
    lines = [
        f"Commands: {cmd} on this machine (2 cores, shared with other engineers' jobs while measured: "
        "load average 4-12; Spark local[2], driver memory 3g, 8 shuffle partitions).",
        "",
        "| rows | brokers | partitions | spark end to end (s) | M rows/s | spark aggregation (s) | M rows/s "
        "| pandas aggregation (s) | M rows/s | floor 1M rows/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        missing = r["pandas_s"] is None or np.isnan(r["pandas_s"])
        pd_rate = "n/a" if missing else f"{r['rows'] / r['pandas_s'] / 1e6:.2f}"
        pd_s = "not run (memory)" if missing else f"{r['pandas_s']:.1f}"
        ok = "✓" if r["rows"] / r["e2e_s"] >= 1e6 else "✗"
        lines.append(
            f"| {r['rows']:,} | {r['brokers']} | {r['partitions']} | {r['e2e_s']:.1f} | "
            f"{r['rows'] / r['e2e_s'] / 1e6:.2f} | {r['agg_s']:.1f} | {r['rows'] / r['agg_s'] / 1e6:.2f} | "
            f"{pd_s} | {pd_rate} | {ok} |"
        )
    lines += [
        "",
        "Reading: the aggregation stage (Parquet scan + per-window aggregates of every record type) runs at "
        "1.7-2.4 M rows/s once the data is large, but the end-to-end job stays far below the 1 M rows/s floor: "
        "the stages after the aggregation (window functions over the per-window tables, the joins of the load "
        "split and the CPU split, the two summaries collected to the driver, the snapshot built and validated "
        "in Python, the window tables written) cost about 35 s of fixed overhead on small sets and grow to "
        "most of the 741 s at 100,900 partitions. The issue's \"60M rows\" case (about 1,000 brokers and "
        "100k partitions over 6 windows) is 157.5 M rows with this simulator, because its consumer "
        "groups (about 16 committed-offset records per partition and round) dominate; that is the last row. "
        "pandas does the same aggregation single-threaded at 1-1.7 M rows/s up to 3.7 M rows; it was not run "
        "above 20 M rows (memory; `--pandas-max`).",
    ]
    return [*lines, ""]


if __name__ == "__main__":
    sys.exit(main())
