// Yoxii board (rules/yoxii.md): 37 squares in an octagon, a neutral Totem, pieces of value 1-4.
//
// A turn is two decisions. Phase "t": the Totem's destination square ("d5" -> one click).
// Phase "p": a value and a square ("3@c5" -> click c5, then the value button "3"; the value
// button is left out when the stock holds a single value, since the square then decides).
// p1 = White (side "w"), p2 = Black (side "b").

import { el, clear, label } from "./board.js";

const FILES = "abcdefg";
const N = 7; // the 7x7 grid the board is cut from
const VALUES = [1, 2, 3, 4];
const DIRS = [[0, 1], [1, 1], [1, 0], [1, -1], [0, -1], [-1, -1], [-1, 0], [-1, 1]];

/** The on-board test of rules §2.1 (f: file index 0-6, r: rank - 1). */
const onBoard = (f, r) =>
  f >= 0 && f < N && r >= 0 && r < N && Math.min(f, 6 - f) + Math.min(r, 6 - r) >= 2;
const nameOf = (f, r) => FILES[f] + (r + 1);

/** The 37 squares in canonical order (rank 7 down to 1, files a to g). */
const SQUARES = [];
for (let r = N - 1; r >= 0; r--) for (let f = 0; f < N; f++) if (onBoard(f, r)) SQUARES.push(nameOf(f, r));
const SQUARE_SET = new Set(SQUARES);

const coords = (name) => [FILES.indexOf(name[0]), Number(name[1]) - 1];

/** The on-board neighbours of a square. */
function neighbours(name) {
  const [f, r] = coords(name);
  return DIRS.filter(([df, dr]) => onBoard(f + df, r + dr)).map(([df, dr]) => nameOf(f + df, r + dr));
}

// -- the position string (rules §8) ----------------------------------------------------------

const PIECE_LETTERS = "ABCDabcd"; // White 1-4, Black 1-4

function parse(position) {
  const fields = String(position).trim().split(" ");
  if (fields.length !== 5) throw new Error("a Yoxii position has 5 fields");
  const [board, side, phase, wstock, bstock] = fields;
  const ranks = board.split("/");
  if (ranks.length !== N) throw new Error("the board needs 7 ranks");
  const cells = {};
  let totem = null;
  ranks.forEach((text, i) => {
    const r = N - 1 - i;
    const names = [];
    for (let f = 0; f < N; f++) if (onBoard(f, r)) names.push(nameOf(f, r));
    let k = 0;
    for (const ch of text) {
      if (ch >= "1" && ch <= "7") {
        for (let n = Number(ch); n > 0; n--) {
          if (k >= names.length) throw new Error(`rank ${r + 1} is too long`);
          cells[names[k++]] = null;
        }
      } else if (ch === "T" || PIECE_LETTERS.includes(ch)) {
        if (k >= names.length) throw new Error(`rank ${r + 1} is too long`);
        const sq = names[k++];
        if (ch === "T") {
          if (totem) throw new Error("more than one Totem");
          totem = sq;
          cells[sq] = "T";
        } else {
          const at = PIECE_LETTERS.indexOf(ch);
          cells[sq] = { player: at < 4 ? 0 : 1, value: (at % 4) + 1 };
        }
      } else {
        throw new Error(`bad character ${JSON.stringify(ch)} in rank ${r + 1}`);
      }
    }
    if (k !== names.length) throw new Error(`rank ${r + 1} must cover ${names.length} squares`);
  });
  if (!totem) throw new Error("the board has no Totem");
  if (side !== "w" && side !== "b") throw new Error("side must be w or b");
  if (phase !== "t" && phase !== "p") throw new Error("phase must be t or p");
  const stock = [wstock, bstock].map((text, p) => {
    const m = new RegExp(`^${"wb"[p]}:([0-9])([0-9])([0-9])([0-9])$`).exec(text);
    if (!m) throw new Error(`bad stock field ${JSON.stringify(text)}`);
    return m.slice(1).map(Number);
  });
  return { cells, totem, side: side === "w" ? 0 : 1, phase, stock };
}

// -- a little rule knowledge, for hints and the end-of-game display --------------------------

/** The Totem's destinations for the side to act (rules R1-R4). */
function totemMoves(model) {
  const out = [];
  const [f0, r0] = coords(model.totem);
  for (const [df, dr] of DIRS) {
    let f = f0 + df;
    let r = r0 + dr;
    while (onBoard(f, r)) {
      const c = model.cells[nameOf(f, r)];
      if (c === null) {
        out.push(nameOf(f, r));
        break;
      }
      if (c.player !== model.side) break; // the opponent's piece (the Totem is the origin)
      f += df;
      r += dr;
    }
  }
  return out;
}

/** Values the side to act still has in stock. */
const valuesInStock = (model) => VALUES.filter((v) => model.stock[model.side][v - 1] > 0);

const isOver = (model) => model.phase === "t" && totemMoves(model).length === 0;

// -- the page's interface --------------------------------------------------------------------

function steps(token, model) {
  const m = /^([1-4])@([a-g][1-7])$/.exec(token);
  if (!m) return [{ square: token }]; // a Totem move: its destination
  const out = [{ square: m[2] }];
  // The value button is needed only when there is a choice of values.
  if (!model || valuesInStock(model).length !== 1) out.push({ choice: m[1], label: m[1] });
  return out;
}

function hint(model) {
  if (model.phase === "t") {
    return isOver(model) ? "the Totem cannot move: game over" : "move the totem";
  }
  const free = neighbours(model.totem).some((sq) => model.cells[sq] === null);
  const where = free ? "next to the Totem" : "on any empty square";
  const values = valuesInStock(model);
  const tail = values.length > 1 ? ", then pick its value" : values.length ? ` (value ${values[0]})` : "";
  return `place a piece ${where}${tail}`;
}

function squares(token, model) {
  const m = /^(?:[1-4]@)?([a-g][1-7])$/.exec(token);
  if (!m) return [];
  // A Totem move seen from the position before it also marks the square it left.
  if (!token.includes("@") && model && model.phase === "t" && model.totem !== m[1]) {
    return [model.totem, m[1]];
  }
  return [m[1]];
}

// -- drawing ---------------------------------------------------------------------------------

const S = 50; // square size
const M = 30; // margin for the coordinates
const PANEL_X = M + N * S + 28;
const WIDTH = PANEL_X + 124;
const HEIGHT = M + N * S + M;

const PALETTE = {
  white: { fill: "#f7f4ec", stroke: "#6b604f", ink: "#2b261f" },
  black: { fill: "#2d2b29", stroke: "#0d0d0d", ink: "#f6f2e8" },
  red: { fill: "#b4332c", stroke: "#5c1410", ink: "#fff8f0" },
};

/** Fill, outline and text colours for a colour name from the server. */
function paint(name, fallback) {
  const key = String(name || fallback).toLowerCase();
  if (PALETTE[key]) return PALETTE[key];
  const light = /white|ivory|yellow|cream|beige|silver|light/.test(key);
  return { fill: key, stroke: "#333", ink: light ? "#222" : "#fff" };
}

/** The octagon's outline on the grid (x right, y down, in squares); symmetric under 180°. */
const OUTLINE = [[2, 0], [5, 0], [5, 1], [6, 1], [6, 2], [7, 2], [7, 5], [6, 5], [6, 6], [5, 6],
  [5, 7], [2, 7], [2, 6], [1, 6], [1, 5], [0, 5], [0, 2], [1, 2], [1, 1], [2, 1]];

function drawPiece(g, x, y, r, player, value, pal) {
  const p = pal[player];
  el("circle", { cx: x + 1, cy: y + 2, r, fill: "rgba(0,0,0,0.25)" }, g);
  el("circle", { cx: x, cy: y, r, fill: p.fill, stroke: p.stroke, "stroke-width": 1.5 }, g);
  el("circle", { cx: x, cy: y, r: r * 0.78, fill: "none", stroke: p.ink, "stroke-opacity": 0.25 }, g);
  label(g, x, y + 1, String(value), {
    fill: p.ink, "font-size": r * 1.15, "font-weight": "bold",
  });
}

function drawTotem(g, x, y) {
  const w = S * 0.46;
  const h = S * 0.76;
  el("ellipse", { cx: x + 2, cy: y + h / 2 + 1, rx: w * 0.6, ry: 4, fill: "rgba(0,0,0,0.3)" }, g);
  el("rect", { x: x - w / 2, y: y - h / 2, width: w, height: h, rx: 7, fill: "#9a6431",
    stroke: "#4a2c10", "stroke-width": 1.5 }, g);
  el("rect", { x: x - w / 2 - 3, y: y - h / 2 - 1, width: w + 6, height: 7, rx: 3, fill: "#c98b45",
    stroke: "#4a2c10", "stroke-width": 1.2 }, g);
  for (const dx of [-5, 5]) {
    el("circle", { cx: x + dx, cy: y - 4, r: 3.4, fill: "#fbf3df", stroke: "#4a2c10" }, g);
    el("circle", { cx: x + dx, cy: y - 4, r: 1.4, fill: "#2a1606" }, g);
  }
  el("rect", { x: x - 6, y: y + 6, width: 12, height: 4, rx: 2, fill: "#4a2c10" }, g);
}

function draw(svg, model, { flipped = false, colours = ["White", "Black"] } = {}) {
  clear(svg);
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  const g = el("g", { "font-family": "sans-serif" }, svg); // everything but the click targets
  const pal = [paint(colours[0], "white"), paint(colours[1], "black")];
  const names = [String(colours[0] || "White"), String(colours[1] || "Black")];
  // Grid position of a square, the board turned 180 degrees when flipped.
  const at = (name) => {
    let [f, r] = coords(name);
    if (flipped) [f, r] = [6 - f, 6 - r];
    return [M + f * S, M + (6 - r) * S];
  };

  // The board plate, its squares and the coordinates.
  const pts = OUTLINE.map(([x, y]) => `${M + x * S},${M + y * S}`).join(" ");
  el("polygon", { points: pts, fill: "#c89b5e", stroke: "#c89b5e", "stroke-width": 18,
    "stroke-linejoin": "round" }, g);
  el("polygon", { points: pts, fill: "none", stroke: "#7a5428", "stroke-width": 2,
    "stroke-linejoin": "round" }, g);
  const over = isOver(model);
  const region = new Set(over ? neighbours(model.totem) : []);
  for (const sq of SQUARES) {
    const [x, y] = at(sq);
    el("rect", { x: x + 2, y: y + 2, width: S - 4, height: S - 4, rx: 5, fill: "#efdcb3",
      stroke: region.has(sq) ? "#2f7d32" : "#a47a45", "stroke-width": region.has(sq) ? 3 : 1 }, g);
  }
  for (let i = 0; i < N; i++) {
    const f = flipped ? 6 - i : i;
    label(g, M + i * S + S / 2, M + N * S + 16, FILES[f], { "font-size": 13, fill: "#555" });
    label(g, M - 17, M + i * S + S / 2, String(flipped ? i + 1 : N - i),
      { "font-size": 13, fill: "#555" });
  }

  // Pieces and the Totem.
  for (const sq of SQUARES) {
    const c = model.cells[sq];
    if (!c) continue;
    const [x, y] = at(sq);
    if (c === "T") drawTotem(g, x + S / 2, y + S / 2);
    else drawPiece(g, x + S / 2, y + S / 2, S * 0.38, c.player, c.value, pal);
  }

  // The stocks: the player sitting at the top of the board (p2 unless flipped) above.
  const seats = flipped ? [0, 1] : [1, 0];
  seats.forEach((p, i) => {
    const y0 = M + i * 182;
    const panel = el("g", {}, g);
    el("rect", { x: PANEL_X, y: y0 - 8, width: 118, height: 168, rx: 8, fill: "#f4ede0",
      stroke: model.side === p && !over ? "#2f7d32" : "#cdbfa6",
      "stroke-width": model.side === p && !over ? 2.5 : 1 }, panel);
    label(panel, PANEL_X + 59, y0 + 8, names[p], { "font-size": 14, "font-weight": "bold", fill: "#333" });
    if (model.side === p && !over) {
      label(panel, PANEL_X + 59, y0 + 24, "to play", { "font-size": 11, fill: "#2f7d32" });
    }
    VALUES.forEach((v, k) => {
      const y = y0 + 48 + k * 29;
      const n = model.stock[p][v - 1];
      // the side to act's pieces in stock are its value choices too (the page marks them
      // data-legal when a value is to be picked)
      const attrs = n ? (model.side === p && !over ? { "data-choice": String(v), "aria-label": `value ${v}` } : {}) : { opacity: 0.3 };
      const piece = el("g", attrs, panel);
      drawPiece(piece, PANEL_X + 34, y, 12, p, v, pal);
      label(panel, PANEL_X + 74, y, `× ${n}`, { "font-size": 14, fill: n ? "#333" : "#aaa" });
    });
    if (over) {
      // Score around the Totem (rules E3-E4), shown at the end of the game.
      let score = 0;
      let count = 0;
      for (const sq of region) {
        const c = model.cells[sq];
        if (c && c !== "T" && c.player === p) {
          score += c.value;
          count += 1;
        }
      }
      label(panel, PANEL_X + 59, y0 + 24, `score ${score}, ${count} piece${count === 1 ? "" : "s"}`,
        { "font-size": 11, fill: "#2f7d32" });
    }
  });

  // The click targets, last and on top.
  for (const sq of SQUARES) {
    const [x, y] = at(sq);
    el("rect", { x, y, width: S, height: S, class: "sq", "data-square": sq, fill: "transparent" }, svg);
  }
}

/** The end of a game in words (the contract's `ending`): the pieces around the blocked
 * Totem score their values, then their number. */
function ending(outcome, names) {
  if (outcome.reason !== "totem-blocked") return null;
  if (outcome.score_p1 === undefined) {
    // a watched event's result gives no scores
    return outcome.winner === "draw" ? "Draw: the Totem is blocked"
      : `${names[outcome.winner === "p1" ? 0 : 1]} wins: the Totem is blocked`;
  }
  // the winner's figures first (a draw's in the seats' order)
  const [first, second] = outcome.winner === "p2" ? ["p2", "p1"] : ["p1", "p2"];
  const points = `${outcome[`score_${first}`]}–${outcome[`score_${second}`]}`;
  const pieces = `${outcome[`count_${first}`]}–${outcome[`count_${second}`]}`;
  if (outcome.winner === "draw") return `Draw: the Totem is blocked; ${points} in points and ${pieces} in pieces around it`;
  const winner = names[outcome.winner === "p1" ? 0 : 1];
  if (outcome.score_p1 !== outcome.score_p2) return `${winner} wins ${points}: the Totem is blocked, and ${winner}'s pieces around it are worth more`;
  return `${winner} wins on pieces: the Totem is blocked, ${points} in points and ${pieces} in pieces around it`;
}

/** The seat to act (the contract's `toAct`). */
const toAct = (model) => model.side;

/** What stands on each square (the contract's `cells`): the Totem, or a piece's seat and
 * value. */
function occupied(model) {
  const out = {};
  for (const [square, cell] of Object.entries(model.cells)) {
    if (cell !== null) out[square] = cell === "T" ? "T" : `${cell.player}:${cell.value}`;
  }
  return out;
}

/** The status line after some steps of a move (the contract's `stepHint`). */
function stepHint(model, picked) {
  if (picked.length === 1 && picked[0].square && model.phase !== "t") {
    return `a piece on ${picked[0].square}: pick its value (in your stock or below the board)`;
  }
  return null;
}

export default { names: ["yoxii"], parse, draw, steps, hint, squares, ending, toAct, cells: occupied, stepHint };
export { SQUARES, SQUARE_SET, totemMoves };
