// The board's marks: the places and values to click next (the steps picked so far filter the
// legal moves), the places picked, every place the last turn touched, the analysis' best move,
// lines and root moves' scores, the values offered beside a picked place, and the keyboard's one
// tab stop on the board. Marking changes nothing in the state.

import { app, ui, personToAct, setFlag } from "./state.js";
import { SVG_NS } from "../games/board.js";
import { shownModel } from "./render.js";

/** The legal moves that begin with the steps picked so far, each with its steps. */
export function candidates() {
  if (!personToAct() || app.view !== null) return [];
  const out = [];
  for (const token of app.legal) {
    const steps = app.board.steps(token, app.model);
    if (app.picked.every((step, i) => sameStep(step, steps[i]))) out.push({ token, steps });
  }
  return out;
}

export function sameStep(a, b) {
  if (!a || !b) return false;
  return a.square !== undefined ? a.square === b.square : a.choice === b.choice;
}

export function nextSteps() {
  const squares = new Set();
  const choices = new Map();
  for (const { steps } of candidates()) {
    const step = steps[app.picked.length];
    if (!step) continue;
    if (step.square !== undefined) squares.add(step.square);
    else if (!choices.has(step.choice)) choices.set(step.choice, step.label || step.choice);
  }
  return { squares, choices };
}

/** The choices of the next step as small buttons beside the place just picked (a Yoxii
 * piece's value next to its square), when they are few and short; the buttons under the board
 * and the pieces drawn as choices stay. Each is a `[data-chip]` button of its choice. */
function drawChips(choices) {
  const last = app.picked[app.picked.length - 1];
  if (!last || last.square === undefined || !choices.size || choices.size > 6) return;
  if ([...choices.values()].some((label) => String(label).length > 3)) return;
  const place = ui.board.querySelector(`[data-square="${CSS.escape(last.square)}"]`);
  if (!place) return;
  const box = place.getBBox();
  const view = ui.board.viewBox.baseVal;
  const size = Math.max(22, Math.min(34, box.height * 0.6));
  const width = choices.size * (size + 4) - 4;
  const x0 = Math.max(view.x, Math.min(view.x + view.width - width, box.x + box.width / 2 - width / 2));
  const above = box.y - size - 4;
  const y0 = above >= view.y ? above : box.y + box.height + 4; // below a place at the top
  const group = document.createElementNS(SVG_NS, "g");
  group.setAttribute("class", "chips");
  [...choices.entries()].forEach(([choice, label], k) => {
    const chip = document.createElementNS(SVG_NS, "g");
    chip.setAttribute("class", "chip");
    chip.setAttribute("data-chip", choice);
    chip.setAttribute("data-legal", "true");
    chip.setAttribute("tabindex", "0");
    chip.setAttribute("role", "button");
    chip.setAttribute("aria-label", `${last.square}: ${label}`);
    const x = x0 + k * (size + 4);
    const rect = document.createElementNS(SVG_NS, "rect");
    Object.entries({ x, y: y0, width: size, height: size, rx: 5 }).forEach(([key, v]) => rect.setAttribute(key, String(v)));
    const text = document.createElementNS(SVG_NS, "text");
    Object.entries({ x: x + size / 2, y: y0 + size / 2, "text-anchor": "middle", "dominant-baseline": "central" })
      .forEach(([key, v]) => text.setAttribute(key, String(v)));
    text.textContent = String(label);
    chip.append(rect, text);
    group.append(chip);
  });
  ui.board.append(group);
}

/** The sign of each band of root moves on its place (analysis.js `bands`). */
export const BAND_SIGNS = { best: "★", good: "+", fair: "=", poor: "−" };

/** A small label on a place's top corner (``end``: the right one), removed at the next marking. */
function placeLabel(node, text, anchor) {
  const box = node.getBBox();
  const label = document.createElementNS(SVG_NS, "text");
  label.setAttribute("class", "line-label");
  label.setAttribute("x", String(anchor === "end" ? box.x + box.width - 4 : box.x + 4));
  label.setAttribute("y", String(box.y + 12));
  label.setAttribute("text-anchor", anchor);
  label.textContent = text;
  node.after(label);
  return label;
}

export function markSquares() {
  const { squares } = nextSteps();
  const picked = new Set(app.picked.filter((s) => s.square !== undefined).map((s) => s.square));
  const last = lastTurnSquares(app.view === null ? app.played.length : app.view);
  const shownPosition = app.view === null ? app.position : app.positions[app.view];
  const analysedHere = app.analysed !== null && app.analysed === shownPosition;
  const best = new Set(analysedHere ? app.best : []);
  const roots = app.roots && app.roots.position === shownPosition ? app.roots.bands : null;
  const lines = new Map(); // place -> the number of the first analysis line whose move touches it
  if (analysedHere && app.lines.length > 1) {
    app.lines.forEach((places, i) => {
      for (const place of places || []) if (!lines.has(place)) lines.set(place, i + 1);
    });
  }
  for (const label of ui.board.querySelectorAll(".line-label, .chips")) label.remove();
  // pieces the board draws as choices (a value in stock): legal when that choice is next
  const { choices } = nextSteps();
  for (const node of ui.board.querySelectorAll("[data-choice]")) {
    const offered = choices.has(node.getAttribute("data-choice"));
    setFlag(node, "data-legal", offered);
    if (offered) {
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "button");
    } else {
      node.removeAttribute("tabindex");
      node.removeAttribute("role");
    }
  }
  for (const node of ui.board.querySelectorAll("[data-place]")) setFlag(node, "data-last", last.has(node.getAttribute("data-place")));
  for (const node of ui.board.querySelectorAll("[data-square]")) {
    const name = node.getAttribute("data-square");
    const legal = squares.has(name);
    setFlag(node, "data-legal", legal);
    setFlag(node, "data-picked", picked.has(name));
    setFlag(node, "data-last", last.has(name));
    setFlag(node, "data-best", best.has(name));
    const root = roots && roots.get(name);
    if (root) {
      // the band's sign on the place too, so that a score is told by more than its colour
      node.setAttribute("data-score", root.band);
      placeLabel(node, BAND_SIGNS[root.band], "start").dataset.sign = name;
    } else {
      node.removeAttribute("data-score");
    }
    if (lines.has(name)) {
      // the line's number on the place, so that a line is told by more than its colour
      node.setAttribute("data-line", String(lines.get(name)));
      placeLabel(node, String(lines.get(name)), "end");
    } else {
      node.removeAttribute("data-line");
    }
    if (legal || picked.has(name)) {
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "button");
      node.setAttribute("aria-label", name);
    } else {
      node.removeAttribute("tabindex");
      node.removeAttribute("role");
    }
  }
  drawChips(choices);
  rove();
}

/** The board's things to click are one tab stop: the one with the focus, else the first (a
 * value beside the place picked, else a legal place); the arrow keys go through the rest. */
export function rove(current = null) {
  const stops = [...ui.board.querySelectorAll("[tabindex]")].filter((node) => node !== ui.board);
  if (!stops.length) return;
  const chosen = (current && stops.includes(current) && current)
    || stops.find((node) => node === document.activeElement)
    || ui.board.querySelector("[data-chip]") || ui.board.querySelector("[data-legal=true]") || stops[0];
  for (const node of stops) node.setAttribute("tabindex", node === chosen ? "0" : "-1");
}

// -- turns: the decisions one seat made in a row -----------------------------------------------

const parsed = new Map(); // position string -> model, for the positions of the game shown

function modelOf(ply) {
  const position = app.positions[ply];
  if (!position) return null;
  if (!parsed.has(position)) {
    if (parsed.size > 4096) parsed.clear();
    try {
      parsed.set(position, app.board.parse(position));
    } catch {
      parsed.set(position, null);
    }
  }
  return parsed.get(position);
}

/** The seat that made ply ``ply`` (1-based): the one to act in the position before it. */
export function moverOf(ply) {
  const before = modelOf(ply - 1);
  return before && app.board.toAct ? app.board.toAct(before) : null;
}

/** The first ply of the turn that ply ``ply`` belongs to. */
function turnStart(ply) {
  const seat = moverOf(ply);
  let first = ply;
  while (seat !== null && first > 1 && moverOf(first - 1) === seat) first -= 1;
  return first;
}

/** Every place a decision of the turn ending at ply ``ply`` touched: the places each of its
 * tokens names, and every place whose contents differ between the positions before and
 * after the turn (pieces moved, placed, flipped or removed). A turn still going on (its
 * player is to act again) keeps the turn before it marked too: the opponent's last turn stays
 * in view until the player's own is over. */
function lastTurnSquares(ply) {
  const out = new Set();
  if (ply < 1) return out;
  let first = turnStart(ply);
  const reached = modelOf(ply);
  if (first > 1 && reached && app.board.toAct(reached) === moverOf(ply)) first = turnStart(first - 1);
  for (let i = first; i <= ply; i += 1) {
    try {
      for (const square of app.board.squares(app.played[i - 1], modelOf(i - 1) || shownModel())) out.add(square);
    } catch {
      // a token the module cannot read marks nothing
    }
  }
  const before = modelOf(first - 1);
  const after = modelOf(ply);
  if (before && after && app.board.cells) {
    const [was, now] = [app.board.cells(before), app.board.cells(after)];
    for (const square of new Set([...Object.keys(was), ...Object.keys(now)])) {
      if (was[square] !== now[square]) out.add(square);
    }
  }
  return out;
}
