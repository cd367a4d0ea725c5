// The person's input: the steps of a move by clicks, Enter and the arrow keys on the board, a
// typed move, and the moves list (a click, or ← and →, shows an earlier ply; Escape comes back).

import { app, ui, hidden, personToAct, setStatus } from "./state.js";
import { play } from "./play.js";
import { render } from "./render.js";
import { candidates, rove, sameStep } from "./marks.js";

/** Adds ``step`` (a square or a choice) to the steps picked; plays the move they complete. */
export function pick(step) {
  if (!personToAct()) return;
  app.notice = null; // the person goes on: the line follows their steps again
  let next = [...app.picked, step];
  let matching = candidates().filter(({ steps }) => sameStep(step, steps[app.picked.length]));
  if (!matching.length && step.square !== undefined && app.picked.length) {
    // a square that starts another move: begin again from it
    app.picked = [];
    next = [step];
    matching = candidates().filter(({ steps }) => sameStep(step, steps[0]));
  }
  if (!matching.length) {
    app.picked = [];
    render();
    return;
  }
  app.picked = next;
  const done = matching.find(({ steps }) => steps.length === next.length);
  if (done) {
    play(done.token);
    return;
  }
  render();
}

function squareClicked(name) {
  if (app.view !== null) return;
  const already = app.picked.length && app.picked[app.picked.length - 1].square === name;
  if (already) {
    app.picked = [];
    render();
    return;
  }
  pick({ square: name });
}

/** Shows the position after ``ply`` decisions (the current one: back to play). */
export function showPly(ply) {
  if (app.mode === "play" && app.spec.opponent === "human" && hidden()) {
    setStatus("Earlier positions are not shown in a game of hidden laws between two people.", true);
    return;
  }
  if (!app.positions[ply]) {
    setStatus(`The position after move ${ply} is not known here.`, true);
    return;
  }
  app.view = ply === app.played.length ? null : ply;
  app.picked = [];
  render();
}

/** A click (or Enter) on the board: a place, or a piece drawn as a choice. */
function boardTarget(target) {
  const choice = target.closest ? target.closest("[data-choice][data-legal=true], [data-chip]") : null;
  if (choice) {
    const name = choice.getAttribute("data-choice") ?? choice.getAttribute("data-chip");
    pick({ choice: name, label: name });
    return true;
  }
  const square = target.closest ? target.closest("[data-square]") : null;
  if (square) squareClicked(square.getAttribute("data-square"));
  return Boolean(square);
}

ui.board.addEventListener("click", (event) => boardTarget(event.target));

const STEP_KEYS = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

ui.board.addEventListener("keydown", (event) => {
  if ((event.key === "Enter" || event.key === " ") && boardTarget(event.target)) event.preventDefault();
  const step = STEP_KEYS[event.key];
  if (step && event.target !== ui.board && event.target.hasAttribute("tabindex")) {
    // the arrows go from one thing to click to the next (not through the plies, here)
    const stops = [...ui.board.querySelectorAll("[tabindex]")].filter((node) => node !== ui.board);
    const next = stops[(stops.indexOf(event.target) + step + stops.length) % stops.length];
    event.preventDefault();
    event.stopPropagation();
    rove(next);
    next.focus();
  }
});

ui.board.addEventListener("focusin", (event) => {
  if (event.target !== ui.board) rove(event.target);
});

ui.moveForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const token = ui.moveInput.value.trim();
  if (!token) return;
  if (!personToAct()) {
    setStatus(app.mode === "play" ? "It is not your move." : "Start a game first.", true);
    return;
  }
  ui.moveInput.value = "";
  play(token);
});

ui.moves.addEventListener("click", (event) => {
  const item = event.target.closest("li[data-ply]");
  if (item) showPly(Number(item.dataset.ply));
});

ui.moves.addEventListener("keydown", (event) => {
  const item = event.target.closest("li[data-ply]");
  if (item && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    showPly(Number(item.dataset.ply));
  }
});

document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement) return;
  if (event.target instanceof HTMLSelectElement) return;
  if (event.key === "Escape") {
    app.picked = [];
    app.view = null;
    render();
  } else if (app.played.length && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
    // as a click on the moves list: any game's earlier plies, looked at (Escape: back)
    const current = app.view === null ? app.played.length : app.view;
    showPly(Math.max(0, Math.min(app.played.length, current + (event.key === "ArrowLeft" ? -1 : 1))));
  }
});
