"""Reading inputs: every file a command reads must be a regular file (or ``-`` for standard input where a
command allows it), so a named pipe with no writer, a device or a folder never blocks or confuses a run.

The path is inspected with ``os.stat`` before it is opened, and opened with ``O_NONBLOCK`` and checked again
with ``fstat`` (a file swapped for a pipe between the two is still refused, never waited on). Errors are one
line naming the flag and the file.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from kafka_balancer.errors import InputError
from kafka_balancer.files.outputs import _kind

STDIN = "-"


def _named(flag: str | None, path: str | Path) -> str:
    return f"{flag} {path}" if flag else str(path)


def check_input_file(path: str | Path, flag: str | None, what: str = "the input file",
                     *, allow_stdin: bool = False) -> Path:
    """The path of an existing, readable, regular file; anything else is an InputError naming ``flag``."""
    text = str(path)
    if allow_stdin and text == STDIN:
        return Path(STDIN)
    shown = _named(flag, path)
    if not text or "\0" in text:
        raise InputError(f"{flag or 'the path'} {text!r} is not a path", hint=f"give the path of {what}")
    p = Path(text)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file", hint=f"give the path of {what}") from None
    except NotADirectoryError:
        raise InputError(f"{shown}: a parent of it is a file, not a folder", hint=f"give the path of {what}") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror}", hint=f"give the path of {what}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{shown} is a directory, not a file", hint=f"give the path of {what}")
    if not stat.S_ISREG(st.st_mode):
        extra = " ('-' reads standard input)" if allow_stdin else ""
        raise InputError(f"{shown} is {_kind(st.st_mode)}, not a regular file",
                         hint=f"give the path of {what}{extra}")
    return p


def read_bytes(path: str | Path, flag: str | None, what: str = "the input file",
               *, allow_stdin: bool = False) -> bytes:
    """All bytes of a regular input file (or of standard input for ``-`` when ``allow_stdin``)."""
    p = check_input_file(path, flag, what, allow_stdin=allow_stdin)
    if str(p) == STDIN:
        try:
            return sys.stdin.buffer.read()
        except OSError as exc:
            raise InputError(f"cannot read standard input for {flag}: {exc.strerror}") from None
    shown = _named(flag, path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise InputError(f"{shown} is a directory, not a file", hint=f"give the path of {what}") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror}", hint=f"give the path of {what}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{shown} is {_kind(st.st_mode)}, not a regular file", hint=f"give the path of {what}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror}", hint=f"give the path of {what}") from None
    finally:
        os.close(fd)


def decode_utf8(data: bytes, shown: str, what: str = "a UTF-8 text file") -> str:
    """Bytes as text; a byte that is not UTF-8 is an InputError naming its offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown} is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})",
                         hint=f"give {what}; re-encode it as UTF-8") from None


def read_text(path: str | Path, flag: str | None, what: str = "a UTF-8 text file",
              *, allow_stdin: bool = False) -> str:
    """A regular input file as UTF-8 text."""
    data = read_bytes(path, flag, what, allow_stdin=allow_stdin)
    return decode_utf8(data, _named(flag, path), what)


def check_input_dir(path: str | Path, flag: str, what: str = "the input folder") -> Path:
    """An existing folder; a file, a missing path or something else is an InputError naming ``flag``."""
    text = str(path)
    if not text or "\0" in text:
        raise InputError(f"{flag} {text!r} is not a path", hint=f"give {what}")
    p = Path(text)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{flag} {path} does not exist", hint=f"give {what}") from None
    except OSError as exc:
        raise InputError(f"{flag} {path}: cannot read: {exc.strerror}", hint=f"give {what}") from None
    if not stat.S_ISDIR(st.st_mode):
        kind = "a file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode)
        raise InputError(f"{flag} {path} is {kind}, not a folder", hint=f"give {what}")
    if not os.access(p, os.R_OK | os.X_OK):
        raise InputError(f"{flag} {path}: cannot read the folder (permission denied)", hint=f"give {what}")
    return p
