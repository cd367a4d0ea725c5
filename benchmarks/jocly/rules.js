'use strict';
// The project's Yohoho rules (docs/yohoho.md), small and plain: what the driver checks every
// token against, in both directions. Cells are numbered as Jocly numbers them (a1 = 0, row by
// row, q9 = 76), and the six directions are in Jocly's order (E NE NW W SW SE = 0..5).
//
// A state is {board: array of 77 one-letter strings ('' empty; A G C R White, a g c r Black),
// side: 0 White | 1 Black, pending: -1 | the cell of the piece that made the first sub-move,
// first: true only before White's first token}.

const LETTERS = 'abcdefghijklmnopq';
const CELLS = []; // [x, y]
for (let y = 1; y <= 9; y++) {
  for (let x = 0; x < 17; x++) {
    if ((x + y) % 2 === 1) CELLS.push([x, y]);
  }
}
const N_CELLS = CELLS.length; // 77
const NAMES = CELLS.map(([x, y]) => LETTERS[x] + y);
const INDEX = new Map(NAMES.map((name, i) => [name, i]));
const XY_INDEX = new Map(CELLS.map(([x, y], i) => [x * 16 + y, i]));
const DIRS = [[2, 0], [1, 1], [-1, 1], [-2, 0], [-1, -1], [1, -1]];
const NEIGHBOUR = CELLS.map(([x, y]) =>
  DIRS.map(([dx, dy]) => {
    const i = XY_INDEX.get((x + dx) * 16 + (y + dy));
    const inside = x + dx >= 0 && x + dx < 17 && y + dy >= 1 && y + dy <= 9;
    return inside && i !== undefined ? i : -1;
  }),
);
const STRENGTH = { A: 5, G: 3, C: 2, R: 0 };
const RANGE = { A: 1, G: 2, C: 3, R: 16 };
const SHIP_DIRS = [1, 2, 3, 4, 5]; // never E: the wind blows from the east
const ROCK_DIRS = [0, 1, 2, 3, 4, 5];
const START = '1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1';

const owner = (piece) => (piece === piece.toUpperCase() ? 0 : 1);
const kind = (piece) => piece.toUpperCase();
const goalRow = (side) => (side === 0 ? 9 : 1);

class RulesError extends Error {}

function enemyStrength(board, cell, side) {
  let sum = 0;
  for (const n of NEIGHBOUR[cell]) {
    if (n >= 0 && board[n] !== '' && owner(board[n]) !== side) sum += STRENGTH[kind(board[n])];
  }
  return sum;
}

function admiralCell(board, side) {
  const admiral = side === 0 ? 'A' : 'a';
  return board.indexOf(admiral);
}

/** The cells the piece on `from` may move to on `board` (rules 1-4 and 7). */
function destinations(board, from) {
  const piece = board[from];
  const side = owner(piece);
  const k = kind(piece);
  const out = [];
  for (const d of k === 'R' ? ROCK_DIRS : SHIP_DIRS) {
    let cell = from;
    for (let step = 0; step < RANGE[k]; step++) {
      cell = NEIGHBOUR[cell][d];
      if (cell < 0 || board[cell] !== '') break;
      if (k !== 'A' || enemyStrength(board, cell, side) <= 5) out.push(cell);
    }
  }
  return out;
}

/** Whether some piece of `side` other than the one on `except` can move (rule 13). */
function canMoveAnother(board, side, except) {
  for (let c = 0; c < N_CELLS; c++) {
    if (c !== except && board[c] !== '' && owner(board[c]) === side) {
      if (destinations(board, c).length > 0) return true;
    }
  }
  return false;
}

/** Enemy Galleons and Chebecs that `side` may capture (rule 8), with the Arno filter (9a). */
function captures(board, side) {
  const out = [];
  const admiral = admiralCell(board, side);
  const attack = enemyStrength(board, admiral, side);
  for (let c = 0; c < N_CELLS; c++) {
    const piece = board[c];
    if (piece === '' || owner(piece) === side) continue;
    const k = kind(piece);
    if (k !== 'G' && k !== 'C') continue;
    if (enemyStrength(board, c, 1 - side) <= STRENGTH[k]) continue;
    if (attack > 5 && !(NEIGHBOUR[admiral].includes(c) && attack - STRENGTH[k] <= 5)) continue;
    out.push(c);
  }
  return out;
}

function moved(board, from, to) {
  const after = board.slice();
  after[to] = after[from];
  after[from] = '';
  return after;
}

/** The legal tokens, ignoring whether the game is over (see `outcome`). */
function tokensOf(state) {
  const { board, side } = state;
  const out = [];
  if (state.pending >= 0) {
    for (let c = 0; c < N_CELLS; c++) {
      if (c === state.pending || board[c] === '' || owner(board[c]) !== side) continue;
      for (const t of destinations(board, c)) out.push(NAMES[c] + '-' + NAMES[t]);
    }
    return out.sort();
  }
  const admiral = admiralCell(board, side);
  const arno = enemyStrength(board, admiral, side) > 5;
  for (let c = 0; c < N_CELLS; c++) {
    if (board[c] === '' || owner(board[c]) !== side) continue;
    if (arno && c !== admiral) continue;
    for (const t of destinations(board, c)) {
      const goal = c === admiral && CELLS[t][1] === goalRow(side);
      if (state.first || goal || canMoveAnother(moved(board, c, t), side, t)) {
        out.push(NAMES[c] + '-' + NAMES[t]);
      }
    }
  }
  for (const c of captures(board, side)) out.push('x:' + NAMES[c]);
  return out.sort();
}

/** null while the game goes on, else {winner: 0 | 1, reason}. */
function outcome(state) {
  if (state.pending >= 0) return null;
  const { board, side } = state;
  const white = admiralCell(board, 0);
  const black = admiralCell(board, 1);
  if (CELLS[white][1] === 9) return { winner: 0, reason: 'goal-row' };
  if (CELLS[black][1] === 1) return { winner: 1, reason: 'goal-row' };
  const admiral = side === 0 ? white : black;
  if (enemyStrength(board, admiral, side) > 5) {
    const steps = destinations(board, admiral);
    if (steps.length === 0 && captures(board, side).length === 0) {
      return { winner: 1 - side, reason: 'admiral-trapped' };
    }
  }
  if (tokensOf(state).length === 0) return { winner: 1 - side, reason: 'no-legal-action' };
  return null;
}

function legalTokens(state) {
  return outcome(state) === null ? tokensOf(state) : [];
}

/** The state after `token`, which must be legal (else a RulesError saying why). */
function play(state, token) {
  const over = outcome(state);
  if (over !== null) throw new RulesError(`the game is over (${over.reason})`);
  if (!tokensOf(state).includes(token)) {
    throw new RulesError(`'${token}' is not a legal token in ${formatPosition(state)}`);
  }
  return apply(state, token);
}

/** The state after `token`, a legal token (not checked). */
function apply(state, token) {
  const next = { board: state.board.slice(), side: state.side, pending: -1, first: false };
  if (token.startsWith('x:')) {
    next.board[INDEX.get(token.slice(2))] = '';
    next.side = 1 - state.side;
    return next;
  }
  const [from, to] = token.split('-').map((name) => INDEX.get(name));
  next.board[to] = next.board[from];
  next.board[from] = '';
  const goal = kind(next.board[to]) === 'A' && CELLS[to][1] === goalRow(state.side);
  if (state.pending >= 0 || state.first || goal) next.side = 1 - state.side;
  else next.pending = to;
  return next;
}

function formatPosition(state) {
  const rows = [];
  for (let y = 9; y >= 1; y--) {
    let row = '';
    let empty = 0;
    for (let c = 0; c < N_CELLS; c++) {
      if (CELLS[c][1] !== y) continue;
      if (state.board[c] === '') {
        empty++;
        continue;
      }
      if (empty > 0) row += empty;
      empty = 0;
      row += state.board[c];
    }
    if (empty > 0) row += empty;
    rows.push(row);
  }
  const phase = state.pending >= 0 ? '2:' + NAMES[state.pending] : '1';
  return `${rows.join('/')} ${'wb'[state.side]} ${phase} ${state.first ? 1 : 0}`;
}

/** A state from a position string; a RulesError naming the field for anything invalid. */
function parsePosition(text) {
  const fields = text.split(' ');
  if (fields.length !== 4) throw new RulesError(`a position has 4 fields, not ${fields.length}`);
  const [boardText, sideText, phaseText, firstText] = fields;
  const rows = boardText.split('/');
  if (rows.length !== 9) throw new RulesError(`the board has 9 rows, not ${rows.length}`);
  const board = new Array(N_CELLS).fill('');
  rows.forEach((row, i) => {
    const y = 9 - i;
    const cells = [];
    for (let c = 0; c < N_CELLS; c++) if (CELLS[c][1] === y) cells.push(c);
    let at = 0;
    let digit = false;
    for (const ch of row) {
      if (/[1-9]/.test(ch)) {
        if (digit) throw new RulesError(`row ${y}: two digits in a row`);
        at += Number(ch);
        digit = true;
      } else if (/[AGCRagcr]/.test(ch)) {
        if (at >= cells.length) throw new RulesError(`row ${y} is too long`);
        board[cells[at++]] = ch;
        digit = false;
      } else throw new RulesError(`row ${y}: '${ch}' is not a piece or a count`);
    }
    if (at !== cells.length) throw new RulesError(`row ${y} covers ${at} cells, not ${cells.length}`);
  });
  const count = (p) => board.filter((q) => q === p).length;
  for (const [p, least, most] of [['A', 1, 1], ['R', 1, 1], ['G', 0, 2], ['C', 0, 4]]) {
    for (const piece of [p, p.toLowerCase()]) {
      const n = count(piece);
      if (n < least || n > most) throw new RulesError(`${n} pieces '${piece}'`);
    }
  }
  if (CELLS[board.indexOf('A')][1] === 9 && CELLS[board.indexOf('a')][1] === 1) {
    throw new RulesError('both Admirals stand on their goal rows');
  }
  if (sideText !== 'w' && sideText !== 'b') throw new RulesError(`side '${sideText}'`);
  const side = sideText === 'w' ? 0 : 1;
  let pending = -1;
  if (phaseText !== '1') {
    const cell = phaseText.startsWith('2:') ? INDEX.get(phaseText.slice(2)) : undefined;
    if (cell === undefined) throw new RulesError(`phase '${phaseText}'`);
    if (board[cell] === '' || owner(board[cell]) !== side) {
      throw new RulesError(`phase ${phaseText}: no piece of the side to act there`);
    }
    pending = cell;
  }
  if (firstText !== '0' && firstText !== '1') throw new RulesError(`first '${firstText}'`);
  const first = firstText === '1';
  if (first && (side !== 0 || pending >= 0)) {
    throw new RulesError('first is 1 only with White to act in phase 1');
  }
  return { board, side, pending, first };
}

module.exports = {
  CELLS,
  NAMES,
  INDEX,
  NEIGHBOUR,
  N_CELLS,
  START,
  RulesError,
  owner,
  kind,
  enemyStrength,
  legalTokens,
  outcome,
  play,
  apply,
  formatPosition,
  parsePosition,
};
