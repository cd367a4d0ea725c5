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
  shown.clear();
  app.roots = null;
  try {
    // several lines where the bot offers them (its handshake's `analysis ... multipv`)
    const count = multipvOffered() ? Number(ui.lines.value) : 1;
    await session.command(`setoption name MultiPV value ${count}`);
    const best = await session.go("infinite", (line) => showInfo(line, model));
    const move = best.split(" ")[1];
    const scores = await session.response("query scores");
    const rows = scoreRows(scores);
    ui.analysis.textContent += `\nbest move ${move}\n${scoresText(rows)}`;
    app.roots = { position, bands: bands(rows, model) };
    markSquares();
  } catch (error) {
    ui.analysis.textContent = `Cannot analyse: ${error.message}`;
  } finally {
    app.analysing = false;
    $("#analyse").disabled = false;
    $("#stop").disabled = true;
  }
}

/** Whether the analysis' bot offers several lines. */
export function multipvOffered() {
  const bot = app.info && app.info.bots.find((b) => b.name === "alphabeta");
  return Boolean(bot && bot.analysis && bot.analysis.includes("multipv"));
}

/** `query scores`' answer (`MOVE cp|win|loss N DEPTH exact|lower|upper ...`), best first. */
function scoreRows(answer) {
  const words = answer.split(" ").filter(Boolean);
  const rows = [];
  for (let i = 0; i + 5 <= words.length; i += 5) {
    const [move, kind, value, depth, bound] = words.slice(i, i + 5);
    const score = kind === "cp" ? Number(value) : kind === "win" ? 1e9 - Number(value) : -1e9 + Number(value);
    rows.push({ move, text: `${move} ${kind} ${value}${bound === "exact" ? "" : ` (${bound})`} d${depth}`, score });
  }
  return rows.sort((a, b) => b.score - a.score);
}

function scoresText(rows) {
  const listed = rows.slice(0, 12).map((row) => row.text);
  return rows.length ? `root moves: ${listed.join(", ")}${rows.length > 12 ? `, … ${rows.length - 12} more` : ""}` : "";
}

/** Each root move's place (the last its token names: where it goes) by its rank among the
 * moves searched: the best, then the upper, middle and lower thirds of the rest. A place two
 * moves end on takes the better. */
function bands(rows, model) {
  const out = new Map();
  rows.forEach((row, i) => {
    let places;
    try {
      places = app.board.squares(row.move, model);
    } catch {
      places = [];
    }
    const place = places[places.length - 1];
    if (!place || out.has(place)) return;
    const rest = (i - 1) / Math.max(1, rows.length - 1);
    out.set(place, { band: i === 0 ? "best" : rest < 1 / 3 ? "good" : rest < 2 / 3 ? "fair" : "poor", text: row.text });
  });
  return out;
}

const shown = new Map(); // the line index -> its text, the deepest seen

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
  const index = Number(field("multipv") || 1);
  if (index === 1) {
    // a new iteration's best line: the others of the last one go
    shown.clear();
    app.lines = [];
  }
  const head = index === 1
    ? `depth ${field("depth") ?? "?"}  score ${value}  nodes ${field("nodes") ?? "?"}  nps ${field("nps") ?? "?"}\n`
    : "";
  shown.set(index, `${head}${index > 1 ? `line ${index}: score ${value} ` : ""}pv ${pv.join(" ")}`);
  const remark = note >= 0 ? `\n(${words.slice(note + 1).join(" ")})` : "";
  ui.analysis.textContent = [...shown.keys()].sort((a, b) => a - b).map((i) => shown.get(i)).join("\n") + remark;
  if (pv.length) {
    try {
      const squares = app.board.squares(pv[0], model);
      if (index === 1) app.best = squares;
      app.lines[index - 1] = squares;
    } catch {
      if (index === 1) app.best = [];
    }
    markSquares();
  }
}

/** Stops the analysis running, if any, and forgets its best move. */
export async function stopAnalysis() {
  if (app.analysisSession && app.analysing) app.analysisSession.stop();
  app.best = [];
  app.lines = [];
  app.roots = null;
}

$("#analyse").addEventListener("click", () => startAnalysis());
$("#stop").addEventListener("click", () => stopAnalysis());
