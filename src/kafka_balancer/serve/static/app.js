// kafka-balancer dashboard: polls the JSON API and draws with inline SVG (no libraries, no network).
"use strict";

const RES = ["cpu", "disk", "nw_in", "nw_out"];
const COLORS = { cpu: "#c0504d", disk: "#4f81bd", nw_in: "#9bbb59", nw_out: "#8064a2" };
const SVGNS = "http://www.w3.org/2000/svg";
let lastProposalAt = 0;
let lastFingerprint = "";
let removedBrokers = new Set(); // the broker history's removed brokers: drawn as such, not as dead

function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
const fmtSigma = (x) => Number(x).toFixed(4);
const fmtPct = (x) => (100 * Number(x)).toFixed(1) + "%";
const fmtMB = (b) => (Number(b || 0) / 1e6).toFixed(1);
const fmtTime = (t) => (t ? new Date(t * 1000).toLocaleTimeString() : "");

async function getJSON(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) return null;
  return r.json();
}

function barChart(res, load) {
  const W = 420, H = 170, L = 40, B = 22, T = 10;
  const brokers = load.brokers;
  const r = load.resources[res];
  const maxU = Math.max(1.0, load.theta * 1.1, ...brokers.map((b) => b.resources[res].util)) ;
  const y = (u) => T + (H - T - B) * (1 - u / maxU);
  const svg = el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
  svg.appendChild(el("svg:rect", { class: "band", x: L, width: W - L - 4, y: y(r.band_high),
    height: Math.max(1, y(r.band_low) - y(r.band_high)) }));
  const n = brokers.length, slot = (W - L - 4) / Math.max(1, n);
  brokers.forEach((b, i) => {
    const u = b.resources[res].util;
    const cls = removedBrokers.has(b.id) ? "bar removed" : !b.alive ? "bar dead" : u > load.theta ? "bar over" : "bar";
    const x = L + i * slot + slot * 0.15;
    svg.appendChild(el("svg:rect", { class: cls, x, width: slot * 0.7, y: y(u), height: Math.max(0, y(0) - y(u)),
      "data-broker": b.id, "data-res": res }));
    svg.appendChild(el("svg:text", { class: "lbl", x: x + slot * 0.35, y: H - 8, "text-anchor": "middle" }, String(b.id)));
    svg.appendChild(el("svg:text", { class: "lbl", x: x + slot * 0.35, y: y(u) - 2, "text-anchor": "middle",
      "data-k": `util-${b.id}-${res}` }, fmtPct(u)));
  });
  svg.appendChild(el("svg:line", { class: "theta", x1: L, x2: W - 4, y1: y(load.theta), y2: y(load.theta) }));
  svg.appendChild(el("svg:line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
  for (const t of [0, 0.5, 1.0]) {
    if (t <= maxU) svg.appendChild(el("svg:text", { class: "lbl", x: L - 4, y: y(t) + 3, "text-anchor": "end" }, `${t * 100}%`));
  }
  const box = el("div", { class: "chart" });
  const h = el("h3", {}, `${res}: σ `);
  h.appendChild(el("span", { "data-k": `sigma-${res}` }, fmtSigma(r.sigma)));
  h.appendChild(document.createTextNode(` (η ${fmtSigma(r.eta)}), mean ${fmtPct(r.mean_util)}, band ${fmtPct(r.band_low)}–${fmtPct(r.band_high)}, ` + (r.balanced ? "balanced" : "not balanced")));
  box.appendChild(h);
  box.appendChild(svg);
  return box;
}

function sigmaChart(res, hist, eta) {
  const W = 420, H = 140, L = 46, B = 18, T = 8;
  const svg = el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
  const pts = hist.map((h) => [h.ts, h.sigma[res]]);
  const maxS = Math.max(eta * 1.5, ...pts.map((p) => p[1]), 1e-6);
  const t0 = pts.length ? pts[0][0] : 0, t1 = pts.length ? pts[pts.length - 1][0] : 1;
  const x = (t) => L + (W - L - 6) * (t1 > t0 ? (t - t0) / (t1 - t0) : 1);
  const y = (s) => T + (H - T - B) * (1 - s / maxS);
  svg.appendChild(el("svg:line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
  svg.appendChild(el("svg:line", { class: "axis", x1: L, x2: W - 6, y1: H - B, y2: H - B }));
  svg.appendChild(el("svg:line", { x1: L, x2: W - 6, y1: y(eta), y2: y(eta), stroke: "#999", "stroke-dasharray": "4 3" }));
  svg.appendChild(el("svg:text", { class: "lbl", x: L - 4, y: y(maxS) + 8, "text-anchor": "end" }, maxS.toFixed(3)));
  svg.appendChild(el("svg:text", { class: "lbl", x: L - 4, y: H - B, "text-anchor": "end" }, "0"));
  if (pts.length) {
    const d = pts.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    svg.appendChild(el("svg:path", { d, fill: "none", stroke: COLORS[res], "stroke-width": 2 }));
    svg.appendChild(el("svg:text", { class: "lbl", x: L, y: H - 4 }, fmtTime(t0)));
    svg.appendChild(el("svg:text", { class: "lbl", x: W - 6, y: H - 4, "text-anchor": "end" }, fmtTime(t1)));
  }
  const box = el("div", { class: "chart" });
  box.appendChild(el("h3", {}, `${res} (${pts.length} windows)`));
  box.appendChild(svg);
  return box;
}

function renderState(s) {
  const sum = document.getElementById("summary");
  sum.replaceChildren();
  const add = (k, label, v) => { const sp = el("span"); sp.append(`${label} `); sp.appendChild(el("b", { "data-k": k }, String(v))); sum.appendChild(sp); };
  add("brokers-alive", "brokers alive", s.brokers_alive.length);
  add("partitions", "partitions", s.partitions);
  add("under-replicated", "under-replicated", s.under_replicated);
  add("open-anomalies", "open anomalies", s.open_anomalies);
  add("self-healing", "self-healing", s.self_healing.join(",") || "off");
  add("mode", "mode", s.dry_run ? "dry-run" : "live");
  add("model", "model", s.model.status);
  document.getElementById("switch-state").textContent = s.paused ? "paused" : "running";
  const ex = document.getElementById("execution");
  ex.replaceChildren();
  if (s.execution) {
    const e = s.execution;
    const frac = e.bytes_planned > 0 ? e.bytes_moved / e.bytes_planned : e.partitions ? e.partitions_moved / e.partitions : 0;
    const bar = el("span", { class: "progress" });
    bar.appendChild(el("div", { style: `width:${(100 * Math.min(1, frac)).toFixed(0)}%` }));
    ex.append(`${e.id}: `);
    ex.appendChild(bar);
    ex.appendChild(el("span", { "data-k": "exec-progress" }, ` ${e.partitions_moved}/${e.partitions} partitions, ${fmtMB(e.bytes_moved)}/${fmtMB(e.bytes_planned)} MB`));
  } else {
    ex.textContent = "none running" + (s.cooldown_left_s > 0 ? ` (cooldown ${s.cooldown_left_s.toFixed(0)} s)` : "");
  }
}

// what the operator removed or demoted through the service, each with a Forget button (a write: the token)
function renderHistory(entries) {
  removedBrokers = new Set(entries.filter((e) => e.kind === "removed").map((e) => e.broker));
  const tb = document.querySelector("#history tbody");
  tb.replaceChildren(...entries.map((e) => {
    const tr = el("tr", { "data-k": `history-${e.kind}-${e.broker}` });
    for (const v of [String(e.broker), e.kind === "removed" ? "removed: empty" : "demoted: leads nothing",
      new Date(e.since * 1000).toLocaleString(), new Date(e.expires * 1000).toLocaleString(), e.execution || ""]) {
      tr.appendChild(el("td", {}, v));
    }
    const td = el("td");
    const b = el("button", { type: "button", "data-k": `forget-${e.broker}` }, "Forget");
    b.addEventListener("click", () => forget(e));
    td.appendChild(b);
    tr.appendChild(td);
    return tr;
  }));
  if (!entries.length) tb.appendChild(el("tr", {}, "")).appendChild(el("td", { colspan: 6 }, "none"));
}

async function forget(e) {
  const what = e.kind === "removed" ? "receive replicas" : "lead";
  if (!window.confirm(`Forget broker ${e.broker}? Plans (self-healing included) may then make it ${what} again.`)) return;
  const msg = document.getElementById("history-msg");
  const r = await fetch("/api/broker-history/forget", {
    method: "POST",
    headers: { Authorization: `Bearer ${token()}`, "Content-Type": "application/json" },
    body: JSON.stringify({ brokers: [e.broker] }),
  });
  const body = await r.json().catch(() => ({}));
  msg.className = r.ok ? "ask-msg" : "ask-msg error";
  const next = r.ok && body.notes && body.notes.length ? `: ${body.notes.join("; ")}` : "";
  msg.textContent = r.ok ? `forgot broker ${e.broker} (${e.kind})${next}` : (body.error || `HTTP ${r.status}`) + (body.hint ? ` (${body.hint})` : "");
  await tick();
}

function renderLoad(load) {
  const box = document.getElementById("load");
  box.replaceChildren(...RES.map((r) => barChart(r, load)));
  const sg = document.getElementById("sigma");
  sg.replaceChildren(...RES.map((r) => sigmaChart(r, load.sigma_history || [], load.eta)));
}

function renderAnomalies(list) {
  const tb = document.querySelector("#anomalies tbody");
  tb.replaceChildren(...list.slice(0, 40).map((a) => {
    const tr = el("tr", { "data-id": a.id });
    tr.appendChild(el("td", {}, fmtTime(a.first_seen)));
    tr.appendChild(el("td", {}, a.type));
    tr.appendChild(el("td", {}, a.key));
    tr.appendChild(el("td", { class: `state-${a.state}`, "data-k": `anomaly-state-${a.id}` }, a.state));
    tr.appendChild(el("td", {}, a.reason));
    return tr;
  }));
}

function renderExecutions(list) {
  const tb = document.querySelector("#executions tbody");
  tb.replaceChildren(...list.slice(0, 20).map((x) => {
    const tr = el("tr");
    for (const v of [x.id, x.mode || "", x.state, x.partitions ?? "", fmtMB(x.bytes_planned), fmtMB(x.bytes_moved), x.reason || ""]) tr.appendChild(el("td", {}, String(v)));
    return tr;
  }));
}

// one proposal into `box`; `k` prefixes the data-k keys ("proposal": the live model's, "ask": the form's)
function renderProposal(p, box, k) {
  box.replaceChildren();
  const head = el("p");
  head.append(`${p.mode}: `);
  head.appendChild(el("b", { "data-k": `${k}-partitions` }, String(p.partitions)));
  head.append(" partitions (");
  head.appendChild(el("span", { "data-k": `${k}-replica-moves` }, String(p.replica_moves)));
  head.append(` replica moves, ${p.leader_moves} leader changes), `);
  head.appendChild(el("b", { "data-k": `${k}-mb` }, fmtMB(p.bytes)));
  head.append(` MB; balanced before: ${p.balanced_before}, after: ${p.balanced_after}`);
  box.appendChild(head);
  const kept = ((p.constraints && p.constraints.kept) || []).join("; "); // in the planner's words
  if (kept) box.appendChild(el("p", { "data-k": `${k}-constraints` }, `kept to: ${kept}`));
  if (p.notes && p.notes.length) {
    const ul = el("ul", { class: "notes", "data-k": `${k}-notes` });
    for (const n of p.notes) ul.appendChild(el("li", {}, n));
    box.appendChild(ul);
  }
  const t = el("table");
  const hr = el("tr");
  for (const h of ["resource", "σ before", "σ after", "max γ before", "max γ after"]) hr.appendChild(el("th", {}, h));
  t.appendChild(hr);
  for (const r of RES) {
    const tr = el("tr");
    tr.appendChild(el("td", {}, r));
    tr.appendChild(el("td", { "data-k": `${k}-before-${r}` }, fmtSigma(p.before[r].sigma)));
    tr.appendChild(el("td", { "data-k": `${k}-after-${r}` }, fmtSigma(p.after[r].sigma)));
    tr.appendChild(el("td", {}, Number(p.before[r].gamma).toFixed(3)));
    tr.appendChild(el("td", {}, Number(p.after[r].gamma).toFixed(3)));
    t.appendChild(tr);
  }
  box.appendChild(t);
  if (p.goals && p.goals.length) {
    const gt = el("table", { "data-k": `${k}-goals` });
    const gh = el("tr");
    for (const h of ["goal (highest first)", "violation before", "after", "", "detail (before -> after)"]) gh.appendChild(el("th", {}, h));
    gt.appendChild(gh);
    for (const g of p.goals) {
      const tr = el("tr");
      for (const v of [`${g.priority}. ${g.goal}`, String(g.violation_before), String(g.violation_after),
        g.met_after ? "met" : "not met", g.detail]) tr.appendChild(el("td", {}, v));
      gt.appendChild(tr);
    }
    box.appendChild(gt);
  }
  if (p.moves.length) {
    const mt = el("table", { "data-k": `${k}-moves` });
    const mh = el("tr");
    for (const h of ["partition", "from", "to", "MB"]) mh.appendChild(el("th", {}, h));
    mt.appendChild(mh);
    for (const m of p.moves.slice(0, 15)) {
      const tr = el("tr");
      for (const v of [`${m.topic}-${m.partition}`, `[${m.from.join(",")}]`, `[${m.to.join(",")}]`, fmtMB(m.bytes)]) tr.appendChild(el("td", {}, v));
      mt.appendChild(tr);
    }
    box.appendChild(mt);
  }
}

async function tick() {
  try {
    const s = await getJSON("/api/state");
    if (!s) return;
    renderState(s);
    renderHistory(s.broker_history || []);
    const [an, ex] = await Promise.all([getJSON("/api/anomalies?limit=40"), getJSON("/api/executions?limit=20")]);
    if (an) renderAnomalies(an.anomalies);
    if (ex) renderExecutions(ex.executions);
    if (s.rounds > 0) {
      const load = await getJSON("/api/load");
      if (load) {
        renderLoad(load);
        const now = Date.now();
        if (load.fingerprint !== lastFingerprint || now - lastProposalAt > 60000) {
          lastFingerprint = load.fingerprint;
          lastProposalAt = now;
          const p = await getJSON("/api/proposal?moves=15");
          if (p) renderProposal(p, document.getElementById("proposal"), "proposal");
        }
      }
    }
    document.body.dataset.updated = String(Date.now());
  } catch (e) {
    document.getElementById("action-msg").textContent = "connection lost; retrying";
  }
}

function token() {
  const tok = document.getElementById("token").value.trim();
  sessionStorage.setItem("kb-token", tok);
  return tok;
}

async function post(path) {
  const msg = document.getElementById("action-msg");
  const r = await fetch(path, { method: "POST", headers: { Authorization: `Bearer ${token()}` } });
  const body = await r.json().catch(() => ({}));
  msg.textContent = r.ok ? (body.paused ? "paused" : "resumed") : (body.error || `HTTP ${r.status}`);
  await tick();
}

// ---- the plan form: every value goes to the API as typed, and the API's one-line error is shown as is ----
let asked = null; // the request and proposal the Execute button would run

function askRequest() {
  const mode = document.getElementById("ask-mode").value;
  const body = {};
  const val = (id) => document.getElementById(id).value.trim();
  if (mode !== "rebalance") {
    // ids as numbers; anything else is sent as typed, and the API names it (brokers.N)
    body.brokers = val("ask-brokers").split(/[\s,]+/).filter((x) => x).map((x) => (/^-?\d+$/.test(x) ? Number(x) : x));
  }
  if (val("ask-exclude")) body.excluded_topics = val("ask-exclude");
  if (val("ask-max-moves")) body.max_moves = /^\d+$/.test(val("ask-max-moves")) ? Number(val("ask-max-moves")) : val("ask-max-moves");
  if (val("ask-max-bytes")) body.max_bytes = val("ask-max-bytes");
  if (mode !== "demote-brokers" && val("ask-goals")) body.goals = val("ask-goals");
  if (mode === "rebalance" && document.getElementById("ask-leadership-only").checked) body.leadership_only = true;
  return { path: `/api/${mode}`, body };
}

function showAskError(body, status) {
  const msg = document.getElementById("ask-msg");
  msg.className = "ask-msg error";
  msg.textContent = (body.error || `HTTP ${status}`) + (body.hint ? ` (${body.hint})` : "");
}

async function ask(dryRun) {
  const req = dryRun ? askRequest() : asked.req;
  const msg = document.getElementById("ask-msg");
  msg.className = "ask-msg";
  msg.textContent = dryRun ? "planning…" : "starting…";
  const r = await fetch(req.path, {
    method: "POST",
    headers: { Authorization: `Bearer ${token()}`, "Content-Type": "application/json" },
    body: JSON.stringify({ ...req.body, dry_run: dryRun }),
  });
  const body = await r.json().catch(() => ({}));
  document.getElementById("ask-execute").disabled = true;
  if (!r.ok) {
    asked = null;
    document.getElementById("ask-result").replaceChildren();
    showAskError(body, r.status);
    return;
  }
  renderProposal(body.proposal, document.getElementById("ask-result"), "ask");
  if (dryRun) {
    asked = { req, proposal: body.proposal };
    msg.textContent = "proposed (dry run): nothing was changed";
    document.getElementById("ask-execute").disabled = body.proposal.partitions === 0;
  } else {
    asked = null;
    msg.textContent = `execution ${body.execution} started`;
    await tick();
  }
}

function askChanged() {
  asked = null;
  document.getElementById("ask-execute").disabled = true;
  const mode = document.getElementById("ask-mode").value;
  document.getElementById("ask-brokers").disabled = mode === "rebalance";
  document.getElementById("ask-leadership-only").disabled = mode !== "rebalance";
  document.getElementById("ask-goals").disabled = mode === "demote-brokers"; // a demotion has no policy
}

document.getElementById("token").value = sessionStorage.getItem("kb-token") || "";
document.getElementById("pause").addEventListener("click", () => post("/api/pause"));
document.getElementById("resume").addEventListener("click", () => post("/api/resume"));
document.getElementById("ask").addEventListener("submit", (e) => { e.preventDefault(); ask(true).catch(() => showAskError({ error: "connection lost" }, 0)); });
document.getElementById("ask").addEventListener("input", askChanged);
document.getElementById("ask").addEventListener("change", askChanged);
document.getElementById("ask-execute").addEventListener("click", () => {
  if (!asked) return;
  const p = asked.proposal;
  if (window.confirm(`Execute ${p.mode}: ${p.partitions} partitions, ${fmtMB(p.bytes)} MB moved?`)) {
    ask(false).catch(() => showAskError({ error: "connection lost" }, 0));
  }
});
tick();
setInterval(tick, 2000);
