"use strict";
// contextfold inspect: the session page. Data: data/index.json and data/session-N.json
// (or window.CF_EXPORT in an exported site). No external assets.
const KINDS = ["verbatim", "transformed", "synthetic"];
const MAX_CHARS = 1500;
const S = { index: null, data: null, sid: 0, run: 0, step: null, tab: "call" };
const $ = id => document.getElementById(id);

function h(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") node.onclick = v; else node.setAttribute(k, v);
  }
  for (const kid of kids) node.append(kid);
  return node;
}

async function getJSON(path) {
  const r = await fetch(path);
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}
const loadIndex = () => window.CF_EXPORT ? window.CF_EXPORT.index : getJSON("data/index.json");
const loadSession = n =>
  window.CF_EXPORT ? window.CF_EXPORT.sessions[n] : getJSON(`data/session-${n}.json`);

// Each call keeps `keep` items of the previous view and adds `add`: rebuild every view once.
function views(run) {
  if (!run._views) {
    let prev = [];
    run._views = run.calls.map(c => (prev = prev.slice(0, c.keep).concat(c.add)));
  }
  return run._views;
}
const callAt = (run, step) => run.calls.findIndex(c => c.step === step);
function nearestCall(run, step) {
  let best = 0;
  run.calls.forEach((c, i) => {
    if (Math.abs(c.step - step) < Math.abs(run.calls[best].step - step)) best = i;
  });
  return best;
}

function textBlock(text) {
  if (text.length <= MAX_CHARS) return h("pre", {}, text);
  const pre = h("pre", {}, text.slice(0, MAX_CHARS));
  const more = h("span", { class: "more" }, ` … ${text.length - MAX_CHARS} more characters`);
  more.onclick = () => { pre.textContent = text; more.remove(); };
  return h("div", {}, pre, more);
}

function elisionBadge(el) {
  const [steps, reason, tokens, restore] = el;
  const how = restore ? `restore: ${restore}` : "no restore path";
  const what = steps.length === 1 ? `step ${steps[0]}` : `steps ${steps[0]}–${steps[steps.length - 1]}`;
  return h("span", { class: "elision" + (restore ? " restorable" : ""), "data-steps": steps.join(","),
    "data-reason": reason, onclick: () => highlight(steps) }, `${what} elided (${reason}) · ${tokens} tok · ${how}`);
}

function highlight(steps) {
  document.querySelectorAll(".hl").forEach(n => n.classList.remove("hl"));
  let first = null;
  for (const s of steps) {
    const node = document.querySelector(`#history .step[data-step="${s}"]`);
    if (node) { node.classList.add("hl"); first = first || node; }
  }
  if (first) first.scrollIntoView({ block: "nearest" });
}

function renderHistory(run, ci) {
  const d = S.data, call = run.calls[ci], items = views(run)[ci];
  const shown = new Map();
  for (const it of items) for (const s of it[3]) shown.set(s, Math.max(shown.get(s) || 0, it[2]));
  const elided = new Map();
  for (const e of call.e) for (const s of d.els[e][0]) elided.set(s, [...(elided.get(s) || []), d.els[e]]);
  const steps = d.steps.slice(0, call.step);
  const total = steps.reduce((a, s) => a + s.t.reduce((x, y) => x + y, 0), 0);
  const col = $("history");
  col.replaceChildren(h("h2", {}, `Full history before step ${call.step}: ${steps.length} steps, ${total} tokens`));
  for (const s of steps) {
    const el = elided.get(s.i), kind = shown.get(s.i);
    const cls = kind === 0 ? "shown" : kind !== undefined ? "folded" : "elided";
    const node = h("div", { class: `step ${cls}`, "data-step": s.i },
      h("div", { class: "head" }, h("b", {}, `step ${s.i}`), ` · ${s.k} · ${s.t.reduce((a, b) => a + b, 0)} tok`));
    for (const e of el || []) node.append(elisionBadge(e), " ");
    s.m.forEach((m, j) => node.append(h("div", { class: "head" }, `${d.msgs[m].r} · ${s.t[j]} tok`), textBlock(d.msgs[m].c)));
    col.append(node);
  }
}

function renderView(run, ci, col, title) {
  const d = S.data, call = run.calls[ci], items = views(run)[ci];
  const prevLen = ci > 0 ? views(run)[ci - 1].length : null;
  const tokens = items.reduce((a, it) => a + it[1], 0);
  col.replaceChildren(h("h2", {}, `${title}: ${items.length} messages, ${tokens} tokens, ` +
    `${call.removed} elided, ${call.reused} reused`));
  const els = h(call.e.length > 6 ? "details" : "div", { class: "elisions" });
  if (call.e.length > 6) {
    const reasons = [...new Set(call.e.map(e => d.els[e][1]))].join(", ");
    els.append(h("summary", {}, `${call.e.length} elisions · ${call.removed} tok · ${reasons}`));
  }
  for (const e of call.e) els.append(elisionBadge(d.els[e]), " ");
  col.append(els);
  items.forEach((it, pos) => {
    if (call.brk === pos) {
      col.append(h("div", { class: "cache-break", "data-pos": pos },
        `▼ cache break: the prompt differs from the previous call's from message ${pos}`));
    } else if (call.brk === null && prevLen !== null && pos === prevLen) {
      col.append(h("div", { class: "cache-new", "data-pos": pos }, "▼ new since the previous call (prefix kept)"));
    }
    col.append(viewMessage(it, pos));
  });
}

function viewMessage(it, pos) {
  const [m, tokens, kind, steps] = it;
  const msg = S.data.msgs[m];
  const links = h("span", { class: "links" });
  if (steps.length) {
    links.append(KINDS[kind] === "verbatim" ? "step " : "stands for steps ");
    for (const s of steps) links.append(h("a", { onclick: () => highlight(steps) }, String(s)));
  }
  return h("div", { class: `msg ${KINDS[kind]}`, "data-pos": pos, "data-kind": KINDS[kind],
    "data-steps": steps.join(",") },
    h("div", { class: "head" }, h("b", {}, msg.r), ` · ${tokens} tok · ${KINDS[kind]} · `, links),
    textBlock(msg.c));
}

function renderPlots() {
  const runs = S.data.runs, color = i => COLORS[i % COLORS.length];
  $("legend").replaceChildren(...runs.map((r, i) => h("span", { class: "key" },
    h("span", { class: "swatch", style: `background:${color(i)}` }), `${r.name} (${r.note})`)));
  const series = f => runs.map((r, i) => ({ name: r.name, color: color(i),
    points: r.calls.map(c => [c.step, f(c)]) }));
  const pick = step => select(nearestCall(runs[S.run], step));
  $("plots").replaceChildren(
    drawPlot("context tokens per call", series(c => c.prompt), S.step, pick),
    drawPlot("cumulative cost (USD)", series(c => c.cum_cost), S.step, pick),
    drawPlot("reuse (share of prompt cached)", series(c => c.prompt ? c.reused / c.prompt : 0), S.step, pick));
}

function renderTimeline() {
  const run = S.data.runs[S.run];
  $("timeline").replaceChildren(...run.calls.map((c, i) => h("button", {
    class: (c.brk !== null ? "brk " : "") + (c.step === S.step ? "sel" : ""), "data-call": i,
    title: `step ${c.step}: ${c.prompt} tok, ${c.reused} reused` + (c.brk !== null ? `, cache break at ${c.brk}` : ""),
    onclick: () => select(i) }, String(c.step))));
}

function renderCompare() {
  const runs = S.data.runs;
  const steps = [...new Set(runs.flatMap(r => r.calls.map(c => c.step)))].sort((a, b) => a - b);
  const head = h("tr", {}, h("th", {}, "step"), ...runs.map(r => h("th", { class: "run", colspan: 4 }, r.name)));
  const sub = h("tr", {}, h("th", {}), ...runs.flatMap(() => ["tokens", "reused", "elided", "break"].map(t => h("th", {}, t))));
  const body = h("tbody", {});
  for (const step of steps) {
    const row = h("tr", { "data-step": step, class: step === S.step ? "sel" : "",
      onclick: () => select(nearestCall(runs[S.run], step)) }, h("td", {}, String(step)));
    for (const r of runs) {
      const c = r.calls[callAt(r, step)];
      const cells = c ? [c.prompt, c.reused, c.removed, c.brk === null ? "" : `at ${c.brk}`] : ["", "", "", ""];
      cells.forEach(v => row.append(h("td", {}, String(v))));
    }
    body.append(row);
  }
  $("compare-table").replaceChildren(h("table", {}, h("thead", {}, head, sub), body));
  const cols = runs.map(r => {
    const col = h("div", { class: "col", "data-run": r.name }), ci = callAt(r, S.step);
    if (ci < 0) col.append(h("h2", {}, `${r.name}: no call at step ${S.step}`));
    else renderView(r, ci, col, `${r.name} at step ${S.step}`);
    return col;
  });
  $("compare-views").replaceChildren(...cols);
  const sel = body.querySelector("tr.sel");
  if (sel) sel.scrollIntoView({ block: "nearest" });
}

function render() {
  const run = S.data.runs[S.run];
  const ci = Math.max(0, callAt(run, S.step));
  renderPlots();
  renderTimeline();
  $("call-pane").hidden = S.tab !== "call";
  $("compare-pane").hidden = S.tab !== "compare";
  $("tab-call").className = S.tab === "call" ? "on" : "";
  $("tab-compare").className = S.tab === "compare" ? "on" : "";
  if (S.tab === "call") {
    renderHistory(run, ci);
    renderView(run, ci, $("view"), `View sent by ${run.name} at step ${S.step}`);
  } else renderCompare();
  history.replaceState(null, "", `#s=${S.sid}&r=${S.run}&step=${S.step}&tab=${S.tab}`);
}

function select(ci) {
  S.step = S.data.runs[S.run].calls[ci].step;
  render();
}

async function openSession(sid, hash) {
  $("status").textContent = "loading…";
  document.body.dataset.ready = "";
  S.sid = sid;
  S.data = await loadSession(sid);
  const runs = S.data.runs;
  if (!runs.length || !runs[0].calls.length) throw new Error("this session has no model call to show");
  S.run = Math.min(Number(hash.r || 0), runs.length - 1);
  S.step = hash.step !== undefined ? Number(hash.step) : runs[S.run].calls[0].step;
  S.tab = hash.tab === "compare" ? "compare" : "call";
  $("run").replaceChildren(...runs.map((r, i) => h("option", { value: i }, r.name)));
  $("run").value = String(S.run);
  render();
  const n = runs.map(r => r.calls.length).join("/");
  $("status").textContent = `${S.data.steps.length} steps · ${n} calls · ${S.data.source}`;
  document.body.dataset.ready = "1";
  performance.mark("cf-ready");
}

function parseHash() {
  return Object.fromEntries(location.hash.slice(1).split("&").filter(Boolean).map(kv => kv.split("=")));
}

async function main() {
  const index = await loadIndex();
  S.index = index;
  $("session").replaceChildren(...index.sessions.map(s => h("option", { value: s.id }, s.label)));
  const hash = parseHash();
  $("session").value = String(hash.s || 0);
  $("session").onchange = () => openSession(Number($("session").value), {}).catch(fail);
  $("run").onchange = () => { S.run = Number($("run").value); select(nearestCall(S.data.runs[S.run], S.step)); };
  $("tab-call").onclick = () => { S.tab = "call"; render(); };
  $("tab-compare").onclick = () => { S.tab = "compare"; render(); };
  document.addEventListener("keydown", ev => {
    const run = S.data && S.data.runs[S.run], ci = run ? callAt(run, S.step) : -1;
    if (ev.key === "ArrowRight" && ci >= 0 && ci + 1 < run.calls.length) select(ci + 1);
    if (ev.key === "ArrowLeft" && ci > 0) select(ci - 1);
  });
  window.addEventListener("hashchange", () => {  // a link or a typed address: open what it names
    const next = parseHash();
    $("session").value = String(next.s || 0);
    openSession(Number(next.s || 0), next).catch(fail);
  });
  await openSession(Number(hash.s || 0), hash);
}

function fail(err) {
  $("status").textContent = `error: ${err.message}`;
  document.body.dataset.ready = "error";
}

main().catch(fail);
