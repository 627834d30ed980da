"""One helper for every fuzz case: run a CLI invocation and check the promise of docs/errors.md.

``run_cli`` runs ``kafka_balancer.cli.main.main`` in-process with its own stdin/stdout/stderr (fast: no
interpreter start-up); ``run_subprocess`` runs the console script for what only a real process shows
(``> /dev/full``, a closed pipe, arguments that are not UTF-8). ``check`` asserts:

- the exit code;
- at most two lines on stderr when the command fails, naming the flag, field or file given;
- no ``Traceback`` and no ``internal error`` anywhere;
- every file in the watched folders unchanged (sha256 before and after), and no new entry in them except the
  outputs the case allows.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_balancer.cli.main import main

VENV_BIN = Path(sys.executable).parent


@dataclass
class Run:
    argv: list[str]
    code: int
    out: str
    err: str
    before: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)

    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def tree_state(folders: Iterable[Path]) -> dict[str, str]:
    """Every entry under ``folders``: path -> sha256 of a regular file, or its kind (never opened otherwise)."""
    state: dict[str, str] = {}
    for root in folders:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                st = os.lstat(p)
                if stat.S_ISREG(st.st_mode):
                    state[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
                elif stat.S_ISDIR(st.st_mode):
                    state[str(p)] = "<dir>"
                elif stat.S_ISLNK(st.st_mode):
                    state[str(p)] = "<link>" + os.readlink(p)
                else:
                    state[str(p)] = f"<special {stat.S_IFMT(st.st_mode):o}>"
    return state


class _Stream(io.TextIOWrapper):
    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="strict", write_through=True)

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode("utf-8", "backslashreplace")


def run_cli(argv: Sequence[str], *, watch: Sequence[Path] = (), stdin: bytes = b"") -> Run:
    """``main(argv)`` in-process with fresh standard streams; ``watch``: folders to fingerprint around it."""
    before = tree_state(watch)
    old = sys.stdin, sys.stdout, sys.stderr
    sin, sout, serr = _Stream(stdin), _Stream(), _Stream()
    sys.stdin, sys.stdout, sys.stderr = sin, sout, serr
    try:
        try:
            code = main(list(argv))
        except SystemExit as exc:  # must not happen: main returns its code
            code = 1000 + int(exc.code or 0) if isinstance(exc.code, int) else 1000
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    return Run(list(argv), code, sout.text(), serr.text(), before, tree_state(watch))


def run_subprocess(argv: Sequence[str | bytes], *, watch: Sequence[Path] = (), stdin: bytes = b"",
                   stdout: int | None = subprocess.PIPE, cwd: Path | None = None, timeout: float = 60.0,
                   env: dict[str, str] | None = None) -> Run:
    """The console script in a child process (a hang fails the case at ``timeout``)."""
    before = tree_state(watch)
    cmd: list[str | bytes] = [str(VENV_BIN / "kafka-balancer"), *argv]
    proc = subprocess.run(cmd, input=stdin, stdout=stdout, stderr=subprocess.PIPE, cwd=cwd, timeout=timeout,
                          env={**os.environ, "PYTHONWARNINGS": "default", **(env or {})}, check=False)
    shown = [a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else a for a in argv]
    out = proc.stdout.decode("utf-8", "backslashreplace") if proc.stdout else ""
    return Run(shown, proc.returncode, out, proc.stderr.decode("utf-8", "backslashreplace"), before,
               tree_state(watch))


def check(run: Run, code: int, names: str | Sequence[str] = (), *, outputs: Sequence[Path | str] = (),
          max_err_lines: int = 2) -> Run:
    """Assert the promise for one invocation (see the module docstring). ``outputs``: paths that may be
    created or replaced (a successful case's outputs); everything else watched must be as it was."""
    shown = f"argv={run.argv}\nrc={run.code}\nstderr:\n{run.err}\nstdout:\n{run.out[-2000:]}"
    assert "Traceback" not in run.out + run.err, shown
    assert "internal error" not in run.err, shown
    assert run.code == code, shown
    if code != 0:
        lines = run.err_lines()
        assert 1 <= len(lines) <= max_err_lines, shown
        assert lines[0].startswith("error: "), shown
        if len(lines) == 2:
            assert lines[1].startswith("  hint: "), shown
    for name in [names] if isinstance(names, str) else names:
        assert name in run.err + (run.out if code == 0 else ""), f"{name!r} not named\n{shown}"
    allowed = {str(Path(p).absolute()) for p in outputs}
    for path, digest in run.before.items():
        if path in allowed or any(path.startswith(a + os.sep) for a in allowed):
            continue
        assert run.after.get(path) == digest, f"{path} was changed or removed\n{shown}"
    for path in run.after:
        if path in run.before or path in allowed or any(path.startswith(a + os.sep) for a in allowed):
            continue
        raise AssertionError(f"stray file left: {path}\n{shown}")
    return run


def case(argv: Sequence[str], code: int, names: str | Sequence[str] = (), *, watch: Sequence[Path] = (),
         outputs: Sequence[Path | str] = (), stdin: bytes = b"") -> Run:
    """``run_cli`` then ``check``."""
    return check(run_cli(argv, watch=watch, stdin=stdin), code, names, outputs=outputs)
