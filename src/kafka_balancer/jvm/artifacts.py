"""Maven artifact sets: discover them, fetch them into the cache, and find their jars.

An *artifact set* is a folder ``src/kafka_balancer/jvm/<name>/`` holding a ``pom.xml`` whose
dependencies are the jars some part of the tool runs on the JVM (``kafka``: the broker and the JMX
exporter agent; ``spark_kafka``: Spark's Kafka connector). ``kafka-balancer setup-jvm`` runs
``mvn dependency:copy-dependencies`` for every set into ``<cache>/<name>/`` where ``<cache>`` is
``$KAFKA_BALANCER_CACHE`` or ``~/.cache/kafka-balancer``. A stamp file (the SHA-256 of the pom) marks a
complete fetch, so later runs skip the set without starting Maven.

A *built* set is one whose folder also holds Java sources (``src/main/java``; the ``assignor`` set:
the broker-side consumer assignor). For it ``setup-jvm`` runs ``mvn package`` instead, with the build
directory outside the source tree, and copies the jar it made into ``<cache>/<name>/``; its stamp covers
the pom and every source file, so an edited source is rebuilt on the next ``setup-jvm``.

Other code finds the jars with :func:`set_jars` (raises :class:`~kafka_balancer.errors.InputError`
with a hint to run ``setup-jvm`` when the set is missing or stale)::

    >>> from kafka_balancer.jvm.artifacts import set_dir
    >>> set_dir("kafka").name
    'kafka'
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafka_balancer.errors import BalancerError, InputError

STAMP_FILE = ".stamp"
_JVM_DIR = Path(__file__).resolve().parent
_DOWNLOADED = re.compile(r"Downloaded from \S+: (\S+)(?: \(([^)]*)\))?")


class SetupError(BalancerError):
    """Fetching JVM artifacts failed (Maven missing, no network, a version that does not resolve)."""

    exit_code = 1


@dataclass(frozen=True)
class ArtifactSet:
    """One Maven artifact set: its name (the folder name) and its pom."""

    name: str
    pom: Path


def cache_root() -> Path:
    """The cache directory: ``$KAFKA_BALANCER_CACHE`` or ``~/.cache/kafka-balancer``."""
    env = os.environ.get("KAFKA_BALANCER_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kafka-balancer"


def artifact_sets(jvm_dir: Path = _JVM_DIR) -> list[ArtifactSet]:
    """Every ``<jvm_dir>/<name>/pom.xml``, sorted by name."""
    return [ArtifactSet(p.parent.name, p) for p in sorted(jvm_dir.glob("*/pom.xml"))]


def pom_stamp(pom: Path) -> str:
    """SHA-256 of the pom's bytes: a set is current when its stamp file holds this value."""
    return hashlib.sha256(pom.read_bytes()).hexdigest()


def is_built(aset: ArtifactSet) -> bool:
    """True for a set built from sources in the repository (``src/main/java`` next to its pom)."""
    return (aset.pom.parent / "src" / "main" / "java").is_dir()


def set_stamp(aset: ArtifactSet) -> str:
    """The stamp of a set: the pom's SHA-256, or for a built set the SHA-256 over the pom and every
    source file (relative path and bytes, in path order)."""
    if not is_built(aset):
        return pom_stamp(aset.pom)
    h = hashlib.sha256(aset.pom.read_bytes())
    root = aset.pom.parent
    for f in sorted(p for p in (root / "src").rglob("*") if p.is_file()):
        h.update(b"\0" + str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def set_dir(name: str) -> Path:
    """Where the jars of set ``name`` live (whether fetched or not)."""
    return cache_root() / name


def aset_dir(aset: ArtifactSet) -> Path:
    """Where a set's jars go: ``<cache>/<name>/``, and for a built set ``<cache>/<name>/<stamp prefix>/``,
    so worktrees holding different sources of the same set each keep their own build instead of
    rebuilding over each other in the shared cache."""
    return set_dir(aset.name) / set_stamp(aset)[:16] if is_built(aset) else set_dir(aset.name)


def is_current(aset: ArtifactSet) -> bool:
    """True when the set was fetched completely from the pom as it is now."""
    stamp = aset_dir(aset) / STAMP_FILE
    try:
        return stamp.read_text().strip() == set_stamp(aset)
    except OSError:
        return False


def set_jars(name: str) -> list[Path]:
    """The jars of a fetched set, sorted; raises InputError if the set is missing or out of date."""
    matches = [a for a in artifact_sets() if a.name == name]
    if not matches:
        raise InputError(f"no JVM artifact set named {name!r}", hint="see src/kafka_balancer/jvm/*/pom.xml")
    if not is_current(matches[0]):
        raise InputError(
            f"the JVM artifact set {name!r} is not in {aset_dir(matches[0])} (or its pom or sources changed)",
            hint="run `kafka-balancer setup-jvm` (or `./dev setup`) once; it fetches the jars with Maven",
        )
    return sorted(aset_dir(matches[0]).glob("*.jar"))


@dataclass(frozen=True)
class FetchResult:
    """What one fetch did."""

    name: str
    jars: int
    downloaded: int
    seconds: float


def fetch_set(
    aset: ArtifactSet,
    on_download: Callable[[str], None] | None = None,
    mvn: str | None = None,
) -> FetchResult:
    """Run Maven for one set into a scratch folder, then swap it in and write the stamp.

    ``on_download`` is called with the file name of each artifact Maven downloads (for a progress
    display). A failed fetch leaves the previous contents (if any) untouched.
    """
    import time

    mvn_bin = mvn or shutil.which("mvn")
    if not mvn_bin:
        raise SetupError("Maven (mvn) is not on PATH", hint="install Maven 3 (e.g. `apt-get install maven`)")
    target = aset_dir(aset)
    scratch = target.with_name(target.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    built = is_built(aset)
    if built:
        cmd = [mvn_bin, "-B", "-f", str(aset.pom), "package", f"-Dkb.build.dir={scratch / 'build'}"]
    else:
        cmd = [
            mvn_bin, "-B", "-f", str(aset.pom),
            "dependency:copy-dependencies", f"-DoutputDirectory={scratch}",
        ]
    t0 = time.monotonic()
    downloaded = 0
    tail: list[str] = []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        tail = [*tail[-29:], line.rstrip()]
        m = _DOWNLOADED.search(line)
        if m:
            downloaded += 1
            if on_download is not None:
                on_download(m.group(1).rsplit("/", 1)[-1])
    rc = proc.wait()
    if rc != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        errors = [ln for ln in tail if "[ERROR]" in ln][:3] or tail[-3:]
        raise SetupError(
            f"mvn failed (exit {rc}) {'building' if built else 'fetching'} the {aset.name!r} artifact set "
            f"({aset.pom}): "
            + " | ".join(e.strip() for e in errors),
            hint="check network access to Maven Central, or the versions pinned in that pom.xml",
        )
    if built:
        made = sorted((scratch / "build").glob("*.jar"))
        if not made:
            shutil.rmtree(scratch, ignore_errors=True)
            raise SetupError(f"mvn package made no jar for the {aset.name!r} artifact set ({aset.pom})",
                             hint="run `mvn -f <that pom> package` by hand to see why")
        for jar in made:
            shutil.copy2(jar, scratch / jar.name)
        shutil.rmtree(scratch / "build", ignore_errors=True)
    (scratch / STAMP_FILE).write_text(set_stamp(aset) + "\n")
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    scratch.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    jars = len(list(target.glob("*.jar")))
    return FetchResult(aset.name, jars, downloaded, time.monotonic() - t0)
