"""Write a benchmark's results into its own marked section of docs/benchmarks.md (replacing the old one)."""

from __future__ import annotations

from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(marker: str, text: str) -> None:
    begin, end = f"<!-- {marker}:BEGIN -->", f"<!-- {marker}:END -->"
    body = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in body:
        pre, rest = body.split(begin, 1)
        body = pre + block + rest.split(end, 1)[1]
    else:
        body = body.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(body)
