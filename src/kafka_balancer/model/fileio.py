"""Reading and writing the JSON files of the model, with one-line errors that name the file."""

from __future__ import annotations

import contextlib
from pathlib import Path

from kafka_balancer.errors import InputError


def read_input_bytes(path: str | Path, what: str) -> bytes:
    """The bytes of an input file; a missing file, a directory or an unreadable file is an InputError."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file", hint=f"give the path of {what}") from None
    except IsADirectoryError:
        raise InputError(f"{p} is a directory, not a file", hint=f"give the path of {what}") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror}", hint=f"give the path of {what}") from None


def write_atomic(path: str | Path, data: bytes, flag: str = "--out") -> None:
    """Write to ``<path>.tmp`` then rename over ``path``; a path that cannot be written is an InputError
    and leaves no temp file behind."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    try:
        if p.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        tmp.replace(p)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write {flag} {p}: {exc.strerror or exc}",
                         hint=f"pick another {flag} path (an existing folder you can write to)") from None
