#!/usr/bin/env node
'use strict';
// Replays games and checks the notation's mapping both ways at every turn of them:
//   - each token is legal by the project's rules (rules.js);
//   - every legal whole turn of ours, made a Jocly move and played with Jocly's own ApplyMove,
//     leaves the position our rules reach (the turn played in the game among them);
//   - Jocly's AI candidates at the given level (its GenerateMoves at the root) are sorted into
//     those our rules allow and those they refuse, which are listed.
// Input, one game a line: `moves T1 T2 ...` from the start, or `fen POSITION moves T1 ...`.
// Output: one line per game with a refusal or a disagreement, then `verified ...` (exit 0) or
// `DISAGREE ...` lines (exit 1). Usage: node verify.js [LEVEL] < games.txt

const readline = require('readline');
const rules = require('./rules.js');
const bridge = require('./bridge.js');

function turnsFrom(state) {
  const turns = [];
  for (const first of rules.legalTokens(state)) {
    const after = rules.apply(state, first);
    if (after.side !== state.side) turns.push([[first], after]);
    else {
      for (const second of rules.legalTokens(after)) {
        turns.push([[first, second], rules.apply(after, second)]);
      }
    }
  }
  return turns;
}

function joclyAfter(game, board, tokens) {
  const after = game.CloneBoard(board);
  after.mWho = board.mWho;
  after.ApplyMove(game, game.CreateMove(bridge.moveOfTokens(board, tokens)));
  return after;
}

function checkPosition(game, level, state, tally, where) {
  const board = bridge.boardOf(game, state);
  const problems = [];
  for (const [tokens, expected] of turnsFrom(state)) {
    const after = joclyAfter(game, board, tokens);
    const seen = rules.formatPosition({ ...expected, board: bridge.cellsOf(after), first: after.first });
    tally.turns++;
    if (seen !== rules.formatPosition(expected)) problems.push(`${where} ${tokens.join(' ')}: Jocly ${seen}`);
    const back = bridge.tokensOfMove(bridge.moveOfTokens(board, tokens)).join(' ');
    if (back !== tokens.join(' ')) problems.push(`${where} ${tokens.join(' ')}: comes back as ${back}`);
  }
  const gen = bridge.boardOf(game, state);
  game.mLevelInfo = level;
  game.mCurrentLevel = level.maxDepth;
  gen.GenerateMoves(game);
  const legal = bridge.turnChecker(state);
  for (const move of gen.mMoves) {
    tally.candidates++;
    if (legal(move) === null) {
      const turn = bridge.tokensOfMove(move).join(' ');
      tally.refused.push(`${where}: ${turn} in ${rules.formatPosition(state)}`);
    }
  }
  return problems;
}

function verifyGame(game, level, line, number, tally) {
  const words = line.trim().split(/\s+/);
  const at = words.indexOf('moves');
  const startText = words[0] === 'fen' ? words.slice(1, at < 0 ? words.length : at).join(' ') : rules.START;
  const tokens = at < 0 ? [] : words.slice(at + 1);
  let state = rules.parsePosition(startText);
  const problems = [];
  for (let i = 0; i <= tokens.length; i++) {
    if (state.pending < 0 && rules.outcome(state) === null) {
      tally.positions++;
      problems.push(...checkPosition(game, level, state, tally, `game ${number} ply ${i + 1}`));
    }
    if (i === tokens.length) break;
    try {
      state = rules.play(state, tokens[i]);
    } catch (error) {
      problems.push(`game ${number} ply ${i + 1}: ${error.message}`);
      break;
    }
  }
  tally.games++;
  return problems;
}

async function main() {
  const Jocly = require('jocly');
  const game = (await Jocly.createMatch('yohoho')).game;
  bridge.checkGeometry(game);
  const levels = game.config.model.levels;
  const names = levels.map((l) => l.label.toLowerCase().replace(/[^a-z]+/g, '-'));
  const wanted = (process.argv[2] || names[names.length - 1]).toLowerCase();
  if (!names.includes(wanted)) {
    process.stderr.write(`verify.js: level '${wanted}': one of ${names.join(', ')}\n`);
    process.exit(2);
  }
  const level = levels[names.indexOf(wanted)];
  const tally = { games: 0, positions: 0, turns: 0, candidates: 0, refused: [] };
  const problems = [];
  let number = 0;
  const input = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of input) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    number++;
    try {
      problems.push(...verifyGame(game, level, line, number, tally));
    } catch (error) {
      problems.push(`game ${number}: ${error.message}`);
    }
  }
  for (const r of tally.refused) console.log('refused ' + r);
  for (const p of problems) console.log('DISAGREE ' + p);
  console.log(
    `verified ${tally.games} games, ${tally.positions} turn starts, ${tally.turns} legal turns played ` +
      `in Jocly's model, ${problems.length} disagreements; Jocly's ${wanted} candidates: ` +
      `${tally.candidates}, ${tally.refused.length} refused by our rules`,
  );
  process.exit(problems.length > 0 ? 1 : 0);
}

main();
