// The new game form: the games and opponents the server offers, filled from the handshake and
// from a deep link's query (`/?game=yoxii&opponent=bot:alphabeta:Depth=1&side=p2&tc=60+1`).

import { app, ui, prettyGame, wsUrl } from "./state.js";

/** A value of a link, quoted and cut short for a message. */
const quoted = (text) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);

/** A time control as a link may carry one (`300+3`, `40/600`, `none`): the server judges it. */
const TC_RE = /^(?:none|[0-9]{1,6}\/)?[0-9:.]{0,12}(?:\+[0-9.]{1,8})?$/;

/**
 * Fills the form from the handshake and a deep link's query; returns what the link asks for
 * that this server does not offer, in words (empty: the link's game may start).
 */
export function fillSetup(params) {
  for (const game of app.info.games) {
    ui.game.append(new Option(prettyGame(game.name), game.name));
  }
  const problems = [];
  let wanted = params.get("game");
  if (wanted && wanted.includes(" ")) wanted = wanted.replaceAll(" ", "+"); // yinsh+blitz unescaped
  params.set("game", wanted || "");
  if (wanted && app.info.games.some((g) => g.name === wanted)) ui.game.value = wanted;
  else if (wanted) {
    const names = app.info.games.map((g) => g.name).join(", ");
    problems.push(`the game ${quoted(wanted)}, which this server does not play (it plays ${names})`);
  }
  const opponent = params.get("opponent");
  if (!fillOpponents(opponent) && !problems.length) {
    const offered = [...ui.opponent.options].map((o) => o.value).join(", ");
    problems.push(`the opponent ${quoted(opponent)}, which this server does not offer in this game (it offers ${offered})`);
  }
  const side = params.get("side");
  fillSides(side);
  if (side !== null && side !== "p1" && side !== "p2") problems.push(`the side ${quoted(side)} (p1 or p2)`);
  const tc = (params.get("tc") || "").replaceAll(" ", "+"); // 300+3 with its "+" unescaped
  if (tc && TC_RE.test(tc)) {
    if (![...ui.tc.options].some((o) => o.value === tc)) ui.tc.append(new Option(tc, tc));
    ui.tc.value = tc;
  } else if (tc) {
    problems.push(`the clock ${quoted(tc)}, which is not a time control (such as 300+3)`);
  }
  // a link's one Level=N the list offers goes to the list; anything else stays in the box,
  // for the server to take or refuse with its reason
  const linked = levelOf(ui.botOptions.value);
  fillLevels(linked);
  if (linked !== null && ui.level.value === linked) {
    ui.botOptions.value = ui.botOptions.value.split(",").filter((o) => o !== `Level=${linked}`).join(",");
  }
  ui.game.addEventListener("change", () => {
    fillOpponents(ui.opponent.value);
    fillSides(ui.side.value);
    fillLevels(ui.level.value);
  });
  ui.opponent.addEventListener("change", () => fillLevels(ui.level.value));
  return problems;
}

/** The one `Level=N` among bot options typed as `Name=value,...`; null when there is none,
 * "" when there are several (they are left for the server to judge). */
function levelOf(options) {
  const found = options.split(",").filter((o) => /^Level=/i.test(o.trim()));
  if (found.length !== 1) return found.length ? "" : null;
  return found[0].trim().slice("Level=".length);
}

/** The levels of the bot chosen, by name and Elo in the game chosen (the handshake's `level`
 * lines); hidden for an opponent without levels. The last level, full strength, first. */
function fillLevels(wanted) {
  const [kind, name] = ui.opponent.value.split(":");
  const bot = kind === "bot" ? app.info.bots.find((b) => b.name === name) : null;
  const levels = new Map();
  for (const entry of (bot && bot.levels) || []) {
    if (!levels.has(entry.level) || entry.game === ui.game.value) levels.set(entry.level, entry);
  }
  const options = [...levels.values()]
    .sort((a, b) => b.level - a.level)
    .map((entry) => {
      const known = entry.game === ui.game.value && entry.elo !== null;
      const elo = known ? `, Elo ${entry.elo} ± ${entry.interval}` : "";
      return new Option(`${entry.level} ${entry.name}${elo}`, String(entry.level));
    });
  ui.level.replaceChildren(...options);
  ui.levelLabel.hidden = !options.length;
  if (wanted && options.some((o) => o.value === String(wanted))) ui.level.value = String(wanted);
}

/** The opponents of the game chosen, ``wanted`` selected; false when it is not one of them. */
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
      return true;
    }
  }
  const preferred = [...ui.opponent.options].find((o) => o.value === "bot:alphabeta");
  if (preferred) ui.opponent.value = preferred.value;
  return !wanted;
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

/** Shows ``name`` as the form's game (a replayed record's), its opponents and sides. */
export function showGame(name) {
  if (ui.game.value === name) return;
  ui.game.value = name;
  fillOpponents(ui.opponent.value);
  fillSides(ui.side.value);
  fillLevels(ui.level.value);
}

/** The game the form asks for, from `position` if given. */
export function specFromForm(position = null) {
  let opponent = ui.opponent.value;
  let options = ui.botOptions.value.trim();
  if (!ui.levelLabel.hidden && ui.level.value && levelOf(options) === null) {
    // the level picked, unless the options typed name one; the strongest offered (the
    // list's first: full strength, the bot's own default) needs none
    const level = ui.level.value === ui.level.options[0].value ? "" : `Level=${ui.level.value}`;
    options = [options, level].filter(Boolean).join(",");
  }
  if (opponent !== "human" && options) opponent += `:${options}`;
  return { game: ui.game.value, opponent, side: ui.side.value, tc: ui.tc.value, position };
}

/** The socket address of the game ``spec``, refereed by the server. */
export function gameUrl(spec) {
  const query = new URLSearchParams({ game: spec.game, opponent: spec.opponent, side: spec.side, tc: spec.tc });
  if (spec.position) query.set("position", spec.position);
  return wsUrl(`/ws?${query}`);
}
