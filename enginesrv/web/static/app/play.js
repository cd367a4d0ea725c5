// Playing a game: one WebSocket the server referees per game, the game as the server has it,
// the bot asked to move when it is its turn, undo, the hand-over screen between two people at
// one screen, and the clocks' ticking. The person's input is input.js.

import { Session, pairs } from "../proto.js";
import {
  app, ui, $, boardFor, botToAct, colour, hidden, notice, personToAct, setStatus,
} from "./state.js";
import { render, renderClocks } from "./render.js";
import { gameUrl, specFromForm } from "./setup.js";
import { stopAnalysis } from "./analysis.js";

let openings = 0; // games asked for: only the last one asked for starts

/** A new attempt to open a game: a function that tells whether it is still the last one. */
export function opening() {
  const attempt = ++openings;
  return () => attempt === openings;
}

/** Starts the game ``spec`` once the server has opened it: a game it refuses (a position it
 * does not take, a full server) leaves the game in play as it was, and says why. */
export async function newGame(spec) {
  const current = opening();
  setStatus("Starting the game…");
  const session = new Session(gameUrl(spec));
  try {
    await session.open();
    // a game address the server refuses is accepted, then closed with its reason at once:
    // a first answer tells that the game is on
    await session.request("isready");
  } catch (error) {
    if (!current()) return;
    if (app.session && !app.session.closed) notice(`Cannot start the new game: ${error.message}. The game in play goes on.`);
    else gameLost(`Cannot start: ${error.message}`);
    return;
  }
  if (!current()) {
    session.close();
    return;
  }
  const params = new URLSearchParams({ game: spec.game, opponent: spec.opponent, side: spec.side });
  if (spec.tc !== "none") params.set("tc", spec.tc);
  await startGame(session, spec, { link: `/?${params}`, lost: gameLost });
}

/** Plays the game of ``session``, open, as ``spec`` says: the page's address becomes
 * ``link`` (a reload comes back to it), and ``lost`` is told when the socket closes. */
export async function startGame(session, spec, { link, lost }) {
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
  app.notice = null; // what was said of an earlier game's refusal is over
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
    if (app.session === session) lost(`The connection closed: ${reason}`);
  };
  app.session = session;
  history.replaceState(null, "", link);
  await refresh(generation);
}

/** The game's socket is gone (refused, or closed): nothing is in play, the last board stays
 * in view with nothing to click, and the status line says why. */
export function gameLost(message) {
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
  // with a person at another page the game may change between two answers: the answers are
  // put between two of the table's, and dropped when it changed (its notification follows,
  // and the refresh it brings draws the game)
  const bracket = app.spec.opponent === "invite" ? ["table"] : [];
  const asked = [...bracket, ...QUERIES, ...bracket];
  let lines;
  app.busy += 1;
  try {
    lines = await session.request(asked.map((q) => `query ${q}`));
  } catch (error) {
    if (generation !== app.generation) return;
    if (session.closed && !bracket.length) gameLost(error.message); // a table's socket comes back by itself
    else if (!session.closed) setStatus(error.message, true);
    return;
  } finally {
    app.busy -= 1;
  }
  if (generation !== app.generation) return;
  const values = lines.filter((l) => l === "response" || l.startsWith("response ")).map((l) => l.slice(9));
  if (values.length !== asked.length) {
    setStatus(`Unexpected answer from the server: ${lines.join(" | ")}`, true);
    return;
  }
  if (bracket.length && !sameGame(pairs(values.shift()), pairs(values.pop()))) return;
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

/** Whether two of the table's answers tell of the same game at the same decision. */
export function sameGame(before, after) {
  return ["game", "plies", "result"].every((key) => before[key] === after[key]);
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
