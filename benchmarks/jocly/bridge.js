'use strict';
// Between the project's Yohoho (rules.js: tokens and position strings) and Jocly's model of it
// (npm package jocly, games/yohoho/yohoho-model.js).
//
// Jocly's board: `pieces` is a list of {s: 1 White (PLAYER_A) | -1 Black, pos: cell, type, alive,
// index}, with type 'C' Admiral, 'c' Galleon, 'p' Chebec, 'r' Rock; `board[cell]` is the index
// of the piece standing there or -1. Cells are numbered as ours are (a1 = 0 ... q9 = 76;
// `game.g.Coord[cell]` is [row - 1, letter index]). `first` is the first-turn flag, `amirals`
// maps a side to its Admiral's piece index, `piecesWeight` counts each side's Galleons (2) and
// Chebecs (1) for the evaluation.
//
// A Jocly move is one whole turn: {t: 'm', m: [{f, t}, {f, t}]}, two sub-moves, or one with an
// empty second ({}) on White's first turn and for an Admiral stepping onto its goal row; or
// {t: 'a', af: [attacking cells], at: cell}, a capture of the ship on `at`. So one Jocly move is
// one, or two consecutive, of our tokens: 'M 1>10 21>30' is c1-d2 then i3-j4, 'A 30,22,23>31' is
// x:l4.

const rules = require('./rules.js');

const TO_JOCLY = { A: 'C', G: 'c', C: 'p', R: 'r' };
const FROM_JOCLY = { C: 'A', c: 'G', p: 'C', r: 'R' };
const WEIGHT = { c: 2, p: 1, C: 0, r: 0 };

class BridgeError extends Error {}

/** Jocly's numbering of the cells must be ours; the driver refuses to run otherwise. */
function checkGeometry(game) {
  const coord = game.g.Coord;
  if (coord.length !== rules.N_CELLS) {
    throw new BridgeError(`Jocly's board has ${coord.length} cells, not ${rules.N_CELLS}`);
  }
  rules.CELLS.forEach(([x, y], cell) => {
    if (coord[cell][0] !== y - 1 || coord[cell][1] !== x) {
      throw new BridgeError(`Jocly's cell ${cell} is ${coord[cell]}, not ${rules.NAMES[cell]}`);
    }
    for (let d = 0; d < 6; d++) {
      const theirs = game.g.Graph[cell][d];
      const ours = rules.NEIGHBOUR[cell][d];
      if ((theirs === null ? -1 : theirs) !== ours) {
        throw new BridgeError(`Jocly's neighbour ${d} of ${rules.NAMES[cell]} differs`);
      }
    }
  });
}

/** A Jocly board holding `state`'s pieces, in the order Jocly's own set-up lists them (rows
 * from 9 down, cells left to right), so that its move lists come out in Jocly's own order.
 * `state` must be in phase 1, or in phase 2 for a board the rest of the turn is searched on. */
function boardOf(game, state) {
  const board = new (game.GetBoardClass())(game);
  board.board = new Array(rules.N_CELLS).fill(-1);
  board.pieces = [];
  const counts = { 1: {}, '-1': {} };
  for (let y = 9; y >= 1; y--) {
    for (let cell = 0; cell < rules.N_CELLS; cell++) {
      const piece = state.board[cell];
      if (rules.CELLS[cell][1] !== y || piece === '') continue;
      const s = rules.owner(piece) === 0 ? 1 : -1;
      const type = TO_JOCLY[rules.kind(piece)];
      const index = counts[s][type] || 0;
      counts[s][type] = index + 1;
      board.board[cell] = board.pieces.length;
      board.pieces.push({ s, pos: cell, type, alive: true, index });
    }
  }
  board.first = state.first;
  board.amirals = {};
  board.piecesWeight = { '-1': 0, 1: 0 };
  board.pieces.forEach((p, i) => {
    if (p.type === 'C') board.amirals[p.s] = i;
    p.angle = p.s === 1 ? 0 : 180;
    board.piecesWeight[p.s] += WEIGHT[p.type];
  });
  const who = state.side === 0 ? 1 : -1;
  board.yohoho = board.YohohoAmiralCapture(game, who).risk;
  board.mMoves = [];
  board.mWho = who;
  return board;
}

/** The board cells of a Jocly board, as our one-letter strings. */
function cellsOf(board) {
  const cells = new Array(rules.N_CELLS).fill('');
  for (const p of board.pieces) {
    if (!p.alive) continue;
    const letter = FROM_JOCLY[p.type];
    cells[p.pos] = p.s === 1 ? letter : letter.toLowerCase();
  }
  return cells;
}

/** Our tokens for a Jocly move (one whole turn), unchecked. */
function tokensOfMove(move) {
  const name = (cell) => {
    const text = rules.NAMES[cell];
    if (text === undefined) throw new BridgeError(`Jocly move ${JSON.stringify(move)}: cell ${cell}`);
    return text;
  };
  if (move.t === 'a') return ['x:' + name(move.at)];
  if (move.t !== 'm') throw new BridgeError(`Jocly move ${JSON.stringify(move)}: unknown kind`);
  const tokens = [name(move.m[0].f) + '-' + name(move.m[0].t)];
  if (move.m[1] && move.m[1].f !== undefined) tokens.push(name(move.m[1].f) + '-' + name(move.m[1].t));
  return tokens;
}

/** The Jocly move for the tokens of one whole turn played on `board` (captures name their
 * attackers, as Jocly's own capture moves do). */
function moveOfTokens(board, tokens) {
  if (tokens[0].startsWith('x:')) {
    const at = rules.INDEX.get(tokens[0].slice(2));
    const victim = board.pieces[board.board[at]];
    const af = rules.NEIGHBOUR[at].filter((n) => {
      const p = n >= 0 && board.board[n] >= 0 ? board.pieces[board.board[n]] : null;
      return p !== null && p.alive && p.s === -victim.s && p.type !== 'r';
    });
    return { t: 'a', af, at };
  }
  const sub = (token) => {
    const [f, t] = token.split('-').map((cell) => rules.INDEX.get(cell));
    return { f, t };
  };
  return { t: 'm', m: [sub(tokens[0]), tokens.length > 1 ? sub(tokens[1]) : {}] };
}

/** A checker of whole turns from `state` (phase 1 or 2): given a Jocly move, its tokens if it
 * is one legal whole turn by our rules (every token legal, and the turn ending exactly with its
 * last token), else null. The legal tokens of each step are computed once per checker. */
function turnChecker(state) {
  const legal = new Map(); // the tokens so far, joined -> the Set of legal tokens next
  const step = (key, now) => {
    if (!legal.has(key)) legal.set(key, new Set(rules.legalTokens(now)));
    return legal.get(key);
  };
  return (move) => {
    let tokens;
    try {
      tokens = tokensOfMove(move);
    } catch (error) {
      return null;
    }
    let now = state;
    for (let i = 0; i < tokens.length; i++) {
      const allowed = step(tokens.slice(0, i).join(' '), now);
      if (!allowed.has(tokens[i])) return null;
      now = rules.apply(now, tokens[i]);
      const turnOver = now.side !== state.side;
      if (turnOver !== (i === tokens.length - 1)) return null;
    }
    return tokens;
  };
}

/** The tokens of Jocly `move` if it is one legal whole turn from `state`, else null. */
function legalTurn(state, move) {
  return turnChecker(state)(move);
}

/** Every legal whole turn from `state` (phase 1), as Jocly moves: the fallback when none of
 * Jocly's own candidates is legal. */
function allTurns(game, state) {
  const board = boardOf(game, state);
  const out = [];
  for (const first of rules.legalTokens(state)) {
    const after = rules.apply(state, first);
    if (after.side !== state.side) out.push(moveOfTokens(board, [first]));
    else for (const second of rules.legalTokens(after)) out.push(moveOfTokens(board, [first, second]));
  }
  return out;
}

module.exports = {
  BridgeError,
  checkGeometry,
  boardOf,
  cellsOf,
  tokensOfMove,
  moveOfTokens,
  turnChecker,
  legalTurn,
  allTurns,
};
