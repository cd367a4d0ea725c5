#!/usr/bin/env node
'use strict';
// Jocly's Yohoho AI as an engine of the project's text protocol (docs/protocol.md, the UGI
// subset an arbiter uses): `node driver.js`, then ugi, isready, setoption, uginewgame,
// position startpos|fen ... [moves ...], go ..., stop, quit. Extras for tests: ping N,
// query position|moves|turn|gameover|p1turn|result|outcome.
//
// Every token is checked with the project's rules (rules.js); Jocly's candidates for a turn that
// those rules refuse are left out of its root list (bridge.js). A turn Jocly chooses is one or
// two of our tokens: the first is answered at once, the second kept for the `go` that asks for
// it. Bad input gets an `info string error: ...` line and changes nothing.

const readline = require('readline');
const rules = require('./rules.js');
const bridge = require('./bridge.js');
const { think, scoreText } = require('./search.js');

const now = () => performance.now();
const out = (line) => process.stdout.write(line + '\n');
const log = (line) => process.stderr.write(line + '\n');
const refuse = (text) => {
  throw new rules.RulesError(text);
};
const fail = (text) => out('info string error: ' + String(text).replace(/[\r\n]+/g, ' ').slice(0, 1000));

// --- seeded Math.random: Jocly breaks ties between equal moves with it -------------------------

function seedRandom(seedText) {
  let h = 1779033703 ^ seedText.length;
  for (let i = 0; i < seedText.length; i++) {
    h = Math.imul(h ^ seedText.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  let a = h >>> 0;
  Math.random = () => {
    a = (a + 0x6d2b79f5) >>> 0; // mulberry32
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// --- the driver -------------------------------------------------------------------------------

class Driver {
  constructor(game) {
    this.game = game;
    this.levels = game.config.model.levels;
    this.names = this.levels.map((l) => l.label.toLowerCase().replace(/[^a-z]+/g, '-'));
    this.level = this.levels[this.levels.length - 1];
    this.seed = '0';
    this.overhead = 50;
    this.searching = null; // {stop: bool} while a go runs
    this.queue = [];
    this.stats = newStats();
    this.newGame();
  }

  newGame() {
    seedRandom(this.seed);
    this.plan = null;
    this.setPosition(rules.START, []);
  }

  // A position and the history since it: the rules' state, the start of the turn under way and
  // its tokens so far, and Jocly's board at that start, replayed turn by turn with Jocly's own
  // ApplyMove and compared with the rules' position after every turn.
  setPosition(startText, tokens) {
    const cached = this.position;
    let p;
    if (cached && cached.start === startText && startsWith(tokens, cached.tokens)) {
      p = { ...cached, tokens: cached.tokens.slice(), turnTokens: cached.turnTokens.slice() };
    } else {
      const state = rules.parsePosition(startText);
      const board = state.pending < 0 ? bridge.boardOf(this.game, state) : null;
      p = { start: startText, tokens: [], state, turnStart: state, turnTokens: [], board };
    }
    for (let i = p.tokens.length; i < tokens.length; i++) this.advance(p, tokens[i]);
    this.position = p;
  }

  advance(p, token) {
    let next;
    try {
      next = rules.play(p.state, token);
    } catch (error) {
      if (error instanceof rules.RulesError) refuse(`move ${token}: ${error.message}`);
      throw error;
    }
    p.tokens.push(token);
    p.turnTokens.push(token);
    p.state = next;
    if (next.side === p.turnStart.side) return;
    if (p.board !== null) p.board = this.replayTurn(p.board, p.turnTokens, next);
    else p.board = bridge.boardOf(this.game, next);
    p.turnStart = next;
    p.turnTokens = [];
  }

  replayTurn(board, turnTokens, expected) {
    const move = bridge.moveOfTokens(board, turnTokens);
    const back = bridge.tokensOfMove(move);
    const after = this.game.CloneBoard(board);
    after.mWho = board.mWho;
    after.ApplyMove(this.game, this.game.CreateMove(move));
    after.mWho = -board.mWho;
    after.mMoves = [];
    const seen = rules.formatPosition({ ...expected, board: bridge.cellsOf(after), first: after.first });
    const want = rules.formatPosition(expected);
    if (back.join(' ') !== turnTokens.join(' ') || seen !== want) {
      this.stats.mismatches++;
      fail(`Jocly's board after ${turnTokens.join(' ')} (${JSON.stringify(move)}) is ${seen}, not ${want}`);
      return bridge.boardOf(this.game, expected);
    }
    return after;
  }

  /** The position string as Jocly's board holds it (with the pending first sub-move). */
  joclyPosition() {
    const p = this.position;
    if (p.board === null) return rules.formatPosition(p.state);
    const cells = bridge.cellsOf(p.board);
    for (const token of p.turnTokens) {
      const [f, t] = token.split('-').map((c) => rules.INDEX.get(c));
      cells[t] = cells[f];
      cells[f] = '';
    }
    const first = p.board.first && p.turnTokens.length === 0;
    return rules.formatPosition({ ...p.state, board: cells, first });
  }

  // --- commands ----------------------------------------------------------------------------

  handle(line) {
    const words = line.trim().split(/\s+/);
    const command = words[0];
    if (command === '') return;
    if (this.searching !== null) {
      if (command === 'isready') return out('readyok');
      if (command === 'ping') return this.ping(words);
      if (command === 'stop') return this.stop();
      if (command === 'quit') {
        this.queue.push(line);
        return this.stop();
      }
      if (command === 'query') return this.query(words);
      this.queue.push(line);
      return;
    }
    try {
      this.dispatch(command, words, line);
    } catch (error) {
      const expected = error instanceof rules.RulesError || error instanceof bridge.BridgeError;
      fail(expected ? error.message : error.stack);
    }
  }

  stop() {
    const search = this.searching;
    search.stop = true;
    if (search.onStop) {
      const answer = search.onStop;
      search.onStop = null;
      answer();
    }
  }

  dispatch(command, words, line) {
    switch (command) {
      case 'ugi':
      case 'uci':
        return this.hello();
      case 'isready':
        return out('readyok');
      case 'ping':
        return this.ping(words);
      case 'setoption':
        return this.setOption(line);
      case 'uginewgame':
      case 'ucinewgame':
        if (words[1] !== undefined && words[1] !== 'yohoho') refuse(`game '${words[1]}': only yohoho`);
        this.summary();
        return this.newGame();
      case 'position':
        return this.positionCommand(words);
      case 'go':
        return this.go(words);
      case 'stop':
        return undefined;
      case 'query':
        return this.query(words);
      case 'quit':
        this.summary();
        return process.exit(0);
      default:
        refuse(`unknown command '${command}'`);
    }
  }

  hello() {
    out('id name jocly-yohoho');
    out('id author the enginesrv developers (Jocly by Michel Gutierrez and Jocly contributors)');
    out(`game yohoho colours White Black start ${rules.START}`);
    const vars = this.names.map((n) => 'var ' + n).join(' ');
    out(`option name Level type combo default ${this.names[this.names.length - 1]} ${vars}`);
    out('option name Seed type spin default 0 min 0 max 9223372036854775807');
    out('option name MoveOverhead type spin default 50 min 0 max 5000');
    out('ugiok');
  }

  ping(words) {
    if (!/^\d{1,19}$/.test(words[1] || '')) refuse(`ping needs a number, not '${words[1] || ''}'`);
    out('pong ' + words[1]);
  }

  setOption(line) {
    const m = /^\s*setoption\s+name\s+(.+?)(?:\s+value(?:\s+(.*?))?)?\s*$/.exec(line);
    if (!m) refuse(`setoption: '${line.trim()}' is not 'setoption name N value V'`);
    const name = m[1].toLowerCase();
    const value = m[2] === undefined ? '' : m[2];
    if (name === 'level') {
      const i = this.names.indexOf(value.toLowerCase().replace(/[^a-z]+/g, '-'));
      if (i < 0) refuse(`Level '${value}': one of ${this.names.join(', ')}`);
      this.level = this.levels[i];
    } else if (name === 'seed') {
      if (!/^\d{1,19}$/.test(value)) refuse(`Seed '${value}': a whole number`);
      this.seed = value;
      seedRandom(value);
    } else if (name === 'moveoverhead') {
      if (!/^\d{1,4}$/.test(value) || Number(value) > 5000) refuse(`MoveOverhead '${value}': 0 to 5000`);
      this.overhead = Number(value);
    } else if (name === 'game') {
      if (value !== 'yohoho') refuse(`Game '${value}': only yohoho`);
    } else refuse(`unknown option '${m[1]}'`);
  }

  positionCommand(words) {
    let i = 1;
    let start;
    if (words[1] === 'startpos') {
      start = rules.START;
      i = 2;
    } else if (words[1] === 'fen') {
      const at = words.indexOf('moves');
      const end = at < 0 ? words.length : at;
      start = words.slice(2, end).join(' ');
      i = end;
    } else refuse(`position: 'startpos' or 'fen', not '${words[1] || ''}'`);
    let tokens = [];
    if (i < words.length) {
      if (words[i] !== 'moves') refuse(`position: '${words[i]}' where 'moves' was expected`);
      tokens = words.slice(i + 1);
    }
    rules.formatPosition(rules.parsePosition(start)); // refuses a bad string before anything changes
    const before = this.position;
    try {
      this.setPosition(start, tokens);
    } catch (error) {
      this.position = before;
      throw error;
    }
  }

  query(words) {
    const p = this.position;
    const over = rules.outcome(p.state);
    const turn = over !== null ? 'none' : 'p' + (p.state.side + 1);
    switch (words[1]) {
      case 'position':
        return out('response ' + this.joclyPosition());
      case 'moves':
        return out(('response ' + rules.legalTokens(p.state).join(' ')).trimEnd());
      case 'turn':
        return out('response ' + turn);
      case 'gameover':
        return out('response ' + (over !== null));
      case 'p1turn':
        return out('response ' + (turn === 'p1'));
      case 'result':
        return out('response ' + (over === null ? 'none' : `p${over.winner + 1}win`));
      case 'outcome':
        if (over === null) return out('response none');
        return out(`response winner=p${over.winner + 1} reason=${over.reason}`);
      default:
        refuse(`query: '${words[1] || ''}' is not one this engine answers`);
    }
  }

  // --- go ------------------------------------------------------------------------------------

  go(words) {
    const started = now();
    let limits;
    try {
      limits = parseGo(words);
    } catch (error) {
      fail(error.message);
      return out('bestmove none');
    }
    const state = this.position.state;
    const over = rules.outcome(state);
    if (over !== null) {
      fail(`the game is over (${over.reason})`);
      return out('bestmove none');
    }
    const position = rules.formatPosition(state);
    if (state.pending >= 0 && this.plan !== null && this.plan.position === position) {
      const token = this.plan.token;
      this.plan = null;
      return out('bestmove ' + token);
    }
    this.plan = null;
    const clock = budget(limits, state.side, this.overhead);
    const level = { ...this.level };
    if (limits.depth !== undefined) level.maxDepth = Math.min(level.maxDepth, limits.depth);
    let root, moves, refused;
    try {
      ({ root, moves, refused } = this.rootOf(level));
    } catch (error) {
      fail(`no candidates: ${error.stack}`);
      const legal = rules.legalTokens(state);
      return out('bestmove ' + (legal.length > 0 ? legal[0] : 'none'));
    }
    this.searching = { stop: false, onStop: null };
    const search = this.searching;
    const answer = (tokens, info) => {
      if (info) out(info);
      if (limits.infinite && !search.stop) {
        search.onStop = () => answer(tokens, null);
        return;
      }
      out('bestmove ' + tokens[0]);
      if (tokens.length > 1) {
        this.plan = { position: rules.formatPosition(rules.apply(state, tokens[0])), token: tokens[1] };
      }
      this.searching = null;
      this.drain();
    };
    if (moves.length === 1) return answer(bridge.legalTurn(state, moves[0]), null);
    const stopped = () => search.stop;
    think(this.game, root, moves, level, clock, started, stopped, limits.nodes)
      .then((r) => {
        const tokens = bridge.legalTurn(state, r.move);
        if (tokens === null) throw new bridge.BridgeError(`Jocly chose ${JSON.stringify(r.move)}, not legal`);
        this.record(r, refused, clock);
        const score = scoreText(r.evaluation, root.mWho);
        const time = Math.round(r.time);
        const pv = tokens.join(' ');
        answer(tokens, `info depth ${r.depth} nodes ${r.explored} time ${time} score ${score} pv ${pv}`);
      })
      .catch((error) => {
        fail(`the search failed: ${error && error.stack ? error.stack : error}`);
        answer(bridge.legalTurn(state, moves[0]), null);
      });
  }

  /** The root board and its moves: Jocly's own candidates for the turn that our rules allow
   * (phase 1), or every legal second sub-move (phase 2, a turn whose first half Jocly did not
   * choose), each as a Jocly move. */
  rootOf(level) {
    const p = this.position;
    const state = p.state;
    if (state.pending >= 0) {
      const root = bridge.boardOf(this.game, state);
      const moves = rules.legalTokens(state).map((token) => bridge.moveOfTokens(root, [token]));
      return { root, moves, refused: [] };
    }
    const root = p.board !== null ? this.game.CloneBoard(p.board) : bridge.boardOf(this.game, state);
    root.mWho = state.side === 0 ? 1 : -1;
    const gen = this.game.CloneBoard(root);
    gen.mWho = root.mWho;
    gen.mMoves = [];
    gen.mFinished = false;
    this.game.mLevelInfo = level;
    this.game.mCurrentLevel = level.maxDepth;
    gen.GenerateMoves(this.game);
    const moves = [];
    const refused = [];
    const legal = bridge.turnChecker(state);
    for (const move of gen.mMoves) {
      if (legal(move) !== null) moves.push(move);
      else refused.push(bridge.tokensOfMove(move).join(' '));
    }
    if (moves.length === 0) return { root, moves: bridge.allTurns(this.game, state), refused };
    return { root, moves, refused };
  }

  record(r, refused, clock) {
    const s = this.stats;
    s.turns++;
    if (r.full) s.full++;
    s.share += r.potential / this.level.potential;
    s.time += r.time;
    if (refused.length > 0) {
      s.refusedTurns++;
      s.refused += refused.length;
    }
    log(
      `turn ${s.turns}: budget ${r.potential} of ${this.level.potential}${r.full ? ' (full)' : ''}, ` +
        `${r.explored} nodes, depth ${r.depth}, ${r.ties} best tied, ${Math.round(r.time)} ms ` +
        `(target ${fmt(clock.target)}, hard ${fmt(clock.hard)})` +
        (refused.length > 0 ? `; refused as illegal: ${refused.join(', ')}` : ''),
    );
  }

  summary() {
    const s = this.stats;
    if (s.turns === 0 && s.mismatches === 0) return;
    log(
      `game summary: level ${this.names[this.levels.indexOf(this.level)]}; ${s.turns} turns searched, ` +
        `${s.full} at the level's full budget; ` +
        `mean budget ${(s.share / Math.max(1, s.turns)).toFixed(3)} of it; ` +
        `${Math.round(s.time)} ms; ${s.refused} candidates refused as illegal in ${s.refusedTurns} turns; ` +
        `${s.mismatches} board mismatches`,
    );
    this.stats = newStats();
  }

  drain() {
    while (this.searching === null && this.queue.length > 0) this.handle(this.queue.shift());
  }
}

function newStats() {
  return { turns: 0, full: 0, share: 0, time: 0, refused: 0, refusedTurns: 0, mismatches: 0 };
}

const fmt = (ms) => (Number.isFinite(ms) ? Math.round(ms) : 'none');

function startsWith(list, prefix) {
  if (prefix.length > list.length) return false;
  return prefix.every((x, i) => list[i] === x);
}

function parseGo(words) {
  const limits = {};
  const numbers = ['p1time', 'p2time', 'p1inc', 'p2inc', 'movestogo', 'movetime', 'depth', 'nodes'];
  for (let i = 1; i < words.length; i++) {
    const key = words[i];
    if (key === 'infinite') {
      limits.infinite = true;
    } else if (numbers.includes(key)) {
      const value = words[++i];
      if (!/^-?\d{1,19}$/.test(value || '')) refuse(`go: ${key} needs a number, not '${value || ''}'`);
      limits[key] = Number(value);
    } else refuse(`go: unknown limit '${key}'`);
  }
  if (limits.depth !== undefined && limits.depth < 1) refuse('go: depth must be at least 1');
  return limits;
}

/** {target, hard} milliseconds for this decision (a whole turn: its second half is answered
 * at once). With a clock: a share of what is left, over ~25 turns to come, plus most of the two
 * increments a turn earns; never more than 70% of the clock. */
function budget(limits, side, overhead) {
  if (limits.infinite) return { target: Infinity, hard: Infinity };
  if (limits.movetime !== undefined) {
    const t = Math.max(0, limits.movetime - overhead);
    return { target: t, hard: t };
  }
  const own = side === 0 ? limits.p1time : limits.p2time;
  if (own === undefined) return { target: Infinity, hard: Infinity };
  const inc = (side === 0 ? limits.p1inc : limits.p2inc) || 0;
  const left = Math.max(0, own - overhead);
  const turns = limits.movestogo ? Math.max(1, Math.ceil(limits.movestogo / 2)) : 25;
  const target = Math.min(left / turns + 1.8 * inc, left * 0.5);
  return { target, hard: Math.min(target * 3, left * 0.7) };
}

// --- start ------------------------------------------------------------------------------------

function selfCheck(game) {
  bridge.checkGeometry(game);
  const theirs = game.mBoard;
  const ours = bridge.boardOf(game, rules.parsePosition(rules.START));
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const pieces = (b) => b.pieces.map((p) => [p.s, p.pos, p.type, p.index]);
  const differ =
    !same(pieces(theirs), pieces(ours)) ||
    !same(theirs.board, ours.board) ||
    !same(theirs.amirals, ours.amirals) ||
    theirs.first !== ours.first;
  if (differ) {
    throw new bridge.BridgeError("Jocly's start position is not the project's");
  }
}

async function main() {
  let Jocly;
  try {
    Jocly = require('jocly');
  } catch (error) {
    out("info string error: the npm package 'jocly' is not installed (npm ci in benchmarks/jocly)");
    log('jocly driver: cannot load jocly: ' + error.message);
    process.exit(2);
  }
  let game;
  try {
    game = (await Jocly.createMatch('yohoho')).game;
    selfCheck(game);
  } catch (error) {
    fail(`Jocly's Yohoho cannot be used: ${error.message}`);
    log('jocly driver: ' + error.stack);
    process.exit(2);
  }
  const driver = new Driver(game);
  const input = readline.createInterface({ input: process.stdin, terminal: false });
  input.on('line', (line) => driver.handle(line));
  input.on('close', () => driver.handle('quit')); // the end of input is a quit
  process.on('uncaughtException', (error) => fail(`internal: ${error && error.stack ? error.stack : error}`));
}

main();
