// The YINSH page: draws the game the server holds and turns clicks into decisions.
// No libraries and no external assets: the page works offline.
"use strict";

const NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const COLORS = {
  white: "#fbfaf6", whiteEdge: "#2b2926", black: "#1f1e1c", blackEdge: "#000000",
  legal: "#2f7fd1", select: "#2f9e57", last: "#d9472b", row: "#f0a818", hint: "#7b3fc4",
};

// Candidate moves drawn on the board (the panel lists all the analysis gives).
const OVERLAY_MOVES = 5;

const app = {
  info: null, geo: null, game: null, id: null,
  viewPly: null,        // null: the live position; else a ply of the move list
  view: null,           // the game view being drawn (live or historical)
  flipped: false,
  selected: null,       // the ring picked for a move
  rowAnchor: [],        // markers clicked while choosing among rows
  hintPly: null,        // ply whose analysis is shown as a hint
  timer: null,
};

// --- server ---------------------------------------------------------------------

// This browser's client token: the server lets only the client that made a game change it.
const CLIENT = (() => {
  const fresh = () => Array.from(crypto.getRandomValues(new Uint8Array(16)),
    (b) => b.toString(16).padStart(2, "0")).join("");
  try {
    let token = localStorage.getItem("yinsh-client");
    if (!/^[0-9a-f]{32}$/.test(token || "")) {
      token = fresh();
      localStorage.setItem("yinsh-client", token);
    }
    return token;
  } catch (e) {
    return fresh();  // no storage (a sandboxed frame): this page's games only
  }
})();

async function api(method, path, body) {
  // Every request that changes state says JSON, body or not: the server refuses others.
  const options = { method, headers: { "X-Yinsh-Client": CLIENT } };
  if (method !== "GET") options.headers["Content-Type"] = "application/json";
  if (body !== undefined) options.body = JSON.stringify(body);
  const response = await fetch(path, options);
  const text = await response.text();
  let data;
  try { data = JSON.parse(text); } catch (e) { data = { error: text }; }
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function say(message) {
  const box = $("message");
  box.textContent = message || "";
  box.hidden = !message;
}

async function attempt(work) {
  try {
    say("");
    await work();
  } catch (err) {
    say(err.message);
  }
}

// --- geometry -----------------------------------------------------------------------

function xy(name) {
  const p = app.points[name];
  if (!app.flipped) return p;
  const [cx, cy] = app.geo.center;
  return { x: 2 * cx - p.x, y: 2 * cy - p.y };
}

function el(tag, attrs, parent) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function clear(id) {
  const g = $(id);
  while (g.firstChild) g.removeChild(g.firstChild);
  return g;
}

function band(names, color, width, opacity, parent, cls) {
  const a = xy(names[0]), b = xy(names[names.length - 1]);
  return el("line", {
    x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: color, "stroke-width": width,
    "stroke-linecap": "round", "stroke-opacity": opacity, class: cls || "",
  }, parent);
}

function arrow(from, to, color, width, marker, parent, cls) {
  const a = xy(from), b = xy(to);
  const dx = b.x - a.x, dy = b.y - a.y, d = Math.hypot(dx, dy) || 1;
  const u = app.geo.unit, cut = 0.42 * u;
  return el("line", {
    x1: a.x + dx / d * cut, y1: a.y + dy / d * cut, x2: b.x - dx / d * cut, y2: b.y - dy / d * cut,
    stroke: color, "stroke-width": width, "stroke-linecap": "round", "marker-end": `url(#${marker})`,
    class: cls || "",
  }, parent);
}

function halo(name, color, width, parent, cls, r) {
  const p = xy(name);
  return el("circle", {
    cx: p.x, cy: p.y, r: (r || 0.5) * app.geo.unit, fill: "none", stroke: color,
    "stroke-width": width, class: cls || "",
  }, parent);
}

function dot(name, color, r, parent, cls) {
  const p = xy(name);
  return el("circle", { cx: p.x, cy: p.y, r: r * app.geo.unit, fill: color, class: cls || "" }, parent);
}

// --- drawing ---------------------------------------------------------------------

function drawStatic() {
  const geo = app.geo;
  const g = clear("layer-static");
  g.innerHTML = geo.static_svg;
  const [cx, cy] = geo.center;
  g.setAttribute("transform", app.flipped ? `rotate(180 ${cx} ${cy})` : "");
  const labels = clear("layer-labels");
  for (const label of geo.labels) {
    const x = app.flipped ? 2 * cx - label.x : label.x;
    const y = app.flipped ? 2 * cy - label.y : label.y;
    el("text", { x, y, "font-size": label.size, class: "label" }, labels).textContent = label.text;
  }
  const hits = clear("layer-hits");
  for (const p of geo.points) {
    const q = xy(p.name);
    el("circle", { cx: q.x, cy: q.y, r: 0.48 * geo.unit, class: "hit", "data-point": p.name }, hits);
  }
}

function drawPieces(pos) {
  const g = clear("layer-pieces");
  const u = app.geo.unit;
  for (const side of ["white", "black"]) {
    const fill = side === "white" ? COLORS.white : COLORS.black;
    const edge = side === "white" ? COLORS.whiteEdge : COLORS.blackEdge;
    for (const name of pos.markers[side]) {
      const p = xy(name);
      el("circle", { cx: p.x + 0.03 * u, cy: p.y + 0.05 * u, r: 0.27 * u, fill: "#000", opacity: 0.22 }, g);
      el("circle", { cx: p.x, cy: p.y, r: 0.27 * u, fill, stroke: edge, "stroke-width": 0.036 * u,
        class: `marker ${side}`, "data-point": name }, g);
    }
    for (const name of pos.rings[side]) {
      const p = xy(name);
      const r = 0.36 * u, w = 0.15 * u;
      el("circle", { cx: p.x + 0.03 * u, cy: p.y + 0.05 * u, r, fill: "none", stroke: "#000",
        "stroke-width": w, opacity: 0.22 }, g);
      const ring = el("g", { class: `ring ${side}`, "data-point": name }, g);
      if (side === "white") {
        el("circle", { cx: p.x, cy: p.y, r, fill: "none", stroke: edge, "stroke-width": w + 0.06 * u }, ring);
        el("circle", { cx: p.x, cy: p.y, r, fill: "none", stroke: fill, "stroke-width": w }, ring);
      } else {
        el("circle", { cx: p.x, cy: p.y, r, fill: "none", stroke: fill, "stroke-width": w + 0.03 * u }, ring);
      }
    }
  }
}

function drawLast(last) {
  const g = clear("layer-last");
  const top = clear("layer-last-top");
  if (!last) return;
  const u = app.geo.unit;
  if (last.kind === "place") halo(last.points[0], COLORS.last, 0.07 * u, g, "last-action");
  if (last.kind === "move") {
    arrow(last.points[0], last.points[1], COLORS.last, 0.09 * u, "arrow-last", top, "last-action");
    halo(last.points[0], COLORS.last, 0.05 * u, g, "last-action", 0.2);
  }
  if (last.kind === "row") band(last.points, COLORS.last, 0.3 * u, 0.5, g, "last-action");
  if (last.kind === "ring") {
    const p = xy(last.points[0]), s = 0.25 * u;
    for (const [dx, dy] of [[1, 1], [1, -1]]) {
      el("line", { x1: p.x - s * dx, y1: p.y - s * dy, x2: p.x + s * dx, y2: p.y + s * dy,
        stroke: COLORS.last, "stroke-width": 0.09 * u, "stroke-linecap": "round", class: "last-action" }, g);
    }
  }
  for (const name of last.flipped) {
    const p = xy(name);
    el("circle", { cx: p.x, cy: p.y, r: 0.35 * u, fill: "none", stroke: COLORS.last,
      "stroke-width": 0.05 * u, "stroke-dasharray": `${0.12 * u} ${0.08 * u}`, class: "flipped",
      "data-point": name }, g);
  }
}

function legalOf(kind) {
  const legal = app.view.legal;
  if (kind === "place") return legal.filter((a) => /^[A-K]\d+$/.test(a));
  if (kind === "move") return legal.filter((a) => a.includes("-") && !a.startsWith("x"));
  if (kind === "row") return legal.filter((a) => a.startsWith("x") && a.includes("-"));
  if (kind === "ring") return legal.filter((a) => a.startsWith("x") && !a.includes("-"));
  return legal.filter((a) => a === "pass");
}

function rowCandidates() {
  const rows = app.view.position.rows;
  return rows.filter((row) => app.rowAnchor.every((p) => row.points.includes(p)));
}

function drawRowsAndTargets() {
  const view = app.view, pos = view.position, u = app.geo.unit;
  const rows = clear("layer-rows");
  const targets = clear("layer-targets");
  const interactive = view.human_to_act && app.viewPly === null;
  const candidates = app.rowAnchor.length ? rowCandidates() : [];
  for (const row of pos.rows) {
    const chosen = candidates.includes(row);
    band(row.points, chosen ? COLORS.select : COLORS.row, 0.55 * u, chosen ? 0.6 : 0.45, rows, "pending-row")
      .setAttribute("data-row", row.action);
  }
  for (const hit of document.querySelectorAll("#layer-hits .hit")) hit.classList.remove("active");
  const activate = (name) => {
    const hit = document.querySelector(`#layer-hits [data-point="${name}"]`);
    if (hit) hit.classList.add("active");
  };
  $("pass-box").hidden = !(interactive && legalOf("pass").length);
  $("row-box").hidden = !(interactive && candidates.length > 1);
  if (!interactive) return;
  if (pos.phase === "place") {
    for (const a of legalOf("place")) { dot(a, COLORS.legal, 0.1, targets, "target").setAttribute("opacity", 0.6); activate(a); }
  } else if (pos.phase === "move") {
    const moves = legalOf("move");
    const origins = new Set(moves.map((a) => a.split("-")[0]));
    for (const o of origins) {
      halo(o, o === app.selected ? COLORS.select : COLORS.legal, 0.07 * u, targets, "target");
      activate(o);
    }
    if (app.selected) {
      for (const a of moves.filter((m) => m.startsWith(app.selected + "-"))) {
        const to = a.split("-")[1];
        dot(to, COLORS.select, 0.16, targets, "target destination");
        activate(to);
      }
    }
  } else if (pos.phase === "row") {
    for (const row of pos.rows) row.points.forEach(activate);
    const buttons = $("row-buttons");
    buttons.textContent = "";
    for (const row of candidates) {
      const b = document.createElement("button");
      b.textContent = row.action;
      b.dataset.row = row.action;
      b.onclick = () => decide(row.action);
      b.onmouseenter = () => highlightRow(row);
      b.onmouseleave = () => drawRowsAndTargets();
      buttons.appendChild(b);
    }
  } else if (pos.phase === "ring") {
    for (const a of legalOf("ring")) {
      const name = a.slice(1);
      halo(name, COLORS.legal, 0.07 * u, targets, "target");
      activate(name);
    }
  }
}

function highlightRow(row) {
  band(row.points, COLORS.select, 0.6 * app.geo.unit, 0.8, $("layer-rows"), "pending-row hover");
}

function drawOverlay() {
  const g = $("layer-overlay");
  for (const node of [...g.querySelectorAll(".analysis")]) node.remove();
  const a = app.game && app.game.analysis;
  const ply = app.viewPly === null ? app.game.live_ply : app.viewPly;
  if (!a || a.status !== "done" || a.ply !== ply) return;
  const overlay = $("overlay").checked;
  if (!overlay && app.hintPly !== ply) return;
  const u = app.geo.unit;
  const moves = overlay && a.moves.length
    ? a.moves.slice(0, OVERLAY_MOVES)
    : [{ action: a.best, prior: null, visits: null }];
  const total = a.moves.reduce((s, m) => s + (m.visits || 0), 0);
  moves.forEach((m, i) => {
    const share = total ? (m.visits || 0) / total : (m.prior !== null ? m.prior : 1);
    const width = (0.05 + 0.18 * Math.sqrt(share)) * u;
    const best = m.action === a.best;
    const label = labelOf(m, total);
    let at;
    if (m.action === "pass") return;
    if (/^[A-K]\d+$/.test(m.action)) {
      halo(m.action, COLORS.hint, width, g, "analysis", 0.44);
      at = xy(m.action);
    } else if (!m.action.startsWith("x")) {
      const [from, to] = m.action.split("-");
      arrow(from, to, COLORS.hint, width, "arrow-hint", g, "analysis").setAttribute("stroke-opacity", best ? 0.95 : 0.6);
      at = xy(to);
    } else if (m.action.includes("-")) {
      const [from, to] = m.action.slice(1).split("-");
      band([from, to], COLORS.hint, 0.3 * u, best ? 0.6 : 0.35, g, "analysis");
      at = xy(from);
    } else {
      halo(m.action.slice(1), COLORS.hint, width, g, "analysis", 0.5);
      at = xy(m.action.slice(1));
    }
    if (label && at) {
      el("text", { x: at.x, y: at.y - 0.62 * u, class: "overlay-label analysis" }, g).textContent =
        (best ? "★ " : "") + label;
    }
  });
}

function labelOf(m, total) {
  // Visits as a share of the listed moves' visits when searched, else the prior.
  if (m.visits !== null && m.visits !== undefined && total) return `${Math.round(100 * m.visits / total)}%`;
  if (m.prior !== null && m.prior !== undefined) return `p ${Math.round(100 * m.prior)}%`;
  return "";
}

function pct(x) { return x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`; }

function drawAnalysisPanel() {
  const out = $("analysis-out");
  const a = app.game.analysis;
  const ply = app.viewPly === null ? app.game.live_ply : app.viewPly;
  out.textContent = "";
  if (!a) return;
  if (a.status === "running") {
    out.innerHTML = `<span class="spinner"></span> ${escapeHtml(a.spec)} is thinking about ply ${a.ply}…`;
    return;
  }
  if (a.status === "error") { out.textContent = `Analysis failed: ${a.error}`; return; }
  if (a.ply !== ply) { out.textContent = `(analysis of ply ${a.ply})`; }
  const head = document.createElement("div");
  head.className = "analysis-head";
  const value = a.white_value;
  head.innerHTML = `<b>${escapeHtml(a.spec)}</b> plays <b class="best">${escapeHtml(a.best)}</b>` +
    (value === null ? "" : ` · value for White <b class="value">${value >= 0 ? "+" : ""}${value.toFixed(2)}</b>`) +
    ` <span class="sub">(${a.seconds}s)</span>`;
  out.appendChild(head);
  if (value !== null) {
    const bar = document.createElement("div");
    bar.className = "value-bar";
    bar.innerHTML = `<div style="width:${(50 + 50 * value).toFixed(1)}%"></div>`;
    out.appendChild(bar);
  }
  if (a.moves.length) {
    const table = document.createElement("table");
    table.innerHTML = "<tr><th>move</th><th>prior</th><th>visits</th><th>Q</th></tr>" + a.moves.map((m) =>
      `<tr><td>${escapeHtml(m.action)}</td><td>${pct(m.prior)}</td><td>${m.visits ?? "–"}</td>` +
      `<td>${m.q === null || m.q === undefined ? "–" : m.q.toFixed(2)}</td></tr>`).join("");
    out.appendChild(table);
  }
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

const PHASE_WORDS = { place: "to place a ring", move: "to move a ring", row: "to remove a row", ring: "to remove a ring" };

function drawPanel() {
  const game = app.game, view = app.view, pos = view.position;
  const who = (side) => (game.players[side] === "human" ? "you" : game.players[side]);
  let head;
  if (pos.over) {
    const reason = { rings: "the winning ring", pool: "the pool ran out", passes: "two passes" }[pos.end_reason] || pos.end_reason;
    head = pos.winner ? `Game over: ${cap(pos.winner)} wins (${reason})` : `Game over: draw (${reason})`;
  } else {
    head = `${cap(pos.to_act)} ${PHASE_WORDS[pos.phase] || ""}`;
    if (view.human_to_act) head += " — your decision";
  }
  $("status").innerHTML = `${escapeHtml(head)}<div class="sub">White: ${escapeHtml(who("white"))} · Black: ${escapeHtml(who("black"))}<br>` +
    `Rings removed: White ${pos.removed.white} · Black ${pos.removed.black} (of ${pos.rings_to_win}) · markers left ${pos.pool}</div>`;
  $("caption").textContent = pos.caption + (view.last && view.last.kind === "pass" ? ` · ${cap(view.last.side === "W" ? "white" : "black")} passed` : "");
  const thinking = game.thinking;
  $("thinking").hidden = !thinking;
  if (thinking) $("thinking-text").textContent = `${cap(thinking.side)} (${thinking.spec}) is thinking… ${thinking.seconds}s`;
  $("error").hidden = !game.error;
  $("error-text").textContent = game.error || "";
  $("position-text").value = pos.text;
  $("history-bar").hidden = app.viewPly === null;
  $("history-ply").textContent = app.viewPly;
  $("undo").disabled = !Object.values(game.players).includes("human");
  for (const [id, fmt] of [["dl-yinsh", "yinsh"], ["dl-sgf", "sgf"]]) {
    const a = $(id);
    a.href = `/api/games/${game.id}/record?format=${fmt}`;
    a.toggleAttribute("hidden", !game.from_start);
  }
  const list = $("moves");
  list.textContent = "";
  const current = app.viewPly === null ? game.live_ply : app.viewPly;
  game.moves.forEach((m, i) => {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.textContent = `${i + 1}.${m.side} ${m.action}`;
    a.dataset.ply = i + 1;
    if (i + 1 === current) a.className = "current";
    a.onclick = () => showPly(i + 1);
    li.appendChild(a);
    list.appendChild(li);
  });
  const currentLink = list.querySelector("a.current");
  if (currentLink && app.viewPly === null) currentLink.scrollIntoView({ block: "nearest" });
  drawReview();
  drawAnalysisPanel();
}

function cap(s) { return s ? s[0].toUpperCase() + s.slice(1) : s; }

function draw() {
  if (!app.game) return;
  drawPieces(app.view.position);
  drawLast(app.view.last);
  drawRowsAndTargets();
  drawOverlay();
  drawPanel();
  document.body.dataset.version = app.game.version;
  document.body.dataset.ply = app.view.ply;
}

// --- state from the server ------------------------------------------------------------

async function refresh() {
  if (!app.id) return;
  const game = await api("GET", `/api/games/${app.id}`);
  // A finished analysis or a reseat changes the version too: keep a picked ring then.
  const moved = !app.game || game.live_ply !== app.game.live_ply || game.id !== app.game.id;
  app.game = game;
  if (app.viewPly !== null && app.viewPly > game.live_ply) app.viewPly = null;
  app.view = app.viewPly === null ? game : await api("GET", `/api/games/${app.id}?ply=${app.viewPly}`);
  if (moved) {
    app.selected = null;
    app.rowAnchor = [];
  }
  maybeAnalyse();
  draw();
  schedule();
}

function schedule() {
  clearTimeout(app.timer);
  const g = app.game;
  const busy = g && (g.thinking || (g.analysis && g.analysis.status === "running") || reviewRunning());
  app.timer = setTimeout(() => attempt(refresh), busy ? 250 : 1500);
}

function maybeAnalyse() {
  const g = app.game;
  if (!$("overlay").checked || !g) return;
  const ply = app.viewPly === null ? g.live_ply : app.viewPly;
  if (app.view.position.over) return;
  const a = g.analysis;
  if (a && a.ply === ply && (a.status === "running" || a.spec === analystSpec())) return;
  if (a && a.status === "running") return;
  api("POST", `/api/games/${app.id}/analysis`, { spec: analystSpec(), ply })
    .then((view) => { app.game.analysis = view.analysis; draw(); schedule(); })
    .catch((err) => say(err.message));
}

function analystSpec() {
  return $("analyst").value.trim() || app.info.defaults.analyst;
}

async function showPly(ply) {
  app.viewPly = ply >= app.game.live_ply ? null : ply;
  await attempt(refresh);
}

// --- decisions --------------------------------------------------------------------------

async function decide(action) {
  app.selected = null;
  app.rowAnchor = [];
  await attempt(async () => {
    const game = await api("POST", `/api/games/${app.id}/action`, { action, ply: app.game.live_ply });
    app.game = game;
    app.view = game;
    app.hintPly = null;
    maybeAnalyse();
    draw();
    schedule();
  });
}

function clickPoint(name) {
  const view = app.view;
  if (!view || !view.human_to_act || app.viewPly !== null) return;
  const phase = view.position.phase;
  if (phase === "place") {
    if (view.legal.includes(name)) decide(name);
  } else if (phase === "move") {
    const moves = legalOf("move");
    if (app.selected && moves.includes(`${app.selected}-${name}`)) {
      decide(`${app.selected}-${name}`);
    } else if (moves.some((m) => m.startsWith(name + "-"))) {
      app.selected = app.selected === name ? null : name;
      drawRowsAndTargets();
    } else {
      app.selected = null;
      drawRowsAndTargets();
    }
  } else if (phase === "row") {
    const rows = view.position.rows;
    if (!rows.some((r) => r.points.includes(name))) return;
    app.rowAnchor.push(name);
    let candidates = rowCandidates();
    if (!candidates.length) {
      app.rowAnchor = [name];
      candidates = rowCandidates();
    }
    if (candidates.length === 1) decide(candidates[0].action);
    else drawRowsAndTargets();
  } else if (phase === "ring") {
    if (view.legal.includes(`x${name}`)) decide(`x${name}`);
  }
}

// --- controls ---------------------------------------------------------------------------

async function newGame(options) {
  const game = await api("POST", "/api/games", options);
  openGame(game);
}

function openGame(game) {
  app.id = game.id;
  app.game = game;
  app.view = game;
  app.viewPly = null;
  app.hintPly = null;
  app.selected = null;
  app.rowAnchor = [];
  history.replaceState(null, "", `#game=${game.id}`);
  maybeAnalyse();
  draw();
  schedule();
}

function wire() {
  $("layer-hits").addEventListener("click", (event) => {
    const name = event.target.getAttribute && event.target.getAttribute("data-point");
    if (name) clickPoint(name);
  });
  $("pass").onclick = () => decide("pass");
  $("undo").onclick = () => attempt(async () => {
    app.viewPly = null;
    openGame(await api("POST", `/api/games/${app.id}/undo`, {}));
  });
  $("flip").onclick = () => { app.flipped = !app.flipped; drawStatic(); draw(); };
  $("new-toggle").onclick = () => { $("new-game").hidden = !$("new-game").hidden; };
  $("swap").onclick = () => {
    const w = $("new-white").value;
    $("new-white").value = $("new-black").value;
    $("new-black").value = w;
  };
  $("new-game").onsubmit = (event) => {
    event.preventDefault();
    attempt(async () => {
      await newGame({
        white: $("new-white").value.trim() || "human",
        black: $("new-black").value.trim() || "human",
        rings_to_win: Number($("new-rings").value),
      });
      $("new-game").hidden = true;
    });
  };
  $("live").onclick = () => showPly(app.game.live_ply);
  $("overlay").onchange = () => { maybeAnalyse(); draw(); };
  $("review").onclick = toggleReview;
  $("hint").onclick = () => attempt(async () => {
    const ply = app.viewPly === null ? app.game.live_ply : app.viewPly;
    app.hintPly = ply;
    const view = await api("POST", `/api/games/${app.id}/analysis`, { spec: analystSpec(), ply });
    app.game.analysis = view.analysis;
    drawPanel();
    schedule();
  });
  $("copy").onclick = () => {
    const text = $("position-text").value;
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).catch(() => {});
    $("position-text").select();
    try { document.execCommand("copy"); } catch (e) { /* selected for a manual copy */ }
  };
  $("load").onclick = () => attempt(async () => {
    openGame(await api("POST", `/api/games/${app.id}/load`, { text: $("load-text").value }));
  });
  $("load-file").onchange = async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    $("load-text").value = await file.text();
    $("load").click();
  };
  $("retry").onclick = () => attempt(async () => {
    openGame(await api("POST", `/api/games/${app.id}/players`, app.game.players));
  });
  $("takeover").onclick = () => attempt(async () => {
    const players = { ...app.game.players };
    if (app.game.error_side) players[app.game.error_side] = "human";
    openGame(await api("POST", `/api/games/${app.id}/players`, players));
  });
  document.addEventListener("keydown", (event) => {
    if (!app.game || ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) return;
    const current = app.viewPly === null ? app.game.live_ply : app.viewPly;
    if (event.key === "ArrowLeft" && current > 0) showPly(current - 1);
    if (event.key === "ArrowRight" && current < app.game.live_ply) showPly(current + 1);
    if (event.key === "Escape") { app.selected = null; app.rowAnchor = []; drawRowsAndTargets(); }
  });
}

async function main() {
  app.info = await api("GET", "/api/info");
  app.geo = app.info.geometry;
  app.points = Object.fromEntries(app.geo.points.map((p) => [p.name, p]));
  const board = $("board");
  const bottom = Math.max(...app.geo.labels.map((l) => l.y), ...app.geo.points.map((p) => p.y)) + 0.5 * app.geo.unit;
  board.setAttribute("viewBox", `0 0 ${app.geo.width} ${bottom.toFixed(0)}`);
  const list = $("agent-list");
  for (const name of app.info.agents) {
    const option = document.createElement("option");
    option.value = name;
    list.appendChild(option);
  }
  $("new-white").value = app.info.defaults.white;
  $("new-black").value = app.info.defaults.black;
  $("analyst").value = app.info.defaults.analyst;
  drawStatic();
  wire();
  const match = /game=([0-9a-f]+)/.exec(location.hash);
  if (match) {
    try {
      openGame(await api("GET", `/api/games/${match[1]}`));
      return;
    } catch (err) { /* the server forgot it: start a new one */ }
  }
  await newGame({ white: app.info.defaults.white, black: app.info.defaults.black });
}

window.yinsh = app;  // for the browser tests and the curious
main().catch((err) => say(err.message));
