"""Cruise Control as a peer in the benchmark: find its jars, install them into the local Maven repository,
build the harness in ``bench/peers/cruise_control``, and read back what the harness reports.

Cruise Control is measured against, never depended on: nothing under ``src/`` imports or ships it. Its
2.5.146 jars, built unmodified from the public tag, sit in the workplace's ``shared/peers/cruise-control/``
beside the repository (``../shared/peers/cruise-control`` from the main checkout), because LinkedIn
publishes them to its own repository, not to Maven Central.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CC_VERSION = "2.5.146"
CC_GROUP = "com.linkedin.cruisecontrol"
# install order: each one's pom names the ones before it
CC_ARTIFACTS = ("cruise-control-metrics-reporter", "cruise-control-core", "cruise-control")
HARNESS_DIR = Path(__file__).resolve().parent / "cruise_control"
HARNESS_JAR = HARNESS_DIR / "target" / "cc-harness.jar"
SHARED_REL = Path("shared") / "peers" / "cruise-control"


class CcUnavailable(Exception):
    """Cruise Control cannot be run here: the message is one line naming what is missing and how to fix it."""


def jar_dir_candidates(root: Path, git_common_dir: Path | None) -> list[Path]:
    """Where the shared jars may be: beside this checkout, and beside the main checkout when this is a worktree.

    >>> [str(p) for p in jar_dir_candidates(Path("/w/wt/h3"), Path("/w/main/.git"))]
    ['/w/wt/shared/peers/cruise-control', '/w/shared/peers/cruise-control']
    >>> [str(p) for p in jar_dir_candidates(Path("/w/main"), Path("/w/main/.git"))]
    ['/w/shared/peers/cruise-control']
    """
    out = [root.parent / SHARED_REL]
    if git_common_dir is not None:
        main_parent = git_common_dir.parent.parent / SHARED_REL
        if main_parent not in out:
            out.append(main_parent)
    return out


def _git_common_dir(root: Path) -> Path | None:
    try:
        res = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--path-format=absolute", "--git-common-dir"],
            capture_output=True, text=True, timeout=10, check=False,
        )
    except OSError:
        return None
    return Path(res.stdout.strip()) if res.returncode == 0 and res.stdout.strip() else None


def find_jar_dir(root: Path, override: str | None = None) -> Path:
    """The directory holding the three Cruise Control jars and poms; CcUnavailable (one line) when absent."""
    candidates = [Path(override)] if override else jar_dir_candidates(root, _git_common_dir(root))
    for d in candidates:
        if all((d / f"{a}-{CC_VERSION}.{ext}").is_file() for a in CC_ARTIFACTS for ext in ("jar", "pom")):
            return d
    raise CcUnavailable(
        f"Cruise Control {CC_VERSION} jars not found in {' or '.join(str(c) for c in candidates)} "
        f"(want {', '.join(a + '-' + CC_VERSION + '.jar/.pom' for a in CC_ARTIFACTS)}); "
        "put them there (see shared/peers/cruise-control/README.md) or pass --cc-jars DIR, "
        "or leave cc,cc-fast out of --planners"
    )


def local_repo_jar(repo: Path, artifact: str) -> Path:
    return repo / CC_GROUP.replace(".", "/") / artifact / CC_VERSION / f"{artifact}-{CC_VERSION}.jar"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def install_jars(jar_dir: Path, repo: Path, log: Path) -> list[str]:
    """``mvn install:install-file`` each artifact whose jar is missing from the local repository (or differs
    from the shared one). Returns the artifacts installed; CcUnavailable with Maven's error line on failure."""
    installed: list[str] = []
    for a in CC_ARTIFACTS:
        src = jar_dir / f"{a}-{CC_VERSION}.jar"
        dst = local_repo_jar(repo, a)
        if dst.is_file() and _sha256(dst) == _sha256(src):
            continue
        pom = jar_dir / f"{a}-{CC_VERSION}.pom"
        cmd = ["mvn", "-q", "-B", "install:install-file", f"-Dfile={src}", f"-DpomFile={pom}"]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        log.write_text(res.stdout + res.stderr)
        if res.returncode != 0:
            why = maven_error(res.stdout + res.stderr)
            raise CcUnavailable(f"mvn install:install-file of {a}-{CC_VERSION}.jar failed: {why}")
        installed.append(a)
    return installed


def harness_stale(jar: Path = HARNESS_JAR, sources: Sequence[Path] | None = None) -> bool:
    """The harness jar is missing or older than its pom or a Java source."""
    if not jar.is_file():
        return True
    srcs = list(sources) if sources is not None else [HARNESS_DIR / "pom.xml", *HARNESS_DIR.rglob("*.java")]
    built = jar.stat().st_mtime
    return any(s.stat().st_mtime > built for s in srcs)


def build_harness(log: Path) -> None:
    """``mvn -q package`` in the harness directory when the jar is stale; CcUnavailable on failure."""
    if not harness_stale():
        return
    cmd = ["mvn", "-q", "-B", "-f", str(HARNESS_DIR / "pom.xml"), "package", "-DskipTests"]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    log.write_text(res.stdout + res.stderr)
    if res.returncode != 0 or not HARNESS_JAR.is_file():
        raise CcUnavailable(f"building the Cruise Control harness failed: {maven_error(res.stdout + res.stderr)}")


def maven_error(text: str) -> str:
    """Maven's first useful ``[ERROR]`` line, colours and help links stripped.

    >>> maven_error("[INFO] x\\n\\x1b[1;31m[ERROR]\\x1b[m Failed to execute goal a: b -> [Help 1]\\n[ERROR] \\n")
    'Failed to execute goal a: b'
    """
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    errors = [ln.removeprefix("[ERROR]").strip() for ln in text.splitlines() if ln.startswith("[ERROR]")]
    errors = [e for e in errors if e] or [text.strip()[-300:] or "no output"]
    first = next((e for e in errors if "Could not" in e or "Failed" in e), errors[0])
    return first.split(" -> [Help")[0].replace("|", "/")[:500]


def prepare(root: Path, repo: Path, work: Path, jars_override: str | None = None) -> str:
    """Everything the harness needs, idempotently: find the jars, install them, build. Returns a status line."""
    jar_dir = find_jar_dir(root, jars_override)
    installed = install_jars(jar_dir, repo, work / "cc-install.log")
    build_harness(work / "cc-build.log")
    done = f"installed {', '.join(installed)} into {repo}; " if installed else ""
    return f"{done}Cruise Control {CC_VERSION} from {jar_dir}, harness {HARNESS_JAR.name} built"


def default_xmx(replicas: int) -> str:
    """A heap for the Cruise Control JVM that fits the model (about 5 KB per replica at 1.3M replicas in
    fast mode, measured) without starving the other work on a shared 24 GB machine.

    >>> [default_xmx(n) for n in (96, 300_000, 1_300_000)]
    ['2g', '6g', '12g']
    """
    if replicas <= 50_000:
        return "2g"
    if replicas <= 500_000:
        return "6g"
    return "12g"


_GOAL_IN_MESSAGE = re.compile(r"\[?([A-Z][A-Za-z]+Goal)\]?")


@dataclass(frozen=True)
class CcStats:
    """What one harness run reported (``--stats`` JSON)."""

    status: str  # "ok" or "failed" (a hard goal cannot be met: no plan)
    failure: str  # Cruise Control's own message when failed
    failed_goal: str  # the goal named in it, "" if none
    wall_s: float  # optimisation only
    cpu_s: float  # process CPU (every JVM thread) during optimisation
    thread_cpu_s: float  # the optimising thread only
    startup_cpu_s: float  # JVM start-up up to main()
    load_cpu_s: float  # reading the snapshot and building the ClusterModel
    peak_heap_mb: float | None
    proposals: int
    violated_before: tuple[str, ...]
    violated_after: tuple[str, ...]
    goal_seconds: dict[str, float]


def parse_stats(stats: dict[str, Any]) -> CcStats:
    """Read the harness's stats JSON.

    >>> s = parse_stats({"status": "failed", "wall_s": 1.5, "cpu_s": 2.0, "thread_cpu_s": 1.4,
    ...     "jvm_startup_cpu_s": 0.2, "load_cpu_s": 0.5, "peak_heap_bytes": 1048576,
    ...     "failure": "OptimizationFailureException: [CpuCapacityGoal] Insufficient capacity for cpu."})
    >>> (s.status, s.failed_goal, s.cpu_s, s.peak_heap_mb, s.proposals)
    ('failed', 'CpuCapacityGoal', 2.0, 1.0, 0)
    """
    status = str(stats.get("status", "ok"))
    if status not in ("ok", "failed"):
        raise ValueError(f"harness stats: unknown status {status!r}")
    failure = str(stats.get("failure") or "")
    m = _GOAL_IN_MESSAGE.search(failure.split(":", 1)[1] if ":" in failure else failure)
    heap = stats.get("peak_heap_bytes")
    return CcStats(
        status=status,
        failure=failure,
        failed_goal=m.group(1) if m else "",
        wall_s=float(stats["wall_s"]),
        cpu_s=float(stats["cpu_s"]),
        thread_cpu_s=float(stats.get("thread_cpu_s", stats["cpu_s"])),
        startup_cpu_s=float(stats.get("jvm_startup_cpu_s", 0.0)),
        load_cpu_s=float(stats.get("load_cpu_s", 0.0)),
        peak_heap_mb=None if heap is None else float(heap) / 2**20,
        proposals=int(stats.get("proposals", 0)),
        violated_before=tuple(stats.get("violated_goals_before", ())),
        violated_after=tuple(stats.get("violated_goals_after", ())),
        goal_seconds={str(k): float(v) for k, v in dict(stats.get("goal_seconds", {})).items()},
    )


def short_failure(message: str, limit: int = 160) -> str:
    """Cruise Control's failure message on one table-safe line, a repeated sentence said once.

    >>> short_failure("OptimizationFailureException: [DiskCapacityGoal] Insufficient | capacity\\n more", 60)
    '[DiskCapacityGoal] Insufficient / capacity more'
    >>> short_failure("[CpuCapacityGoal] Too hot. Add at least 2 brokers. Add at least 2 brokers.")
    '[CpuCapacityGoal] Too hot. Add at least 2 brokers.'
    """
    text = message.split(": ", 1)[1] if message.startswith(("Optimization", "KafkaCruiseControl")) else message
    text = " ".join(text.replace("|", "/").split())
    sentences: list[str] = []
    for part in re.split(r"(?<=\.) ", text):
        if part not in sentences:
            sentences.append(part)
    text = " ".join(sentences)
    return text if len(text) <= limit else text[: limit - 1] + "…"
