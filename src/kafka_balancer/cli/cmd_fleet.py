"""``kafka-balancer fleet``: plan many clusters in parallel on Spark, or sweep θ × ε over simulated ones."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kafka_balancer.cli.options import add_goal_options, check_output_dir, duration, integer, number, seed
from kafka_balancer.errors import InputError
from kafka_balancer.files.outputs import replacing
from kafka_balancer.validate.spark import check_master
from kafka_balancer.validate.values import list_items, parse_fraction

MAX_GRID = 100  # values per θ or ε grid


def _floats(name: str, *, allow_one: bool) -> Any:
    def parse(text: str) -> list[float]:
        vals = [parse_fraction(x, name, allow_one=allow_one) for x in list_items(text, name, f"e.g. {name} 0.6,0.8")]
        if len(vals) > MAX_GRID:
            raise InputError(f"{name} has {len(vals)} values (at most {MAX_GRID})", hint="sweep a coarser grid")
        return vals

    return parse


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fleet", help="plan many clusters on Spark (one per group), or a what-if sweep of θ × ε",
        description="--snapshots DIR: plan every *.json snapshot in DIR with the same planner, one table of "
                    "σ before/after, moves and bytes per cluster. --whatif N: N simulated clusters, every θ of "
                    "--thetas × ε of --epss, with load drift and re-plans (thrash vs sluggish); table + plot.",
    )
    p.add_argument("--snapshots", default=None, help="folder of snapshot JSON files, one per cluster")
    p.add_argument("--whatif", type=integer("--whatif", maximum=1_000_000), default=None, metavar="N",
                   help="sweep over N simulated clusters")
    p.add_argument("--thetas", type=_floats("--thetas", allow_one=True), default=[0.6, 0.7, 0.8, 0.9, 0.95],
                   help="θ grid (what-if)")
    p.add_argument("--epss", type=_floats("--epss", allow_one=False), default=[0.02, 0.05, 0.1, 0.2, 0.4],
                   help="ε grid (what-if)")
    p.add_argument("--steps", type=integer("--steps", maximum=1000), default=3,
                   help="drift steps per cluster (what-if, default 3)")
    p.add_argument("--noise", type=number("--noise", inclusive=True, maximum=10.0), default=0.15,
                   help="log-normal drift σ (what-if, default 0.15)")
    p.add_argument("--seed", type=seed(), default=0, help="first cluster seed (what-if)")
    p.add_argument("--sim", choices=("tiny", "small"), default="tiny",
                   help="simulated clusters (what-if): tiny = 4..8 brokers, 16..64 partitions (default); "
                        "small = 6..12 brokers, 60..240 partitions")
    p.add_argument("--plan-time-limit", type=duration("--plan-time-limit", maximum=3600), default=0.5,
                   help="planner time limit per plan in seconds (what-if, default 0.5)")
    p.add_argument("--out", default="out/fleet", help="folder for the table (CSV) and the plot")
    p.add_argument("--master", type=check_master, default="local[2]", help="Spark master (default local[2])")
    add_goal_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if (args.snapshots is None) == (args.whatif is None):
        raise InputError("give either --snapshots DIR or --whatif N",
                         hint="e.g. kafka-balancer fleet --snapshots out/snapshots/")
    # Everything checkable offline is checked before Spark starts (that takes seconds and a JVM).
    # the outputs (*.csv, *.png) are never *.json, so --out may sit inside --snapshots (`--snapshots .`)
    check_output_dir(args.out, "--out")
    if args.snapshots is not None:
        _snapshot_files(Path(args.snapshots))
    else:
        from kafka_balancer.validate.resources import check_memory

        rows = args.whatif * len(args.thetas) * len(args.epss) * (args.steps + 1)
        check_memory(300e6 + 2_000.0 * rows, f"fleet --whatif {args.whatif} ({rows} plans in the table)",
                     hint="use a smaller --whatif, fewer --steps or coarser --thetas/--epss")
    from kafka_balancer.files.outputs import ensure_dir
    from kafka_balancer.pipeline.session import get_spark, spark_conf

    out = ensure_dir(args.out, "--out")
    spark = get_spark(spark_conf(master=args.master))
    if args.snapshots is not None:
        return _fleet(spark, args, out)
    return _whatif(spark, args, out)


def _snapshot_files(d: Path) -> list[Path]:
    from kafka_balancer.files.inputs import check_input_dir

    check_input_dir(d, "--snapshots", "a folder of snapshot files")
    files = sorted(f for f in d.glob("*.json") if f.is_file())
    if not files:
        raise InputError(f"no *.json snapshots in {d}", hint="point --snapshots at a folder of snapshot files")
    return files


def _fleet(spark: Any, args: argparse.Namespace, out: Path) -> int:
    from kafka_balancer.pipeline.fleet import plan_fleet

    files = _snapshot_files(Path(args.snapshots))
    from kafka_balancer.files.inputs import read_text

    rows = [(f.stem, read_text(f, "--snapshots", "a snapshot JSON file")) for f in files]
    df = spark.createDataFrame(rows, "cluster string, snapshot string").repartition(min(len(rows), 8))
    table = plan_fleet(df, args.theta, args.eps).toPandas().sort_values("cluster")
    with replacing(out / "fleet.csv", "--out") as tmp:
        table.to_csv(tmp, index=False)
    cols = ["cluster", "brokers", "partitions", "sigma_before", "sigma_after", "replica_moves", "leader_moves",
            "moved_bytes", "error"]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"table: {out / 'fleet.csv'}")
    return 0 if table["error"].isna().all() else 1


def _whatif(spark: Any, args: argparse.Namespace, out: Path) -> int:
    from tqdm import tqdm

    from kafka_balancer.pipeline.fleet import CLUSTER_MAKERS, plot_sweep, sweep_summary, whatif_sweep

    plans = args.whatif * len(args.thetas) * len(args.epss) * (args.steps + 1)
    print(f"what-if: {args.whatif} {args.sim} clusters, {len(args.thetas)} θ × {len(args.epss)} ε × "
          f"{args.steps + 1} plans each = {plans} plans")
    with tqdm(total=args.whatif, desc="clusters", unit="cluster") as bar:

        def advance(n: int) -> None:
            bar.update(n)

        # One Spark job per chunk of about 25 clusters: the bar moves as chunks finish.
        table = whatif_sweep(spark, args.whatif, args.thetas, args.epss, args.steps, args.noise, args.seed,
                             make_cluster=CLUSTER_MAKERS[args.sim], chunks=max(1, min(100, args.whatif // 25)),
                             progress=advance, time_limit=args.plan_time_limit)
    with replacing(out / "whatif.csv", "--out") as tmp:
        table.to_csv(tmp, index=False)
    summary = sweep_summary(table)
    with replacing(out / "whatif-summary.csv", "--out") as tmp:
        summary.to_csv(tmp, index=False)
    plot_sweep(summary, str(out / "whatif.png"))
    show = summary[["theta", "eps", "sigma_after", "drift_moves", "drift_replica_moves", "drift_bytes",
                    "drift_max_util", "ref_miss"]]
    print(show.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"table: {out / 'whatif.csv'}  summary: {out / 'whatif-summary.csv'}  plot: {out / 'whatif.png'}")
    return 0
