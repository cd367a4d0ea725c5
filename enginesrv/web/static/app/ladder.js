// A ladder's page (`enginesrv ladder run --web`): the live games and the leaderboard (the
// watch feed, watch.js), the games stored last to replay on the board, and a game against a
// connected bot (a challenge: /ws?game=...&opponent=ladder:NAME, refereed as a bot game is).
//
// The ladder's /ws is a server of rules only: it replays records and referees challenges,
// and searches nothing, so the page offers no analysis here.

import { app, ui, $, el, plain, prettyGame, setStatus } from "./state.js";
import { newGame } from "./play.js";
import { loadRecords } from "./replay.js";
import { showWatched, watch } from "./watch.js";

const PLAYERS_EVERY_MS = 10000; // how often the list of connected bots is asked for again
const RECENT_DELAY_MS = 1000; // results within it ask for the stored games and bots once

const ladder = {
  players: [],
  picked: "", // the bot the person chose (else the list's first, a free one if any)
  recent: {},
  recentTimer: null,
};

/** Shows the ladder's panel and fills it; ``params``: the page's query, which may name a
 * challenge to start (a reload of one). */
export async function startLadder(params) {
  app.undoOffered = false;
  for (const id of ["#undo", "#analyse", "#review", "#load-position", "#lines-label"]) $(id).hidden = true;
  $("#review-limit").closest("label").hidden = true;
  $("#ladder").hidden = false;
  watch.onResult = () => {
    if (ladder.recentTimer !== null) return; // asked for already
    ladder.recentTimer = setTimeout(() => {
      ladder.recentTimer = null;
      fetchRecent();
      fetchPlayers();
    }, RECENT_DELAY_MS);
  };
  $("#challenge-game").addEventListener("change", fillBots);
  $("#challenge-bot").addEventListener("change", () => {
    ladder.picked = $("#challenge-bot").value;
  });
  $("#challenge").addEventListener("submit", (event) => {
    event.preventDefault();
    challenge();
  });
  $("#recent").addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-id]") : null;
    if (button) replayStored(button.dataset.game, button.dataset.id);
  });
  $("#watch-live").addEventListener("click", showWatched);
  await Promise.all([fetchPlayers(), fetchRecent()]);
  setInterval(fetchPlayers, PLAYERS_EVERY_MS);
  // a reload of a challenge's page fills the form again (the person starts the game)
  const opponent = params.get("opponent") || "";
  if (opponent.startsWith("ladder:")) {
    $("#challenge-game").value = params.get("game") || "";
    $("#challenge-side").value = params.get("side") === "p2" ? "p2" : "p1";
    const tc = (params.get("tc") || "").replaceAll(" ", "+");
    if ([...$("#challenge-tc").options].some((o) => o.value === tc)) $("#challenge-tc").value = tc;
    ladder.picked = opponent.slice("ladder:".length);
    fillBots();
  }
}

async function fetchJson(path) {
  const answer = await fetch(path, { cache: "no-store" });
  if (!answer.ok) throw new Error(`${path}: HTTP ${answer.status}`);
  return answer.json();
}

async function fetchPlayers() {
  try {
    const found = await fetchJson("/players.json");
    ladder.players = found.players;
    const games = found.games || [];
    const select = $("#challenge-game");
    const chosen = select.value;
    if (select.options.length !== games.length) {
      select.replaceChildren(...games.map((name) => new Option(prettyGame(name), name)));
      if (games.includes(chosen)) select.value = chosen;
    }
    const { most, playing } = found.challenges;
    $("#challenge-note").textContent = most
      ? `${playing} of ${most} games against people now; they are not rated.`
      : "This ladder takes no games against people.";
    $("#challenge-play").disabled = !most;
    fillBots();
  } catch (error) {
    $("#challenge-note").textContent = `Cannot list the bots: ${error.message}`;
  }
}

/** The bots connected that play the game chosen, the free ones first. */
function fillBots() {
  const game = $("#challenge-game").value;
  const select = $("#challenge-bot");
  const chosen = ladder.picked;
  const bots = ladder.players.filter((p) => p.games.includes(game));
  bots.sort((a, b) => Number(b.free) - Number(a.free) || a.name.localeCompare(b.name));
  select.replaceChildren(
    ...bots.map((p) => {
      const label = `${p.name}${p.house ? " (house)" : ""}${p.free ? "" : " (playing)"}`;
      return new Option(plain(label), p.name);
    }),
  );
  if (bots.some((p) => p.name === chosen)) select.value = chosen;
  $("#challenge-play").disabled = !bots.length;
}

function challenge() {
  const bot = $("#challenge-bot").value;
  if (!bot) {
    setStatus("No bot is connected for this game.", true);
    return;
  }
  const spec = {
    game: $("#challenge-game").value,
    opponent: `ladder:${bot}`,
    side: $("#challenge-side").value,
    tc: $("#challenge-tc").value,
    position: null,
  };
  $("#watch-live").hidden = false;
  newGame(spec);
}

async function fetchRecent() {
  try {
    ladder.recent = (await fetchJson("/recent.json")).games;
  } catch (error) {
    $("#recent-note").textContent = `Cannot list the games: ${error.message}`;
    return;
  }
  const items = [];
  for (const [game, rows] of Object.entries(ladder.recent)) {
    for (const row of rows) {
      const result = row.winner === "draw" ? "draw" : `${row.winner} wins`;
      const text = `${prettyGame(game)} ${row.id}: ${row.p1} vs ${row.p2}: ${result} (${row.reason}), ${row.plies} moves`;
      const button = el("button", { type: "button", dataset: { game, id: String(row.id), testid: `recent-${game}-${row.id}` } }, plain(text));
      items.push(el("li", {}, button));
    }
  }
  $("#recent").replaceChildren(...items);
  $("#recent-note").textContent = items.length ? "" : "No game is stored yet.";
}

/** Replays stored game ``id`` of ``game`` on the board. */
async function replayStored(game, id) {
  setStatus(`Fetching game ${id}…`);
  let text;
  try {
    const answer = await fetch(`/games/${encodeURIComponent(game)}/${encodeURIComponent(id)}`);
    if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
    text = await answer.text();
  } catch (error) {
    setStatus(`Cannot fetch game ${id}: ${error.message}`, true);
    return;
  }
  if (app.session) {
    app.session.close(); // a challenge in play ends: its bot goes back to the ladder
    app.session = null;
  }
  $("#watch-live").hidden = false;
  $("#files").open = true;
  ui.loadText.value = text;
  await loadRecords(text);
  if (app.mode === "replay") setStatus(`Game ${id} as stored: step through its moves.`);
}
