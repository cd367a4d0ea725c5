// Drawing the game shown: the board and its marks, the choices of the next step, the moves,
// the status line, the result and the clocks. Drawing changes nothing in the state.

import { app, ui, $, colour, personSeat, botToAct, personToAct, setFlag, setStatus } from "./state.js";
import { pick, play } from "./play.js";
import { SVG_NS } from "../games/board.js";
import { drawGraph } from "./review.js";
import { forgetAnalysisOf } from "./analysis.js";
import { watch } from "./watch.js";

/** The model of the position shown: the current one, or the ply looked at. */
export function shownModel() {
  if (app.view === null) return app.model;
  try {
    return app.board.parse(app.positions[app.view]);
  } catch {
    return app.model;
  }
}

export function render(updateStatus = true) {
  if (!app.board || !app.model) return;
  forgetAnalysisOf(app.view === null ? app.position : app.positions[app.view]);
  const model = shownModel();
  const focused = focusKey();
  app.board.draw(ui.board, model, { flipped: app.flipped, colours: app.game.colours });
  markSquares();
  renderChoices();
  renderMoves();
  renderClocks();
  if (updateStatus) renderStatus();
  if (focused) restoreFocus(focused);
  if (app.review && app.review.played !== app.played) {
    app.review = null; // another game, or another move: its graph and summary go
    $("#review-status").textContent = "";
    drawGraph();
  }
}

/** What has the keyboard's focus on the board or among the choices, to find it again once
 * they are drawn anew (a redraw replaces their elements): a place or a choice, or null. */
function focusKey() {
  const active = document.activeElement;
  if (!active || !(ui.board.contains(active) || ui.choices.contains(active))) return null;
  if (active === ui.board) return "[data-legal=true]"; // kept there while nothing was to click
  const square = active.getAttribute("data-square");
  if (square) return `[data-square="${CSS.escape(square)}"]`;
  const choice = active.getAttribute("data-choice");
  if (choice) return `[data-choice="${CSS.escape(choice)}"]`;
  const chip = active.getAttribute("data-chip");
  return chip ? `[data-chip="${CSS.escape(chip)}"]` : null;
}

/** Gives the focus back to the element ``selector`` names if it is still a thing to click,
 * else to the first thing to click next (a place just picked hands it on), else (the opponent's turn) to the board itself, so that a
 * keyboard player goes on from where they were once it is their turn again. */
function restoreFocus(selector) {
  const again = ui.board.querySelector(selector) || ui.choices.querySelector(selector);
  const still = again && again.hasAttribute("tabindex") && (again.getAttribute("data-legal") === "true" || ui.choices.contains(again))
    && !(again.hasAttribute("data-square") && ui.board.querySelector("[data-chip]")); // on to the values
  const target = still ? again
    : ui.board.querySelector("[data-chip]") || ui.board.querySelector("[data-legal=true]")
      || ui.choices.querySelector("button") || ui.board;
  target.focus({ preventScroll: true });
  rove(target);
}

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

function nextSteps() {
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
function moverOf(ply) {
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
 * after the turn (pieces moved, placed, flipped or removed). */
function lastTurnSquares(ply) {
  const out = new Set();
  if (ply < 1) return out;
  const first = turnStart(ply);
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

/** The status line's account of the steps picked so far and of the next one ("" before any). */
function stepText() {
  if (!app.picked.length || app.view !== null) return "";
  const own = app.board.stepHint ? app.board.stepHint(app.model, app.picked) : null;
  if (own) return `${own} (Escape cancels)`;
  const done = app.picked.map((step) => step.square ?? step.label ?? step.choice).join(", ");
  const { squares, choices } = nextSteps();
  const next = squares.size && choices.size ? "click a marked place or choose below the board"
    : squares.size ? "click a marked place" : "choose below the board";
  return `${done} picked: ${next} (Escape cancels)`;
}

function renderChoices() {
  ui.choices.replaceChildren();
  ui.compose.replaceChildren();
  if (app.view !== null || !personToAct()) return;
  if (app.describe && app.board.compose) {
    app.board.compose(app.model, ui.compose, app.describe, (token) => play(token));
    return;
  }
  const { choices } = nextSteps();
  for (const [choice, label] of choices) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.choice = choice;
    button.textContent = label;
    button.addEventListener("click", () => pick({ choice, label }));
    ui.choices.append(button);
  }
  if (app.picked.length) {
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.dataset.testid = "cancel-pick";
    cancel.textContent = "Cancel";
    cancel.addEventListener("click", () => {
      app.picked = [];
      render();
    });
    ui.choices.append(cancel);
  }
}

function renderMoves() {
  // one item a decision; the first of each turn starts a group with the turn's number
  let turn = 0;
  let previous = null;
  const items = app.played.map((token, i) => {
    const item = document.createElement("li");
    item.textContent = token;
    item.dataset.ply = String(i + 1);
    // one tab stop, the ply shown (the last when none is); ← and → step through the rest
    item.tabIndex = (app.view === null ? app.played.length : app.view) === i + 1 ? 0 : -1;
    const seat = moverOf(i + 1);
    if (i === 0 || seat === null || seat !== previous) {
      turn += 1;
      item.dataset.turn = String(turn);
      item.classList.add("turn-start");
    }
    previous = seat;
    if (seat !== null) item.title = `${colour(seat)}, turn ${turn}`;
    if (app.view === i + 1) item.setAttribute("aria-current", "true");
    const mark = app.review && app.review.played === app.played ? app.review.marks[i] : "";
    if (mark) item.dataset.mark = mark;
    return item;
  });
  const focused = ui.moves.contains(document.activeElement);
  ui.moves.replaceChildren(...items);
  const current = items.find((item) => item.tabIndex === 0);
  if (focused && current) current.focus({ preventScroll: true });
  if (app.view === null && items.length) items[items.length - 1].scrollIntoView({ block: "nearest" });
  ui.viewing.hidden = app.view === null;
  if (app.view !== null) {
    ui.viewing.textContent = `Showing the position after move ${app.view}; press Escape or click the last move to come back.`;
  }
}

/** The page's state for automated tests and other tools (docs/web.md): body[data-state]. */
function pageState() {
  if (app.mode === "watch") return "watching";
  if (app.mode === "replay") return "replay";
  if (app.mode !== "play") return "idle";
  if (app.outcome) return "over";
  if (app.busy) return "busy";
  if (app.thinking || botToAct()) return "bot";
  if (app.handoverFor) return "handover";
  return "person";
}

export function renderStatus() {
  document.body.dataset.state = pageState();
  if (app.mode === "watch") {
    const game = watch.games.get(watch.following);
    if (game) {
      const ply = app.view === null ? game.moves.length : app.view;
      const live = game.result ? "replay" : "live";
      setStatus(`Game ${game.id} (${live}): ${game.p1} vs ${game.p2}, move ${ply} of ${game.moves.length}`);
    }
    ui.result.textContent = app.outcome ? resultText(app.outcome) : "";
    return;
  }
  if (app.mode === "replay") {
    const ply = app.view === null ? app.played.length : app.view;
    setStatus(`Replay: move ${ply} of ${app.played.length} (← and → step through)`);
  } else if (app.outcome) {
    setStatus("Game over");
  } else if (app.handoverFor) {
    setStatus(`${colour(app.handoverFor === "p1" ? 0 : 1)} to play: pass the screen, and press the button when it is there`);
  } else if (app.busy) {
    // the line stays as it was until the answer
  } else if (app.thinking || botToAct()) {
    setStatus(`The bot (${colour(app.turn === "p1" ? 0 : 1)}) is thinking…`);
  } else if (app.turn !== "none" && app.board) {
    const who = app.spec.opponent === "human" ? colour(personSeat()) : `You (${colour(personSeat())})`;
    setStatus(`${who}: ${stepText() || app.board.hint(app.model)}`);
  }
  ui.result.textContent = app.outcome ? resultText(app.outcome) : "";
  $("#undo").disabled = app.mode !== "play" || app.thinking || app.played.length === 0;
  $("#flip").disabled = !app.model;
  $("#review").disabled = app.reviewing || !app.played.length || !(app.mode === "replay" || app.outcome);
  if (!app.analysing) $("#analyse").disabled = !app.model;
}

/** Endings that are not the rules' (the arbiter's and the server's, docs/tournaments.md):
 * each from the winner's and the loser's names. */
const ENDINGS = {
  "time-forfeit": (w) => `${w} wins on time`,
  time: (w) => `${w} wins on time`,
  "illegal-move": (w, l) => `${w} wins: ${l} played an illegal move`,
  crash: (w, l) => `${w} wins: ${l}'s engine stopped`,
  disconnect: (w, l) => `${w} wins: ${l} disconnected`,
  stall: (w, l) => `${w} wins: ${l} stopped answering`,
  resign: (w, l) => `${w} wins: ${l} resigned`,
};
const DRAWS = {
  "max-plies": "Draw: the move limit was reached",
  repetition: "Draw by repetition",
  "score-adjudication": "Draw by adjudication: both sides saw an even game",
};

/** The result in words ("Black wins: the Admiral reached row 1 (1 point)"). */
export function resultText(outcome) {
  const names = [colour(0), colour(1)];
  const words = app.board && app.board.ending ? app.board.ending(outcome, names) : null;
  if (words) return `${words}.`;
  const own = (table) => (Object.hasOwn(table, outcome.reason) ? table[outcome.reason] : null);
  if (outcome.winner === "draw") return `${own(DRAWS) || `Draw (${outcome.reason})`}.`;
  const seat = outcome.winner === "p1" ? 0 : 1;
  const said = own(ENDINGS);
  return `${said ? said(names[seat], names[1 - seat]) : `${names[seat]} wins (${outcome.reason})`}.`;
}

function clockText(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const minutes = Math.floor(total / 60);
  return `${minutes}:${String(total % 60).padStart(2, "0")}`;
}

export function renderClocks() {
  const bottomSeat = app.flipped ? 1 : 0;
  for (const [node, seat] of [[ui.clockBottom, bottomSeat], [ui.clockTop, 1 - bottomSeat]]) {
    node.replaceChildren();
    node.dataset.testid = `clock-p${seat + 1}`;
    if (!app.game) continue;
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = playerName(seat);
    const time = document.createElement("span");
    node.append(who, time);
    const clock = app.clock;
    node.classList.toggle("running", Boolean(clock && clock.running === `p${seat + 1}`));
    if (clock) {
      let ms = Number(clock[`p${seat + 1}`]);
      if (clock.running === `p${seat + 1}`) ms -= performance.now() - clock.at;
      time.textContent = clockText(ms);
    }
  }
}

export function playerName(seat) {
  const side = `p${seat + 1}`;
  if (app.mode === "watch") {
    const game = watch.games.get(watch.following);
    return game ? `${colour(seat)}: ${seat === 0 ? game.p1 : game.p2}` : colour(seat);
  }
  if (!app.spec || app.mode === "replay") return colour(seat);
  if (app.spec.opponent === "human") return colour(seat);
  return side === app.spec.side ? `${colour(seat)}: you` : `${colour(seat)}: ${app.spec.opponent}`;
}
