// The page: play a bot or a second person at this screen, analyse, replay records.
//
// It knows no rules. Each game is a WebSocket the server referees (/ws?game=...): the page
// draws the position the server gives it (the player's own view), asks it for the legal moves,
// and turns clicks into one of them with the board module's steps (games/board.js).

import { Session, ProtocolError, handshake, pairs } from "./proto.js";

const $ = (selector) => document.querySelector(selector);
const ui = {
  game: $("#game"),
  opponent: $("#opponent"),
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
  clockTop: $("#clock-top"),
  clockBottom: $("#clock-bottom"),
  handover: $("#handover"),
  handoverText: $("#handover-text"),
  loadText: $("#load-text"),
  fileStatus: $("#file-status"),
};

const boards = new Map(); // module file -> board module
const app = {
  info: null, // the handshake: games, bots
  game: null, // {name, colours, start}
  board: null,
  session: null, // the game's socket
  mode: "idle", // "play" | "replay" | "idle"
  spec: null, // {game, opponent, side, tc, position}
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
  best: [],
  handoverFor: null,
};

function wsUrl(path) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}`;
}

function setStatus(text, error = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle("error", error);
}

function colour(seat) {
  const name = app.game ? app.game.colours[seat] : `p${seat + 1}`;
  return name.charAt(0).toUpperCase() + name.slice(1);
}

async function boardFor(name) {
  const file = name.split("+")[0];
  if (!boards.has(file)) {
    const module = await import(`./games/${file}.js`);
    boards.set(file, module.default);
  }
  return boards.get(file);
}

// -- the setup form -----------------------------------------------------------------------

function fillSetup(params) {
  for (const game of app.info.games) {
    ui.game.append(new Option(prettyGame(game.name), game.name));
  }
  if (params.get("game")) ui.game.value = params.get("game");
  fillOpponents(params.get("opponent"));
  fillSides(params.get("side"));
  if (params.get("tc")) {
    const tc = params.get("tc");
    if (![...ui.tc.options].some((o) => o.value === tc)) ui.tc.append(new Option(tc, tc));
    ui.tc.value = tc;
  }
  ui.game.addEventListener("change", () => {
    fillOpponents(ui.opponent.value);
    fillSides(ui.side.value);
  });
}

function prettyGame(name) {
  const names = { yinsh: "Yinsh", "yinsh+blitz": "Yinsh blitz", yohoho: "Yohoho", yoxii: "Yoxii", yinyang: "Yin Yang" };
  return names[name] || name;
}

function fillOpponents(wanted) {
  const game = ui.game.value;
  ui.opponent.replaceChildren(new Option("a person at this screen", "human"));
  for (const bot of app.info.bots) {
    if (bot.games.includes(game)) ui.opponent.append(new Option(`bot ${bot.name}`, `bot:${bot.name}`));
  }
  if (wanted) {
    // a deep link may carry options: bot:alphabeta:Depth=1
    const [kind, name, ...rest] = wanted.split(":");
    const base = kind === "bot" ? `bot:${name}` : wanted;
    if ([...ui.opponent.options].some((o) => o.value === base)) {
      ui.opponent.value = base;
      if (rest.length) ui.botOptions.value = rest.join(":");
    }
  } else {
    const preferred = [...ui.opponent.options].find((o) => o.value === "bot:alphabeta");
    if (preferred) ui.opponent.value = preferred.value;
  }
}

function fillSides(wanted) {
  const game = app.info.games.find((g) => g.name === ui.game.value);
  const colours = game ? game.colours : ["p1", "p2"];
  ui.side.replaceChildren(
    new Option(`${colours[0]} (first)`, "p1"),
    new Option(`${colours[1]} (second)`, "p2"),
  );
  if (wanted === "p2") ui.side.value = "p2";
}

function specFromForm(position = null) {
  let opponent = ui.opponent.value;
  const options = ui.botOptions.value.trim();
  if (opponent !== "human" && options) opponent += `:${options}`;
  return { game: ui.game.value, opponent, side: ui.side.value, tc: ui.tc.value, position };
}

function gameUrl(spec) {
  const query = new URLSearchParams({ game: spec.game, opponent: spec.opponent, side: spec.side, tc: spec.tc });
  if (spec.position) query.set("position", spec.position);
  return wsUrl(`/ws?${query}`);
}

// -- a game -------------------------------------------------------------------------------

async function newGame(spec) {
  const generation = ++app.generation;
  await stopAnalysis();
  if (app.session) app.session.close();
  app.session = null;
  app.spec = spec;
  app.mode = "play";
  app.game = app.info.games.find((g) => g.name === spec.game);
  app.board = await boardFor(spec.game);
  app.played = [];
  app.positions = [];
  app.view = null;
  app.picked = [];
  app.outcome = null;
  app.clock = null;
  app.handoverFor = null;
  app.botFailed = false;
  app.turn = "none";
  app.flipped = spec.opponent !== "human" && spec.side === "p2";
  ui.result.textContent = "";
  ui.analysis.textContent = "";
  setStatus("Starting the game…");
  const session = new Session(gameUrl(spec));
  try {
    await session.open();
  } catch (error) {
    if (generation === app.generation) setStatus(`Cannot start: ${error.message}`, true);
    return;
  }
  if (generation !== app.generation) {
    session.close();
    return;
  }
  session.onclose = (reason) => {
    if (app.session === session) setStatus(`The connection closed: ${reason}`, true);
  };
  app.session = session;
  const params = new URLSearchParams({ game: spec.game, opponent: spec.opponent, side: spec.side });
  if (spec.tc !== "none") params.set("tc", spec.tc);
  history.replaceState(null, "", `/?${params}`);
  await refresh(generation);
}

const QUERIES = ["position", "turn", "moves", "outcome", "clock", "played"];

async function refresh(generation = app.generation) {
  const session = app.session;
  if (!session) return;
  let lines;
  app.busy += 1;
  try {
    lines = await session.request(QUERIES.map((q) => `query ${q}`));
  } catch (error) {
    if (generation === app.generation) setStatus(error.message, true);
    return;
  } finally {
    app.busy -= 1;
  }
  if (generation !== app.generation) return;
  const values = lines.filter((l) => l === "response" || l.startsWith("response ")).map((l) => l.slice(9));
  if (values.length !== QUERIES.length) {
    setStatus(`Unexpected answer from the server: ${lines.join(" | ")}`, true);
    return;
  }
  const [position, turn, moves, outcome, clock, played] = values;
  const previousTurn = app.turn;
  app.position = position;
  app.turn = turn;
  app.outcome = outcome === "none" ? null : pairs(outcome);
  app.played = played ? played.split(" ") : [];
  app.positions[app.played.length] = position;
  app.positions.length = app.played.length + 1;
  app.legal = [];
  app.describe = "";
  if (moves.startsWith("count ")) app.describe = moves;
  else if (moves) app.legal = moves.split(" ");
  app.clock = clock === "none" ? null : { ...pairs(clock), at: performance.now() };
  app.picked = [];
  app.view = null;
  try {
    app.model = app.board.parse(position);
  } catch (error) {
    setStatus(`Cannot draw the position: ${error.message}`, true);
    return;
  }
  if (needsHandover(previousTurn)) {
    app.handoverFor = turn;
    ui.handoverText.textContent = `Pass the screen to ${colour(turn === "p1" ? 0 : 1)}.`;
    ui.handover.hidden = false;
    $("#handover-ready").focus();
    render();
    return;
  }
  render();
  if (!app.outcome && botToAct() && !app.botFailed) await botMove(generation);
}

function hidden() {
  return Boolean(app.board && app.board.hidden);
}

function needsHandover(previousTurn) {
  return (
    app.spec.opponent === "human" && hidden() && !app.outcome &&
    app.turn !== "none" && previousTurn !== "none" && previousTurn !== app.turn && app.played.length > 0
  );
}

function personSeat() {
  if (app.spec.opponent === "human") return app.turn === "p2" ? 1 : 0;
  return app.spec.side === "p2" ? 1 : 0;
}

function botToAct() {
  return app.spec.opponent !== "human" && app.turn !== "none" && app.turn !== app.spec.side;
}

function personToAct() {
  return (
    app.mode === "play" && !app.outcome && app.turn !== "none" && !botToAct() && !app.thinking &&
    !app.busy && !app.handoverFor
  );
}

async function botMove(generation) {
  app.thinking = true;
  render();
  let failure = null;
  try {
    await app.session.go("");
  } catch (error) {
    failure = error;
  } finally {
    app.thinking = false;
  }
  if (generation !== app.generation) return;
  if (failure) {
    // not asked again by itself: Undo, or a new game, tries again
    app.botFailed = true;
    render();
    setStatus(`The bot could not move: ${failure.message}`, true);
    return;
  }
  await refresh(generation);
}

async function play(token) {
  if (!personToAct()) return;
  const generation = app.generation;
  app.busy += 1;
  app.picked = [];
  render();
  try {
    await app.session.response(`play ${token}`);
  } catch (error) {
    app.busy -= 1;
    render();
    setStatus(error.message, true);
    return;
  }
  app.busy -= 1;
  if (generation === app.generation) await refresh(generation);
}

async function undo() {
  if (app.mode !== "play" || !app.session || app.thinking || app.busy) return;
  const generation = app.generation;
  app.botFailed = false;
  app.busy += 1;
  try {
    if (app.spec.opponent === "human") {
      await app.session.response("undo 1");
    } else {
      // back to the person's previous decision: the bot's replies and the person's move
      let turn = app.turn;
      let undone = 0;
      do {
        await app.session.response("undo 1");
        undone += 1;
        turn = await app.session.response("query turn");
      } while (turn !== app.spec.side && undone < 64);
    }
  } catch (error) {
    setStatus(error.message, true);
  } finally {
    app.busy -= 1;
  }
  if (generation === app.generation) await refresh(generation);
}

// -- drawing ------------------------------------------------------------------------------

function shownModel() {
  if (app.view === null) return app.model;
  try {
    return app.board.parse(app.positions[app.view]);
  } catch {
    return app.model;
  }
}

function render(updateStatus = true) {
  if (!app.board || !app.model) return;
  const model = shownModel();
  app.board.draw(ui.board, model, { flipped: app.flipped, colours: app.game.colours });
  markSquares();
  renderChoices();
  renderMoves();
  renderClocks();
  if (updateStatus) renderStatus();
}

function candidates() {
  if (!personToAct() || app.view !== null) return [];
  const out = [];
  for (const token of app.legal) {
    const steps = app.board.steps(token, app.model);
    if (app.picked.every((step, i) => sameStep(step, steps[i]))) out.push({ token, steps });
  }
  return out;
}

function sameStep(a, b) {
  if (!a || !b) return false;
  return a.square !== undefined ? a.square === b.square : a.choice === b.choice;
}

function nextSteps() {
  const squares = new Set();
  const choices = new Map();
  for (const { steps } of candidates()) {
    const step = steps[app.picked.length];
    if (!step) continue;
    if (step.square !== undefined) squares.add(step.square);
    else if (!choices.has(step.choice)) choices.set(step.choice, step.label || step.choice);
  }
  return { squares, choices };
}

function markSquares() {
  const { squares } = nextSteps();
  const picked = new Set(app.picked.filter((s) => s.square !== undefined).map((s) => s.square));
  const lastPly = app.view === null ? app.played.length : app.view;
  const lastToken = lastPly > 0 ? app.played[lastPly - 1] : null;
  let last = new Set();
  if (lastToken) {
    try {
      last = new Set(app.board.squares(lastToken, shownModel()));
    } catch {
      last = new Set();
    }
  }
  const best = new Set(app.view === null ? app.best : []);
  for (const node of ui.board.querySelectorAll("[data-square]")) {
    const name = node.getAttribute("data-square");
    const legal = squares.has(name);
    setFlag(node, "data-legal", legal);
    setFlag(node, "data-picked", picked.has(name));
    setFlag(node, "data-last", last.has(name));
    setFlag(node, "data-best", best.has(name));
    if (legal || picked.has(name)) {
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "button");
      node.setAttribute("aria-label", name);
    } else {
      node.removeAttribute("tabindex");
      node.removeAttribute("role");
    }
  }
}

function setFlag(node, name, on) {
  if (on) node.setAttribute(name, "true");
  else node.removeAttribute(name);
}

function renderChoices() {
  ui.choices.replaceChildren();
  ui.compose.replaceChildren();
  if (app.view !== null || !personToAct()) return;
  if (app.describe && app.board.compose) {
    app.board.compose(app.model, ui.compose, app.describe, (token) => play(token));
    return;
  }
  const { choices } = nextSteps();
  for (const [choice, label] of choices) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.choice = choice;
    button.textContent = label;
    button.addEventListener("click", () => pick({ choice, label }));
    ui.choices.append(button);
  }
  if (app.picked.length) {
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.dataset.testid = "cancel-pick";
    cancel.textContent = "Cancel";
    cancel.addEventListener("click", () => {
      app.picked = [];
      render();
    });
    ui.choices.append(cancel);
  }
}

function renderMoves() {
  const items = app.played.map((token, i) => {
    const item = document.createElement("li");
    item.textContent = token;
    item.dataset.ply = String(i + 1);
    item.tabIndex = 0;
    if (app.view === i + 1) item.setAttribute("aria-current", "true");
    return item;
  });
  ui.moves.replaceChildren(...items);
  if (app.view === null && items.length) items[items.length - 1].scrollIntoView({ block: "nearest" });
  ui.viewing.hidden = app.view === null;
  if (app.view !== null) {
    ui.viewing.textContent = `Showing the position after move ${app.view}; press Escape or click the last move to come back.`;
  }
}

/** The page's state for automated tests and other tools (docs/web.md): body[data-state]. */
function pageState() {
  if (app.mode === "watch") return "watching";
  if (app.mode === "replay") return "replay";
  if (app.mode !== "play") return "idle";
  if (app.outcome) return "over";
  if (app.busy) return "busy";
  if (app.thinking || botToAct()) return "bot";
  if (app.handoverFor) return "handover";
  return "person";
}

function renderStatus() {
  document.body.dataset.state = pageState();
  if (app.mode === "watch") {
    const game = watch.games.get(watch.following);
    if (game) {
      const ply = app.view === null ? game.moves.length : app.view;
      const live = game.result ? "replay" : "live";
      setStatus(`Game ${game.id} (${live}): ${game.p1} vs ${game.p2}, move ${ply} of ${game.moves.length}`);
    }
    ui.result.textContent = app.outcome ? resultText(app.outcome) : "";
    return;
  }
  if (app.mode === "replay") {
    const ply = app.view === null ? app.played.length : app.view;
    setStatus(`Replay: move ${ply} of ${app.played.length} (← and → step through)`);
  } else if (app.outcome) {
    setStatus("Game over");
  } else if (app.busy) {
    // the line stays as it was until the answer
  } else if (app.thinking || botToAct()) {
    setStatus(`The bot (${colour(app.turn === "p1" ? 0 : 1)}) is thinking…`);
  } else if (app.turn !== "none" && app.board) {
    const who = app.spec.opponent === "human" ? colour(personSeat()) : `You (${colour(personSeat())})`;
    setStatus(`${who}: ${app.board.hint(app.model)}`);
  }
  ui.result.textContent = app.outcome ? resultText(app.outcome) : "";
  $("#undo").disabled = app.mode !== "play" || app.thinking || app.played.length === 0;
}

function resultText(outcome) {
  const scores = Object.entries(outcome)
    .filter(([key]) => key !== "winner" && key !== "reason")
    .map(([key, value]) => `${key}=${value}`)
    .join(" ");
  const head = outcome.winner === "draw" ? "Draw" : `${colour(outcome.winner === "p1" ? 0 : 1)} wins`;
  return `${head} (${outcome.reason})${scores ? ` ${scores}` : ""}`;
}

// -- clocks -------------------------------------------------------------------------------

function clockText(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const minutes = Math.floor(total / 60);
  return `${minutes}:${String(total % 60).padStart(2, "0")}`;
}

function renderClocks() {
  const bottomSeat = app.flipped ? 1 : 0;
  for (const [node, seat] of [[ui.clockBottom, bottomSeat], [ui.clockTop, 1 - bottomSeat]]) {
    node.replaceChildren();
    node.dataset.testid = `clock-p${seat + 1}`;
    if (!app.game) continue;
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = playerName(seat);
    const time = document.createElement("span");
    node.append(who, time);
    const clock = app.clock;
    node.classList.toggle("running", Boolean(clock && clock.running === `p${seat + 1}`));
    if (clock) {
      let ms = Number(clock[`p${seat + 1}`]);
      if (clock.running === `p${seat + 1}`) ms -= performance.now() - clock.at;
      time.textContent = clockText(ms);
    }
  }
}

function playerName(seat) {
  const side = `p${seat + 1}`;
  if (app.mode === "watch") {
    const game = watch.games.get(watch.following);
    return game ? `${colour(seat)}: ${seat === 0 ? game.p1 : game.p2}` : colour(seat);
  }
  if (!app.spec || app.mode === "replay") return colour(seat);
  if (app.spec.opponent === "human") return colour(seat);
  return side === app.spec.side ? `${colour(seat)}: you` : `${colour(seat)}: ${app.spec.opponent}`;
}

let flagCheck = false;
setInterval(() => {
  if (!app.clock || app.mode !== "play") return;
  renderClocks();
  const running = app.clock.running;
  if (running && running !== "none" && !flagCheck) {
    const left = Number(app.clock[running]) - (performance.now() - app.clock.at);
    if (left <= 0 && !app.thinking) {
      flagCheck = true; // the server decides: ask it once
      refresh().finally(() => {
        flagCheck = false;
      });
    }
  }
}, 200);

// -- input --------------------------------------------------------------------------------

function pick(step) {
  if (!personToAct()) return;
  let next = [...app.picked, step];
  let matching = candidates().filter(({ steps }) => sameStep(step, steps[app.picked.length]));
  if (!matching.length && step.square !== undefined && app.picked.length) {
    // a square that starts another move: begin again from it
    app.picked = [];
    next = [step];
    matching = candidates().filter(({ steps }) => sameStep(step, steps[0]));
  }
  if (!matching.length) {
    app.picked = [];
    render();
    return;
  }
  app.picked = next;
  const done = matching.find(({ steps }) => steps.length === next.length);
  if (done) {
    play(done.token);
    return;
  }
  render();
}

ui.board.addEventListener("click", (event) => {
  const target = event.target.closest("[data-square]");
  if (target) squareClicked(target.getAttribute("data-square"));
});

ui.board.addEventListener("keydown", (event) => {
  const target = event.target.closest ? event.target.closest("[data-square]") : null;
  if (target && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    squareClicked(target.getAttribute("data-square"));
  }
});

function squareClicked(name) {
  if (app.view !== null) return;
  const already = app.picked.length && app.picked[app.picked.length - 1].square === name;
  if (already) {
    app.picked = [];
    render();
    return;
  }
  pick({ square: name });
}

ui.moveForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const token = ui.moveInput.value.trim();
  if (!token) return;
  if (!personToAct()) {
    setStatus(app.mode === "play" ? "It is not your move." : "Start a game first.", true);
    return;
  }
  ui.moveInput.value = "";
  play(token);
});

ui.moves.addEventListener("click", (event) => {
  const item = event.target.closest("li[data-ply]");
  if (item) showPly(Number(item.dataset.ply));
});

ui.moves.addEventListener("keydown", (event) => {
  const item = event.target.closest("li[data-ply]");
  if (item && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    showPly(Number(item.dataset.ply));
  }
});

function showPly(ply) {
  if (app.mode === "play" && app.spec.opponent === "human" && hidden()) {
    setStatus("Earlier positions are not shown in a game of hidden laws between two people.", true);
    return;
  }
  if (!app.positions[ply]) {
    setStatus(`The position after move ${ply} is not known here.`, true);
    return;
  }
  app.view = ply === app.played.length ? null : ply;
  app.picked = [];
  render();
}

document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement) return;
  if (event.target instanceof HTMLSelectElement) return;
  if (event.key === "Escape") {
    app.picked = [];
    app.view = null;
    render();
  } else if ((app.mode === "replay" || app.mode === "watch") && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
    const current = app.view === null ? app.played.length : app.view;
    showPly(Math.max(0, Math.min(app.played.length, current + (event.key === "ArrowLeft" ? -1 : 1))));
  }
});

$("#handover-ready").addEventListener("click", async () => {
  ui.handover.hidden = true;
  app.handoverFor = null;
  render();
});

$("#flip").addEventListener("click", () => {
  app.flipped = !app.flipped;
  render();
});

$("#undo").addEventListener("click", () => undo());

ui.setup.addEventListener("submit", (event) => {
  event.preventDefault();
  newGame(specFromForm());
});

// -- analysis -----------------------------------------------------------------------------

async function analysisSession() {
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
  const at = words.indexOf("pv");
  const pv = at >= 0 ? words.slice(at + 1) : [];
  const score = field("score");
  const value = score ? `${field("score")} ${words[words.indexOf("score") + 2]}` : "?";
  ui.analysis.textContent =
    `depth ${field("depth") ?? "?"}  score ${value}  nodes ${field("nodes") ?? "?"}  nps ${field("nps") ?? "?"}\n` +
    `pv ${pv.join(" ")}`;
  if (pv.length) {
    try {
      app.best = app.board.squares(pv[0], model);
    } catch {
      app.best = [];
    }
    markSquares();
  }
}

async function stopAnalysis() {
  if (app.analysisSession && app.analysing) app.analysisSession.stop();
  app.best = [];
}

$("#analyse").addEventListener("click", () => startAnalysis());
$("#stop").addEventListener("click", () => stopAnalysis());

// -- positions and records ----------------------------------------------------------------

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

$("#load-record").addEventListener("click", () => loadRecord(ui.loadText.value));

/** A record's header and moves (the enginesrv record format, docs/tournaments.md). */
function parseRecord(text) {
  const header = {};
  const moves = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    if (line.startsWith("#")) {
      const match = /^#\s*([^:]*?)\s*:(.*)$/.exec(line);
      if (match) header[match[1]] = match[2].trim();
      continue;
    }
    moves.push(line.split("  ;")[0].trim());
  }
  return { header, moves };
}

async function loadRecord(text, gameName = null) {
  const { header, moves } = parseRecord(text);
  const name = gameName || header.Game || ui.game.value;
  const game = app.info.games.find((g) => g.name === name);
  if (!game) {
    ui.fileStatus.textContent = `Unknown game ${JSON.stringify(name)}.`;
    return;
  }
  const generation = ++app.generation;
  await stopAnalysis();
  if (app.session) app.session.close();
  app.session = null;
  app.mode = "replay";
  app.game = game;
  app.spec = { game: name, opponent: "human", side: "p1", tc: "none" };
  app.board = await boardFor(name);
  app.clock = null;
  app.outcome = null;
  app.view = null;
  const start = header.Start || game.start;
  let session;
  try {
    session = await analysisSession();
    await session.command(`uginewgame ${name}`);
    // each prefix of the record, replayed by the server: one position per move
    const commands = [];
    for (let ply = 0; ply <= moves.length; ply += 1) {
      const tail = ply ? ` moves ${moves.slice(0, ply).join(" ")}` : "";
      commands.push(`position fen ${start}${tail}`, "query position");
    }
    const lines = await session.request(commands);
    const problem = lines.find((l) => l.startsWith("error ") || l.startsWith("invalidmove "));
    if (problem) throw new ProtocolError(problem.replace(/^error \d+ \S+ /, ""));
    const positions = lines.filter((l) => l.startsWith("response ")).map((l) => l.slice(9));
    const outcome = await session.response("query outcome");
    if (generation !== app.generation) return;
    app.played = moves;
    app.positions = positions;
    app.position = positions[positions.length - 1];
    app.model = app.board.parse(app.position);
    app.outcome = outcome === "none" ? null : pairs(outcome);
    app.turn = "none";
    app.legal = [];
    ui.fileStatus.textContent = `Replaying ${moves.length} moves.`;
    render();
  } catch (error) {
    ui.fileStatus.textContent = `Cannot replay the record: ${error.message}`;
    app.mode = "idle";
  }
}

// -- start --------------------------------------------------------------------------------

async function main() {
  const params = new URLSearchParams(location.search);
  let features = { play: true, watch: false };
  try {
    const answer = await fetch("/config.json");
    if (answer.ok) features = await answer.json();
  } catch {
    // an older server: the play page only
  }
  if (features.watch && !features.play) {
    ui.setup.hidden = true;
    for (const id of ["#undo", "#analyse", "#stop", "#move-form", "#load-position"]) $(id).hidden = true;
    $("#watch").hidden = false;
    startWatching();
    return;
  }
  const lobby = new Session(wsUrl("/ws"));
  try {
    await lobby.open();
    app.info = await handshake(lobby);
  } catch (error) {
    setStatus(`Cannot reach the server: ${error.message}`, true);
    return;
  }
  app.analysisSession = lobby;
  fillSetup(params);
  if (params.get("game")) {
    await newGame(specFromForm(params.get("position")));
  } else {
    setStatus("Choose a game and press New game.");
  }
}

// -- watching an event --------------------------------------------------------------------
//
// A message only updates what the page knows; the page is drawn at most once every
// WATCH_DRAW_MS, and then only what changed (the line of each game that moved, the board of
// the game followed). The browser usually shares its machine with the match it watches, so
// its CPU is the engines' time: one full redraw per message cost 12 to 26 ms of the page's
// main thread each (more with more games listed), bursts of messages (a bot that answers at
// once, a reconnection's snapshot of a hundred games) were one redraw each, and a snapshot
// of 100 finished games took some 50 s of CPU to catch up with.

const WATCH_DRAW_MS = 100;

const watch = {
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
};

function startWatching() {
  app.mode = "watch";
  setStatus("Connecting to the event…");
  const socket = new WebSocket(wsUrl("/events"));
  socket.onmessage = (message) => watched(JSON.parse(message.data));
  socket.onclose = (event) => {
    if (watch.ended) {
      setStatus("The event has ended.");
    } else if (event.code === 1013) {
      setTimeout(startWatching, 1000); // fell behind: start again from a snapshot
    } else {
      setStatus(`The event's feed closed: ${event.reason || `code ${event.code}`}`, true);
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
      app.game = { name: message.game, colours: message.colours, start: "" };
      app.board = await boardFor(message.game);
      watch.head = watch.board = true;
      break;
    case "standings":
      watch.standings = message;
      watch.head = true;
      break;
    case "game":
      watch.games.set(message.id, { ...message, moves: [], positions: [message.position], result: null, turn: "p1", clock: message.clock });
      if (watch.following === null || isOver(watch.following)) watch.following = message.id;
      watch.changed.add(message.id);
      watch.board ||= watch.following === message.id;
      break;
    case "move": {
      const game = watch.games.get(message.id);
      if (!game) break;
      game.moves.push(message.move);
      game.positions.push(message.position);
      game.turn = message.turn;
      game.clock = message.clock;
      watch.changed.add(message.id);
      watch.board ||= watch.following === message.id;
      break;
    }
    case "result": {
      const game = watch.games.get(message.id);
      if (!game) break;
      game.result = message;
      watch.changed.add(message.id);
      watch.board ||= watch.following === message.id;
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

function isOver(id) {
  const game = watch.games.get(id);
  return !game || game.result !== null;
}

function follow(id) {
  watch.following = id;
  app.view = null;
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
    section.innerHTML =
      `<h2></h2><p data-testid="event-progress"></p>` +
      `<table data-testid="standings"><thead><tr><th>pairing</th><th>W</th><th>D</th><th>L</th><th>score</th><th>Elo</th><th>LLR</th></tr></thead><tbody></tbody></table>` +
      `<ul class="games" data-testid="games"></ul>`;
    watch.head = true;
  }
  if (watch.head) drawWatchHead(section, event);
  drawWatchGames(section.querySelector("ul.games"));
  if (watch.board) drawWatchBoard(event);
}

function drawWatchHead(section, event) {
  watch.head = false;
  const standings = watch.standings;
  section.querySelector("h2").textContent = `${event.name}: ${prettyGame(event.game)}, ${event.control}`;
  section.querySelector("[data-testid=event-progress]").textContent =
    `${standings ? standings.done : 0} of ${event.total} games played${watch.ended ? "; the event has ended" : ""}`;
  const rows = (standings ? standings.pairings : []).map((p) => {
    const elo = p.elo === null ? "–" : `${p.elo.toFixed(1)} ± ${p.elo_ci95 === null ? "∞" : p.elo_ci95.toFixed(1)}`;
    return `<tr><td>${escape(p.p1)} vs ${escape(p.p2)}</td><td>${p.wins}</td><td>${p.draws}</td><td>${p.losses}</td><td>${(100 * p.score).toFixed(1)}%</td><td>${elo}</td><td>${p.llr === null ? "" : p.llr.toFixed(2)}</td></tr>`;
  });
  section.querySelector("tbody").innerHTML = rows.join("");
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
      const item = document.createElement("li");
      button = document.createElement("button");
      button.type = "button";
      button.dataset.testid = `watch-game-${g.id}`;
      button.dataset.game = String(g.id);
      item.append(button);
      list.prepend(item); // the newest game first
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
  if (!game || !app.board) return;
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

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

main();
