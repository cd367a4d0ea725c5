// Drawing Yin Yang: the 4x4 board with its goal corners, the reserves, and each player's four
// laws as dominoes (cause 2x2 -> effect 2x2, or * for an adaptation) on their side of the board.

import { el, clear, label } from "./board.js";
import { FILES, SQUARES, applications, goalTaken, lawKind, lawPlace, rev, windowSquares } from "./yinyang_model.js";

const S = 64; // board square
const BX = 46;
const BY = 122;
const C = 15; // law cell
const DOM_W = 98;
const DOM_H = 44;
const WIDTH = 470;
const HEIGHT = 512;
const INK = "#3b3530";

const PALETTE = {
  black: { fill: "#222120", stroke: "#000", shine: "#5a5855" },
  white: { fill: "#f8f7f2", stroke: "#77736a", shine: "#ffffff" },
};

function paint(name, fallback) {
  const key = String(name || fallback).toLowerCase();
  return PALETTE[key] || { fill: key, stroke: "#333", shine: "rgba(255,255,255,0.5)" };
}

function drawStone(g, x, y, r, p, opacity) {
  const a = opacity === undefined ? {} : { opacity };
  el("circle", { cx: x + 1.5, cy: y + 2, r, fill: "rgba(0,0,0,0.28)", ...a }, g);
  el("circle", { cx: x, cy: y, r, fill: p.fill, stroke: p.stroke, "stroke-width": 1.2, ...a }, g);
  el("circle", { cx: x - r * 0.35, cy: y - r * 0.35, r: r * 0.28, fill: p.shine, opacity: 0.35 * (opacity ?? 1) }, g);
}

/** A 2x2 pattern at (x, y), cells in reading order; `marks` outlines changed cells. */
function drawPattern(g, x, y, four, pal, marks = []) {
  el("rect", { x, y, width: 2 * C, height: 2 * C, fill: "#d8c9a3", stroke: "#8c7a55" }, g);
  for (let i = 0; i < 4; i++) {
    const cx = x + (i % 2) * C;
    const cy = y + Math.floor(i / 2) * C;
    el("rect", { x: cx, y: cy, width: C, height: C, fill: "none", stroke: "#8c7a55", "stroke-width": 0.6 }, g);
    if (four[i] !== ".") {
      const p = four[i] === "b" ? pal.b : pal.w;
      el("circle", { cx: cx + C / 2, cy: cy + C / 2, r: C * 0.36, fill: p.fill, stroke: p.stroke }, g);
    }
    if (marks[i]) {
      el("rect", { x: cx + 1, y: cy + 1, width: C - 2, height: C - 2, fill: "none", stroke: "#d2691e",
        "stroke-width": 2 }, g);
    }
  }
}

/**
 * One law as a domino at (x, y). `entry` is {state, text} or null (not written yet); `turned`
 * draws the law rotated 180 degrees (how it lies on the board as drawn).
 */
function drawDomino(g, x, y, slot, entry, turned, pal, place = null) {
  const known = entry && entry.text;
  const revealed = entry && entry.state === "+";
  el("rect", { x, y, width: DOM_W, height: DOM_H, rx: 6, fill: !entry ? "none" : known ? "#f3ecdc" : "#ded6c6",
    stroke: revealed ? "#8a5a14" : "#9b927f", "stroke-width": revealed ? 2 : 1.2,
    "stroke-dasharray": revealed ? null : "4 3", "data-place": place }, g);
  let caption = `law ${slot}`;
  const status = !entry ? "not written" : entry.state === "+" ? "revealed" : "hidden";
  if (!entry) {
    // nothing more to draw
  } else if (!known) {
    label(g, x + DOM_W / 2, y + DOM_H / 2 + 1, "?", { "font-size": 26, "font-weight": "bold", fill: "#7a7263" });
  } else {
    const text = entry.text;
    const cause = turned ? rev(text.slice(0, 4)) : text.slice(0, 4);
    const gy = y + (DOM_H - 2 * C) / 2;
    drawPattern(g, x + 8, gy, cause, pal);
    label(g, x + DOM_W / 2, gy + C, "→", { "font-size": 16, fill: INK });
    if (text[5] === "*") {
      el("rect", { x: x + DOM_W - 8 - 2 * C, y: gy, width: 2 * C, height: 2 * C, fill: "#efe3c4",
        stroke: "#8c7a55" }, g);
      label(g, x + DOM_W - 8 - C, gy + C + 5, "*", { "font-size": 30, "font-weight": "bold", fill: "#8a5a14" });
    } else {
      const effect = turned ? rev(text.slice(5)) : text.slice(5);
      drawPattern(g, x + DOM_W - 8 - 2 * C, gy, effect, pal, [...effect].map((c, i) => c !== cause[i]));
    }
    caption += ` · ${{ destruction: "destroy", regeneration: "regenerate", adaptation: "adapt" }[lawKind(text)]}`;
  }
  label(g, x + DOM_W / 2, y + DOM_H + 10, caption, { "font-size": 10.5, fill: INK });
  label(g, x + DOM_W / 2, y + DOM_H + 22, status, {
    "font-size": 9.5, fill: revealed ? "#8a5a14" : "#7a7263", "font-style": revealed ? "normal" : "italic",
  });
}

function draw(svg, model, { flipped = false, colours = ["Black", "White"] } = {}) {
  clear(svg);
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  const g = el("g", { "font-family": "sans-serif" }, svg); // everything but the click targets
  model.drawnFlipped = Boolean(flipped); // steps() picks the window square by it
  const pal = { b: paint(colours[0], "black"), w: paint(colours[1], "white") };
  const names = [String(colours[0] || "Black"), String(colours[1] || "White")];
  const at = (sq) => {
    let f = FILES.indexOf(sq[0]);
    let r = Number(sq[1]) - 1;
    if (flipped) [f, r] = [3 - f, 3 - r];
    return [BX + f * S, BY + (3 - r) * S];
  };
  const over = goalTaken(model);

  // The laws: each player's row on their side of the board (Black below unless flipped).
  const rowY = [flipped ? 8 : 414, flipped ? 414 : 8];
  for (const p of [0, 1]) {
    const y0 = rowY[p];
    const acting = model.side === p && !over;
    const title = `${names[p]}'s laws${acting ? (model.phase === "setup" ? " · writing" : " · to act") : ""}`;
    label(g, 22, y0 + 8, title, { "font-size": 13, "font-weight": "bold",
      fill: acting ? "#1f6f3a" : INK, "text-anchor": "start" });
    if (acting) el("circle", { cx: 13, cy: y0 + 8, r: 5, fill: p ? pal.w.fill : pal.b.fill, stroke: "#1f6f3a", "stroke-width": 2 }, g);
    const laws = model.laws[p];
    for (let k = 0; k < 4; k++) {
      drawDomino(g, 16 + k * 113, y0 + 20, k + 1, laws ? laws[k] : null, (p === 1) !== flipped, pal, lawPlace(p, k));
    }
  }

  // The board.
  el("rect", { x: BX - 8, y: BY - 8, width: 4 * S + 16, height: 4 * S + 16, rx: 8, fill: "#8f7b58" }, g);
  for (const sq of SQUARES) {
    const [x, y] = at(sq);
    const dark = (FILES.indexOf(sq[0]) + Number(sq[1])) % 2 === 0;
    el("rect", { x, y, width: S, height: S, fill: dark ? "#c4b287" : "#d3c39b", stroke: "#8f7b58" }, g);
  }
  // Goals: d4 is Black's goal, a1 White's; each marked in the colour of the player who aims there.
  for (const [sq, p] of [["d4", pal.b], ["a1", pal.w]]) {
    const [x, y] = at(sq);
    el("rect", { x: x + 4, y: y + 4, width: S - 8, height: S - 8, rx: 6, fill: "none", stroke: p.fill,
      "stroke-width": 4 }, g);
    el("rect", { x: x + 2, y: y + 2, width: S - 4, height: S - 4, rx: 7, fill: "none", stroke: p.stroke,
      "stroke-width": 0.8 }, g);
  }
  for (let i = 0; i < 4; i++) {
    const file = FILES[flipped ? 3 - i : i];
    const rank = String(flipped ? i + 1 : 4 - i);
    label(g, BX + i * S + S / 2, BY + 4 * S + 22, file, { "font-size": 13, fill: "#555" });
    label(g, BX - 22, BY + i * S + S / 2, rank, { "font-size": 13, fill: "#555" });
  }
  for (const sq of SQUARES) {
    const c = model.board[sq];
    if (c === ".") continue;
    const [x, y] = at(sq);
    drawStone(g, x + S / 2, y + S / 2 - 3, S * 0.34, pal[c]);
  }

  // Reserves and the turn, right of the board.
  const px = BX + 4 * S + 24;
  el("rect", { x: px, y: BY - 8, width: WIDTH - px - 10, height: 4 * S + 16, rx: 8, fill: "#f4eee2", stroke: "#cdbfa6" }, g);
  const cx = px + (WIDTH - px - 10) / 2;
  label(g, cx, BY + 14, "reserves", { "font-size": 13, "font-weight": "bold", fill: INK });
  [["b", 0], ["w", 1]].forEach(([c, i]) => {
    const y = BY + 50 + i * 44;
    drawStone(g, cx - 26, y, 14, pal[c], model.reserves[i] ? undefined : 0.3);
    label(g, cx + 16, y, `× ${model.reserves[i]}`, { "font-size": 15, fill: INK });
  });
  const lines = model.phase === "setup"
    ? ["writing laws"]
    : [`turn ${model.turn}`, over ? "game over" : model.phase === "moved" ? "piece moved" : "start of turn"];
  lines.forEach((t, i) => label(g, cx, BY + 140 + i * 18, t, { "font-size": 12, fill: INK }));
  // Legend of the goal frames.
  [["b", "d4"], ["w", "a1"]].forEach(([c, sq], i) => {
    const y = BY + 196 + i * 24;
    el("rect", { x: px + 12, y: y - 8, width: 16, height: 16, rx: 3, fill: "#d3c39b", stroke: pal[c].fill,
      "stroke-width": 3 }, g);
    label(g, px + 36, y, `${names[c === "b" ? 0 : 1]}'s goal, ${sq}`,
      { "font-size": 11, fill: INK, "text-anchor": "start" });
  });

  // Where the side to act can apply a law now: the slot number at the window's centre.
  if (!over && model.phase !== "setup") {
    const byWindow = {};
    for (const [slot, anchor] of applications(model)) (byWindow[anchor] ??= []).push(slot);
    for (const [anchor, slots] of Object.entries(byWindow)) {
      const [x0, y0] = at(windowSquares(anchor)[0]);
      const [x1, y1] = at(windowSquares(anchor)[3]);
      const mx = (x0 + x1) / 2 + S / 2;
      const my = (y0 + y1) / 2 + S / 2;
      slots.forEach((slot, i) => {
        const x = mx + (i - (slots.length - 1) / 2) * 20;
        el("rect", { x: x - 9, y: my - 9, width: 18, height: 18, rx: 4, fill: "#8a5a14", stroke: "#fff8e8",
          "stroke-width": 1.5 }, g);
        label(g, x, my + 0.5, String(slot), { "font-size": 11, "font-weight": "bold", fill: "#fff8e8" });
      });
    }
  }

  // The click targets, last and on top.
  for (const sq of SQUARES) {
    const [x, y] = at(sq);
    el("rect", { x, y, width: S, height: S, class: "sq", "data-square": sq, fill: "transparent" }, svg);
  }
}

export { DOM_W, DOM_H, paint, drawDomino, draw };
