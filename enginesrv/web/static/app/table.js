// A game between two pages (docs/web.md, "Playing a friend"): the invite and its links, the
// other player's decisions and offers as the server tells them (`table` notifications), the
// buttons to resign and to offer a draw, a takeback or a rematch, and the way back after a
// reload or a lost network (the page's address holds the player's own token).

import { Session, pairs } from "../proto.js";
import { app, ui, $, colour, notice, panels, setStatus, wsUrl } from "./state.js";
import { render } from "./render.js";
import { gameLost, opening, refresh, sameGame, startGame } from "./play.js";
import { specFromForm } from "./setup.js";

const RECONNECT_MS = 1000;
const RECONNECT_TRIES = 60;
const CONFIRM_MS = 3000;
const OFFERS = { draw: "a draw", takeback: "to take back their last move", rematch: "a rematch" };
const MINE = { draw: "a draw", takeback: "to take back your last move", rematch: "a rematch" };

const panel = {
  section: $("#table"),
  presence: $("#table-status"),
  offer: $("#table-offer"),
  invite: $("#invite-link"),
  watch: $("#watch-link"),
  resign: $("#resign"),
  draw: $("#offer-draw"),
  takeback: $("#takeback"),
  rematch: $("#rematch"),
  accept: $("#accept-offer"),
  decline: $("#decline-offer"),
};

let received = 0; // performance.now() of the last notification (the graces count from it)
let opened = -Infinity; // performance.now() when the game's socket last opened
let reconnecting = null; // the token being reconnected to, while the socket is lost

const KEY_NAME = "enginesrv-key";
let sessionKey = null; // the key when the browser keeps nothing (storage refused)

/** This browser's key: a seat is bound to the browser that first takes it, so that a link
 * opened by someone else first (the inviter, before handing it on) is refused here, and said
 * so, rather than shared. Drawn once, kept in the browser's storage (the tab's, if the browser
 * keeps nothing for the site; only the page's, said on the table's panel, if not even that). */
function browserKey() {
  const draw = () => {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  for (const store of ["localStorage", "sessionStorage"]) {
    try {
      const kept = window[store];
      let key = kept.getItem(KEY_NAME);
      if (!key || !/^[A-Za-z0-9_-]{16,64}$/.test(key)) {
        key = draw();
        kept.setItem(KEY_NAME, key);
      }
      return key;
    } catch {
      // the browser keeps no data of this site there: the next store, or the page's own key
    }
  }
  sessionKey ??= draw();
  return sessionKey;
}

const UNKEPT = "This browser keeps no data for this site: a reload or another tab cannot take your seat back.";

/** The socket address of a seat, the player's own token with this browser's key. */
const seatPath = (token) => `/ws?${new URLSearchParams({ table: token, key: browserKey() })}`;

/** Opens a new game with a person at another page, as the form asks (`spec`). */
export function invite(spec) {
  const query = new URLSearchParams({ game: spec.game, opponent: "invite", side: spec.side, tc: spec.tc });
  if (spec.position) query.set("position", spec.position);
  query.set("key", browserKey());
  return open(`/ws?${query}`, "Cannot invite");
}

/** Takes one's seat at a game between two pages: the link's token is the player's own. */
export function joinTable(token) {
  return open(seatPath(token), "Cannot open the game");
}

/** Watches a game between two pages with the spectators' token. */
export function watchPath(token) {
  return `/events?${new URLSearchParams({ watch: token })}`;
}

async function open(path, failure, quiet = false) {
  const current = opening();
  if (!quiet) setStatus("Opening the game…");
  const session = new Session(wsUrl(path));
  let values;
  try {
    await session.open();
    values = pairs(await session.response("query table"));
  } catch (error) {
    session.close();
    if (!current()) return null;
    if (!quiet) {
      if (app.session && !app.session.closed) notice(`${failure}: ${error.message}. The game in play goes on.`);
      else gameLost(`${failure}: ${error.message}`);
    }
    return error;
  }
  if (!current()) {
    session.close();
    return null;
  }
  app.table = values;
  received = opened = performance.now();
  reconnecting = null;
  session.ontable = (text) => noted(session, pairs(text));
  const spec = { game: values.name, opponent: "invite", side: values.seat, tc: values.tc, table: values.token };
  await startGame(session, spec, { link: `/?${new URLSearchParams({ table: values.token })}`, lost });
  return null;
}

/** A `table` notification: the other player decided, offered, left or came back. */
function noted(session, values) {
  if (session !== app.session) return;
  const before = app.table;
  app.table = values;
  received = performance.now();
  if (values.seat !== app.spec.side) {
    // a rematch: the colours are swapped
    app.spec = { ...app.spec, side: values.seat };
    app.flipped = values.seat === "p2";
  }
  const changed = !before || !sameGame(before, values);
  if (changed) refresh();
  else render();
}

/** The socket closed under a game between two pages: it is opened again with the same token
 * until it comes back, the link is refused (the game is gone), or another game is opened. */
async function lost(reason) {
  const token = app.spec.table;
  reconnecting = token;
  app.session = null;
  // a socket that had just come back and went again waits before its first try too
  const soon = performance.now() - opened < RECONNECT_MS;
  for (let attempt = 1; attempt <= RECONNECT_TRIES && reconnecting === token; attempt++) {
    setStatus(`${reason}. Reconnecting (attempt ${attempt})…`, true);
    await new Promise((resolve) => setTimeout(resolve, attempt === 1 && !soon ? 0 : RECONNECT_MS));
    if (reconnecting !== token) return;
    const error = await open(seatPath(token), "", true);
    if (!error) return;
    if (/no game has this link|held by another browser/.test(error.message)) break;
  }
  if (reconnecting === token) {
    reconnecting = null;
    gameLost(`${reason}; the game could not be reached again`);
  }
}

function graceLeft(seat) {
  const left = Number(app.table[`${seat}grace`]) - (performance.now() - received);
  return Math.max(0, Math.ceil(left / 1000));
}

/** The table's panel: who is here, the open offer, the links and the buttons (drawn with the
 * status line, render.js). */
function renderTable() {
  const table = app.table;
  const at = app.mode === "play" && app.spec && app.spec.opponent === "invite" && table;
  panel.section.hidden = !at;
  $("#undo").hidden = Boolean(at) || !app.undoOffered;
  if (!at) return;
  const other = table.seat === "p1" ? "p2" : "p1";
  const name = colour(other === "p1" ? 0 : 1);
  const presence = table[other];
  panel.presence.textContent =
    (presence === "waiting" ? "Waiting for the other player to open the link." :
      presence === "away" && table.result === "none" ? `${name} left: they lose in ${graceLeft(other)} s unless they come back.` :
        presence === "away" ? `${name} left.` : `${name} is here.`) + (sessionKey ? ` ${UNKEPT}` : "");
  panel.invite.hidden = table.invite === "none";
  panel.invite.href = `/?${new URLSearchParams({ table: table.invite })}`;
  panel.watch.href = `/?${new URLSearchParams({ watch: table.watch })}`;
  const over = table.result !== "none";
  const started = table.p1 !== "waiting" && table.p2 !== "waiting";
  panel.resign.disabled = over || !started;
  panel.draw.disabled = over || !started || table.offered === "draw";
  panel.takeback.disabled = over || !started || table.offered === "takeback" || !Number(table.takeback);
  panel.rematch.hidden = !over;
  panel.rematch.disabled = table.offered === "rematch";
  const offered = table.offer !== "none";
  panel.accept.hidden = panel.decline.hidden = !offered;
  panel.offer.textContent =
    offered ? `${name} offers ${OFFERS[table.offer] || table.offer}.` :
    table.offered !== "none" ? `You offered ${MINE[table.offered] || table.offered}: waiting for the answer.` :
    table.declined !== "none" ? `${name} declined ${MINE[table.declined] || table.declined}.` : "";
}

/** Sends one of the table's commands; its refusal is said on the status line. */
async function act(command) {
  const session = app.session;
  if (!session || app.spec.opponent !== "invite") return;
  try {
    await session.response(command);
  } catch (error) {
    notice(error.message);
    return;
  }
  if (session === app.session) await refresh();
}

let confirming = null; // the timer of a resign button that asks to be pressed again
panel.resign.addEventListener("click", () => {
  if (confirming === null) {
    panel.resign.textContent = "Resign? Press again";
    confirming = setTimeout(() => {
      confirming = null;
      panel.resign.textContent = "Resign";
    }, CONFIRM_MS);
    return;
  }
  clearTimeout(confirming);
  confirming = null;
  panel.resign.textContent = "Resign";
  act("resign");
});
panel.draw.addEventListener("click", () => act("offer draw"));
panel.takeback.addEventListener("click", () => act("offer takeback"));
panel.rematch.addEventListener("click", () => act("offer rematch"));
panel.accept.addEventListener("click", () => app.table && act(`offer ${app.table.offer}`));
panel.decline.addEventListener("click", () => app.table && act(`decline ${app.table.offer}`));
$("#invite").addEventListener("click", () => invite(specFromForm()));
panels.push(renderTable);

// the grace of a player who left counts down between notifications
setInterval(() => {
  if (app.table && app.mode === "play" && (app.table.p1 === "away" || app.table.p2 === "away")) renderTable();
}, 1000);

ui.setup.addEventListener("submit", () => {
  reconnecting = null; // a new game: the lost one is not looked for any more
});
