// Positions and records: play on from a pasted position, export the game as a record, and
// replay a record (the enginesrv record format, docs/tournaments.md), its positions computed
// by the server.

import { ProtocolError, pairs } from "../proto.js";
import { app, ui, $, boardFor } from "./state.js";
import { playerName, render } from "./render.js";
import { newGame } from "./play.js";
import { showGame, specFromForm } from "./setup.js";
import { analysisSession, stopAnalysis } from "./analysis.js";

$("#load-position").addEventListener("click", () => {
  const text = ui.loadText.value.trim();
  if (!text) {
    ui.fileStatus.textContent = "Paste a position string first.";
    return;
  }
  ui.fileStatus.textContent = "";
  newGame(specFromForm(text));
});

$("#export-record").addEventListener("click", () => {
  if (!app.game) return;
  const lines = [`# Game: ${app.game.name}`];
  if (app.positions[0] && app.positions[0] !== app.game.start) lines.push(`# Start: ${app.positions[0]}`);
  if (app.spec && app.mode === "play") {
    const names = [0, 1].map((seat) => playerName(seat).replace(/^[^:]*: /, ""));
    lines.push(`# P1: ${names[0]}`, `# P2: ${names[1]}`);
    if (app.spec.tc !== "none") lines.push(`# TimeControl: ${app.spec.tc}`);
  }
  if (app.outcome) {
    lines.push(`# Result: ${app.outcome.winner === "draw" ? "draw" : `${app.outcome.winner} wins`}`);
    lines.push(`# Reason: ${app.outcome.reason}`);
  }
  lines.push(...app.played);
  const text = `${lines.join("\n")}\n`;
  ui.loadText.value = text;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  link.download = `${app.game.name.replace("+", "-")}.txt`;
  link.click();
  URL.revokeObjectURL(link.href);
  ui.fileStatus.textContent = `Exported ${app.played.length} moves.`;
});

$("#load-record").addEventListener("click", () => loadRecords(ui.loadText.value));

const recordChoice = $("#record-choice");
let records = [];

recordChoice.addEventListener("change", () => replay(records[Number(recordChoice.value)]));

/** The records of ``text``: one, or several one after another as `enginesrv export` writes
 * them, each beginning with its `# Game:` header. A move line's comment (`  ; ms=...`) is
 * left out. */
export function parseRecords(text) {
  const out = [];
  let current = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const match = line.startsWith("#") ? /^#\s*([^:]*?)\s*:(.*)$/.exec(line) : null;
    const next = match && match[1] === "Game" && current && (current.moves.length || "Game" in current.header);
    if (!current || next) {
      current = { header: {}, moves: [] };
      out.push(current);
    }
    if (match) current.header[match[1]] = match[2].trim();
    else if (!line.startsWith("#")) current.moves.push(line.split(/\s;/)[0].trim());
  }
  return out;
}

/** Replays the record of ``text``, or the first of its records with a choice of the others. */
export async function loadRecords(text) {
  records = parseRecords(text);
  recordChoice.replaceChildren(
    ...records.map((record, i) => {
      const players = record.header.P1 && record.header.P2 ? `: ${record.header.P1} vs ${record.header.P2}` : "";
      return new Option(`game ${i + 1} of ${records.length}${players}`, String(i));
    }),
  );
  $("#record-choice-label").hidden = records.length < 2;
  if (!records.length) {
    ui.fileStatus.textContent = "Paste a record first: a `# Game:` header and a move a line.";
    return;
  }
  await replay(records[0]);
}

/** The outcome a record's header states (a forfeit or a time loss leaves the position open). */
function statedOutcome(header) {
  const match = /^(p1|p2|draw)\b/.exec(header.Result || "");
  if (!match) return null;
  return { winner: match[1], reason: header.Reason || "unknown" };
}

async function replay(record) {
  const { header, moves } = record;
  const name = header.Game || ui.game.value;
  const game = app.info.games.find((g) => g.name === name);
  if (!game) {
    ui.fileStatus.textContent = `Unknown game ${JSON.stringify(name)} in the record's # Game: header.`;
    return;
  }
  // the game shown stays until the record is known good: a bad record loses nothing
  const generation = ++app.generation;
  await stopAnalysis();
  ui.fileStatus.textContent = "Replaying…";
  const board = await boardFor(name);
  // `startpos` (every record of a match that did not start from a position) or none: the
  // game's start; anything else is a position string
  const start = !header.Start || header.Start === "startpos" ? "startpos" : `fen ${header.Start}`;
  let positions;
  let outcome;
  try {
    const session = await analysisSession();
    await session.command(`uginewgame ${name}`);
    // each prefix of the record, replayed by the server: one position per move
    const commands = [];
    for (let ply = 0; ply <= moves.length; ply += 1) {
      const tail = ply ? ` moves ${moves.slice(0, ply).join(" ")}` : "";
      commands.push(`position ${start}${tail}`, "query position");
    }
    const lines = await session.request(commands);
    const problem = lines.find((l) => l.startsWith("error ") || l.startsWith("invalidmove "));
    if (problem) throw new ProtocolError(problem.replace(/^error \d+ \S+ /, ""));
    positions = lines.filter((l) => l.startsWith("response ")).map((l) => l.slice(9));
    outcome = await session.response("query outcome");
  } catch (error) {
    if (generation === app.generation) ui.fileStatus.textContent = `Cannot replay the record: ${error.message}`;
    return;
  }
  if (generation !== app.generation) return;
  if (app.session) app.session.close();
  app.session = null;
  ui.analysis.textContent = "";
  showGame(name);
  app.mode = "replay";
  app.game = game;
  app.board = board;
  app.spec = { game: name, opponent: "human", side: "p1", tc: "none" };
  app.clock = null;
  app.view = null;
  app.picked = [];
  app.played = moves;
  app.positions = positions;
  app.position = positions[positions.length - 1];
  app.model = app.board.parse(app.position);
  app.outcome = outcome === "none" ? statedOutcome(header) : pairs(outcome);
  app.turn = "none";
  app.legal = [];
  app.describe = "";
  ui.fileStatus.textContent = `Replaying ${moves.length} moves.`;
  render();
}
