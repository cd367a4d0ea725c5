// Yin Yang's model for the board module (rules/yinyang.md): squares and windows, the laws and
// their validity (R2, R3), the position string (§8) and where a law applies (R5).

const FILES = "abcd";
const SQUARES = [];
for (let r = 1; r <= 4; r++) for (const f of FILES) SQUARES.push(f + r);
const ANCHORS = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"];
const CELL_NAMES = ["TL", "TR", "BL", "BR"];
const CELL_WORDS = ["top-left", "top-right", "bottom-left", "bottom-right"];
const GLYPH = { b: "●", w: "○", ".": "◌" };
const COLOUR_WORD = { b: "black", w: "white", ".": "empty" };
const sqName = (f, r) => FILES[f] + (r + 1);
const rev = (s) => s.split("").reverse().join("");

/** The absolute squares of a window: TL, TR, BL, BR as Black sees the board (rules §2). */
function windowSquares(anchor) {
  const f = FILES.indexOf(anchor[0]);
  const r = Number(anchor[1]) - 1;
  return [sqName(f, r + 1), sqName(f + 1, r + 1), sqName(f, r), sqName(f + 1, r)];
}

/** The square a person clicks for a window: its bottom-left square as the board is drawn. */
function windowTarget(anchor, flipped) {
  const cells = windowSquares(anchor);
  return flipped ? cells[1] : cells[2]; // turned 180 degrees, the absolute top-right is bottom-left
}

// -- laws (rules R2, R3) ---------------------------------------------------------------------

const LAW_RE = /^[bw.]{4}>(?:[bw.]{4}|\*)$/;

/** "destruction", "regeneration", "adaptation", or "" for a text that is not a valid law. */
function lawKind(text) {
  if (whyInvalid(text)) return "";
  if (text[5] === "*") return "adaptation";
  const changed = [0, 1, 2, 3].filter((i) => text[i] !== text[5 + i]).length;
  return changed === 1 ? "destruction" : "regeneration";
}

/** Why a law text is not valid (R3), or "" when it is. */
function whyInvalid(text) {
  if (!LAW_RE.test(text)) {
    return "write CAUSE>EFFECT: four cells of b, w or . each, the effect four cells or *";
  }
  if (text[5] === "*") return "";
  const cause = text.slice(0, 4);
  const effect = text.slice(5);
  const removed = [];
  const added = [];
  for (let i = 0; i < 4; i++) {
    if (cause[i] === effect[i]) continue;
    if (cause[i] !== "." && effect[i] !== ".") return `a piece cannot change colour (${CELL_WORDS[i]})`;
    (cause[i] === "." ? added : removed).push(i);
  }
  if (!removed.length && !added.length) {
    return "the effect changes nothing: remove one piece, add two pieces of one colour, or make it an adaptation (*)";
  }
  if (removed.length && added.length) return "a law either removes one piece or adds two, not both";
  if (removed.length) return removed.length === 1 ? "" : "a destruction removes exactly one piece";
  if (added.length !== 2) return "a regeneration adds exactly two pieces";
  if (effect[added[0]] !== effect[added[1]]) return "the two pieces a regeneration adds must be of one colour";
  return "";
}

let lawList = null;
/** The 405 valid laws, sorted. */
function allLaws() {
  if (!lawList) {
    const pats = [...Array(81).keys()].map((n) => [27, 9, 3, 1].map((d) => ".bw"[Math.floor(n / d) % 3]).join(""));
    lawList = pats.flatMap((c) => [...pats, "*"].map((e) => `${c}>${e}`)).filter((t) => !whyInvalid(t)).sort();
  }
  return lawList;
}

// -- the position string (rules §8) ----------------------------------------------------------

function parseLaws(text, who) {
  if (text === "none") return null;
  const entries = text.split(",");
  if (entries.length !== 4) throw new Error(`${who}'s laws need four entries`);
  return entries.map((e) => {
    if (e === "?") return { state: "?", text: null };
    const law = e.slice(1);
    if ((e[0] !== "+" && e[0] !== "-") || whyInvalid(law)) throw new Error(`bad law entry ${JSON.stringify(e)}`);
    return { state: e[0], text: law };
  });
}

function parse(position) {
  const fields = String(position).trim().split(" ");
  if (fields.length !== 8) throw new Error("a Yin Yang position has 8 fields");
  const [boardText, side, phase, lawsB, lawsW, resB, resW, turn] = fields;
  const rows = boardText.split("/");
  if (rows.length !== 4 || rows.some((row) => !/^[bw.]{4}$/.test(row))) {
    throw new Error("the board is four rows of four cells b, w or .");
  }
  const board = {};
  rows.forEach((row, i) => [...row].forEach((c, f) => (board[sqName(f, 3 - i)] = c)));
  if (side !== "b" && side !== "w") throw new Error("side must be b or w");
  if (!["setup", "start", "moved"].includes(phase)) throw new Error("phase must be setup, start or moved");
  const ints = [resB, resW, turn].map((t) => {
    if (!/^(0|[1-9][0-9]*)$/.test(t)) throw new Error(`bad number ${JSON.stringify(t)}`);
    return Number(t);
  });
  return {
    board,
    side: side === "b" ? 0 : 1,
    phase,
    laws: [parseLaws(lawsB, "Black"), parseLaws(lawsW, "White")],
    reserves: [ints[0], ints[1]],
    turn: ints[2],
  };
}

/** The absolute patterns of the nine windows of a board, in anchor order. */
const windowPatterns = (board) => ANCHORS.map((a) => windowSquares(a).map((sq) => board[sq]).join(""));

/** The absolute cause of a law its owner wrote. */
const absCause = (text, owner) => (owner ? rev(text.slice(0, 4)) : text.slice(0, 4));

/**
 * The (slot, anchor) pairs where the side to act may apply a law now (rules R5), from the laws
 * the model knows: a `?` law is never counted (the page only ever needs the acting side's own).
 */
function applications(model) {
  const p = model.side;
  const own = model.laws[p];
  if (!own || model.phase === "setup") return [];
  const revealed = [];
  model.laws.forEach((laws, q) => (laws || []).forEach((e, k) => {
    if (e.state === "+") revealed.push([q, k, absCause(e.text, q)]);
  }));
  const windows = windowPatterns(model.board);
  const out = [];
  own.forEach((e, k) => {
    if (!e.text) return;
    const cause = absCause(e.text, p);
    if (revealed.some(([q, j, c]) => c === cause && !(q === p && j === k))) return;
    if (lawKind(e.text) === "regeneration") {
      const colour = [...e.text.slice(5)].find((c, i) => c !== e.text[i]);
      if (model.reserves[colour === "b" ? 0 : 1] < 2) return;
    }
    windows.forEach((w, i) => w === cause && out.push([k + 1, ANCHORS[i]]));
  });
  return out;
}

/** Whether a goal decides the game now (rules §6, checks 1-3). */
const goalTaken = (m) => m.phase === "start" && m.turn >= 1 && (m.board.d4 === "b" || m.board.a1 === "w");

/** The place name of a player's law card (``p`` 0 Black, ``k`` from 0): law-b1 ... law-w4. */
const lawPlace = (p, k) => `law-${"bw"[p]}${k + 1}`;

export {
  lawPlace, FILES, SQUARES, ANCHORS, CELL_NAMES, CELL_WORDS, GLYPH, COLOUR_WORD, rev, windowSquares, windowTarget, LAW_RE, lawKind, whyInvalid, allLaws, parse, windowPatterns, absCause, applications, goalTaken,
};
