"""The demo's HTML report: the timeline, σ before and after each execution, the dashboard screenshot."""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafka_balancer.demo.story import StoryResult

RES = ("cpu", "disk", "nw_in", "nw_out")


def timeline_lines(res: StoryResult) -> list[str]:
    t0 = res.timeline[0]["ts"] if res.timeline else 0.0
    keep = ("anomaly", "execution", "operator")
    return [f"+{e['ts'] - t0:6.0f} s  {e['kind']:9s} {e['text']}" for e in res.timeline if e["kind"] in keep]


def write_report(res: StoryResult, out: Path) -> Path:
    rows = []
    for p in res.phases:
        ex = p.execution or {}
        b, a = ex.get("sigma_before") or {}, ex.get("sigma_after") or {}
        cells = [p.name, "yes" if p.ok else "NO", (p.anomaly or {}).get("state", "-"), ex.get("id", "-"),
                 str(ex.get("partitions", "-")), f"{float(ex.get('bytes_moved') or 0) / 1e6:.1f}",
                 str(ex.get("verified"))]
        cells += [f"{b[r]:.4f} → {a[r]:.4f}" if r in b and r in a else "-" for r in RES]
        cells.append(p.note)
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    head = ["phase", "ok", "anomaly", "execution", "partitions", "MB moved", "verified"] + \
        [f"σ {r} before → after" for r in RES] + ["note"]
    w = res.workload
    shot = (f'<h2>Dashboard</h2><img src="{html.escape(Path(res.screenshot).name)}" width="1000">'
            if res.screenshot else "<p>No dashboard screenshot (Chromium not installed).</p>")
    doc = (
        "<!doctype html><meta charset=utf-8><title>kafka-balancer demo</title>"
        "<style>body{font:14px system-ui;margin:20px} td,th{border:1px solid #ccc;padding:3px 6px}"
        " table{border-collapse:collapse} pre{background:#f4f4f4;padding:8px}</style>"
        "<h1>kafka-balancer: the balancer service on a local cluster</h1>"
        f"<p>{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; all checks passed: {res.ok}</p>"
        "<h2>Phases</h2><table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
        + "".join(rows) + "</table>"
        "<p>σ: the service's load model (the pipeline's per-partition loads over the live topology) when the "
        "execution was planned and at the first sampling round after it ended.</p>"
        f"<h2>Workload</h2><p>produced = consumed: {res.produced_equals_consumed}</p>"
        f"<pre>{html.escape(str(w))}</pre>"
        "<h2>Timeline (from the service)</h2><pre>" + html.escape("\n".join(timeline_lines(res))) + "</pre>"
        + shot + f"<h2>Timings (s)</h2><pre>{html.escape(str(res.timings))}</pre>"
    )
    from kafka_balancer.files.outputs import write_text

    path = out / "report.html"
    write_text(path, doc, "--out")
    return path
