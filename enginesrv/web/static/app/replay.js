// Positions and records: play on from a pasted position, export the game as a record, and
// replay a record (the enginesrv record format, docs/tournaments.md), its positions computed
// by the server.

import { ProtocolError, pairs } from "../proto.js";
import { app, ui, $, boardFor, plain } from "./state.js";
import { playerName, render } from "./render.js";
import { newGame } from "./play.js";
import { showGame, specFromForm } from "./setup.js";
import { stopAnalysis, withSession } from "./analysis.js";

/** Says ``text`` on the file status line (not an export note, which a move makes stale). */
function say(text) {
  ui.fileStatus.textContent = plain(text);
  ui.fileStatus.dataset.kind = "";
}

$("#load-position").addEventListener("click", async () => {
  const text = ui.loadText.value.trim();
  if (!text) {
    say("Paste a position string first.");
    return;
  }
  if (/[\r\n]/.test(text)) {
    say("A position string is one line (for a record, use Replay record).");
    return;
  }
  // checked on the page's own session first: a position the server refuses leaves the game
  // in play as it is
  const spec = specFromForm(text);
  say("Checking the position…");
  try {
    await stopAnalysis();
    await withSession(async (session) => {
      await session.command(`uginewgame ${spec.game}`);
      await session.command(`position fen ${text}`);
    });
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    say(`Cannot play from this position: ${error.message}`);
    return;
  }
  say("");
  newGame(spec);
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
  ui.fileStatus.dataset.kind = "export";
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
  text.split("\n").forEach((raw, at) => {
    const line = raw.trim();
    if (!line) return;
    const match = line.startsWith("#") ? /^#\s*([^:]*?)\s*:(.*)$/.exec(line) : null;
    const next = match && match[1] === "Game" && current && (current.moves.length || current.header.Game !== undefined);
    if (!current || next) {
      current = { header: Object.create(null), moves: [], bad: null };
      out.push(current);
    }
    if (match) {
      current.header[match[1]] = match[2].trim();
    } else if (!line.startsWith("#")) {
      const move = line.split(/\s;/)[0].trim();
      if (/\s/.test(move) && !current.bad) current.bad = `line ${at + 1}: one move a line, not ${JSON.stringify(move.slice(0, 40))}`;
      current.moves.push(move);
    }
  });
  return out;
}

/** Replays the record of ``text``, or the first of its records with a choice of the others. */
export async function loadRecords(text) {
  records = parseRecords(text);
  recordChoice.replaceChildren(
    ...records.map((record, i) => {
      const players = record.header.P1 && record.header.P2 ? `: ${record.header.P1} vs ${record.header.P2}` : "";
      return new Option(plain(`game ${i + 1} of ${records.length}${players}`), String(i));
    }),
  );
  $("#record-choice-label").hidden = records.length < 2;
  if (!records.length) {
    say("Paste a record first: a `# Game:` header and a move a line.");
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

const CHUNK = 64; // plies a request replays, each from the position the last one reached
let replays = 0; // replays asked for: only the last one asked shows its record

async function replay(record) {
  const { header, moves, bad } = record;
  const name = header.Game || ui.game.value;
  const game = app.info.games.find((g) => g.name === name);
  const most = Number((app.info.limits || {}).plies) || 4000;
  const problem = !game ? `Unknown game ${JSON.stringify(name)} in the record's # Game: header.`
    : bad ? `The record cannot be read: ${bad}.`
    : moves.length > most ? `The record has ${moves.length} moves, more than the ${most} a game may have here.`
    : null;
  if (problem) {
    say(problem);
    return;
  }
  // the game shown stays as it was until the record is known good: a bad record loses
  // nothing, and a bot's move on its way is still taken
  const ticket = ++replays;
  await stopAnalysis();
  say("Replaying…");
  let board;
  let positions;
  let outcome;
  try {
    board = await boardFor(name);
    [positions, outcome] = await withSession((session) => positionsOf(session, name, header.Start, moves, ticket));
  } catch (error) {
    if (ticket === replays) say(`Cannot replay the record: ${error.message}`);
    return;
  }
  if (ticket !== replays || !positions) return; // another replay was asked for meanwhile
  app.generation += 1; // from here on the game shown is the record: answers for the old one go
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
  app.thinking = false;
  app.played = moves;
  app.positions = positions;
  app.position = positions[positions.length - 1];
  app.model = app.board.parse(app.position);
  app.outcome = outcome === "none" ? statedOutcome(header) : pairs(outcome);
  app.turn = "none";
  app.legal = [];
  app.describe = "";
  say(`Replaying ${moves.length} moves.`);
  render();
}

/** The position after each prefix of ``moves`` from ``start`` (`startpos` or none: the game's
 * start), as the server plays them, and the outcome at the end; null when another replay was
 * asked for meanwhile. Each request replays CHUNK plies from the last position reached, so
 * that the requests stay small however long the record. */
async function positionsOf(session, name, start, moves, ticket) {
  await session.command(`uginewgame ${name}`);
  let base = !start || start === "startpos" ? "startpos" : `fen ${start}`;
  const [first] = await session.request([`position ${base}`, "query position"]).then(positionsIn);
  const positions = [first];
  for (let done = 0; done < moves.length; done += CHUNK) {
    if (ticket !== replays) return [null, null];
    base = `fen ${positions[positions.length - 1]}`;
    const chunk = moves.slice(done, done + CHUNK);
    const commands = chunk.flatMap((_, i) => [`position ${base} moves ${chunk.slice(0, i + 1).join(" ")}`, "query position"]);
    positions.push(...positionsIn(await session.request(commands)));
  }
  return [positions, await session.response("query outcome")];
}

/** The positions a request's `query position` lines answered; throws on its first error. */
function positionsIn(lines) {
  const problem = lines.find((l) => l.startsWith("error ") || l.startsWith("invalidmove "));
  if (problem) throw new ProtocolError(problem.replace(/^error \d+ \S+ /, ""));
  return lines.filter((l) => l.startsWith("response ")).map((l) => l.slice(9));
}
