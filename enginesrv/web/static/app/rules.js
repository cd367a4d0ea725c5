// How to play: the rules of the game chosen, in a dialog, one click from the game screen;
// each game's text is a module of plain data (static/rules/<game>.js), its diagrams drawn by
// the game's own board module.

import { app, ui, $, boardFor, el } from "./state.js";
import { SVG_NS } from "../games/board.js";

const dialog = $("#rules-dialog");
const body = $("#rules");

/** The game whose rules the button shows: the one on the screen, or the one chosen. */
function gameShown() {
  return (app.game && app.game.name) || ui.game.value || "yinsh";
}

async function showRules() {
  const name = gameShown();
  const file = name.split("+")[0];
  let rules;
  let board;
  try {
    rules = (await import(`../rules/${file}.js`)).default;
    board = await boardFor(name);
  } catch (error) {
    body.replaceChildren(el("p", {}, `The rules of ${name} cannot be shown: ${error.message}`));
    dialog.showModal();
    return;
  }
  const info = app.info ? app.info.games.find((g) => g.name === name) : null;
  const colours = info ? info.colours : ["p1", "p2"];
  const title = el("h2", { id: "rules-title", tabIndex: -1 }, rules.title);
  const parts = [title, el("p", {}, rules.summary)];
  for (const section of rules.sections) {
    parts.push(el("h3", {}, section.heading), ...section.paragraphs.map((text) => el("p", {}, text)));
    if (section.diagram) parts.push(diagram(board, section.diagram, colours));
  }
  parts.push(el("h3", {}, "Common mistakes"), el("ul", {}, ...rules.mistakes.map((text) => el("li", {}, text))));
  body.replaceChildren(...parts);
  body.dataset.game = name;
  dialog.showModal();
  // opened at the title (the dialog would scroll to its first button, Close, at the bottom)
  title.focus({ preventScroll: true });
  dialog.scrollTop = 0;
}

/** A figure of ``spec.position`` drawn by ``board``, its ``marks`` ringed. */
function diagram(board, spec, colours) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", spec.caption);
  const figure = el("figure", {}, svg, el("figcaption", {}, spec.caption));
  try {
    board.draw(svg, board.parse(spec.position), { flipped: false, colours });
    for (const mark of spec.marks || []) {
      const node = svg.querySelector(`[data-square="${CSS.escape(mark)}"]`);
      if (node) node.setAttribute("data-mark", "true");
    }
    // a picture, not a board: the page's hooks ([data-square], [data-choice]) stay the board's
    for (const node of svg.querySelectorAll("[data-square], [data-choice], [data-place]")) {
      for (const hook of ["data-square", "data-choice", "data-place"]) node.removeAttribute(hook);
    }
  } catch (error) {
    figure.replaceChildren(el("p", {}, `(the diagram cannot be drawn: ${error.message})`));
  }
  return figure;
}

$("#how-to-play").addEventListener("click", () => showRules());
