// Yin Yang board (rules/yinyang.md): a 4x4 board, two goal corners, shared reserves and each
// player's four laws drawn as dominoes (cause 2x2 -> effect 2x2, or * for an adaptation).
//
// Steps of the tokens (the page knows no rules; see board.js):
//   b2-c2                 [b2] [c2]
//   end                   (end turn)
//   L1@a2                 (law 1) [window square]
//   L3@a3:keep            (law 3) [window square] (keep all laws)
//   L3@c1:L2=bw.b>b..b    (law 3) [window square] (rewrite law 2) (top row) (bottom row) (effect)
// The window square is the window's bottom-left square as the board is drawn: the anchor itself,
// or the square diagonally above-right of it (absolute) on a board turned 180 degrees. One square
// names one window. draw() records its orientation in the model (model.drawnFlipped) so that
// steps() agrees with what the person sees; a model never drawn counts as not flipped.
// setup: too many tokens to list; compose() builds a law editor instead.
//
// The model, the drawing and the law editor are yinyang_model.js, yinyang_draw.js and
// yinyang_editor.js.

import { GLYPH, LAW_RE, goalTaken, lawKind, lawPlace, parse, rev, windowSquares, windowTarget } from "./yinyang_model.js";
import { draw } from "./yinyang_draw.js";
import { compose } from "./yinyang_editor.js";

// -- steps, hints, squares -------------------------------------------------------------------

const glyphs = (cells) => [...cells].map((c) => GLYPH[c]).join("");

/** Whether the side to act's laws appear turned 180 degrees on the board as drawn. */
const turnedFor = (model) => Boolean(model) && (model.side === 1) !== Boolean(model.drawnFlipped);

const APPLY_RE = /^L([1-4])@([a-c][1-3])(?::(keep|L([1-4])=(.+)))?$/;

function steps(token, model) {
  let m = /^([a-d][1-4])-([a-d][1-4])$/.exec(token);
  if (m) return [{ square: m[1] }, { square: m[2] }];
  if (token === "end") return [{ choice: "end", label: "end turn" }];
  m = APPLY_RE.exec(token);
  if (!m) return [{ choice: token, label: token.startsWith("laws:") ? "write laws" : token }];
  const out = [
    { choice: `L${m[1]}`, label: `law ${m[1]}` },
    { square: windowTarget(m[2], Boolean(model && model.drawnFlipped)) },
  ];
  if (m[3] === "keep") {
    out.push({ choice: "keep", label: "keep all laws" });
  } else if (m[3]) {
    const law = m[5];
    out.push({ choice: `L${m[4]}=`, label: `rewrite law ${m[4]}` });
    if (LAW_RE.test(law)) {
      // The new law's rows as the board is drawn (the token keeps the owner's reading).
      const turned = turnedFor(model);
      const cause = turned ? rev(law.slice(0, 4)) : law.slice(0, 4);
      const effect = turned ? rev(law.slice(5)) : law.slice(5);
      const kind = lawKind(law);
      out.push(
        { choice: `top:${cause.slice(0, 2)}`, label: `cause top ${glyphs(cause.slice(0, 2))}` },
        { choice: `bottom:${cause.slice(2)}`, label: `cause bottom ${glyphs(cause.slice(2))}` },
        {
          choice: `>${effect}`,
          label: kind === "adaptation" ? "adaptation (*)" : `${kind === "destruction" ? "destroy" : "regenerate"} → ` +
            `${glyphs(effect.slice(0, 2))} ${glyphs(effect.slice(2))}`,
        },
      );
    } else {
      out.push({ choice: law, label: law }); // a shown form ("?"): never a legal token
    }
  }
  return out;
}

const WINDOW_HINT = "(a law: pick it, then the bottom-left square of its window)";

function hint(model) {
  if (model.phase === "setup") return "write your four laws";
  if (model.phase === "moved") return `apply a law or end the turn ${WINDOW_HINT}`;
  if (goalTaken(model)) return "game over: a goal is taken";
  return `move a piece or apply a law ${WINDOW_HINT}`;
}

/** The places a token touched, played in ``model``'s position: a piece's two squares; a law's
 * card (and the card it rewrites), then its window's squares. */
function squares(token, model) {
  let m = /^([a-d][1-4])-([a-d][1-4])$/.exec(token);
  if (m) return [m[1], m[2]];
  m = APPLY_RE.exec(token);
  if (!m) return [];
  const cards = !model ? [] : [lawPlace(model.side, Number(m[1]) - 1)];
  if (model && m[4]) cards.push(lawPlace(model.side, Number(m[4]) - 1));
  return [...cards, ...windowSquares(m[2])];
}

/** The end of a game in words (the contract's `ending`). */
function ending(outcome, names) {
  if (outcome.winner !== "p1" && outcome.winner !== "p2") return null;
  const seat = outcome.winner === "p1" ? 0 : 1;
  const [winner, loser] = [names[seat], names[1 - seat]];
  const endings = {
    goal: `a ${winner.toLowerCase()} piece stands on ${seat === 0 ? "d4" : "a1"}`,
    "both-goals": `both goals were filled on ${winner}'s turn`,
    "no-legal-token": `${loser} has no legal move`,
  };
  return Object.hasOwn(endings, outcome.reason) ? `${winner} wins: ${endings[outcome.reason]}` : null;
}

/** The seat to act (the contract's `toAct`). */
const toAct = (model) => model.side;

/** What stands on each occupied square (the contract's `cells`): b or w; and each law card as
 * the model knows it (hidden or revealed, and its text), so that a law applied, revealed,
 * written or rewritten marks its card. */
function occupied(model) {
  const out = Object.fromEntries(Object.entries(model.board).filter(([, cell]) => cell !== "."));
  model.laws.forEach((laws, p) => (laws || []).forEach((entry, k) => {
    out[lawPlace(p, k)] = `${entry.state}${entry.text ?? ""}`;
  }));
  return out;
}

/** The status line after some steps of a move (the contract's `stepHint`). */
function stepHint(model, picked) {
  const [first, second] = picked;
  const legend = `(${GLYPH.b} black, ${GLYPH.w} white, ${GLYPH["."]} empty; rows as the board is drawn)`;
  if (first.square && picked.length === 1) return `move the piece on ${first.square}: click where it goes`;
  if (!first.choice || !/^L[1-4]$/.test(first.choice)) return null;
  const law = `law ${first.choice.slice(1)}`;
  if (picked.length === 1) return `${law}: click the bottom-left square of the window it applies to`;
  const where = `${law} at ${second.square}`;
  const last = picked[picked.length - 1].choice || "";
  if (picked.length === 2) return `${where}: keep all laws, or rewrite one (the adaptation's choice)`;
  if (/^L[1-4]=$/.test(last)) return `${where}, rewriting law ${last[1]}: pick the top row of its cause ${legend}`;
  if (last.startsWith("top:")) return `${where}: pick the bottom row of the new law's cause ${legend}`;
  if (last.startsWith("bottom:")) return `${where}: pick the new law's effect ${legend}`;
  return null;
}

export default { names: ["yinyang"], hidden: true, parse, draw, steps, hint, squares, compose, ending, toAct, cells: occupied, stepHint };
export { SQUARES, ANCHORS, applications, lawKind, whyInvalid, allLaws, windowSquares, windowTarget } from "./yinyang_model.js";
