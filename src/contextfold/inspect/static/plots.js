"use strict";
// Line plots drawn as inline SVG: one line per run, x = step, a marker at the selected step.
const COLORS = ["#1f5fbf", "#d1495b", "#2f7d32", "#b26a00", "#6a3fb5", "#00838f"];
const SVGNS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function fmt(v) {
  if (v === 0) return "0";
  if (Math.abs(v) >= 1000) return (v / 1000).toFixed(v >= 10000 ? 0 : 1) + "k";
  if (Math.abs(v) < 0.01) return v.toExponential(1);
  return v < 10 ? v.toFixed(2) : v.toFixed(0);
}

// series: [{name, color, points: [[step, value], ...]}]
function drawPlot(title, series, selected, onPick) {
  const W = 340, H = 150, L = 44, R = 10, T = 20, B = 22;
  const svg = svgEl("svg", { width: W, height: H, class: "plot", role: "img", "aria-label": title });
  const pts = series.flatMap(s => s.points);
  const xmax = Math.max(1, ...pts.map(p => p[0]));
  const ymax = Math.max(1e-9, ...pts.map(p => p[1]));
  const x = v => L + (v / xmax) * (W - L - R);
  const y = v => H - B - (v / ymax) * (H - T - B);
  const t = svgEl("text", { x: L, y: 13, class: "title" });
  t.textContent = title;
  svg.append(t, svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" }),
    svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#999" }));
  for (const [v, yy] of [[0, H - B], [ymax, T]]) {
    const lab = svgEl("text", { x: L - 4, y: yy + 3, "text-anchor": "end" });
    lab.textContent = fmt(v);
    svg.append(lab);
  }
  const xl = svgEl("text", { x: W - R, y: H - 6, "text-anchor": "end" });
  xl.textContent = "step " + xmax;
  svg.append(xl);
  for (const s of series) {
    const d = s.points.map(p => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    svg.append(svgEl("polyline", { points: d, fill: "none", stroke: s.color, "stroke-width": 1.6,
      "data-run": s.name }));
  }
  if (selected !== null) {
    svg.append(svgEl("line", { x1: x(selected), x2: x(selected), y1: T, y2: H - B,
      stroke: "#1d1d1f", "stroke-dasharray": "3,2", class: "cursor" }));
  }
  svg.addEventListener("click", ev => {
    const box = svg.getBoundingClientRect();
    onPick(Math.round(((ev.clientX - box.left - L) / (W - L - R)) * xmax));
  });
  return svg;
}
