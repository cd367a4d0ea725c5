// Analysis of the position shown: an infinite search on a session of its own, its line shown
// as it deepens and its best move marked on the board, until Stop.

import { Session } from "../proto.js";
import { app, ui, $, wsUrl } from "./state.js";
import { markSquares } from "./render.js";

/** The page's own protocol session (not a game's): analysis and replays. */
export async function analysisSession() {
  if (!app.analysisSession || app.analysisSession.closed) {
    const session = new Session(wsUrl("/ws"));
    await session.open();
    app.analysisSession = session;
  }
  return app.analysisSession;
}

async function startAnalysis() {
  if (app.analysing || !app.game) return;
  const position = app.view === null ? app.position : app.positions[app.view];
  ui.analysis.textContent = "starting…";
  let session;
  try {
    session = await analysisSession();
    await session.command(`uginewgame ${app.game.name}`);
    await session.command(`position fen ${position}`);
    const outcome = await session.response("query outcome");
    if (outcome !== "none") {
      ui.analysis.textContent = "The game is over in this position: there is nothing to analyse.";
      return;
    }
  } catch (error) {
    ui.analysis.textContent = `Cannot analyse: ${error.message}`;
    return;
  }
  app.analysing = true;
  $("#analyse").disabled = true;
  $("#stop").disabled = false;
  const model = app.board.parse(position);
  const search = session.go("infinite", (line) => showInfo(line, model));
  try {
    const best = await search;
    const move = best.split(" ")[1];
    ui.analysis.textContent += `\nbest move ${move}`;
  } catch (error) {
    ui.analysis.textContent = `Cannot analyse: ${error.message}`;
  } finally {
    app.analysing = false;
    $("#analyse").disabled = false;
    $("#stop").disabled = true;
  }
}

function showInfo(line, model) {
  const words = line.split(" ");
  const field = (name) => {
    const at = words.indexOf(name);
    return at >= 0 ? words[at + 1] : null;
  };
  if (field("string") !== null && field("depth") === null) return;
  // `pv` runs to `string` or the end of the line; `string` to the end (docs/protocol.md)
  const note = words.indexOf("string");
  const at = words.indexOf("pv");
  const pv = at >= 0 ? words.slice(at + 1, note > at ? note : words.length) : [];
  const score = field("score");
  const value = score ? `${field("score")} ${words[words.indexOf("score") + 2]}` : "?";
  ui.analysis.textContent =
    `depth ${field("depth") ?? "?"}  score ${value}  nodes ${field("nodes") ?? "?"}  nps ${field("nps") ?? "?"}\n` +
    `pv ${pv.join(" ")}` + (note >= 0 ? `\n(${words.slice(note + 1).join(" ")})` : "");
  if (pv.length) {
    try {
      app.best = app.board.squares(pv[0], model);
    } catch {
      app.best = [];
    }
    markSquares();
  }
}

/** Stops the analysis running, if any, and forgets its best move. */
export async function stopAnalysis() {
  if (app.analysisSession && app.analysing) app.analysisSession.stop();
  app.best = [];
}

$("#analyse").addEventListener("click", () => startAnalysis());
$("#stop").addEventListener("click", () => stopAnalysis());
