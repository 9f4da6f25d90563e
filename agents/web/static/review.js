// Game review in the page: the Review button, the value graph under the moves, marked moves.
// Loaded before app.js; its functions use app.js's names (app, api, $, showPly) when called.
"use strict";

const MARK_COLORS = { inaccuracy: "#56b4e9", mistake: "#e69f00", blunder: "#d55e00" };
const MARK_GLYPHS = { inaccuracy: "?!", mistake: "?", blunder: "??" };
const GRAPH_W = 300, GRAPH_H = 80;

function reviewRunning() {
  const r = app.game && app.game.review;
  return Boolean(r && r.status === "running");
}

function toggleReview() {
  attempt(async () => {
    const body = reviewRunning() ? { cancel: true } : { spec: analystSpec() };
    const view = await api("POST", `/api/games/${app.id}/review`, body);
    app.game.review = view.review;
    draw();
    schedule();
  });
}

// A click on the graph or on a reviewed move: that position, with the analysis overlay.
function goToReviewed(ply) {
  $("overlay").checked = true;
  showPly(ply);
}

function drawReview() {
  const r = app.game.review;
  const running = reviewRunning();
  const button = $("review");
  button.textContent = running ? "Stop review" : "Review";
  button.disabled = !running && app.game.live_ply === 0;
  const status = $("review-status");
  const graph = $("review-graph");
  graph.toggleAttribute("hidden", !r || !r.values);  // an SVG element has no .hidden
  $("review-summary").textContent = "";
  if (!r) { status.textContent = ""; return; }
  if (r.status === "running") {
    status.textContent = `reviewing with ${r.spec}… ${r.done} of ${r.positions} positions`;
  } else if (r.status === "error") {
    status.textContent = `review failed: ${r.error}`;
  } else {
    status.textContent = `reviewed by ${r.spec}` +
      (r.stopped ? ` (stopped at ply ${r.stopped.ply}: ${r.stopped.reason})` : "");
  }
  if (!r.decisions) return;
  markMoves(r);
  drawGraph(r);
  drawSummary(r);
}

function markMoves(r) {
  for (const d of r.decisions) {
    const a = $("moves").querySelector(`a[data-ply="${d.ply}"]`);
    if (!a) continue;
    a.onclick = () => goToReviewed(d.ply);
    if (!d.mark) continue;
    a.classList.add(`mark-${d.mark}`);
    a.textContent += ` ${MARK_GLYPHS[d.mark]}`;
    a.title = `${d.mark}: best ${d.best} (loss ${d.loss.toFixed(2)})`;
  }
}

function svgEl(tag, attrs, parent) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  parent.appendChild(node);
  return node;
}

function drawGraph(r) {
  const svg = $("review-graph");
  svg.textContent = "";
  svg.setAttribute("viewBox", `0 0 ${GRAPH_W} ${GRAPH_H}`);
  const n = Math.max(1, r.values.length - 1);
  const x = (ply) => (ply / n) * GRAPH_W;
  const y = (v) => GRAPH_H / 2 - v * (GRAPH_H / 2 - 3);
  svgEl("rect", { x: 0, y: 0, width: GRAPH_W, height: GRAPH_H, fill: "#fbfaf6" }, svg);
  svgEl("rect", { x: 0, y: GRAPH_H / 2, width: GRAPH_W, height: GRAPH_H / 2, fill: "#d9d2c3" }, svg);
  const points = r.values.map((v, ply) => (v === null ? null : `${x(ply).toFixed(1)},${y(v).toFixed(1)}`));
  svgEl("polyline", { points: points.filter(Boolean).join(" "), fill: "none", stroke: "#2f2a22", "stroke-width": 1.3 }, svg);
  const current = app.viewPly === null ? app.game.live_ply : app.viewPly;
  svgEl("line", { x1: x(current), x2: x(current), y1: 0, y2: GRAPH_H, stroke: "#f0a818", "stroke-width": 1.5, class: "review-cursor" }, svg);
  for (const d of r.decisions) {
    if (!d.mark || d.value_played === null) continue;
    svgEl("circle", { cx: x(d.ply), cy: y(d.value_played), r: 3, fill: MARK_COLORS[d.mark], class: `review-mark mark-${d.mark}`, "data-ply": d.ply }, svg);
  }
  svg.onclick = (event) => {
    const box = svg.getBoundingClientRect();
    const ply = Math.round(((event.clientX - box.left) / box.width) * n);
    goToReviewed(Math.max(0, Math.min(ply, r.values.length - 1)));
  };
}

function drawSummary(r) {
  const out = $("review-summary");
  const rows = ["white", "black"].map((side) => {
    const s = r.summary[side];
    const acc = s.accuracy === null ? "–" : s.accuracy.toFixed(1);
    return `<tr><td>${cap(side)}</td><td>${acc}</td><td>${s.inaccuracy}</td><td>${s.mistake}</td><td>${s.blunder}</td></tr>`;
  });
  const current = app.viewPly === null ? app.game.live_ply : app.viewPly;
  const d = r.decisions[current - 1];
  let line = "";
  if (d && !d.forced && d.value !== null && d.value_played !== null) {
    line = `<div class="review-line">${d.ply}. ${d.side} ${escapeHtml(d.action)}: ${d.mark || "ok"}, ` +
      `best ${escapeHtml(d.best)}, value ${d.value.toFixed(2)} → ${d.value_played.toFixed(2)}</div>`;
  }
  out.innerHTML = `<table><tr><th></th><th>accuracy</th><th>?!</th><th>?</th><th>??</th></tr>${rows.join("")}</table>${line}`;
}
