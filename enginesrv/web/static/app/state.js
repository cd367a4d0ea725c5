// What the page knows: the elements it draws into and the state of the game shown, shared by
// the modules of the page (play, render, analysis, replay, watch), and the small questions
// every one of them asks of it.

export const $ = (selector) => document.querySelector(selector);

export const ui = {
  game: $("#game"),
  opponent: $("#opponent"),
  level: $("#level"),
  levelLabel: $("#level-label"),
  botOptions: $("#bot-options"),
  side: $("#side"),
  tc: $("#tc"),
  setup: $("#setup"),
  board: $("#board"),
  choices: $("#choices"),
  compose: $("#compose"),
  moveForm: $("#move-form"),
  moveInput: $("#move-input"),
  status: $("#status"),
  result: $("#result"),
  moves: $("#moves"),
  viewing: $("#viewing"),
  analysis: $("#analysis"),
  lines: $("#lines"),
  clockTop: $("#clock-top"),
  clockBottom: $("#clock-bottom"),
  handover: $("#handover"),
  handoverText: $("#handover-text"),
  loadText: $("#load-text"),
  fileStatus: $("#file-status"),
};

export const app = {
  info: null, // the handshake: games, bots
  game: null, // {name, colours, start}
  board: null,
  session: null, // the game's socket
  mode: "idle", // "play" | "replay" | "watch" | "idle"
  spec: null, // {game, opponent, side, tc, position, table}: opponent "invite" is a person at another page
  generation: 0,
  position: "",
  model: null,
  legal: [],
  describe: "", // `count N <description>` when the moves are not listed
  turn: "none",
  outcome: null,
  played: [],
  positions: [], // positions[ply]: the position after `ply` decisions, as shown
  picked: [],
  view: null, // the ply shown instead of the current position, or null
  flipped: false,
  thinking: false,
  busy: 0, // requests of the person's own in flight (a move, an undo, a refresh)
  botFailed: false, // the bot's last go failed: it is not asked again by itself
  clock: null,
  analysisSession: null,
  analysing: false,
  analysed: null, // the position the analysis shown is of (a change of position ends it)
  best: [],
  lines: [], // lines[i]: the places of the first move of the analysis' line i + 1
  review: null, // {played, marks, curve}: the last game analysed whole (review.js)
  reviewing: false, // a game's analysis runs (Stop, a replay or a new game cancels it)
  roots: null, // {position, bands: place -> {band, text}}: the root moves' scores, once stopped
  handoverFor: null,
  table: null, // a game between two pages: the values of its last `table` notification
  notice: null, // {text, until}: an error the status line keeps a while (state.js notice)
  undoOffered: true, // false on a ladder's page: nothing is taken back against its bots
};

/** What draws a panel of the page's own after each status update (the table's, table.js). */
export const panels = [];

const boards = new Map(); // module file -> board module

export function wsUrl(path) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}`;
}

/** ``text`` with its direction controls (U+202A-E, U+2066-9, U+200E-F, U+061C) shown as
 * U+FFFD: a value quoted from a link or a record cannot turn the rest of a message around. */
export const plain = (text) => String(text).replace(/[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g, "\ufffd");

/** Says ``text`` on the status line as an error, kept there for ``seconds`` over what the
 * game shown would say (a refused new game's reason, while the game in play goes on). */
export function notice(text, seconds = 8) {
  app.notice = { text, until: performance.now() + seconds * 1000 };
  setStatus(text, true);
}

export function setStatus(text, error = false) {
  ui.status.textContent = plain(text);
  ui.status.classList.toggle("error", error);
}

export function colour(seat) {
  const name = app.game ? app.game.colours[seat] : `p${seat + 1}`;
  return name.charAt(0).toUpperCase() + name.slice(1);
}

export function prettyGame(name) {
  const names = { yinsh: "Yinsh", "yinsh+blitz": "Yinsh blitz", yohoho: "Yohoho", yoxii: "Yoxii", yinyang: "Yin Yang" };
  return names[name] || name;
}

export async function boardFor(name) {
  const file = name.split("+")[0];
  if (!boards.has(file)) {
    const module = await import(`../games/${file}.js`);
    boards.set(file, module.default);
  }
  return boards.get(file);
}

/** Whether the game shown hides something (Yin Yang's laws). */
export function hidden() {
  return Boolean(app.board && app.board.hidden);
}

/** The seat of the person who acts at this screen now. */
export function personSeat() {
  if (app.spec.opponent === "human") return app.turn === "p2" ? 1 : 0;
  return app.spec.side === "p2" ? 1 : 0;
}

/** Whether the other side to act is a bot (against a bot) or a person at another page. */
function otherToAct() {
  return app.spec.opponent !== "human" && app.turn !== "none" && app.turn !== app.spec.side;
}

export function botToAct() {
  return app.spec.opponent !== "invite" && otherToAct();
}

/** Whether the person at the other page of a game between two pages is to act. */
export function friendToAct() {
  return app.spec.opponent === "invite" && otherToAct();
}

/** Whether a game with a person at another page goes on (no engine helps either player). */
export function atTable() {
  return app.mode === "play" && app.spec.opponent === "invite" && !app.outcome;
}

export function personToAct() {
  return (
    app.mode === "play" && !app.outcome && app.turn !== "none" && !otherToAct() && !app.thinking &&
    !app.busy && !app.handoverFor
  );
}

/** Sets or removes a `true` attribute. */
export function setFlag(node, name, on) {
  if (on) node.setAttribute(name, "true");
  else node.removeAttribute(name);
}

/** A new element: `el("td", {className: "x"}, "text", child)`; text is text, never markup. */
export function el(tag, properties = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(properties)) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else node[key] = value;
  }
  node.append(...children);
  return node;
}
