"""Instructions the whole `plan` command executes, counted by valgrind's callgrind: a measure of the planner's
work that does not swing with the machine (on this shared 2-core machine a fixed Python loop varies by up to
50 % in CPU time from one run to the next, so two versions of the planner can only be told apart by time
when they differ by more than that).

Run:  .venv/bin/python bench/plan_instructions.py [--cases large] [--seed 0] [--against REV]

Each case: the simulator writes a snapshot (not counted); the plan command runs under
``valgrind --tool=callgrind`` with ``--time-limit 100000`` (the run is about 60 times slower than native, and
the default 600 s limit would cut the search short and change the plan). With ``--against REV`` the same
command also runs on the source tree of git revision REV (a temporary worktree) and the two plan files are
compared byte for byte. Needs valgrind (Debian package ``valgrind``); ``large`` takes about 12 minutes per run.
"""

from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"
COLLECTED = re.compile(r"Collected : (\d+)")


def count(src: Path, snap: Path, out: Path) -> int:
    """Instructions of one `plan` run with the package imported from ``src``."""
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(PYTHON), "-m",
         "kafka_balancer.cli.main", "plan", "--snapshot", str(snap), "--out", str(out), "--json",
         "--time-limit", "100000"],
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False,
    )
    m = COLLECTED.search(proc.stderr)
    if proc.returncode != 0 or m is None:
        raise SystemExit(f"plan under callgrind failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="large")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--against", help="a git revision to count too, on the same snapshots")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        trees = {"this tree": ROOT / "src"}
        if args.against:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tmp / "rev"),
                            args.against], check=True)
            trees[args.against] = tmp / "rev" / "src"
        try:
            print("| case | " + " | ".join(trees) + " | same plan |")
            print("|---|" + "---|" * (len(trees) + 1))
            for case in args.cases.split(","):
                snap = tmp / f"{case}.json"
                subprocess.run([str(PYTHON), "-m", "kafka_balancer.cli.main", "simulate", "cluster", "--preset",
                                case, "--seed", str(args.seed), "--out", str(snap)],
                               check=True, stdout=subprocess.DEVNULL, env={"PYTHONPATH": str(ROOT / "src")})
                counts, plans = [], []
                for k, (name, src) in enumerate(trees.items()):
                    print(f"counting {case} on {name} ...", file=sys.stderr, flush=True)
                    plans.append(tmp / f"{case}-{k}.plan.json")
                    counts.append(count(src, snap, plans[-1]))
                same = all(filecmp.cmp(plans[0], p, shallow=False) for p in plans[1:])
                cells = " | ".join(f"{c / 1e9:.2f} G" for c in counts)
                print(f"| {case} seed {args.seed} | {cells} | {'yes' if same else 'NO'} |", flush=True)
        finally:
            if args.against:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tmp / "rev")],
                               check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
