// Yohoho! board (registry name "yohoho"), after shared/rules/yohoho.md.
//
// Geometry: 9 rows of pointy-top hexagons, row 1 at the bottom (White's home row). A cell is
// (x, y): x = letter index (a = 0 ... q = 16), y = row; it exists when x + y is odd. x counts
// half cells, so the centre of a cell is at x * (hex width / 2) across and its row down.
//
// Steps: a sub-move (first or second) is two clicks, the piece then its destination; a capture
// "x:h6" is one click on the enemy ship. Sub-moves always start on an own piece and captures name
// an enemy ship, so no sequence is a prefix of another.

import { el, clear, label } from "./board.js";

const LETTERS = "abcdefghijklmnopq";
const STRENGTH = { A: 5, G: 3, C: 2, R: 0 };
const FLEET = "AGGCCCCR"; // one side's pieces at the start
const DIRS = { E: [2, 0], NE: [1, 1], NW: [-1, 1], W: [-2, 0], SW: [-1, -1], SE: [1, -1] };
const SHIP_DIRS = ["NE", "NW", "W", "SW", "SE"];
const SIDE_NAME = { w: "White", b: "Black" };

const isCell = (x, y) => x >= 0 && x <= 16 && y >= 1 && y <= 9 && (x + y) % 2 === 1;
const nameOf = (x, y) => LETTERS[x] + y;
const CELLS = [];
for (let y = 1; y <= 9; y++) for (let x = 0; x <= 16; x++) if (isCell(x, y)) CELLS.push([x, y, nameOf(x, y)]);
const COORD = new Map(CELLS.map(([x, y, n]) => [n, [x, y]]));

/** Owner ("w"/"b") and kind ("A", "G", "C", "R") of a piece letter. */
const owner = (p) => (p === p.toUpperCase() ? "w" : "b");
const kind = (p) => p.toUpperCase();
const other = (s) => (s === "w" ? "b" : "w");

/** Reads a position string (rules §8) into a model; throws Error on a string it cannot read. */
function parse(position) {
  const fields = String(position).trim().split(/\s+/);
  if (fields.length !== 4) throw new Error("yohoho: a position has 4 fields");
  const [boardText, side, phaseText, firstText] = fields;
  const rows = boardText.split("/");
  if (rows.length !== 9) throw new Error("yohoho: the board has 9 rows");
  const cells = {};
  rows.forEach((text, i) => {
    const y = 9 - i;
    let x = y % 2 ? 0 : 1; // odd rows start at a, even rows at b
    for (const ch of text) {
      if (/[1-9]/.test(ch)) x += 2 * Number(ch);
      else if ("AGCRagcr".includes(ch) && isCell(x, y)) { cells[nameOf(x, y)] = ch; x += 2; }
      else throw new Error(`yohoho: bad row ${y} "${text}"`);
    }
    if (x !== 17 + (y % 2 ? 1 : 0)) throw new Error(`yohoho: row ${y} has the wrong length`);
  });
  if (side !== "w" && side !== "b") throw new Error(`yohoho: bad side "${side}"`);
  let phase = 1, moved = null;
  if (phaseText !== "1") {
    const m = /^2:([a-q][1-9])$/.exec(phaseText);
    if (!m || !COORD.has(m[1])) throw new Error(`yohoho: bad phase "${phaseText}"`);
    phase = 2;
    moved = m[1];
  }
  if (firstText !== "0" && firstText !== "1") throw new Error(`yohoho: bad first-turn flag "${firstText}"`);

  const model = { position: fields.join(" "), cells, side, phase, moved, first: firstText === "1" };
  model.admiral = { w: null, b: null };
  for (const [n, p] of Object.entries(cells)) if (kind(p) === "A") model.admiral[owner(p)] = n;
  // the attack on each Admiral (rule 5) and the end of the game where the board alone decides it
  model.attack = {};
  for (const s of ["w", "b"]) model.attack[s] = model.admiral[s] ? enemy(cells, model.admiral[s], s) : 0;
  model.over = gameOver(model);
  return model;
}

/** The neighbour of a cell in a direction, or null. */
function step(name, dir) {
  const [x, y] = COORD.get(name);
  const [dx, dy] = DIRS[dir];
  return isCell(x + dx, y + dy) ? nameOf(x + dx, y + dy) : null;
}

const adjacent = (a, b) => Object.keys(DIRS).some((dir) => step(a, dir) === b);

/** Rule 5: the strength of the pieces of the other side of `s` next to a cell. */
function enemy(cells, name, s) {
  let sum = 0;
  for (const dir of Object.keys(DIRS)) {
    const n = step(name, dir);
    const p = n && cells[n];
    if (p && owner(p) !== s) sum += STRENGTH[kind(p)];
  }
  return sum;
}

const REACH = { A: 1, G: 2, C: 3, R: 99 };

/** Where the piece on `from` may stop (rules 1-4 and 7) on the board `cells`. */
function destinations(cells, from) {
  const piece = cells[from], s = owner(piece), k = kind(piece), out = [];
  for (const dir of k === "R" ? Object.keys(DIRS) : SHIP_DIRS) {
    let n = from;
    for (let i = 0; i < REACH[k] && (n = step(n, dir)) && !cells[n]; i++) {
      if (k !== "A" || enemy(cells, n, s) <= 5) out.push(n);
    }
  }
  return out;
}

/** Whether the side to act has any legal token in phase 1 (rules 8-13), once neither end below holds. */
function hasAction(model) {
  const { cells, side: s } = model, home = model.admiral[s], t = model.attack[s];
  for (const [n, p] of Object.entries(cells)) {
    if (owner(p) === s || !"GC".includes(kind(p)) || enemy(cells, n, owner(p)) <= STRENGTH[kind(p)]) continue;
    if (t <= 5 || (adjacent(n, home) && t - STRENGTH[kind(p)] <= 5)) return true; // rule 9a
  }
  const own = Object.keys(cells).filter((n) => owner(cells[n]) === s);
  for (const from of t > 5 ? [home] : own) {
    for (const to of destinations(cells, from)) {
      if (model.first || (kind(cells[from]) === "A" && to.endsWith(s === "w" ? "9" : "1"))) return true;
      const after = { ...cells, [to]: cells[from] };
      delete after[from];
      if (own.some((n) => n !== from && destinations(after, n).length)) return true; // rule 13
    }
  }
  return false;
}

/** How the game ended ({winner, reason}) as the board shows it (rules §6), or null. */
function gameOver(model) {
  const { cells, admiral } = model;
  if (admiral.w && admiral.w.endsWith("9")) return { winner: "w", reason: "goal-row" };
  if (admiral.b && /[a-q]1$/.test(admiral.b)) return { winner: "b", reason: "goal-row" };
  const s = model.side, home = admiral[s], t = model.attack[s];
  if (model.phase !== 1 || !home) return null;
  const stuck = hasAction(model) ? null : { winner: other(s), reason: "no-legal-action" };
  if (t <= 5) return stuck;
  for (const dir of SHIP_DIRS) {
    const n = step(home, dir);
    if (n && !cells[n] && enemy(cells, n, s) <= 5) return stuck; // a safe step
  }
  for (const dir of Object.keys(DIRS)) {
    const n = step(home, dir);
    const p = n && cells[n];
    if (p && owner(p) !== s && "GC".includes(kind(p)) && t - STRENGTH[kind(p)] <= 5) return stuck; // freeing capture
  }
  return { winner: other(s), reason: "admiral-trapped" };
}

/** The clicks of a legal token (see the scheme at the top). */
function steps(token) {
  let m;
  if ((m = /^x:([a-q][1-9])$/.exec(token))) return [{ square: m[1] }];
  if ((m = /^([a-q][1-9])-([a-q][1-9])$/.exec(token))) return [{ square: m[1] }, { square: m[2] }];
  return [{ choice: token, label: token }]; // unknown form: still playable as a button
}

/** The cells a token touched, to mark the last move. */
function squares(token) {
  let m;
  if ((m = /^x:([a-q][1-9])$/.exec(token))) return [m[1]];
  if ((m = /^([a-q][1-9])-([a-q][1-9])$/.exec(token))) return [m[1], m[2]];
  return [];
}

/** What the side to act has to do now. */
function hint(model) {
  if (model.over) {
    const who = SIDE_NAME[model.over.winner];
    const loser = SIDE_NAME[other(model.over.winner)];
    if (model.over.reason === "goal-row") return `game over: ${who}'s Admiral reached its goal row`;
    if (model.over.reason === "admiral-trapped") return `game over: ${loser}'s Admiral is trapped, ${who} wins`;
    return `game over: ${loser} has no legal action, ${who} wins`;
  }
  if (model.phase === 2) return "second sub-move: move another piece";
  if (model.first) return "first turn: a single sub-move";
  if (model.attack[model.side] > 5) return "Admiral attacked: step it to safety or capture an attacker";
  return "first sub-move, or a capture";
}

// ---- drawing --------------------------------------------------------------------------------

const R = 30; // hexagon radius (centre to corner)
const W = Math.sqrt(3) * R; // hexagon width
const PAINT = { white: "#f7f5ee", black: "#262626" };
const paint = (name) => PAINT[String(name).toLowerCase()] || name;
const isLight = (c) => /^#[c-f]/i.test(c) || /^(white|ivory|yellow|beige)$/i.test(c);

/** Centre of cell (x, y); flipped turns the board 180 degrees. */
function at(x, y, flipped) {
  return flipped ? [(16 - x) * (W / 2), (y - 1) * 1.5 * R] : [x * (W / 2), (9 - y) * 1.5 * R];
}

function hexPoints(cx, cy, r) {
  const pts = [];
  for (let k = 0; k < 6; k++) {
    const a = -Math.PI / 2 + (k * Math.PI) / 3;
    pts.push(`${(cx + r * Math.cos(a)).toFixed(1)},${(cy + r * Math.sin(a)).toFixed(1)}`);
  }
  return pts.join(" ");
}

/** One piece at (cx, cy), size s = 1 on the board. */
function pieceShape(g, cx, cy, piece, colours, s = 1) {
  const colour = colours[owner(piece) === "w" ? 0 : 1];
  const ink = isLight(colour) ? "#222" : "#f4f4f4";
  const k = kind(piece);
  if (k === "R") {
    // a rock: a grey boulder edged in its owner's colour
    const pts = [[-0.62, 0.1], [-0.4, -0.45], [0.05, -0.6], [0.5, -0.38], [0.64, 0.12], [0.35, 0.52], [-0.25, 0.55]];
    el("polygon", {
      points: pts.map(([a, b]) => `${(cx + a * R * s).toFixed(1)},${(cy + b * R * s).toFixed(1)}`).join(" "),
      fill: "#8c8479", stroke: colour, "stroke-width": 3 * s, "stroke-linejoin": "round",
    }, g);
    label(g, cx, cy + 1, "R", { fill: colour, "font-size": 15 * s, "font-weight": "bold", "font-family": "sans-serif" });
    return;
  }
  const radius = R * s * (k === "A" ? 0.66 : k === "G" ? 0.6 : 0.5);
  if (k === "A") el("circle", { cx, cy, r: radius + 2 * s, fill: "none", stroke: "#c99a1e", "stroke-width": 3 * s }, g);
  el("circle", { cx, cy, r: radius, fill: colour, stroke: isLight(colour) ? "#444" : "#000", "stroke-width": 1.5 * s }, g);
  label(g, cx, cy + 1, k, { fill: ink, "font-size": (k === "C" ? 14 : 17) * s, "font-weight": "bold", "font-family": "sans-serif" });
}

function draw(svg, model, opts = {}) {
  const flipped = !!opts.flipped;
  const names = opts.colours || ["white", "black"];
  const colours = names.map(paint);
  clear(svg);
  const left = -W / 2 - 30, boardRight = 16 * (W / 2) + W / 2 + 30;
  const top = -R - 60, bottom = 12 * R + R + 28;
  svg.setAttribute("viewBox", `${left.toFixed(1)} ${top} ${(boardRight + 214 - left).toFixed(1)} ${bottom - top}`);
  const root = el("g", { class: "yohoho", "font-family": "sans-serif" }, svg);

  // the sea; the goal rows are tinted towards the colour of the side that sails to them
  const sea = el("g", { stroke: "#3f6f8e", "stroke-width": 1.5 }, root);
  for (const [x, y] of CELLS) {
    const fill = y === 9 ? "#b9d7ea" : y === 1 ? "#5d8fb0" : "#86b5d3";
    el("polygon", { points: hexPoints(...at(x, y, flipped), R), fill }, sea);
  }

  // coordinates: letters above and below, row numbers left and right
  const coords = el("g", { "font-size": 12, fill: "#44607a" }, root);
  for (let x = 0; x <= 16; x++) {
    const [cx] = at(x, 1, flipped);
    label(coords, cx, -R - 12, LETTERS[x]);
    label(coords, cx, 12 * R + R + 14, LETTERS[x]);
  }
  for (let y = 1; y <= 9; y++) {
    const [, cy] = at(0, y, flipped);
    label(coords, -W / 2 - 14, cy, String(y));
    label(coords, 16 * (W / 2) + W / 2 + 14, cy, String(y));
  }

  // the wind: it blows from the east edge (q) to the west edge (a)
  const [east] = at(16, 1, flipped), [west] = at(0, 1, flipped);
  const wy = -R - 44, dir = Math.sign(west - east), tip = west - dir * 6, tail = east + dir * 6;
  const wind = el("g", { stroke: "#2f5b7a", fill: "#2f5b7a" }, root);
  el("line", { x1: tail, y1: wy, x2: tip - dir * 14, y2: wy, "stroke-width": 4, "stroke-linecap": "round" }, wind);
  el("polygon", { points: `${tip},${wy} ${tip - dir * 18},${wy - 9} ${tip - dir * 18},${wy + 9}` }, wind);
  const mid = (east + west) / 2;
  el("rect", { x: mid - 64, y: wy - 10, width: 128, height: 20, rx: 10, fill: "#fff", stroke: "none" }, wind);
  label(wind, mid, wy, "wind from the east", { stroke: "none", "font-size": 12 });

  // the pieces; the piece that made the first sub-move and an attacked Admiral are ringed
  const pieces = el("g", {}, root);
  for (const [name, piece] of Object.entries(model.cells)) {
    const [cx, cy] = at(...COORD.get(name), flipped);
    pieceShape(pieces, cx, cy, piece, colours);
  }
  for (const s of ["w", "b"]) {
    if (model.admiral[s] && model.attack[s] > 5) {
      const [cx, cy] = at(...COORD.get(model.admiral[s]), flipped);
      el("circle", { cx, cy, r: R * 0.86, fill: "none", stroke: "#e0312b", "stroke-width": 3 }, pieces);
    }
  }
  if (model.moved) {
    const [cx, cy] = at(...COORD.get(model.moved), flipped);
    el("circle", { cx, cy, r: R * 0.84, fill: "none", stroke: "#ffd23f", "stroke-width": 3, "stroke-dasharray": "6 4" }, pieces);
  }

  drawPanel(root, model, colours, names, flipped, boardRight + 10);

  // click targets, on top
  const targets = el("g", {}, root);
  for (const [x, y, name] of CELLS) {
    el("polygon", { points: hexPoints(...at(x, y, flipped), R - 1), class: "sq", "data-square": name, fill: "transparent" }, targets);
  }
}

/** The side panel: per side name, turn mark, goal row, attack on its Admiral and its fleet (lost ships hollow). */
function drawPanel(root, model, colours, names, flipped, x0) {
  const g = el("g", { fill: "#333" }, root);
  const height = 12 * R + 2 * R;
  el("rect", { x: x0, y: -R, width: 200, height, rx: 10, fill: "#eef4f8", stroke: "#c5d6e2" }, g);
  const seat = (s, y0) => {
    const p = s === "w" ? 0 : 1, acting = model.side === s && !model.over;
    const title = String(names[p]);
    if (acting) el("circle", { cx: x0 + 16, cy: y0, r: 6, fill: "#e0312b" }, g);
    label(g, x0 + 28, y0, title.charAt(0).toUpperCase() + title.slice(1), {
      "text-anchor": "start", "font-size": 17, "font-weight": acting ? "bold" : "normal",
    });
    label(g, x0 + 12, y0 + 22, `goal row ${s === "w" ? 9 : 1}`, { "text-anchor": "start", "font-size": 12 });
    const t = model.attack[s];
    label(g, x0 + 12, y0 + 40, `attack on Admiral ${t}`, {
      "text-anchor": "start", "font-size": 12, fill: t > 5 ? "#e0312b" : "#333", "font-weight": t > 5 ? "bold" : "normal",
    });
    // the fleet: what is on the board, then the captured ships hollow
    const count = {};
    for (const piece of Object.values(model.cells)) if (owner(piece) === s) count[kind(piece)] = (count[kind(piece)] || 0) + 1;
    const seen = {};
    [...FLEET].forEach((k, i) => {
      seen[k] = (seen[k] || 0) + 1;
      const cx = x0 + 24 + (i % 4) * 44, cy = y0 + 66 + Math.floor(i / 4) * 36;
      if (seen[k] <= (count[k] || 0)) pieceShape(g, cx, cy, s === "w" ? k : k.toLowerCase(), colours, 0.55);
      else el("circle", { cx, cy, r: R * 0.3, fill: "none", stroke: "#8aa0b0", "stroke-width": 1.2, "stroke-dasharray": "3 3" }, g);
    });
    const lost = [...FLEET].length - Object.values(count).reduce((a, b) => a + b, 0);
    label(g, x0 + 12, y0 + 124, `ships lost ${Math.max(0, lost)}`, { "text-anchor": "start", "font-size": 12 });
  };
  // the side whose home row is at the bottom of the board is drawn at the bottom of the panel
  const topSide = flipped ? "w" : "b";
  seat(topSide, -R + 22);
  seat(other(topSide), -R + height / 2 + 50);
  // the part of the turn
  const turn = model.over ? "game over" : model.phase === 2 ? "sub-move 2 of 2" : model.first ? "single sub-move (first turn)" : "sub-move 1 of 2, or a capture";
  label(g, x0 + 12, -R + height / 2 + 8, turn, { "text-anchor": "start", "font-size": 12, "font-weight": "bold" });
}

/** The end of a game in words (the contract's `ending`). */
function ending(outcome, names) {
  if (outcome.winner !== "p1" && outcome.winner !== "p2") return null;
  const seat = outcome.winner === "p1" ? 0 : 1;
  const [winner, loser] = [names[seat], names[1 - seat]];
  const points = outcome.score === undefined ? "" : outcome.score === "1" ? " (1 point)" : ` (${outcome.score} points)`;
  const endings = {
    "goal-row": `${winner}'s Admiral reached row ${seat === 0 ? 9 : 1}`,
    "admiral-trapped": `${loser}'s Admiral is trapped`,
    "no-legal-action": `${loser} has no legal move`,
  };
  return Object.hasOwn(endings, outcome.reason) ? `${winner} wins: ${endings[outcome.reason]}${points}` : null;
}

/** The seat to act (the contract's `toAct`). */
const toAct = (model) => (model.side === "w" ? 0 : 1);

/** What stands on each occupied cell (the contract's `cells`): a ship or a rock's letter. */
const cells = (model) => ({ ...model.cells });

export default { names: ["yohoho"], parse, draw, steps, hint, squares, ending, toAct, cells };
