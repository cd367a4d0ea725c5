// Watching an event (`enginesrv match|tournament --web`) or a ladder: the games as they are
// played, the standings, and one game followed on the board (while the board shows no other
// game: a ladder's page also replays and plays, ladder.js).
//
// A message only updates what the page knows; the page is drawn at most once every
// WATCH_DRAW_MS, and then only what changed (the line of each game that moved, the board of
// the game followed). The browser usually shares its machine with the match it watches, so
// its CPU is the engines' time: one full redraw per message cost 12 to 26 ms of the page's
// main thread each (more with more games listed), bursts of messages (a bot that answers at
// once, a reconnection's snapshot of a hundred games) were one redraw each, and a snapshot
// of 100 finished games took some 50 s of CPU to catch up with.

import { CLOSE_AUTH, closedFor, credential, sendCredential } from "../proto.js";
import { app, ui, $, boardFor, el, plain, prettyGame, setStatus, wsUrl } from "./state.js";
import { render } from "./render.js";
import { pageStarted } from "./signin.js";

const WATCH_DRAW_MS = 100;

export const watch = {
  event: null,
  games: new Map(),
  following: null,
  standings: null,
  ended: false,
  items: new Map(), // game id -> its line in the games list
  marked: null, // the game whose line is marked as followed
  changed: new Set(), // games whose line is to be drawn again
  head: false, // the title, progress and standings are to be drawn again
  board: false, // the followed game's board is to be drawn again
  timer: null,
  drawn: -Infinity, // performance.now() of the last drawing
  module: null, // the board module of the event's game
  onResult: null, // told when a game ends (a ladder's page lists the games stored)
};

const RETRY_MS = [1000, 2000, 5000, 10000, 30000];

/** Watches the feed at ``path``: an event's (`/events`), or a game between two pages'. A feed
 * closed with 1013 (this watcher fell behind, or the server has all the watchers it takes) is
 * opened again, later each time it is refused before a message came; one closed for its token
 * (a server that takes tokens) once the person has signed in again. */
export async function startWatching(path = "/events", retries = 0) {
  app.mode = "watch";
  if (!retries) setStatus("Connecting to the event…");
  const word = await credential(); // on a server that takes tokens, once signed in
  const socket = new WebSocket(wsUrl(path));
  let heard = false;
  socket.onopen = () => sendCredential(socket, word);
  socket.onmessage = (message) => {
    let parsed;
    try {
      parsed = JSON.parse(message.data);
    } catch {
      return; // a refused token's error line: the socket's close says why
    }
    if (!heard) pageStarted();
    heard = true;
    watched(parsed);
  };
  socket.onclose = (event) => {
    const why = event.reason || `code ${event.code}`;
    closedFor(event, word);
    if (watch.ended) {
      setStatus("The event has ended.");
    } else if (event.code === 1013) {
      const tries = heard ? 0 : retries + 1;
      const wait = RETRY_MS[Math.min(tries, RETRY_MS.length - 1)];
      if (!heard) setStatus(`Cannot watch: ${why}. Trying again in ${wait / 1000} s.`, true);
      setTimeout(() => startWatching(path, tries), wait); // from a fresh snapshot
    } else if (event.code === CLOSE_AUTH && word !== null) {
      setStatus(`Cannot watch: ${why}. Sign in to watch.`, true);
      startWatching(path, retries + 1); // it waits for the next token
    } else {
      setStatus(`The event's feed closed: ${why}`, true);
    }
  };
}

$("#watch").addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-game]") : null;
  if (button) follow(Number(button.dataset.game));
});

async function watched(message) {
  switch (message.type) {
    case "event":
      watch.event = message;
      watch.games.clear();
      watch.items.clear();
      watch.marked = null;
      watch.changed.clear();
      $("#watch").replaceChildren();
      watch.module = await boardFor(message.game);
      watch.head = watch.board = true;
      setStatus("Connected: the games show here as they are played.");
      break;
    case "standings":
      watch.standings = message;
      watch.head = true;
      break;
    case "game":
      watch.games.set(message.id, { ...message, moves: [], positions: [message.position], result: null, turn: "p1", clock: message.clock });
      if (watch.following === null || isOver(watch.following)) watch.following = message.id;
      gameChanged(message.id);
      break;
    case "move": {
      const game = watch.games.get(message.id);
      if (!game) break;
      game.moves.push(message.move);
      game.positions.push(message.position);
      game.turn = message.turn;
      game.clock = message.clock;
      gameChanged(message.id);
      break;
    }
    case "result": {
      const game = watch.games.get(message.id);
      if (!game) break;
      game.result = message;
      gameChanged(message.id);
      if (watch.onResult) watch.onResult();
      break;
    }
    case "end":
      watch.ended = true;
      watch.head = true;
      break;
    default:
      return; // a message of a newer server: ignored
  }
  if (watch.timer === null) {
    const wait = Math.max(0, watch.drawn + WATCH_DRAW_MS - performance.now());
    watch.timer = setTimeout(drawWatch, wait);
  }
}

/** Game ``id``'s line is to be drawn again, and the board if it is the game followed. */
function gameChanged(id) {
  watch.changed.add(id);
  watch.board ||= watch.following === id;
}

function isOver(id) {
  const game = watch.games.get(id);
  return !game || game.result !== null;
}

function follow(id) {
  watch.following = id;
  showWatched();
}

/** The board shows the game followed again (a replay, or a game in play, ends). */
export function showWatched() {
  if (app.session) {
    app.session.close(); // a game in play ends with its socket
    app.session = null;
  }
  app.generation += 1;
  app.mode = "watch";
  app.view = null;
  app.picked = [];
  app.thinking = false;
  app.flipped = false;
  ui.result.textContent = "";
  watch.board = true;
  drawWatch(); // a click is answered at once
}

function drawWatch() {
  clearTimeout(watch.timer);
  watch.timer = null;
  watch.drawn = performance.now();
  const section = $("#watch");
  const event = watch.event;
  if (!event) return;
  if (!section.firstChild) {
    const head = el("tr", {}, ...["pairing", "W", "D", "L", "score", "Elo", "LLR"].map((h) => el("th", {}, h)));
    section.append(
      el("h2"),
      el("p", { dataset: { testid: "event-progress" } }),
      el("table", { dataset: { testid: "standings" } }, el("thead", {}, head), el("tbody")),
      el("table", { dataset: { testid: "leaderboard" }, hidden: true }),
      el("ul", { className: "games", dataset: { testid: "games" } }),
    );
    watch.head = true;
  }
  if (watch.head) drawWatchHead(section, event);
  drawWatchGames(section.querySelector("ul.games"));
  if (watch.board && app.mode === "watch") drawWatchBoard(event);
}

function drawWatchHead(section, event) {
  watch.head = false;
  const standings = watch.standings;
  section.querySelector("h2").textContent = `${event.name}: ${prettyGame(event.game)}, ${event.control}`;
  // a game between two pages has no number of games: its games follow each other (rematches)
  const progress = event.total ? `${standings ? standings.done : 0} of ${event.total} games played` : "";
  section.querySelector("[data-testid=event-progress]").textContent =
    `${progress}${watch.ended ? "; the event has ended" : ""}`;
  const rows = (standings ? standings.pairings : []).map((p) => {
    const elo = p.elo === null ? "–" : `${p.elo.toFixed(1)} ± ${p.elo_ci95 === null ? "∞" : p.elo_ci95.toFixed(1)}`;
    const cells = [
      `${p.p1} vs ${p.p2}`, p.wins, p.draws, p.losses, `${(100 * p.score).toFixed(1)}%`, elo,
      p.llr === null ? "" : p.llr.toFixed(2),
    ];
    return el("tr", {}, ...cells.map((cell) => el("td", {}, String(cell))));
  });
  section.querySelector("tbody").replaceChildren(...rows);
  section.querySelector("table").hidden = !standings; // a game between two pages has none
  drawLeaderboard(section.querySelector("[data-testid=leaderboard]"), standings && standings.leaderboard);
}

/** A ladder's leaderboard (its standings carry one): rated players by rating, then the
 * provisional ones. */
function drawLeaderboard(table, lines) {
  table.hidden = !lines;
  if (!lines) return;
  const head = el("tr", {}, ...["player", "Elo", "games", "score", "form"].map((h) => el("th", {}, h)));
  const rows = lines.map((line) => {
    // no rating: provisional (too few games), or none finite yet (every game won or lost)
    const unrated = line.note && !line.note.startsWith("provisional") ? "no rating yet" : "provisional";
    const elo = line.elo === null ? unrated : `${line.elo.toFixed(0)} ± ${line.error === null ? "∞" : line.error.toFixed(0)}`;
    const cells = [line.player, elo, line.games, `${(100 * line.score).toFixed(1)}%`, line.form];
    return el("tr", { title: plain(line.note || "") }, ...cells.map((cell) => el("td", {}, String(cell))));
  });
  table.replaceChildren(el("caption", {}, "Leaderboard"), el("thead", {}, head), el("tbody", {}, ...rows));
}

function drawWatchGames(list) {
  if (watch.marked !== watch.following) {
    for (const id of [watch.marked, watch.following]) if (id !== null) watch.changed.add(id);
    watch.marked = watch.following;
  }
  for (const id of watch.changed) {
    const g = watch.games.get(id);
    if (!g) continue;
    let button = watch.items.get(id);
    if (!button) {
      button = el("button", { type: "button", dataset: { testid: `watch-game-${g.id}`, game: String(g.id) } });
      list.prepend(el("li", {}, button)); // the newest game first
      watch.items.set(id, button);
    }
    const state = g.result ? g.result.text || `${g.result.winner} (${g.result.reason})` : `playing, move ${g.moves.length}`;
    button.textContent = `game ${g.id}: ${g.p1} vs ${g.p2}: ${state}`;
    if (id === watch.following) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
  watch.changed.clear();
}

function drawWatchBoard(event) {
  watch.board = false;
  const game = watch.games.get(watch.following);
  if (!game || !watch.module) return;
  app.game = { name: event.game, colours: event.colours, start: "" };
  app.board = watch.module;
  app.spec = { game: event.game, opponent: "human", side: "p1", tc: "none" };
  app.played = game.moves;
  app.positions = game.positions;
  app.position = game.positions[game.positions.length - 1];
  app.turn = game.result ? "none" : game.turn;
  app.outcome = game.result ? { winner: game.result.winner, reason: game.result.reason } : null;
  app.clock = game.clock && !game.result ? { ...game.clock, running: "none", at: performance.now() } : null;
  app.legal = [];
  try {
    app.model = app.board.parse(app.position);
  } catch (error) {
    setStatus(`Cannot draw the position: ${error.message}`, true);
    return;
  }
  render();
}
