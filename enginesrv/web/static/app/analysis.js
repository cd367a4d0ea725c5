// Analysis of the position shown: an infinite search on a session of its own, its line shown
// as it deepens and its best move marked on the board, until Stop.

import { Session } from "../proto.js";
import { app, ui, $, atTable, wsUrl } from "./state.js";
import { BAND_SIGNS, markSquares } from "./marks.js";

/** The page's own protocol session (not a game's): analysis and replays. */
async function analysisSession() {
  if (!app.analysisSession || app.analysisSession.closed) {
    const session = new Session(wsUrl("/ws"));
    await session.open();
    app.analysisSession = session;
  }
  return app.analysisSession;
}

let turn = Promise.resolve(); // the last user of the session, which the next one waits for

/** Runs ``work(session)`` on the page's own session once every earlier user is done with
 * it: an analysis and a replay each set the session's game and position, so they take turns
 * (an analysis holds it until it is stopped; a replay stops it first). */
export function withSession(work) {
  const mine = turn.then(async () => work(await analysisSession()));
  turn = mine.catch(() => {});
  return mine;
}

async function startAnalysis() {
  if (app.analysing || !app.game || atTable()) return;
  // one snapshot of what is shown: the board may change while the session is busy
  const [position, board, name] = [app.view === null ? app.position : app.positions[app.view], app.board, app.game.name];
  app.analysing = true;
  app.analysed = position;
  $("#analyse").disabled = true;
  ui.analysis.textContent = "starting…";
  const run = ++runs;
  try {
    await withSession((session) => analyse(session, position, board, name, run));
  } catch (error) {
    ui.analysis.textContent = `Cannot analyse: ${error.message}`;
  } finally {
    app.analysing = false;
    $("#analyse").disabled = !app.model;
    $("#stop").disabled = true;
  }
}

let runs = 0; // analyses started; a stop counts one more, so that a waiting one never starts

async function analyse(session, position, board, name, run) {
  if (run !== runs) {
    ui.analysis.textContent = ""; // stopped while it waited for the session
    return;
  }
  await session.command(`uginewgame ${name}`);
  await session.command(`position fen ${position}`);
  const outcome = await session.response("query outcome");
  if (outcome !== "none") {
    ui.analysis.textContent = "The game is over in this position: there is nothing to analyse.";
    return;
  }
  $("#stop").disabled = false;
  const model = board.parse(position);
  shown.clear();
  app.roots = null;
  // several lines where the bot offers them (its handshake's `analysis ... multipv`)
  const count = multipvOffered() ? Number(ui.lines.value) : 1;
  await session.command(`setoption name MultiPV value ${count}`);
  const moves = await session.response("query moves");
  if (moves.startsWith("count ") && !/^count \d+ moves( |$)/.test(moves)) {
    ui.analysis.textContent = "The bot is choosing: a decision too large to list (such as writing laws) shows no lines. Stop gives its choice.";
  }
  if (run !== runs) return; // stopped meanwhile: no search to start (nothing awaits below)
  const current = () => app.analysed === position && app.board === board; // still shown
  const best = await session.go("infinite", (line) => current() && showInfo(line, model, board));
  const move = best.split(" ")[1];
  const scores = await session.response("query scores");
  if (!current()) return;
  const rows = scoreRows(scores);
  ui.analysis.textContent += `\nbest move ${move}\n${scoresText(rows)}`;
  app.roots = { position, bands: bands(rows, model, board) };
  markSquares();
}

/** The analysis bot's scale in the game shown (its handshake's `expectation` line), or
 * undefined when it gives none. */
export function expectationScale() {
  const bot = app.info && app.info.bots.find((b) => b.name === "alphabeta");
  return bot && bot.expectations && app.game ? bot.expectations[app.game.name] : undefined;
}

/** The winning chance (0 to 1) a score (`cp`, `win` or `loss` and its value) gives the side
 * it is from: 1 / (1 + exp(-v / scale)) for an evaluation, as `enginesrv analyse` reads it. */
export function winChance(kind, value, scale) {
  if (kind === "win") return 1;
  if (kind === "loss") return 0;
  return 1 / (1 + Math.exp(-value / scale));
}

/** A score as the protocol gives it, with the side to act's winning chance beside an
 * evaluation. */
function scoreText(kind, value) {
  const scale = expectationScale();
  if (kind === "win" || kind === "loss") return `${kind} in ${value} ${value === 1 ? "ply" : "plies"} (proven)`;
  if (kind !== "cp" || !scale) return `${kind} ${value}`;
  return `cp ${value} (${Math.round(100 * winChance(kind, value, scale))}% to win)`;
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
  if (!rows.length) return "";
  const signs = `${BAND_SIGNS.best} the best, ${BAND_SIGNS.good} the upper third of the rest, ${BAND_SIGNS.fair} the middle, ${BAND_SIGNS.poor} the lower`;
  return `root moves: ${listed.join(", ")}${rows.length > 12 ? `, … ${rows.length - 12} more` : ""}\n(on the board: ${signs})`;
}

/** Each root move's place (the last its token names: where it goes) by its rank among the
 * moves searched: the best, then the upper, middle and lower thirds of the rest. A place two
 * moves end on takes the better. */
function bands(rows, model, board) {
  const out = new Map();
  rows.forEach((row, i) => {
    let places;
    try {
      places = board.squares(row.move, model);
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

function showInfo(line, model, board) {
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
  const value = score ? scoreText(score, Number(words[words.indexOf("score") + 2])) : "?";
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
      const squares = board.squares(pv[0], model);
      if (index === 1) app.best = squares;
      app.lines[index - 1] = squares;
    } catch {
      if (index === 1) app.best = [];
    }
    markSquares();
  }
}

/** Ends the analysis shown once the position shown is another: its search stops, its lines
 * and marks go. */
export function forgetAnalysisOf(shownPosition) {
  if (app.analysed === null || app.analysed === shownPosition) return;
  app.analysed = null;
  ui.analysis.textContent = "";
  if (app.analysing) stopAnalysis();
  app.best = [];
  app.lines = [];
  app.roots = null;
}

/** Stops the analysis running, if any, and forgets its best move. */
export async function stopAnalysis() {
  runs += 1;
  if (app.analysisSession && app.analysisSession.search) app.analysisSession.stop();
  if (app.analysisSession && app.reviewing && !app.analysisSession.closed) {
    app.reviewing = false; // a game's analysis (review.js): its positions are cancelled
    app.analysisSession.send("cancel");
  }
  app.best = [];
  app.lines = [];
  app.roots = null;
}

$("#analyse").addEventListener("click", () => startAnalysis());
$("#stop").addEventListener("click", () => stopAnalysis());
