"""Append-only JSON-lines history (anomalies, executions) that survives restarts.

Each change is one line, flushed and fsynced; reading folds the lines by ``id`` (the last line of an id
wins) and ignores a torn last line from a crash mid-write. Records hold no secrets: anomalies carry
broker ids, partition names and metrics; executions carry plans and results.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson


class JsonlStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, record: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as f:
            f.write(orjson.dumps(record, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a torn line from a crash mid-write
            if isinstance(rec, dict):
                out.append(rec)
        return out

    def latest_by_id(self) -> dict[str, dict[str, Any]]:
        """The last record of every ``id``, in the order ids first appeared."""
        out: dict[str, dict[str, Any]] = {}
        for rec in self.read():
            if "id" in rec:
                out[str(rec["id"])] = {**out.get(str(rec["id"]), {}), **rec}
        return out
