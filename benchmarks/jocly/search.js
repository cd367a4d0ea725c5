'use strict';
// Jocly's own alpha-beta (jocly.game.js: JocGame.prototype.Engine, ExecuteStep, Done) run on a
// root board with a root move list of our choosing, within a deadline.
//
// Jocly's search is bounded by a node budget, its "potential", not by time: each node shares
// what is left of its budget among its moves, and a move whose share is under one node is only
// evaluated. It runs in steps that Jocly's `Run` schedules in slices of 20 ms; here `Run` is
// replaced by a pump that also watches the deadline and a stop flag, so a search can be cut
// within one step. A cut search gives nothing: its root has only seen some of its moves.

const JOCLY_MAX = Math.pow(2, 53);
const SLICE_MS = 10;

const now = () => performance.now();

/** One Jocly search of `root` (a Jocly board, whose side to move is root.mWho) over `moves`,
 * at `level` (a level of Jocly's config: maxDepth, moveCount, rowRaceLevel) and node budget
 * `potential`. Resolves to {move, ties, explored, evaluation, depth} or to null when cut by
 * `deadline` (performance.now() milliseconds) or by `stopped()`. */
function searchOnce(game, root, moves, level, potential, deadline, stopped) {
  return new Promise((resolve, reject) => {
    let finished = false;
    let depth = 0;
    const finish = (value, error) => {
      if (finished) return;
      finished = true;
      game.mNextSchedule = null;
      game.mContexts = [];
      if (error) reject(error);
      else resolve(value);
    };
    const engine = Object.getPrototypeOf(game).Engine;
    game.Engine = function (...args) {
      depth = Math.max(depth, this.mContexts.length + 1);
      return engine.apply(this, args);
    };
    game.Run = function () {
      try {
        const sliceEnd = now() + SLICE_MS;
        while (!finished && game.mNextSchedule) {
          const t = now();
          if (t >= deadline || stopped()) return finish(null);
          if (t >= sliceEnd) break;
          const step = game.mNextSchedule;
          game.mNextSchedule = null;
          step.call(game);
        }
        if (!finished && game.mNextSchedule) setImmediate(() => game.Run());
      } catch (error) {
        finish(null, error);
      }
    };
    const board = game.CloneBoard(root);
    board.mWho = root.mWho;
    board.mMoves = moves.map((m) => game.CreateMove(m));
    game.mBoard = board;
    game.mWho = root.mWho;
    game.mLevelInfo = level;
    try {
      game.StartMachine({
        maxDepth: level.maxDepth,
        potential,
        Progress: () => {},
        Done: (result) =>
          finish({
            move: result.move,
            ties: result.moves.length,
            explored: result.explored,
            evaluation: result.evaluation,
            depth,
          }),
      });
    } catch (error) {
      finish(null, error);
    }
  });
}

/** The node budgets tried in turn for a level whose own is `full` (capped by `nodes`): a
 * one-ply look first, then full/256, /64, /16, /4 and full, so that some search always ends. */
function ladder(full, nodes) {
  const top = nodes === undefined ? full : Math.min(full, nodes);
  const out = [0];
  for (const divisor of [256, 64, 16, 4, 1]) {
    const p = Math.floor(top / divisor);
    if (p >= 50 && p > out[out.length - 1]) out.push(p);
  }
  if (out[out.length - 1] !== top && top > 0) out.push(top);
  return out;
}

/** Jocly's search of `root` over `moves`, budget after budget (`ladder`), within `clock`:
 * {target, hard} milliseconds from `started` (a later budget starts only before the target
 * and when it should end before the hard limit; whatever runs at the hard limit is cut).
 * Resolves to the last search that ended, with `potential` its budget and `full` whether that
 * was the level's own, plus the nodes and time of all. */
async function think(game, root, moves, level, clock, started, stopped, nodes) {
  const budgets = ladder(level.potential, nodes);
  let best = null;
  let explored = 0;
  let lastTime = 0;
  let lastBudget = 0;
  for (const potential of budgets) {
    const elapsed = now() - started;
    if (best !== null) {
      const predicted = lastBudget > 0 ? (lastTime * potential) / lastBudget : 0;
      if (stopped() || elapsed >= clock.target || elapsed + predicted > clock.hard) break;
    }
    const t0 = now();
    // the first, one-ply look is never cut: there is always a move to answer
    const deadline = best === null ? Infinity : started + clock.hard;
    const cut = best === null ? () => false : stopped;
    const result = await searchOnce(game, root, moves, level, potential, deadline, cut);
    if (result === null) break;
    explored += result.explored;
    lastTime = now() - t0;
    lastBudget = potential;
    best = { ...result, potential, full: potential === level.potential };
  }
  return { ...best, explored, time: now() - started, budgets };
}

/** The protocol's score of a Jocly evaluation (White's view) for the side `who` (1 | -1). */
function scoreText(evaluation, who) {
  const v = evaluation * who;
  if (!Number.isFinite(v)) return 'cp 0';
  if (Math.abs(v) > JOCLY_MAX / 2) {
    const turns = Math.max(1, Math.round(JOCLY_MAX - Math.abs(v)) + 1);
    return (v > 0 ? 'win ' : 'loss ') + 2 * turns;
  }
  return 'cp ' + Math.round(v * 100);
}

module.exports = { searchOnce, think, ladder, scoreText };
