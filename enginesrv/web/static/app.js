// The page: play a bot, a second person at this screen or a person at another page (an
// invite), analyse, replay records, watch an event or a game between two pages; on a ladder's
// page, watch its games, replay the stored ones and play its bots (app/ladder.js).
//
// It knows no rules. Each game is a WebSocket the server referees (/ws?game=...): the page
// draws the position the server gives it (the player's own view), asks it for the legal moves,
// and turns clicks into one of them with the board module's steps (games/board.js).
//
// The modules under app/ each do one job: state.js (what the page knows), setup.js (the new
// game form), play.js (a game), input.js (the person's clicks and keys), render.js (drawing),
// marks.js (the board's marks), analysis.js, review.js (a game analysed whole), replay.js
// (positions and records), rules.js (How to play), table.js (a game between two pages),
// watch.js (an event) and signin.js (the token of a server that takes tokens). This one starts
// the page.

import { handshake, Session } from "./proto.js";
import { app, ui, $, setStatus, wsUrl } from "./app/state.js";
import { fillSetup, specFromForm } from "./app/setup.js";
import { newGame } from "./app/play.js";
import { startWatching } from "./app/watch.js";
import { startLadder } from "./app/ladder.js";
import { joinTable, watchPath } from "./app/table.js";
import { multipvOffered } from "./app/analysis.js";
import { pageStarted, requireSignIn } from "./app/signin.js";
import "./app/input.js";
import "./app/replay.js";
import "./app/rules.js";
import "./app/review.js";

async function main() {
  const params = new URLSearchParams(location.search);
  let features = { play: true, watch: false };
  try {
    const answer = await fetch("/config.json");
    if (answer.ok) features = await answer.json();
  } catch {
    // an older server: the play page only
  }
  // a server that takes tokens: every socket waits for the person to sign in, then sends the
  // token first (the page's address, a game's link included, stays as it is meanwhile)
  if (features.auth) requireSignIn();
  const spectating = features.invite && params.get("watch");
  if (features.ladder) {
    await ladderPage(params);
    return;
  }
  if ((features.watch && !features.play) || spectating) {
    ui.setup.hidden = true;
    for (const id of ["#undo", "#analyse", "#stop", "#move-form", "#load-position"]) $(id).hidden = true;
    $("#watch").hidden = false;
    startWatching(spectating ? watchPath(spectating) : "/events");
    return;
  }
  if (!(await openLobby("the server"))) return;
  $("#lines-label").hidden = !multipvOffered();
  const table = params.get("table");
  if (table) params.delete("game"); // a player's link names no other game
  const problems = fillSetup(params); // it also reads the game name a link left unescaped
  const wanted = params.get("game");
  if (table) {
    await joinTable(table);
  } else if (problems.length) {
    setStatus(`The link asks for ${problems.join("; and ")}: choose in the form and press New game.`, true);
  } else if (wanted) {
    await newGame(specFromForm(params.get("position")));
  } else {
    setStatus("Choose a game and press New game.");
  }
}

/** A ladder's page: its live games, its stored ones and its bots to play (app/ladder.js). */
async function ladderPage(params) {
  ui.setup.hidden = true;
  $("#watch").hidden = false;
  startWatching("/events");
  if (await openLobby("the ladder")) await startLadder(params);
}

/** Opens the page's own session (/ws: the handshake, replays, analyses); false, with the
 * reason on the status line, when ``what`` cannot be reached. A token the server refuses is
 * asked for again (signin.js), and the session opened with the next one. */
async function openLobby(what) {
  for (;;) {
    const lobby = new Session(wsUrl("/ws"));
    try {
      await lobby.open();
      app.info = await handshake(lobby);
    } catch (error) {
      if (lobby.refused) continue;
      setStatus(`Cannot reach ${what}: ${error.message}`, true);
      return false;
    }
    app.analysisSession = lobby;
    pageStarted();
    return true;
  }
}

main();
