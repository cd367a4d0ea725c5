"""The games of a self-play run: one lane a worker, each playing its games one after another
in an environment of ``envs``, every decision of the bot a search on the worker pool of the
acting player's view (what its player may know, as a position string), never of the
environment's full state.

A game begins with ``random_plies`` random decisions (so that the games differ), each from a
generator seeded by the run's seed and the game's number; the bot then plays both sides to
the end, or to ``max_plies``. Its decisions are kept as rows; a decision that takes several
actions (the Yin Yang setup, scored as whole sets of laws) is played but not kept.
"""

from __future__ import annotations

import collections
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import trio

from enginesrv.analyse.judge import expected
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import WorkerPool
from enginesrv.selfplay.store import WINNER_DRAW, WINNER_NONE, GameRows, Parts
from envs import GameEnv, make
from envs.core import AGENTS

SEARCH_CAP = 120.0
"""Seconds one search may take before its game is given up (a depth-1 search takes
milliseconds): every wait is bounded."""
KINDS = {"cp": 0, "win": 1, "loss": 2}
"""``moves_kind``: an evaluation, a win in ``value`` plies, a loss in ``value`` plies."""


class SelfPlayError(Exception):
    """A game could not be played on (its bot found no move, or failed)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What a run plays (its ``config``, kept beside the parts: a run goes on only with the
    same)."""

    game: str
    games: int
    bot: str
    depth: int | None
    nodes: int | None
    options: tuple[tuple[str, str], ...]
    seed: int
    random_plies: int
    max_plies: int | None
    secret_seed: bool
    """Whether each game's bot gets ``SecretSeed`` from the run's seed (hidden information:
    the same run plays the same games)."""
    scale: float
    """The evaluation at which the side to act scores about 73% (``moves_expectation``, as
    ``enginesrv analyse`` turns a score into an expected score)."""

    def config(self) -> dict[str, Any]:
        data = asdict(self)
        data["options"] = [list(pair) for pair in self.options]
        return data


async def play(
    settings: Settings,
    parts: Parts,
    todo: list[int],
    workers: int,
    on_game: Callable[[int, int], None],
    on_ready: Callable[[], None] = lambda: None,
) -> None:
    """Play the games numbered ``todo`` on ``workers`` worker processes, each saved as a part
    as it ends; ``on_ready`` is told when the workers have started, ``on_game`` each game's
    number and rows kept."""
    waiting = collections.deque(todo)
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, max(1, min(workers, len(todo))))
        try:
            await pool.start()
            on_ready()
            async with trio.open_nursery() as lanes:
                for lane in range(pool.size):
                    lanes.start_soon(_lane, pool, lane, waiting, settings, parts, on_game)
        finally:
            await pool.aclose()


async def _lane(
    pool: WorkerPool,
    lane: int,
    waiting: collections.deque[int],
    settings: Settings,
    parts: Parts,
    on_game: Callable[[int, int], None],
) -> None:
    env = make(settings.game, max_plies=settings.max_plies)
    while waiting:
        number = waiting.popleft()
        rows = GameRows(number)
        await _one_game(pool, f"selfplay-{lane}", env, settings, rows)
        if env.state.is_terminal():
            outcome = env.state.outcome()
            seat = outcome.winner_seat if outcome is not None else None
            winner = WINNER_DRAW if seat is None else seat
        else:
            winner = WINNER_NONE
        parts.save(number, rows.arrays(winner, env.plies, env.adapter.shape))
        on_game(number, len(rows.actions))


async def _one_game(
    pool: WorkerPool, session: str, env: GameEnv, settings: Settings, rows: GameRows
) -> None:
    env.reset()
    rng = random.Random(f"{settings.seed}:{rows.number}")
    options = settings.options
    if settings.secret_seed:
        options = (*options, ("SecretSeed", str(settings.seed * 1_000_003 + rows.number)))
    decisions = 0
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        if decisions < settings.random_plies:
            action = rng.choice(env.legal_actions())
            rows.trail.append(action)
            env.step(action)
            decisions += not env.partial
            continue
        agent = env.agent_selection
        position = env.position(agent)
        job = SearchJob(
            session=session,
            game=settings.game,
            position=position,
            bot=settings.bot,
            options=tuple((name, value) for name, value in options),
            depth=settings.depth,
            nodes=settings.nodes,
            new_game=decisions == settings.random_plies,
            game_key=f"{session}:{rows.number}",
            score_forced=True,
            issued=time.monotonic(),
        )
        hard = trio.current_time() + SEARCH_CAP
        outcome = await pool.search(job, on_info=_ignore, stop=trio.Event(), hard_deadline=hard)
        result = outcome.result
        if result is None or result.token is None:
            why = outcome.error or ("killed" if outcome.killed else "no move")
            raise SelfPlayError(f"game {rows.number}: {settings.bot} in {position}: {why}")
        view = env.game.state_from_string(position)
        actions = env.adapter.actions_of(view, result.token)
        if len(actions) == 1:
            _keep(env, agent, view, actions[0], result.root_scores, settings.scale, rows)
        for action in actions:
            rows.trail.append(action)
            env.step(action)
        decisions += 1


def _keep(
    env: GameEnv,
    agent: str,
    view: Any,
    action: int,
    scores: tuple[Any, ...],
    scale: float,
    rows: GameRows,
) -> None:
    """One row: the acting agent's observation, the action, and the scored first decisions
    (those a single action plays)."""
    rows.observations.append(env.observe(agent)["observation"])
    rows.actions.append(action)
    rows.players.append(AGENTS.index(agent))
    rows.plies.append(env.plies)
    kept = 0
    for root in scores:
        moves = env.adapter.actions_of(view, root.token)
        if len(moves) != 1:
            continue
        rows.move_actions.append(moves[0])
        rows.move_expectations.append(expected(root.score, scale))
        rows.move_kinds.append(KINDS[root.score.kind])
        rows.move_values.append(root.score.value)
        rows.move_depths.append(root.depth)
        kept += 1
    rows.counts.append(kept)


def _ignore(info: object) -> None:
    del info
