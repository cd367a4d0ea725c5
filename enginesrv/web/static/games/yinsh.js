// Yinsh board (registry names "yinsh" and "yinsh+blitz"), after shared/rules/yinsh.md.
//
// Geometry: a point is (q, r), q = column index (a = 0 ... k = 10), r = its row number. Columns
// stand vertical, equal row numbers slope down to the right and the diagonals (q - r constant)
// up to the right, so with y pointing up a point sits at x = q*cos30, y = r - q/2 (unit = one
// step between neighbours), centred on f6.
//
// Steps: a placement and a ring removal are one click on the point, a ring move two clicks
// (ring, destination), a pass one "Pass" button. A row removal is one click on a marker that
// belongs to that row only (the centre one when it can); a row without such a marker (the
// middle windows of a run of seven or more) takes two clicks, its first end then its last end.
// The rows are computed from the board: in phases x and X the legal tokens are exactly the rows
// of the side to act (rules R7, V8).

import { el, clear, label } from "./board.js";

const COLS = "abcdefghijk";
const LOW = [2, 1, 1, 1, 1, 2, 2, 3, 4, 5, 7];
const HIGH = [5, 7, 8, 9, 10, 10, 11, 11, 11, 11, 10];
const AXES = [[0, 1], [1, 0], [1, 1]];
const DIRS = [[0, 1], [0, -1], [1, 1], [-1, -1], [1, 0], [-1, 0]];

const onBoard = (q, r) => q >= 0 && q <= 10 && r >= LOW[q] && r <= HIGH[q];
const nameOf = (q, r) => COLS[q] + r;

/** The 85 points in position-string order: [q, r, name]. */
const POINTS = [];
for (let q = 0; q < 11; q++) for (let r = LOW[q]; r <= HIGH[q]; r++) POINTS.push([q, r, nameOf(q, r)]);
const COORD = new Map(POINTS.map(([q, r, n]) => [n, [q, r]]));

/** The 33 lines (first and last point) and the 123 windows of five (lists of names). */
const LINES = [];
const WINDOWS = [];
for (const [dq, dr] of AXES) {
  for (const [q, r] of POINTS) {
    if (onBoard(q + 4 * dq, r + 4 * dr)) {
      WINDOWS.push([0, 1, 2, 3, 4].map((i) => nameOf(q + i * dq, r + i * dr)));
    }
    if (onBoard(q - dq, r - dr)) continue; // not the start of a line
    let n = 0;
    while (onBoard(q + (n + 1) * dq, r + (n + 1) * dr)) n++;
    LINES.push([[q, r], [q + n * dq, r + n * dr]]);
  }
}

const COLOUR_NAME = ["White", "Black"];
const PHASES = "pmnxrXRe";

/** Reads a position string (rules §8.1) into a model; throws Error on a string it cannot read. */
function parse(position) {
  const fields = String(position).trim().split(/\s+/);
  if (fields.length !== 5) throw new Error("yinsh: a position has 5 fields");
  const [boardText, side, phase, removedText, poolText] = fields;
  const columns = boardText.split("/");
  if (columns.length !== 11) throw new Error("yinsh: the board has 11 columns");
  const cells = {};
  columns.forEach((text, q) => {
    let r = LOW[q];
    for (const tok of text.match(/10|[1-9]|[WBwb]|./g) || []) {
      if (/^\d+$/.test(tok)) r += Number(tok);
      else if ("WBwb".includes(tok) && r <= HIGH[q]) cells[nameOf(q, r++)] = tok;
      else throw new Error(`yinsh: bad column ${COLS[q]} "${text}"`);
    }
    if (r !== HIGH[q] + 1) throw new Error(`yinsh: column ${COLS[q]} has the wrong length`);
  });
  if (!/^[wb-]$/.test(side)) throw new Error(`yinsh: bad side "${side}"`);
  if (phase.length !== 1 || !PHASES.includes(phase)) throw new Error(`yinsh: bad phase "${phase}"`);
  const removed = /^(\d)-(\d)$/.exec(removedText);
  if (!removed) throw new Error(`yinsh: bad removed counts "${removedText}"`);
  if (!/^\d+$/.test(poolText)) throw new Error(`yinsh: bad pool "${poolText}"`);

  const rings = [0, 0];
  for (const v of Object.values(cells)) if (v === "W" || v === "B") rings[v === "W" ? 0 : 1]++;
  const rows = { w: [], b: [] };
  for (const win of WINDOWS) {
    const first = cells[win[0]];
    if ((first === "w" || first === "b") && win.every((n) => cells[n] === first)) rows[first].push(win);
  }
  const model = {
    position: fields.join(" "),
    cells,
    side,
    phase,
    removed: [Number(removed[1]), Number(removed[2])],
    pool: Number(poolText),
    inHand: phase === "p" ? [5 - rings[0], 5 - rings[1]] : [0, 0],
    rows,
  };
  model.canMove = (phase === "m" || phase === "n") && canMoveRing(model);
  return model;
}

/** Whether the side to act has a ring move (rule R2): past a (maybe empty) marker group an empty point. */
function canMoveRing(model) {
  const ring = model.side === "w" ? "W" : "B";
  for (const [name, piece] of Object.entries(model.cells)) {
    if (piece !== ring) continue;
    const [q, r] = COORD.get(name);
    for (const [dq, dr] of DIRS) {
      let i = 1;
      while (onBoard(q + i * dq, r + i * dr) && "wb".includes(model.cells[nameOf(q + i * dq, r + i * dr)] || "-")) i++;
      if (onBoard(q + i * dq, r + i * dr) && !model.cells[nameOf(q + i * dq, r + i * dr)]) return true;
    }
  }
  return false;
}

const rowToken = (win) => `x:${win[0]}-${win[4]}`;

/** The points of a row token "x:a4-e8" (walking from the first end to the last). */
function rowPoints(first, last) {
  const [q0, r0] = COORD.get(first) || [];
  const [q1, r1] = COORD.get(last) || [];
  if (q0 === undefined || q1 === undefined) return [first, last];
  const dq = Math.sign(q1 - q0), dr = Math.sign(r1 - r0);
  const out = [];
  for (let i = 0; i <= 4; i++) out.push(nameOf(q0 + i * dq, r0 + i * dr));
  return out;
}

/** The clicks of a legal token (see the scheme at the top). */
function steps(token, model) {
  let m;
  if (token === "pass") return [{ choice: "pass", label: "Pass" }];
  if ((m = /^x:([a-k]\d+)-([a-k]\d+)$/.exec(token))) {
    const rows = (model.rows && model.rows[model.side]) || [];
    const mine = rows.find((w) => rowToken(w) === token);
    if (mine) {
      const count = new Map();
      for (const w of rows) for (const n of w) count.set(n, (count.get(n) || 0) + 1);
      for (const i of [2, 1, 3, 0, 4]) if (count.get(mine[i]) === 1) return [{ square: mine[i] }];
    }
    return [{ square: m[1] }, { square: m[2] }];
  }
  if ((m = /^r:([a-k]\d+)$/.exec(token))) return [{ square: m[1] }];
  if ((m = /^([a-k]\d+)-([a-k]\d+)$/.exec(token))) return [{ square: m[1] }, { square: m[2] }];
  if (/^[a-k]\d+$/.test(token)) return [{ square: token }];
  return [{ choice: token, label: token }]; // unknown form: still playable as a button
}

/** The squares a token touched, to mark the last move. */
function squares(token, _model) {
  let m;
  if ((m = /^x:([a-k]\d+)-([a-k]\d+)$/.exec(token))) return rowPoints(m[1], m[2]);
  if ((m = /^r:([a-k]\d+)$/.exec(token))) return [m[1]];
  if ((m = /^([a-k]\d+)-([a-k]\d+)$/.exec(token))) return [m[1], m[2]];
  if (/^[a-k]\d+$/.test(token)) return [token];
  return [];
}

/** What the side to act has to do now. */
function hint(model) {
  switch (model.phase) {
    case "p": return "place a ring";
    case "m": return model.canMove ? "move a ring" : "no ring can move: pass";
    case "n": return model.canMove ? "move a ring (the opponent passed)" : "no ring can move: pass (this ends the game)";
    case "x": return "remove a row of five";
    case "X": return "remove a row of five (made by the opponent's move)";
    case "r":
    case "R": return "remove one of your rings";
    default: {
      const [w, b] = model.removed;
      if (w === b) return `game over: draw ${w}-${b}`;
      return `game over: ${COLOUR_NAME[w > b ? 0 : 1]} wins ${w}-${b}`;
    }
  }
}

// ---- drawing --------------------------------------------------------------------------------

const U = 40; // one step between neighbours, in svg units
const COS30 = Math.sqrt(3) / 2;
const BOARD_R = 6.1; // radius of the background hexagon, in steps (its corners are cut)
const CUT = 0.6; // how far the corners are cut back along the edges, in steps
const BOARD_FILL = "#ece2c6";
const PAINT = { white: "#f6f3ea", black: "#232323" };

const paint = (name) => PAINT[String(name).toLowerCase()] || name;
/** A dark or light edge that shows against a piece of colour c. */
const edge = (c) => (/^#(f|e|d)/i.test(c) || c === "white" ? "#3a3024" : "#000");

/** Screen position of (q, r), centred on f6, y down; flipped turns it 180 degrees. */
function at(q, r, flipped) {
  const x = (q - 5) * COS30 * U;
  const y = -(r - q / 2 - 3.5) * U;
  return flipped ? [-x, -y] : [x, y];
}

/** A ring: a thick band in the colour between two thin edges; its inside shows the board. */
function ringShape(g, x, y, radius, colour, inside = BOARD_FILL) {
  el("circle", { cx: x, cy: y, r: radius, fill: inside, stroke: edge(colour), "stroke-width": radius * 0.5 }, g);
  el("circle", { cx: x, cy: y, r: radius, fill: "none", stroke: colour, "stroke-width": radius * 0.36 }, g);
}

function markerShape(g, x, y, radius, colour) {
  el("circle", { cx: x, cy: y, r: radius, fill: colour, stroke: edge(colour), "stroke-width": radius * 0.12 }, g);
}

function draw(svg, model, opts = {}) {
  const flipped = !!opts.flipped;
  const colours = (opts.colours || ["white", "black"]).map(paint);
  clear(svg);
  const left = -BOARD_R * COS30 * U - 6, right = BOARD_R * COS30 * U + 4.5 * U;
  const top = -BOARD_R * U - 6;
  svg.setAttribute("viewBox", [left, top, right - left, -2 * top].map((v) => v.toFixed(1)).join(" "));
  const root = el("g", { class: "yinsh" }, svg);

  // the board: a hexagon with cut corners (as the missing corner points), and the 33 lines
  const outline = [];
  for (let k = 0; k < 6; k++) {
    const a = Math.PI / 6 + (k * Math.PI) / 3;
    const vx = BOARD_R * U * Math.cos(a), vy = BOARD_R * U * Math.sin(a);
    for (const side of [-1, 1]) {
      const b = a + side * (2 * Math.PI / 3); // along the two edges that meet at this corner
      outline.push(`${(vx + CUT * U * Math.cos(b)).toFixed(1)},${(vy + CUT * U * Math.sin(b)).toFixed(1)}`);
    }
  }
  el("polygon", { points: outline.join(" "), fill: BOARD_FILL, stroke: "#8a7657", "stroke-width": 3, "stroke-linejoin": "round" }, root);
  const lines = el("g", { stroke: "#6d5c43", "stroke-width": 1.6, "stroke-linecap": "round" }, root);
  for (const [[q0, r0], [q1, r1]] of LINES) {
    const [x1, y1] = at(q0, r0, flipped), [x2, y2] = at(q1, r1, flipped);
    el("line", { x1, y1, x2, y2 }, lines);
  }
  for (const [q, r] of POINTS) {
    const [x, y] = at(q, r, flipped);
    el("circle", { cx: x, cy: y, r: 2.6, fill: "#6d5c43" }, lines);
  }

  // coordinates: column letters under each column, row numbers on the up-left extension of each
  // row line; row 1 would meet the letter a at the corner a1, so it goes down-left of b1 instead
  const coords = el("g", { "font-size": 13, fill: "#6d5c43", "font-family": "sans-serif" }, root);
  for (let q = 0; q < 11; q++) label(coords, ...at(q, LOW[q] - 0.72, flipped), COLS[q]);
  for (let r = 1; r <= 11; r++) {
    let q = 0;
    while (!onBoard(q, r)) q++;
    const [x, y] = r === 1 ? at(q - 0.62, r - 0.62, flipped) : at(q - 0.72, r, flipped);
    label(coords, x, y, String(r));
  }

  // rows of five waiting to be removed, as bands under the markers
  const bands = el("g", { "stroke-linecap": "round", fill: "none" }, root);
  for (const colour of ["w", "b"]) {
    for (const win of model.rows[colour]) {
      const [x1, y1] = at(...COORD.get(win[0]), flipped), [x2, y2] = at(...COORD.get(win[4]), flipped);
      const active = colour === model.side && (model.phase === "x" || model.phase === "X");
      el("line", { x1, y1, x2, y2, stroke: active ? "#d9482b" : "#b08a5a", "stroke-opacity": 0.45, "stroke-width": U * 0.8 }, bands);
    }
  }

  // the pieces
  const pieces = el("g", {}, root);
  for (const [name, piece] of Object.entries(model.cells)) {
    const [x, y] = at(...COORD.get(name), flipped);
    const colour = colours["Ww".includes(piece) ? 0 : 1];
    if (piece === "W" || piece === "B") ringShape(pieces, x, y, U * 0.37, colour);
    else markerShape(pieces, x, y, U * 0.3, colour);
  }

  drawPanel(root, model, colours, opts.colours || ["white", "black"], flipped);

  // click targets, on top
  const targets = el("g", {}, root);
  for (const [q, r, name] of POINTS) {
    const [x, y] = at(q, r, flipped);
    el("circle", { cx: x, cy: y, r: U * 0.46, class: "sq", "data-square": name, fill: "transparent" }, targets);
  }
}

/** The side panel: per player name, turn mark, rings removed and rings in hand; the pool between. */
function drawPanel(root, model, colours, names, flipped) {
  const g = el("g", { "font-family": "sans-serif", fill: "#333" }, root);
  const x0 = BOARD_R * COS30 * U + 0.45 * U;
  el("rect", { x: x0 - 10, y: -BOARD_R * U, width: 3.9 * U, height: 2 * BOARD_R * U, rx: 10, fill: "#f4eedf", stroke: "#d8ccb0" }, g);
  const seat = (p, yTop) => {
    const colour = colours[p];
    const acting = model.side === "wb"[p];
    const title = String(names[p]);
    if (acting) el("circle", { cx: x0 + 6, cy: yTop, r: 6, fill: "#d9482b" }, g);
    label(g, x0 + 18, yTop, title.charAt(0).toUpperCase() + title.slice(1), {
      "text-anchor": "start", "font-size": 17, "font-weight": acting ? "bold" : "normal",
    });
    label(g, x0, yTop + 24, `removed ${model.removed[p]}`, { "text-anchor": "start", "font-size": 12 });
    for (let i = 0; i < model.removed[p]; i++) ringShape(g, x0 + 12 + i * 26, yTop + 48, 9, colour);
    if (model.phase === "p") {
      label(g, x0, yTop + 74, `in hand ${model.inHand[p]}`, { "text-anchor": "start", "font-size": 12 });
      for (let i = 0; i < model.inHand[p]; i++) ringShape(g, x0 + 12 + i * 26, yTop + 98, 9, colour);
    }
  };
  // the player at the bottom of the board is drawn at the bottom of the panel
  const topSeat = flipped ? 0 : 1;
  seat(topSeat, -BOARD_R * U + 20);
  seat(1 - topSeat, BOARD_R * U * 0.35);
  // the pool of markers: a two-coloured disc and the count
  const py = -BOARD_R * U * 0.05;
  el("path", { d: `M ${x0 + 12} ${py - 11} A 11 11 0 0 0 ${x0 + 12} ${py + 11} Z`, fill: colours[0] }, g);
  el("path", { d: `M ${x0 + 12} ${py - 11} A 11 11 0 0 1 ${x0 + 12} ${py + 11} Z`, fill: colours[1] }, g);
  el("circle", { cx: x0 + 12, cy: py, r: 11, fill: "none", stroke: "#3a3024", "stroke-width": 1.2 }, g);
  label(g, x0 + 30, py, `pool ${model.pool}`, { "text-anchor": "start", "font-size": 14 });
  if (model.phase === "e") {
    label(g, x0, py + 34, hint(model).replace("game over: ", ""), { "text-anchor": "start", "font-size": 14, "font-weight": "bold" });
  }
}

// "yinsh+blitz" is the registry name; "yinsh-blitz" is accepted too, for a page that spells it so.
/** The end of a game in words (the contract's `ending`); the score where the outcome gives
 * it (a watched event's results do not). */
function ending(outcome, names) {
  const endings = { "target-reached": "", "pool-empty": "the markers ran out", "two-passes": "neither side could move" };
  if (!Object.hasOwn(endings, outcome.reason)) return null;
  const why = endings[outcome.reason];
  const rings = [Number(outcome.score_p1), Number(outcome.score_p2)];
  if (outcome.winner === "p2") rings.reverse(); // the winner's score first
  const score = rings.some(Number.isNaN) ? "" : ` ${rings[0]}–${rings[1]}`;
  if (outcome.winner === "draw") return `Draw${score}: ${why || "the rings needed were removed"}, with as many rings removed each`;
  const winner = names[outcome.winner === "p1" ? 0 : 1];
  if (!why) return `${winner} wins${score}: ${winner} removed the rings needed to win`;
  return `${winner} wins${score}: ${why}, and ${winner} removed more rings`;
}

/** The seat to act (the contract's `toAct`): null when no one is. */
const toAct = (model) => ({ w: 0, b: 1 })[model.side] ?? null;

/** What stands on each occupied place (the contract's `cells`): rings W B, markers w b. */
const cells = (model) => ({ ...model.cells });

/** The status line after some steps of a move (the contract's `stepHint`). */
function stepHint(model, picked) {
  if (picked.length === 1 && picked[0].square && (model.phase === "m" || model.phase === "n")) {
    return `move the ring on ${picked[0].square}: click where it goes`;
  }
  return null;
}

export default { names: ["yinsh", "yinsh+blitz", "yinsh-blitz"], parse, draw, steps, hint, squares, ending, toAct, cells, stepHint };
