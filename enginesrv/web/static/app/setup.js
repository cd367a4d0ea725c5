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
  ui.game.addEventListener("change", () => {
    fillOpponents(ui.opponent.value);
    fillSides(ui.side.value);
  });
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
  const options = ui.botOptions.value.trim();
  if (opponent !== "human" && options) opponent += `:${options}`;
  return { game: ui.game.value, opponent, side: ui.side.value, tc: ui.tc.value, position };
}

/** The socket address of the game ``spec``, refereed by the server. */
export function gameUrl(spec) {
  const query = new URLSearchParams({ game: spec.game, opponent: spec.opponent, side: spec.side, tc: spec.tc });
  if (spec.position) query.set("position", spec.position);
  return wsUrl(`/ws?${query}`);
}
