"""The pipeline's layers depend one way: shared modules on nothing above them, each route (``sql/``,
``columnar/``) on the shared modules only, the jobs on the routes. Checked on the import statements."""

from __future__ import annotations

import ast
from pathlib import Path

import kafka_balancer.pipeline as pipeline

ROOT = Path(pipeline.__file__).parent
PKG = "kafka_balancer.pipeline"
JOBS = {"batch", "streaming", "fleet", "cli_common"}
ROUTES = {"sql", "columnar"}


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(p for p in rel.parts if p != "__init__")


def _imports(path: Path) -> set[str]:
    """Pipeline modules ``path`` imports (relative to the package), anywhere in the file."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        out |= {n[len(PKG) + 1:] for n in names if n.startswith(PKG + ".")}
    return out


def _layer(mod: str) -> str:
    top = mod.split(".")[0]
    return "job" if top in JOBS else top if top in ROUTES else "shared"


def test_layers_depend_one_way() -> None:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        mod = _module(path)
        if not mod:
            continue
        mine = _layer(mod)
        for dep in _imports(path):
            theirs = _layer(dep)
            if mine == "shared" and theirs != "shared":
                bad.append(f"{mod} (shared) imports {dep}")
            elif mine in ROUTES and theirs not in (mine, "shared"):
                bad.append(f"{mod} ({mine} route) imports {dep}")
    assert bad == []


def test_the_layer_check_sees_imports() -> None:
    assert "sql.job" in _imports(ROOT / "batch.py")
    assert "result" in _imports(ROOT / "columnar" / "job.py")
