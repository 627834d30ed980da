"""Reading and writing the JSON files of the model, with one-line errors that name the file.

Thin names over :mod:`kafka_balancer.files` (kept because several modules import them): inputs must be
regular files, outputs are written to a unique temporary name and renamed into place.
"""

from __future__ import annotations

from pathlib import Path

from kafka_balancer.files import inputs, outputs


def read_input_bytes(path: str | Path, what: str, flag: str | None = None) -> bytes:
    """The bytes of a regular input file; missing, a directory, a pipe or unreadable is an InputError."""
    return inputs.read_bytes(path, flag, what)


def write_atomic(path: str | Path, data: bytes, flag: str = "--out") -> None:
    """Write ``data`` under a unique temporary name in the target folder, then rename it over ``path``;
    only a regular file or a new path is replaced; nothing else in the folder is touched. ``-`` is
    standard output: commands refuse it up front (``check_output_file``) where it does not fit."""
    outputs.write_bytes(path, data, flag, allow_stdout=str(path) == outputs.STDOUT)
