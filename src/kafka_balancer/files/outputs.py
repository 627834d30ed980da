"""Writing outputs: the one place every command writes a file or fills an output folder.

The promise (docs/errors.md): nothing the user had is lost.

- :func:`check_output_file` / :func:`check_output_dir` run before any long work: a path that cannot be
  written, a special file (device, pipe, socket), a folder where a file is wanted, a plot format matplotlib
  cannot write, or an output that is also an input of the same run is refused with one line naming the flag.
- :func:`write_bytes` / :func:`write_text` / :func:`replacing` write to a unique temporary name in the target
  folder (``mkstemp``) and rename it over the target only once complete. Nothing else in the folder is
  touched, and only a regular file (or a new path) is ever replaced.
- ``-`` means standard output where a command allows it (``allow_stdout=True``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from kafka_balancer.errors import InputError

STDOUT = "-"
# A path of an input the command reads, with the flag that named it: ("--snapshot", "s.json").
Named = tuple[str, "str | Path | None"]


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _stat(p: Path, flag: str | None = None) -> os.stat_result | None:
    try:
        return os.stat(p)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None  # a parent is a file: reported by the folder check
    except OSError as exc:
        shown = str(p) if len(str(p)) <= 120 else str(p)[:100] + "…"
        raise InputError(f"{flag + ' ' if flag else ''}{shown}: cannot inspect it: {exc.strerror}",
                         hint="check the path and its permissions") from None


def resolve_path(path: str | Path, flag: str) -> Path:
    """``path`` with symbolic links and ``..`` resolved; a link loop or a path too long is an InputError."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError for a symbolic link loop
        reason = "a symbolic link loop" if isinstance(exc, RuntimeError) else (exc.strerror or str(exc))
        shown = str(path) if len(str(path)) <= 120 else str(path)[:100] + "…"
        raise InputError(f"{flag} {shown}: {reason}", hint=f"give {flag} another path") from None


def _nearest_existing(p: Path) -> Path:
    q = p
    while q != q.parent:
        try:
            os.stat(q)
            return q
        except OSError:
            q = q.parent
    return q


def _check_folder_writable(folder: Path, flag: str, shown: str | Path) -> None:
    """The folder exists or can be created, and a file can be created in it. Creates nothing that stays."""
    base = _nearest_existing(folder)
    if not base.is_dir():
        raise InputError(f"{flag} {shown}: {base} is a file, so the folder cannot be created",
                         hint=f"pick another {flag} path")
    try:  # a real probe: permission bits say little for root or on special file systems such as /proc
        fd, probe = tempfile.mkstemp(dir=base, prefix=".kafka-balancer-probe-")
    except OSError as exc:
        raise InputError(f"{flag} {shown}: cannot write under {base} ({exc.strerror})",
                         hint=f"pick another {flag} path") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def plot_formats() -> frozenset[str]:
    """File extensions matplotlib can write (``png``, ``svg``, ``pdf``, ...)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backend_bases import FigureCanvasBase

    return frozenset(FigureCanvasBase.get_supported_filetypes())


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _inside(child: Path, folder: Path) -> bool:
    try:
        child.relative_to(folder)
        return True
    except ValueError:
        return False


def refuse_overlap(flag: str, path: str | Path, inputs: Iterable[Named], *, is_dir: bool = False) -> None:
    """An output that is one of the run's inputs, lies inside an input folder, or (an output folder) holds an
    input, is refused: the run would overwrite what it reads."""
    out = resolve_path(path, flag)
    out_st = _stat(out, flag)
    for in_flag, in_path in inputs:
        if in_path is None or str(in_path) == "-":
            continue
        inp = resolve_path(in_path, in_flag)
        in_st = _stat(inp, in_flag)
        same = out == inp or (out_st is not None and in_st is not None and _same_file(out_st, in_st))
        if same:
            raise InputError(f"{flag} {path} is also the input {in_flag} {in_path}: writing it would destroy it",
                             hint=f"give {flag} a new path")
        if in_st is not None and stat.S_ISDIR(in_st.st_mode) and _inside(out, inp):
            raise InputError(f"{flag} {path} lies inside the input folder {in_flag} {in_path}",
                             hint=f"write {flag} outside {in_path}, so it is neither overwritten nor read back")
        if is_dir and _inside(inp, out):
            raise InputError(f"{flag} {path} holds the input {in_flag} {in_path}",
                             hint=f"give {flag} a folder outside the inputs")


def distinct_outputs(outputs: Iterable[Named]) -> None:
    """Two outputs of one run at the same path: the second would replace the first."""
    seen: dict[Path, str] = {}
    for flag, path in outputs:
        if path is None or str(path) == STDOUT:
            continue
        p = resolve_path(path, flag)
        if p in seen:
            raise InputError(f"{flag} {path} is also {seen[p]}: one would overwrite the other",
                             hint=f"give {flag} its own path")
        seen[p] = flag


def check_output_file(
    path: str | Path,
    flag: str,
    *,
    inputs: Sequence[Named] = (),
    formats: Iterable[str] | None = None,
    allow_stdout: bool = False,
) -> None:
    """Refuse, before any work, an output file that cannot be written safely. Creates nothing.

    ``formats``: the extensions allowed (``plot_formats()`` for a plot); ``inputs``: the run's inputs.
    """
    text = str(path)
    if text == STDOUT:
        if allow_stdout:
            return
        raise InputError(f"{flag} -: this command cannot write {flag} to standard output",
                         hint=f"give {flag} a file name (./- for a file named '-')")
    if not text or "\0" in text:
        raise InputError(f"{flag} {text!r} is not a path", hint=f"give {flag} a file name")
    p = Path(text).absolute()
    st = _stat(p, flag)
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = _kind(st.st_mode)
        extra = "; '-' writes to standard output" if allow_stdout else ""
        raise InputError(f"{flag} {path} is {what}, not a regular file",
                         hint=f"give {flag} a file name, e.g. {p / 'out.json' if what == 'a directory' else 'out.json'}"
                         + extra)
    if formats is not None:
        allowed = sorted(formats)
        ext = p.suffix.lower().lstrip(".")
        if ext not in allowed:
            raise InputError(f"{flag} {path}: cannot write a {ext or 'file without an extension'!r} file"
                             if ext else f"{flag} {path} has no file extension to choose the format",
                             hint=f"end {flag} with one of .{', .'.join(allowed)}")
    if st is not None and st.st_nlink > 1:
        pass  # a hard link is still a regular file: replacing it breaks the link, which is what `mv` does too
    _check_folder_writable(p.parent, flag, path)
    if st is not None and not os.access(p, os.W_OK):
        raise InputError(f"{flag} {path} is not writable", hint="check its permissions or pick another path")
    refuse_overlap(flag, path, inputs)


def check_output_dir(path: str | Path, flag: str, *, inputs: Sequence[Named] = ()) -> None:
    """Refuse, before any work, an output folder that is a file or cannot be created or written. Creates
    nothing."""
    text = str(path)
    if not text or "\0" in text:
        raise InputError(f"{flag} {text!r} is not a path", hint=f"give {flag} a folder")
    p = Path(text).absolute()
    st = _stat(p, flag)
    if st is not None and not stat.S_ISDIR(st.st_mode):
        what = "a file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode)
        raise InputError(f"{flag} {path} is {what}, not a folder", hint=f"give {flag} a folder")
    _check_folder_writable(p, flag, path)
    refuse_overlap(flag, path, inputs, is_dir=True)


def _target(path: str | Path, flag: str) -> Path:
    """The file a write replaces: a symbolic link is followed (the link stays, its file is updated)."""
    p = Path(path)
    if p.is_symlink():
        p = resolve_path(p, flag)
    st = _stat(p, flag)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(f"{flag} {path} is {_kind(st.st_mode)}, not a regular file", hint=f"give {flag} a file name")
    return p


def _mode_for(target: Path) -> int:
    st = _stat(target)
    if st is not None:
        return stat.S_IMODE(st.st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def replacing(path: str | Path, flag: str = "--out", *, suffix: str | None = None) -> Iterator[Path]:
    """Yields a fresh temporary path in the target's folder (same extension, for writers that go by it,
    such as matplotlib or pandas); on success it is renamed over ``path``; on any failure it is removed.

    >>> with replacing("out/plot.png", "--plot") as tmp:   # doctest: +SKIP
    ...     fig.savefig(tmp)
    """
    target = _target(path, flag)
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=suffix or target.suffix or ".tmp")
        os.close(fd)
    except OSError as exc:
        raise InputError(f"cannot write {flag} {path}: {exc.strerror or exc}",
                         hint=f"pick another {flag} path (a folder you can write to)") from None
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _mode_for(target))
        _target(path, flag)  # still a regular file or absent: never replace a pipe created meanwhile
        os.replace(tmp, target)
    except OSError as exc:
        raise InputError(f"cannot write {flag} {path}: {exc.strerror or exc}",
                         hint=f"pick another {flag} path (a folder you can write to, with free space)") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def write_bytes(path: str | Path, data: bytes, flag: str = "--out", *, allow_stdout: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (or to standard output for ``-`` when ``allow_stdout``)."""
    if allow_stdout and str(path) == STDOUT:
        sys.stdout.flush()  # what was printed before comes first
        out = sys.stdout.buffer
        view = memoryview(data)
        while view:  # a pipe may take part of a large write: a reader that went away then shows as EPIPE
            n = out.write(view)
            if not n:
                raise BrokenPipeError(32, "Broken pipe")
            view = view[n:]
        out.flush()
        return
    with replacing(path, flag) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def write_text(path: str | Path, text: str, flag: str = "--out", *, allow_stdout: bool = False) -> None:
    write_bytes(path, text.encode("utf-8"), flag, allow_stdout=allow_stdout)


def ensure_dir(path: str | Path, flag: str = "--out") -> Path:
    """Create an output folder (and its parents); a file in the way is an InputError naming the flag."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {flag} {path}: {exc.strerror or exc}",
                         hint=f"pick another {flag} folder") from None
    if not p.is_dir():
        raise InputError(f"{flag} {path} is not a folder", hint=f"give {flag} a folder")
    return p
