// The new game form: the games and opponents the server offers, filled from the handshake and
// from a deep link's query (`/?game=yoxii&opponent=bot:alphabeta:Depth=1&side=p2&tc=60+1`).

import { app, ui, prettyGame, wsUrl } from "./state.js";

export function fillSetup(params) {
  for (const game of app.info.games) {
    ui.game.append(new Option(prettyGame(game.name), game.name));
  }
  const wanted = params.get("game");
  if (wanted && app.info.games.some((g) => g.name === wanted)) ui.game.value = wanted;
  fillOpponents(params.get("opponent"));
  fillSides(params.get("side"));
  if (params.get("tc")) {
    const tc = params.get("tc");
    if (![...ui.tc.options].some((o) => o.value === tc)) ui.tc.append(new Option(tc, tc));
    ui.tc.value = tc;
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

/** Shows ``name`` as the form's game (a replayed record's), its opponents and sides. */
export function showGame(name) {
  if (ui.game.value === name) return;
  ui.game.value = name;
  fillOpponents(ui.opponent.value);
  fillSides(ui.side.value);
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
