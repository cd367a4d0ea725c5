// Playing a game: one WebSocket the server referees per game, the person's clicks turned into
// legal moves step by step, the bot asked to move when it is its turn, undo, the hand-over
// screen between two people at one screen, and the clocks' ticking.

import { Session, pairs } from "../proto.js";
import {
  app, ui, $, boardFor, botToAct, colour, hidden, personToAct, setStatus,
} from "./state.js";
import { candidates, render, renderClocks, rove, sameStep } from "./render.js";
import { gameUrl, specFromForm } from "./setup.js";
import { stopAnalysis } from "./analysis.js";

let openings = 0; // games asked for: only the last one asked for starts

/** Starts the game ``spec`` once the server has opened it: a game it refuses (a position it
 * does not take, a full server) leaves the game in play as it was, and says why. */
export async function newGame(spec) {
  const attempt = ++openings;
  setStatus("Starting the game…");
  const session = new Session(gameUrl(spec));
  try {
    await session.open();
    // a game address the server refuses is accepted, then closed with its reason at once:
    // a first answer tells that the game is on
    await session.request("isready");
  } catch (error) {
    if (attempt !== openings) return;
    if (app.session && !app.session.closed) setStatus(`Cannot start the new game: ${error.message}. The game in play goes on.`, true);
    else gameLost(`Cannot start: ${error.message}`);
    return;
  }
  if (attempt !== openings) {
    session.close();
    return;
  }
  const generation = ++app.generation;
  await stopAnalysis();
  if (app.session) app.session.close();
  app.session = null;
  app.spec = spec;
  app.mode = "play";
  app.game = app.info.games.find((g) => g.name === spec.game);
  app.board = await boardFor(spec.game);
  app.played = [];
  app.positions = [];
  app.view = null;
  app.picked = [];
  app.outcome = null;
  app.clock = null;
  app.handoverFor = null;
  app.botFailed = false;
  app.turn = "none";
  app.flipped = spec.opponent !== "human" && spec.side === "p2";
  ui.result.textContent = "";
  ui.analysis.textContent = "";
  ui.fileStatus.textContent = "";
  $("#record-choice-label").hidden = true;
  if (!spec.position) ui.loadText.value = ""; // the box holds this game's start, or nothing
  if (generation !== app.generation) {
    session.close();
    return;
  }
  session.onclose = (reason) => {
    if (app.session === session) gameLost(`The connection closed: ${reason}`);
  };
  app.session = session;
  const params = new URLSearchParams({ game: spec.game, opponent: spec.opponent, side: spec.side });
  if (spec.tc !== "none") params.set("tc", spec.tc);
  history.replaceState(null, "", `/?${params}`);
  await refresh(generation);
}

/** The game's socket is gone (refused, or closed): nothing is in play, the last board stays
 * in view with nothing to click, and the status line says why. */
function gameLost(message) {
  if (app.mode === "play") app.mode = "idle";
  app.session = null;
  app.legal = [];
  app.describe = "";
  app.picked = [];
  app.turn = "none";
  app.clock = null;
  render();
  setStatus(message, true);
}

const QUERIES = ["position", "turn", "moves", "outcome", "clock", "played"];

/** The legal moves of `query moves`' answer: its list, or, for a list too long for one reply
 * (`count N moves <the first ones>`), the whole list gathered page by page (`query moves
 * start K`); none for a decision described rather than listed (`count N <description>`). */
async function movesListed(session, answer) {
  const cut = /^count (\d+) moves(?: (.*))?$/.exec(answer);
  if (!cut) return answer && !answer.startsWith("count ") ? answer.split(" ") : [];
  const total = Number(cut[1]);
  const out = cut[2] ? cut[2].split(" ") : [];
  app.busy += 1;
  try {
    while (out.length < total) {
      const page = /^count \d+ moves(?: (.*))?$/.exec(await session.response(`query moves start ${out.length}`));
      if (!page || !page[1]) throw new Error(`the server's list of ${total} moves stopped at ${out.length}`);
      out.push(...page[1].split(" "));
    }
  } finally {
    app.busy -= 1;
  }
  return out;
}

/** Asks the server for the game as it is now and draws it; asks the bot to move on its turn. */
export async function refresh(generation = app.generation) {
  const session = app.session;
  if (!session) return;
  let lines;
  app.busy += 1;
  try {
    lines = await session.request(QUERIES.map((q) => `query ${q}`));
  } catch (error) {
    if (generation !== app.generation) return;
    if (session.closed) gameLost(error.message);
    else setStatus(error.message, true);
    return;
  } finally {
    app.busy -= 1;
  }
  if (generation !== app.generation) return;
  const values = lines.filter((l) => l === "response" || l.startsWith("response ")).map((l) => l.slice(9));
  if (values.length !== QUERIES.length) {
    setStatus(`Unexpected answer from the server: ${lines.join(" | ")}`, true);
    return;
  }
  const [position, turn, moves, outcome, clock, played] = values;
  let legal;
  try {
    legal = await movesListed(session, moves);
  } catch (error) {
    if (generation === app.generation) setStatus(error.message, true);
    return;
  }
  if (generation !== app.generation) return;
  const previousTurn = app.turn;
  const previousPlies = app.played.length;
  app.position = position;
  app.turn = turn;
  app.outcome = outcome === "none" ? null : pairs(outcome);
  app.played = played ? played.split(" ") : [];
  app.positions[app.played.length] = position;
  app.positions.length = app.played.length + 1;
  app.legal = legal;
  app.describe = legal.length || !moves.startsWith("count ") ? "" : moves;
  app.clock = clock === "none" ? null : { ...pairs(clock), at: performance.now() };
  app.picked = [];
  app.view = null;
  if (app.played.length !== previousPlies && ui.fileStatus.dataset.kind === "export") {
    ui.fileStatus.textContent = ""; // "Exported 12 moves." is of the game before this move
  }
  try {
    app.model = app.board.parse(position);
  } catch (error) {
    setStatus(`Cannot draw the position: ${error.message}`, true);
    return;
  }
  if (needsHandover(previousTurn)) {
    app.handoverFor = turn;
    ui.handoverText.textContent = `Pass the screen to ${colour(turn === "p1" ? 0 : 1)}.`;
    ui.handover.hidden = false;
    $("#handover-ready").focus();
    render();
    return;
  }
  render();
  if (!app.outcome && botToAct() && !app.botFailed) await botMove(generation);
}

function needsHandover(previousTurn) {
  return (
    app.spec.opponent === "human" && hidden() && !app.outcome &&
    app.turn !== "none" && previousTurn !== "none" && previousTurn !== app.turn && app.played.length > 0
  );
}

async function botMove(generation) {
  app.thinking = true;
  render();
  let failure = null;
  try {
    await app.session.go("");
  } catch (error) {
    failure = error;
  } finally {
    app.thinking = false;
  }
  if (generation !== app.generation) return;
  if (failure) {
    // not asked again by itself: Undo, or a new game, tries again
    app.botFailed = true;
    render();
    setStatus(`The bot could not move: ${failure.message}`, true);
    return;
  }
  await refresh(generation);
}

/** Plays the person's move ``token``. */
export async function play(token) {
  if (!personToAct()) return;
  const generation = app.generation;
  app.busy += 1;
  app.picked = [];
  render();
  try {
    await app.session.response(`play ${token}`);
  } catch (error) {
    app.busy -= 1;
    render();
    setStatus(error.message, true);
    return;
  }
  app.busy -= 1;
  if (generation === app.generation) await refresh(generation);
}

async function undo() {
  if (app.mode !== "play" || !app.session || app.thinking || app.busy) return;
  const generation = app.generation;
  app.botFailed = false;
  app.busy += 1;
  try {
    if (app.spec.opponent === "human") {
      await app.session.response("undo 1");
    } else {
      // back to the person's previous decision: the bot's replies and the person's move
      let turn = app.turn;
      let undone = 0;
      do {
        await app.session.response("undo 1");
        undone += 1;
        turn = await app.session.response("query turn");
      } while (turn !== app.spec.side && undone < 64);
    }
  } catch (error) {
    setStatus(error.message, true);
  } finally {
    app.busy -= 1;
  }
  if (generation === app.generation) await refresh(generation);
}

// -- the person's input: steps of a move, typed moves, the moves list -----------------------

/** Adds ``step`` (a square or a choice) to the steps picked; plays the move they complete. */
export function pick(step) {
  if (!personToAct()) return;
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

$("#handover-ready").addEventListener("click", async () => {
  ui.handover.hidden = true;
  app.handoverFor = null;
  render();
});

$("#flip").addEventListener("click", () => {
  app.flipped = !app.flipped;
  render();
});

$("#undo").addEventListener("click", () => undo());

ui.setup.addEventListener("submit", (event) => {
  event.preventDefault();
  newGame(specFromForm());
});

// -- the clocks tick; the server decides when one runs out -------------------------------------

let flagCheck = false;
setInterval(() => {
  if (!app.clock || app.mode !== "play") return;
  renderClocks();
  const running = app.clock.running;
  if (running && running !== "none" && !flagCheck) {
    const left = Number(app.clock[running]) - (performance.now() - app.clock.at);
    if (left <= 0 && !app.thinking) {
      flagCheck = true; // the server decides: ask it once
      refresh().finally(() => {
        flagCheck = false;
      });
    }
  }
}, 200);
