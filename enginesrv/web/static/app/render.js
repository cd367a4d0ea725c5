// Drawing the game shown: the board and its marks, the choices of the next step, the moves,
// the status line, the result and the clocks. Drawing changes nothing in the state.

import {
  app, ui, $, atTable, colour, personSeat, botToAct, friendToAct, panels, personToAct, plain, setStatus,
} from "./state.js";
import { play } from "./play.js";
import { pick } from "./input.js";
import { markSquares, moverOf, nextSteps, rove } from "./marks.js";
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
  if (friendToAct()) return "waiting";
  if (app.thinking || botToAct()) return "bot";
  if (app.handoverFor) return "handover";
  return "person";
}

export function renderStatus() {
  document.body.dataset.state = pageState();
  if (app.notice && performance.now() >= app.notice.until) app.notice = null;
  if (app.mode === "watch") {
    const game = watch.games.get(watch.following);
    if (game) {
      const ply = app.view === null ? game.moves.length : app.view;
      const live = game.result ? "replay" : "live";
      setStatus(`Game ${game.id} (${live}): ${game.p1} vs ${game.p2}, move ${ply} of ${game.moves.length}`);
    }
    ui.result.textContent = app.outcome ? plain(resultText(app.outcome)) : "";
    return;
  }
  if (app.notice) {
    setStatus(app.notice.text, true); // kept a while over what the game would say
  } else if (app.mode === "replay") {
    const ply = app.view === null ? app.played.length : app.view;
    setStatus(`Replay: move ${ply} of ${app.played.length} (← and → step through)`);
  } else if (app.outcome) {
    setStatus("Game over");
  } else if (app.handoverFor) {
    setStatus(`${colour(app.handoverFor === "p1" ? 0 : 1)} to play: pass the screen, and press the button when it is there`);
  } else if (app.busy) {
    // the line stays as it was until the answer
  } else if (friendToAct()) {
    setStatus(`${colour(app.turn === "p1" ? 0 : 1)} (the other player) is to play…`);
  } else if (app.thinking || botToAct()) {
    setStatus(`The bot (${colour(app.turn === "p1" ? 0 : 1)}) is thinking…`);
  } else if (app.turn !== "none" && app.board) {
    const who = app.spec.opponent === "human" ? colour(personSeat()) : `You (${colour(personSeat())})`;
    setStatus(`${who}: ${stepText() || app.board.hint(app.model)}`);
  }
  ui.result.textContent = app.outcome ? plain(resultText(app.outcome)) : "";
  $("#undo").disabled = app.mode !== "play" || app.thinking || app.played.length === 0;
  $("#flip").disabled = !app.model;
  $("#review").disabled = app.reviewing || !app.played.length || !(app.mode === "replay" || app.outcome);
  if (!app.analysing) $("#analyse").disabled = !app.model || atTable(); // no engine helps a player
  for (const draw of panels) draw();
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
  agreement: "Draw by agreement",
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
  const other = app.spec.opponent === "invite" ? "the other player" : app.spec.opponent;
  return side === app.spec.side ? `${colour(seat)}: you` : `${colour(seat)}: ${other}`;
}
