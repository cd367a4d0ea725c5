// Analysing a whole game ("Analyse this game"): every position of it searched (one `analyse`
// request a hundred positions), each move judged as `enginesrv analyse` judges it
// (docs/tournaments.md: the drop of the mover's winning chance, read from the bot's scores by
// its handshake's `expectation` scale; ?! from 10 points, ? from 20, ?? from 30), a graph of
// the first player's winning chance over the plies, each point going to its ply, and each
// player's accuracy (lichess's, as `enginesrv analyse` sums it up).

import { app, $, el } from "./state.js";
import { SVG_NS } from "../games/board.js";
import { expectationScale, stopAnalysis, winChance, withSession } from "./analysis.js";
import { render } from "./render.js";
import { showPly } from "./input.js";

const MARKS = [[30, "??"], [20, "?"], [10, "?!"]];
const CHUNK = 100; // positions a request

/** A move's accuracy (0 to 100) from its loss in points (lichess's curve; judge.py). */
const accuracy = (loss) => Math.max(0, Math.min(100, 103.1668 * Math.exp(-0.04354 * loss) - 3.1669));

/** The winning chance (0 to 1) an `analysisinfo` line's score gives the side to act. */
function chance(line, scale) {
  const match = / score (cp|win|loss) (-?\d+)/.exec(line);
  return match ? winChance(match[1], Number(match[2]), scale) : null;
}

let cancelled = false;

async function reviewGame() {
  const shown = $("#review-status");
  if (!app.game || !app.board || !app.played.length) return;
  if (app.board.hidden) {
    shown.textContent = "A game of hidden laws is analysed on each side's own view (enginesrv analyse); the page holds only yours.";
    return;
  }
  const scale = expectationScale();
  const positions = app.positions.slice(0, app.played.length + 1);
  if (!scale || positions.length !== app.played.length + 1 || positions.some((p) => !p)) {
    shown.textContent = "This game cannot be analysed here (its positions or the bot's scale are not known).";
    return;
  }
  await stopAnalysis();
  const [board, played, outcome] = [app.board, app.played, app.outcome];
  const limit = $("#review-limit");
  const limits = limit.value;
  const limitText = limit.selectedOptions[0].textContent;
  app.reviewing = true;
  $("#review").disabled = true;
  $("#stop").disabled = false; // Stop ends it
  shown.textContent = `Analysing ${positions.length} positions…`;
  let answers;
  try {
    answers = await withSession(async (session) => {
      await session.command(`uginewgame ${app.game.name}`);
      await session.command("setoption name MultiPV value 1");
      const out = new Map();
      for (let at = 0; at < positions.length && app.reviewing; at += CHUNK) {
        const items = positions.slice(at, at + CHUNK).map((position, i) => ({ id: `ply${at + i}`, position }));
        for (const [id, answer] of await session.analyse(items, limits)) out.set(id, answer);
        shown.textContent = `Analysing: ${Math.min(at + CHUNK, positions.length)} of ${positions.length} positions`;
      }
      return out;
    });
  } catch (error) {
    shown.textContent = `Cannot analyse the game: ${error.message}`;
    return;
  } finally {
    cancelled = !app.reviewing;
    app.reviewing = false;
    $("#stop").disabled = !app.analysing;
    $("#review").disabled = false;
  }
  if (cancelled || app.board !== board || app.played !== played) {
    shown.textContent = app.played === played ? "The game's analysis was stopped." : "";
    return;
  }
  const models = positions.map((position) => board.parse(position));
  const toAct = models.map((model) => board.toAct(model));
  // the side to act's chance in each position; a finished one by its outcome
  const chances = positions.map((_, i) => {
    const answer = answers.get(`ply${i}`);
    const line = answer.info.find((l) => / multipv 1 /.test(l)) || answer.info[0];
    return line ? chance(line, scale) : null;
  });
  const final = (seat) => (!outcome ? null : outcome.winner === "draw" ? 0.5 : outcome.winner === `p${seat + 1}` ? 1 : 0);
  const forSeat = (i, seat) => {
    if (chances[i] === null) return i === positions.length - 1 ? final(seat) : null;
    return toAct[i] === seat ? chances[i] : 1 - chances[i];
  };
  // each move's loss (null: not judged, as enginesrv analyse leaves the last move of a game
  // that did not end by the rules, or a move whose search failed)
  const losses = played.map((_, k) => {
    const mover = toAct[k];
    if (mover === null || (k === played.length - 1 && !outcome)) return null;
    const [before, after] = [forSeat(k, mover), forSeat(k + 1, mover)];
    return before === null || after === null ? null : Math.max(0, (before - after) * 100);
  });
  const marks = losses.map((loss) => (loss === null ? "" : (MARKS.find(([threshold]) => loss >= threshold) || [0, ""])[1]));
  const seats = [0, 1].map((seat) => {
    const mine = losses.filter((loss, k) => loss !== null && toAct[k] === seat);
    const count = (mark) => marks.filter((m, k) => m === mark && toAct[k] === seat).length;
    const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
    return { moves: mine.length, loss: mean(mine), accuracy: mean(mine.map(accuracy)), marks: MARKS.map(([, m]) => count(m)) };
  });
  app.review = { played, marks, losses, seats, curve: positions.map((_, i) => forSeat(i, 0)) };
  const counts = ["??", "?", "?!"].map((mark) => `${marks.filter((m) => m === mark).length} ${mark}`);
  shown.textContent = `Analysed at ${limitText}: ${counts.join(", ")}. The graph is ${app.game.colours[0]}'s winning chance; a point shows its move.`;
  drawGraph();
  render();
}

/** The graph of ``app.review``: the first player's chance after each ply, one point a ply. */
export function drawGraph() {
  const holder = $("#eval-graph");
  const review = app.review;
  if (!review || review.played !== app.played) {
    holder.replaceChildren();
    return;
  }
  // 3 units a ply (at least 300): a long game's graph scrolls sideways in its box
  const [width, height] = [Math.max(300, 3 * review.curve.length), 100];
  const x = (i) => (i * width) / Math.max(1, review.curve.length - 1);
  const y = (p) => (1 - p) * height;
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", `-4 -4 ${width + 8} ${height + 8}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${app.game.colours[0]}'s winning chance over the game (← and → step through the moves)`);
  const line = document.createElementNS(SVG_NS, "polyline");
  line.setAttribute("points", review.curve.map((p, i) => (p === null ? "" : `${x(i)},${y(p)}`)).filter(Boolean).join(" "));
  line.setAttribute("class", "eval-line");
  const middle = document.createElementNS(SVG_NS, "line");
  Object.entries({ x1: 0, x2: width, y1: height / 2, y2: height / 2, class: "eval-middle" }).forEach(([k, v]) => middle.setAttribute(k, String(v)));
  const points = document.createElementNS(SVG_NS, "g");
  points.dataset.testid = "eval-graph";
  review.marks.forEach((mark, k) => {
    const p = review.curve[k + 1];
    const dot = document.createElementNS(SVG_NS, "circle");
    dot.setAttribute("cx", String(x(k + 1)));
    dot.setAttribute("cy", String(y(p === null ? 0.5 : p)));
    dot.setAttribute("r", mark ? "3.5" : "2");
    if (p === null) dot.setAttribute("class", "eval-unknown"); // no score: hollow, not even
    dot.dataset.ply = String(k + 1);
    if (mark) dot.dataset.mark = mark;
    const loss = review.losses[k];
    if (loss !== null) dot.dataset.loss = String(loss);
    const title = document.createElementNS(SVG_NS, "title");
    const lost = loss === null ? "" : `, lost ${loss.toFixed(1)} points`;
    title.textContent = `move ${k + 1}: ${review.played[k]}${mark ? ` ${mark}` : ""}${lost}`;
    dot.append(title);
    points.append(dot);
  });
  svg.append(middle, line, points);
  holder.replaceChildren(
    el("div", { className: "eval-scroll" }, svg),
    el("p", { className: "eval-legend" }, "Click a point (or press ← →) to see the position after that move."),
    summary(review),
  );
}

/** Each player's moves judged: how many, the accuracy, the mean loss and the marks. */
function summary(review) {
  const cell = (field, text) => el("td", { dataset: { field } }, text);
  const fixed = (value) => (value === null ? "–" : value.toFixed(1));
  const head = el("tr", {}, ...["", "moves", "accuracy", "mean loss", ...MARKS.map(([, m]) => m)].map((t) => el("th", { scope: "col" }, t)));
  const rows = review.seats.map((seat, i) => el("tr", { dataset: { seat: String(i) } },
    el("th", { scope: "row" }, app.game.colours[i]),
    cell("moves", String(seat.moves)), cell("accuracy", fixed(seat.accuracy)), cell("loss", fixed(seat.loss)),
    ...MARKS.map(([, m], j) => cell(m, String(seat.marks[j])))));
  return el("table", { className: "eval-summary", dataset: { testid: "review-summary" } },
    el("caption", {}, "Accuracy: 100 when no move lost winning chance; mean loss in points of it"),
    el("thead", {}, head), el("tbody", {}, ...rows));
}

$("#review").addEventListener("click", () => reviewGame());
$("#eval-graph").addEventListener("click", (event) => {
  const dot = event.target instanceof Element ? event.target.closest("[data-ply]") : null;
  if (dot) showPly(Number(dot.dataset.ply));
});
