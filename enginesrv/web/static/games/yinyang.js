// Yin Yang board (rules/yinyang.md): a 4x4 board, two goal corners, shared reserves and each
// player's four laws drawn as dominoes (cause 2x2 -> effect 2x2, or * for an adaptation).
//
// Steps of the tokens (the page knows no rules; see board.js):
//   b2-c2                 [b2] [c2]
//   end                   (end turn)
//   L1@a2                 (law 1) [window square]
//   L3@a3:keep            (law 3) [window square] (keep all laws)
//   L3@c1:L2=bw.b>b..b    (law 3) [window square] (rewrite law 2) (top row) (bottom row) (effect)
// The window square is the window's bottom-left square as the board is drawn: the anchor itself,
// or the square diagonally above-right of it (absolute) on a board turned 180 degrees. One square
// names one window. draw() records its orientation in the model (model.drawnFlipped) so that
// steps() agrees with what the person sees; a model never drawn counts as not flipped.
// setup: too many tokens to list; compose() builds a law editor instead.

import { el, clear, label } from "./board.js";

const FILES = "abcd";
const SQUARES = [];
for (let r = 1; r <= 4; r++) for (const f of FILES) SQUARES.push(f + r);
const ANCHORS = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"];
const CELL_NAMES = ["TL", "TR", "BL", "BR"];
const CELL_WORDS = ["top-left", "top-right", "bottom-left", "bottom-right"];
const GLYPH = { b: "●", w: "○", ".": "◌" };
const COLOUR_WORD = { b: "black", w: "white", ".": "empty" };
const sqName = (f, r) => FILES[f] + (r + 1);
const rev = (s) => s.split("").reverse().join("");

/** The absolute squares of a window: TL, TR, BL, BR as Black sees the board (rules §2). */
function windowSquares(anchor) {
  const f = FILES.indexOf(anchor[0]);
  const r = Number(anchor[1]) - 1;
  return [sqName(f, r + 1), sqName(f + 1, r + 1), sqName(f, r), sqName(f + 1, r)];
}

/** The square a person clicks for a window: its bottom-left square as the board is drawn. */
function windowTarget(anchor, flipped) {
  const cells = windowSquares(anchor);
  return flipped ? cells[1] : cells[2]; // turned 180 degrees, the absolute top-right is bottom-left
}

// -- laws (rules R2, R3) ---------------------------------------------------------------------

const LAW_RE = /^[bw.]{4}>(?:[bw.]{4}|\*)$/;

/** "destruction", "regeneration", "adaptation", or "" for a text that is not a valid law. */
function lawKind(text) {
  if (whyInvalid(text)) return "";
  if (text[5] === "*") return "adaptation";
  const changed = [0, 1, 2, 3].filter((i) => text[i] !== text[5 + i]).length;
  return changed === 1 ? "destruction" : "regeneration";
}

/** Why a law text is not valid (R3), or "" when it is. */
function whyInvalid(text) {
  if (!LAW_RE.test(text)) {
    return "write CAUSE>EFFECT: four cells of b, w or . each, the effect four cells or *";
  }
  if (text[5] === "*") return "";
  const cause = text.slice(0, 4);
  const effect = text.slice(5);
  const removed = [];
  const added = [];
  for (let i = 0; i < 4; i++) {
    if (cause[i] === effect[i]) continue;
    if (cause[i] !== "." && effect[i] !== ".") return `a piece cannot change colour (${CELL_WORDS[i]})`;
    (cause[i] === "." ? added : removed).push(i);
  }
  if (!removed.length && !added.length) {
    return "the effect changes nothing: remove one piece, add two pieces of one colour, or make it an adaptation (*)";
  }
  if (removed.length && added.length) return "a law either removes one piece or adds two, not both";
  if (removed.length) return removed.length === 1 ? "" : "a destruction removes exactly one piece";
  if (added.length !== 2) return "a regeneration adds exactly two pieces";
  if (effect[added[0]] !== effect[added[1]]) return "the two pieces a regeneration adds must be of one colour";
  return "";
}

let lawList = null;
/** The 405 valid laws, sorted. */
function allLaws() {
  if (!lawList) {
    const pats = [...Array(81).keys()].map((n) => [27, 9, 3, 1].map((d) => ".bw"[Math.floor(n / d) % 3]).join(""));
    lawList = pats.flatMap((c) => [...pats, "*"].map((e) => `${c}>${e}`)).filter((t) => !whyInvalid(t)).sort();
  }
  return lawList;
}

// -- the position string (rules §8) ----------------------------------------------------------

function parseLaws(text, who) {
  if (text === "none") return null;
  const entries = text.split(",");
  if (entries.length !== 4) throw new Error(`${who}'s laws need four entries`);
  return entries.map((e) => {
    if (e === "?") return { state: "?", text: null };
    const law = e.slice(1);
    if ((e[0] !== "+" && e[0] !== "-") || whyInvalid(law)) throw new Error(`bad law entry ${JSON.stringify(e)}`);
    return { state: e[0], text: law };
  });
}

function parse(position) {
  const fields = String(position).trim().split(" ");
  if (fields.length !== 8) throw new Error("a Yin Yang position has 8 fields");
  const [boardText, side, phase, lawsB, lawsW, resB, resW, turn] = fields;
  const rows = boardText.split("/");
  if (rows.length !== 4 || rows.some((row) => !/^[bw.]{4}$/.test(row))) {
    throw new Error("the board is four rows of four cells b, w or .");
  }
  const board = {};
  rows.forEach((row, i) => [...row].forEach((c, f) => (board[sqName(f, 3 - i)] = c)));
  if (side !== "b" && side !== "w") throw new Error("side must be b or w");
  if (!["setup", "start", "moved"].includes(phase)) throw new Error("phase must be setup, start or moved");
  const ints = [resB, resW, turn].map((t) => {
    if (!/^(0|[1-9][0-9]*)$/.test(t)) throw new Error(`bad number ${JSON.stringify(t)}`);
    return Number(t);
  });
  return {
    board,
    side: side === "b" ? 0 : 1,
    phase,
    laws: [parseLaws(lawsB, "Black"), parseLaws(lawsW, "White")],
    reserves: [ints[0], ints[1]],
    turn: ints[2],
  };
}

/** The absolute patterns of the nine windows of a board, in anchor order. */
const windowPatterns = (board) => ANCHORS.map((a) => windowSquares(a).map((sq) => board[sq]).join(""));

/** The absolute cause of a law its owner wrote. */
const absCause = (text, owner) => (owner ? rev(text.slice(0, 4)) : text.slice(0, 4));

/**
 * The (slot, anchor) pairs where the side to act may apply a law now (rules R5), from the laws
 * the model knows: a `?` law is never counted (the page only ever needs the acting side's own).
 */
function applications(model) {
  const p = model.side;
  const own = model.laws[p];
  if (!own || model.phase === "setup") return [];
  const revealed = [];
  model.laws.forEach((laws, q) => (laws || []).forEach((e, k) => {
    if (e.state === "+") revealed.push([q, k, absCause(e.text, q)]);
  }));
  const windows = windowPatterns(model.board);
  const out = [];
  own.forEach((e, k) => {
    if (!e.text) return;
    const cause = absCause(e.text, p);
    if (revealed.some(([q, j, c]) => c === cause && !(q === p && j === k))) return;
    if (lawKind(e.text) === "regeneration") {
      const colour = [...e.text.slice(5)].find((c, i) => c !== e.text[i]);
      if (model.reserves[colour === "b" ? 0 : 1] < 2) return;
    }
    windows.forEach((w, i) => w === cause && out.push([k + 1, ANCHORS[i]]));
  });
  return out;
}

// -- steps, hints, squares -------------------------------------------------------------------

const glyphs = (cells) => [...cells].map((c) => GLYPH[c]).join("");

/** Whether the side to act's laws appear turned 180 degrees on the board as drawn. */
const turnedFor = (model) => Boolean(model) && (model.side === 1) !== Boolean(model.drawnFlipped);

const APPLY_RE = /^L([1-4])@([a-c][1-3])(?::(keep|L([1-4])=(.+)))?$/;

function steps(token, model) {
  let m = /^([a-d][1-4])-([a-d][1-4])$/.exec(token);
  if (m) return [{ square: m[1] }, { square: m[2] }];
  if (token === "end") return [{ choice: "end", label: "end turn" }];
  m = APPLY_RE.exec(token);
  if (!m) return [{ choice: token, label: token.startsWith("laws:") ? "write laws" : token }];
  const out = [
    { choice: `L${m[1]}`, label: `law ${m[1]}` },
    { square: windowTarget(m[2], Boolean(model && model.drawnFlipped)) },
  ];
  if (m[3] === "keep") {
    out.push({ choice: "keep", label: "keep all laws" });
  } else if (m[3]) {
    const law = m[5];
    out.push({ choice: `L${m[4]}=`, label: `rewrite law ${m[4]}` });
    if (LAW_RE.test(law)) {
      // The new law's rows as the board is drawn (the token keeps the owner's reading).
      const turned = turnedFor(model);
      const cause = turned ? rev(law.slice(0, 4)) : law.slice(0, 4);
      const effect = turned ? rev(law.slice(5)) : law.slice(5);
      const kind = lawKind(law);
      out.push(
        { choice: `top:${cause.slice(0, 2)}`, label: `cause top ${glyphs(cause.slice(0, 2))}` },
        { choice: `bottom:${cause.slice(2)}`, label: `cause bottom ${glyphs(cause.slice(2))}` },
        {
          choice: `>${effect}`,
          label: kind === "adaptation" ? "adaptation (*)" : `${kind === "destruction" ? "destroy" : "regenerate"} → ` +
            `${glyphs(effect.slice(0, 2))} ${glyphs(effect.slice(2))}`,
        },
      );
    } else {
      out.push({ choice: law, label: law }); // a shown form ("?"): never a legal token
    }
  }
  return out;
}

/** Whether a goal decides the game now (rules §6, checks 1-3). */
const goalTaken = (m) => m.phase === "start" && m.turn >= 1 && (m.board.d4 === "b" || m.board.a1 === "w");

const WINDOW_HINT = "(a law: pick it, then the bottom-left square of its window)";

function hint(model) {
  if (model.phase === "setup") return "write your four laws";
  if (model.phase === "moved") return `apply a law or end the turn ${WINDOW_HINT}`;
  if (goalTaken(model)) return "game over: a goal is taken";
  return `move a piece or apply a law ${WINDOW_HINT}`;
}

function squares(token) {
  let m = /^([a-d][1-4])-([a-d][1-4])$/.exec(token);
  if (m) return [m[1], m[2]];
  m = /^L[1-4]@([a-c][1-3])/.exec(token);
  return m ? windowSquares(m[1]) : [];
}

// -- drawing ---------------------------------------------------------------------------------

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
function drawDomino(g, x, y, slot, entry, turned, pal) {
  const known = entry && entry.text;
  const revealed = entry && entry.state === "+";
  el("rect", { x, y, width: DOM_W, height: DOM_H, rx: 6, fill: !entry ? "none" : known ? "#f3ecdc" : "#ded6c6",
    stroke: revealed ? "#8a5a14" : "#9b927f", "stroke-width": revealed ? 2 : 1.2,
    "stroke-dasharray": revealed ? null : "4 3" }, g);
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
      drawDomino(g, 16 + k * 113, y0 + 20, k + 1, laws ? laws[k] : null, (p === 1) !== flipped, pal);
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

// -- the law editor (setup) ------------------------------------------------------------------

/** A new HTML element with attributes and children. */
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of children) node.append(c);
  return node;
}

/** Whether a law (owner's view) matches some window of the board now. */
const fitsBoard = (law, owner, board) => windowPatterns(board).includes(absCause(law, owner));

/** An effect of `kind` for `cause`, keeping what it can of the previous effect `prev`. */
function makeEffect(kind, cause, prev, own) {
  if (kind === "adaptation") return null;
  const effect = [...cause];
  const before = prev || [];
  if (kind === "destruction") {
    const pieces = [0, 1, 2, 3].filter((i) => cause[i] !== ".");
    const i = pieces.find((j) => before[j] === ".") ?? pieces[0];
    if (i !== undefined) effect[i] = ".";
  } else {
    const empties = [0, 1, 2, 3].filter((i) => cause[i] === ".");
    const kept = empties.filter((i) => before[i] === "b" || before[i] === "w");
    const colour = kept.length ? before[kept[0]] : own;
    const pick = [...kept, ...empties.filter((i) => !kept.includes(i))].slice(0, 2);
    if (pick.length === 2) for (const i of pick) effect[i] = colour;
  }
  return effect;
}

/** The laws last edited by each side, kept when the page builds the editor again. */
const drafts = [null, null];

/**
 * The setup form: four laws, each a cause grid, an effect grid (or * for an adaptation), a kind
 * and its text. The grids are laid out as the board is drawn (turned 180 degrees when the writer
 * is White and the board is not flipped, or Black and it is), while the controls' names and the
 * token follow the notation: "L1.cause.TL" is always the law's first cell as its owner reads it.
 */
function compose(model, container, description, play) {
  const owner = model.side;
  const own = owner ? "w" : "b";
  const turned = (owner === 1) !== Boolean(model.drawnFlipped);
  const names = ["Black", "White"];
  const slots = [];
  clear(container);
  const root = h("div", { class: "yy-editor" });
  root.append(h("p", { class: "yy-editor-intro" },
    `${names[owner]}, write your four laws. The cells are laid out as the board is drawn above. ` +
    `A law either removes one piece (destruction), adds two pieces of one colour on empty cells ` +
    `(regeneration), or rewrites a law (adaptation, effect *).`));

  const random = () => {
    const laws = allLaws();
    const pick = (list) => list[Math.floor(Math.random() * list.length)];
    const out = [0, 1, 2, 3].map(() => pick(laws));
    // One law at least fits the board as it is now, so the set can act on its first turn.
    if (!out.some((l) => fitsBoard(l, owner, model.board))) {
      const fit = laws.filter((l) => fitsBoard(l, owner, model.board));
      if (fit.length) out[Math.floor(Math.random() * 4)] = pick(fit);
    }
    return out;
  };

  const status = h("p", { class: "yy-editor-status", "data-status": "editor", role: "status" });
  const submit = h("button", { type: "button", "data-choice": "submit", class: "yy-submit" }, "write these laws");

  function refresh() {
    const texts = slots.map((s) => s.text());
    drafts[owner] = texts;
    const bad = slots.map((s, k) => [k, s.why()]).filter(([, why]) => why);
    root.dataset.token = bad.length ? "" : `laws:${texts.join(",")}`;
    if (bad.length) {
      status.textContent = `law ${bad[0][0] + 1} is not valid yet: ${bad[0][1]}`;
    } else if (!texts.some((t) => fitsBoard(t, owner, model.board))) {
      status.textContent = owner
        ? "note: none of these laws fits the board as it is now"
        : "note: none of these laws fits the full start board: Black would have no first action and lose";
    } else {
      status.textContent = "";
    }
  }

  const lawBoxes = h("div", { class: "yy-laws" });
  root.append(lawBoxes);
  for (let k = 0; k < 4; k++) {
    const id = `L${k + 1}`;
    const s = { cause: [".", ".", ".", "."], effect: null, kind: "adaptation", typed: null };
    s.text = () => s.typed ?? `${s.cause.join("")}>${s.effect ? s.effect.join("") : "*"}`;
    s.why = () => {
      const text = s.text();
      const why = whyInvalid(text);
      if (!why || s.typed !== null || s.free || !s.effect || s.effect.join("") !== s.cause.join("")) return why;
      // Edited by the grids and the effect equals the cause: say what the chosen kind needs.
      if (s.kind === "destruction") {
        return s.cause.includes("b") || s.cause.includes("w")
          ? "the effect changes nothing: choose the piece it removes (an effect cell)"
          : "a destruction needs a piece in the cause to remove";
      }
      return s.cause.filter((c) => c === ".").length >= 2
        ? "the effect changes nothing: choose the two empty cells it fills (effect cells)"
        : "a regeneration needs two empty cells in the cause";
    };
    slots.push(s);

    const box = h("fieldset", { class: "yy-law" }, h("legend", {}, `law ${k + 1}`));
    const preview = el("svg", { viewBox: `0 0 ${DOM_W + 4} ${DOM_H + 4}`, class: "yy-law-preview", "font-family": "sans-serif",
      style: `width:${DOM_W - 10}px;height:${DOM_H - 8}px`, "aria-hidden": "true" });
    const grid = (part) => {
      const g = h("div", { class: "yy-cells", role: "group", "aria-label": part });
      const buttons = CELL_NAMES.map((name, i) => {
        const b = h("button", { type: "button", class: "yy-cell", "data-choice": `${id}.${part}.${name}` });
        b.addEventListener("click", () => cycle(part, i));
        return b;
      });
      g.append(...(turned ? [...buttons].reverse() : buttons)); // reversed = turned 180 degrees
      return [g, buttons];
    };
    const [causeGrid, causeButtons] = grid("cause");
    const [effectGrid, effectButtons] = grid("effect");
    const kind = h("select", { "data-choice": `${id}.kind`, "aria-label": `law ${k + 1} kind` },
      ...["destruction", "regeneration", "adaptation"].map((v) => h("option", { value: v }, v)));
    const input = h("input", { type: "text", "data-choice": `${id}.text`, size: 11, spellcheck: "false",
      "aria-label": `law ${k + 1} as text` });
    const again = h("button", { type: "button", "data-choice": `${id}.random`, class: "yy-small" }, "random");
    const msg = h("p", { class: "yy-law-status", "data-status": id, role: "status" });

    function show() {
      const text = s.text();
      input.value = text;
      kind.value = s.kind;
      for (const [part, buttons, cells] of [["cause", causeButtons, s.cause], ["effect", effectButtons, s.effect]]) {
        buttons.forEach((b, i) => {
          const c = cells ? cells[i] : "*";
          b.textContent = GLYPH[c] || c;
          b.dataset.cell = c;
          b.disabled = !cells;
          b.setAttribute("aria-label", `law ${k + 1} ${part} ${CELL_WORDS[turned ? 3 - i : i]}: ${COLOUR_WORD[c] || "*"}`);
        });
      }
      effectGrid.classList.toggle("yy-adapt", !s.effect);
      const why = s.why();
      msg.textContent = why;
      box.classList.toggle("yy-invalid", Boolean(why));
      clear(preview);
      const entry = LAW_RE.test(text) ? { state: "-", text } : null;
      if (entry && !why) drawDomino(preview, 2, 2, k + 1, entry, turned, { b: paint("black"), w: paint("white") });
      else label(preview, (DOM_W + 4) / 2, (DOM_H + 4) / 2, "invalid", { "font-size": 12, fill: "#a33" });
      refresh();
    }

    function cycle(part, i) {
      s.typed = null;
      s.free = false;
      if (part === "cause") {
        const order = ".bw";
        s.cause[i] = order[(order.indexOf(s.cause[i]) + 1) % 3];
        s.effect = makeEffect(s.kind, s.cause, s.effect, own);
      } else if (s.effect) {
        // An effect cell offers what the rules allow: a piece may only go, an empty cell may fill.
        const options = s.cause[i] === "." ? [".", "b", "w"] : [s.cause[i], "."];
        s.effect[i] = options[(options.indexOf(s.effect[i]) + 1) % options.length];
        const found = lawKind(s.text());
        if (found) s.kind = found;
      }
      show();
    }

    s.set = (text, free = false) => {
      s.cause = text.slice(0, 4).split("");
      s.effect = text[5] === "*" ? null : text.slice(5).split("");
      s.kind = lawKind(text) || s.kind;
      s.typed = null;
      s.free = free; // typed as text: its reason is the text's own
      show();
    };
    kind.addEventListener("change", () => {
      s.typed = null;
      s.free = false;
      s.kind = kind.value;
      s.effect = makeEffect(s.kind, s.cause, s.effect, own);
      show();
    });
    input.addEventListener("change", () => {
      const text = input.value.trim().toLowerCase();
      if (LAW_RE.test(text)) s.set(text, true); // the grids show it, valid or not
      else {
        s.typed = text; // not even a law: shown with its reason until corrected
        show();
      }
    });
    again.addEventListener("click", () => s.set(random()[0]));

    box.append(
      h("div", { class: "yy-law-row" },
        h("div", { class: "yy-part" }, h("span", {}, "cause"), causeGrid), h("span", { class: "yy-arrow" }, "→"),
        h("div", { class: "yy-part" }, h("span", {}, "effect"), effectGrid), preview),
      h("div", { class: "yy-law-row" }, kind, input, again),
      msg,
    );
    lawBoxes.append(box);
  }

  const shuffle = h("button", { type: "button", "data-choice": "random" }, "random laws");
  shuffle.addEventListener("click", () => random().forEach((text, k) => slots[k].set(text)));
  submit.addEventListener("click", () => {
    refresh();
    if (root.dataset.token) play(root.dataset.token);
  });
  root.append(h("div", { class: "yy-editor-actions" }, shuffle, submit), status);
  if (description) root.append(h("details", {}, h("summary", {}, "notation"), h("p", {}, description)));
  container.append(root);
  const start = drafts[owner] && drafts[owner].every((t) => !whyInvalid(t)) ? drafts[owner] : random();
  start.forEach((text, k) => slots[k].set(text));
}

/** The end of a game in words (the contract's `ending`). */
function ending(outcome, names) {
  if (outcome.winner !== "p1" && outcome.winner !== "p2") return null;
  const seat = outcome.winner === "p1" ? 0 : 1;
  const [winner, loser] = [names[seat], names[1 - seat]];
  const endings = {
    goal: `a ${winner.toLowerCase()} piece stands on ${seat === 0 ? "d4" : "a1"}`,
    "both-goals": `both goals were filled on ${winner}'s turn`,
    "no-legal-token": `${loser} has no legal move`,
  };
  return Object.hasOwn(endings, outcome.reason) ? `${winner} wins: ${endings[outcome.reason]}` : null;
}

/** The seat to act (the contract's `toAct`). */
const toAct = (model) => model.side;

/** What stands on each occupied square (the contract's `cells`): b or w. */
function occupied(model) {
  return Object.fromEntries(Object.entries(model.board).filter(([, cell]) => cell !== "."));
}

/** The status line after some steps of a move (the contract's `stepHint`). */
function stepHint(model, picked) {
  const [first, second] = picked;
  const legend = `(${GLYPH.b} black, ${GLYPH.w} white, ${GLYPH["."]} empty; rows as the board is drawn)`;
  if (first.square && picked.length === 1) return `move the piece on ${first.square}: click where it goes`;
  if (!first.choice || !/^L[1-4]$/.test(first.choice)) return null;
  const law = `law ${first.choice.slice(1)}`;
  if (picked.length === 1) return `${law}: click the bottom-left square of the window it applies to`;
  const where = `${law} at ${second.square}`;
  const last = picked[picked.length - 1].choice || "";
  if (picked.length === 2) return `${where}: keep all laws, or rewrite one (the adaptation's choice)`;
  if (/^L[1-4]=$/.test(last)) return `${where}, rewriting law ${last[1]}: pick the top row of its cause ${legend}`;
  if (last.startsWith("top:")) return `${where}: pick the bottom row of the new law's cause ${legend}`;
  if (last.startsWith("bottom:")) return `${where}: pick the new law's effect ${legend}`;
  return null;
}

export default { names: ["yinyang"], hidden: true, parse, draw, steps, hint, squares, compose, ending, toAct, cells: occupied, stepHint };
export { SQUARES, ANCHORS, applications, lawKind, whyInvalid, allLaws, windowSquares, windowTarget };
