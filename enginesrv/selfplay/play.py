"""The games of a self-play run, each played whole in a worker process (``play_game``): the
environment of ``envs``, the bot searching the acting player's view (``State.view``: what its
player may know, never the environment's full state), every decision kept as a row. The
coordinator only hands out game numbers and keeps the parts (``run``), so that the rows a
second grow with the workers.

A game begins with ``random_plies`` random decisions (so that the games differ), each from a
generator seeded by the run's seed and the game's number; the bot then plays both sides to
the end, or to ``max_plies``. Its decisions are kept as rows; a decision that takes several
actions (the Yin Yang setup, scored as whole sets of laws) is played but not kept.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import random
import signal
from collections import deque
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from typing import Any

from bots.engine import Engine, Limits, RootScore
from bots.registry import create_bot
from enginesrv import reaper
from enginesrv.analyse.judge import expected
from enginesrv.selfplay.store import WINNER_DRAW, WINNER_NONE, GameRows, Parts
from envs import GameEnv, make
from envs.core import AGENTS

KILL_WAIT = 5.0
"""Seconds a killed worker is waited for (it ends at once; the wait is bounded all the same)."""
GAME_CAP = 3600.0
"""Seconds the run waits for some game to end before it gives up (a depth-1 game takes well
under a second): every wait is bounded."""
KINDS = {"cp": 0, "win": 1, "loss": 2}
"""``moves_kind``: an evaluation, a win in ``value`` plies, a loss in ``value`` plies."""


class SelfPlayError(Exception):
    """A game could not be played (its bot failed, or a worker process died)."""


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


# -- in a worker process ----------------------------------------------------------------------

_KEPT: dict[str, Any] = {}
"""This worker's bot and environment, made for its first game and kept for the next."""


def start_worker() -> None:
    """A worker process's start: Ctrl-C is the coordinator's to handle, and the worker dies
    with it (even killed with -9)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reaper.die_with_parent()


def play_game(settings: Settings, number: int) -> dict[str, Any]:
    """Game ``number`` of the run, played whole: its part's arrays (``GameRows.arrays``)."""
    key = repr(settings)
    if _KEPT.get("key") != key:
        _KEPT.update(key=key, env=make(settings.game, max_plies=settings.max_plies))
        _KEPT["bot"] = create_bot(settings.bot)
        for name, value in settings.options:
            _KEPT["bot"].set_option(name, value)
    env: GameEnv = _KEPT["env"]
    bot: Engine = _KEPT["bot"]
    if settings.secret_seed:
        bot.set_option("SecretSeed", str(settings.seed * 1_000_003 + number))
    bot.new_game(env.game)
    rows = GameRows(number)
    _moves(env, bot, settings, rows, random.Random(f"{settings.seed}:{number}"))
    if env.state.is_terminal():
        outcome = env.state.outcome()
        seat = outcome.winner_seat if outcome is not None else None
        winner = WINNER_DRAW if seat is None else seat
    else:
        winner = WINNER_NONE
    return rows.arrays(winner, env.plies, env.adapter.shape)


def _moves(
    env: GameEnv, bot: Engine, settings: Settings, rows: GameRows, rng: random.Random
) -> None:
    env.reset()
    limits = Limits(depth=settings.depth, nodes=settings.nodes, score_forced=True)
    decisions = 0
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        if decisions < settings.random_plies:
            action = rng.choice(env.legal_actions())
            rows.trail.append(action)
            env.step(action)
            decisions += not env.partial
            continue
        agent = env.agent_selection
        view = env.state.view(AGENTS.index(agent))
        result = bot.search(view, limits)
        if result.token is None:
            raise SelfPlayError(f"game {rows.number}: {settings.bot} found no move in {view}")
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
    scores: tuple[RootScore, ...],
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


# -- the coordinator --------------------------------------------------------------------------


def _warm() -> None:
    """A worker's first task: its imports are made, and it holds a moment so that each
    worker gets one."""
    import time  # noqa: PLC0415

    time.sleep(0.2)


def run(
    settings: Settings,
    parts: Parts,
    todo: list[int],
    workers: int,
    on_game: Callable[[int, int], None],
    on_ready: Callable[[], None] = lambda: None,
) -> None:
    """Play the games numbered ``todo`` on ``workers`` worker processes, a few in flight per
    worker, each saved as a part as it ends; ``on_ready`` is told when the workers have
    started, ``on_game`` each game's number and rows kept. Whatever ends the run early (an
    error, Ctrl-C) kills the workers: the games in flight are lost, the saved ones kept."""
    size = max(1, min(workers, len(todo)))
    executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=size,
        # forked: they start at once with what this process has loaded, and unlike spawned
        # ones need no resource tracker (a process of its own, which outlives the run)
        mp_context=multiprocessing.get_context("fork"),
        initializer=start_worker,
    )
    try:
        concurrent.futures.wait([executor.submit(_warm) for _ in range(size)], timeout=GAME_CAP)
        on_ready()
        _drive(executor, settings, parts, deque(todo), 2 * size, on_game)
    except BaseException:
        kill_workers(executor)
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def kill_workers(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill the workers of ``executor`` (there is no public way), then close this process's
    end of the pipe their results come through. A worker killed while it wrote a result
    leaves part of it in the pipe, and the executor's thread, reading the rest, would wait
    for ever, and ``shutdown`` with it; once no process holds the pipe's writing end, that
    read ends and the executor finds itself broken."""
    processes = list(executor._processes.values())
    for process in processes:
        process.kill()
    for process in processes:
        process.join(KILL_WAIT)
    executor._result_queue._writer.close()  # type: ignore[attr-defined]


def _drive(
    executor: concurrent.futures.ProcessPoolExecutor,
    settings: Settings,
    parts: Parts,
    waiting: deque[int],
    window: int,
    on_game: Callable[[int, int], None],
) -> None:
    flight: dict[concurrent.futures.Future[dict[str, Any]], int] = {}
    while waiting or flight:
        while waiting and len(flight) < window:
            number = waiting.popleft()
            flight[executor.submit(play_game, settings, number)] = number
        done, _ = concurrent.futures.wait(
            flight, timeout=GAME_CAP, return_when=concurrent.futures.FIRST_COMPLETED
        )
        if not done:
            raise SelfPlayError(f"no game ended within {GAME_CAP:g} s")
        for future in done:
            number = flight.pop(future)
            try:
                arrays = future.result()
            except BrokenProcessPool:
                raise SelfPlayError(f"a worker process died (game {number})") from None
            except SelfPlayError:
                raise
            except Exception as exc:
                raise SelfPlayError(f"game {number}: {settings.bot} failed: {exc!r}") from None
            parts.save(number, arrays)
            on_game(number, len(arrays["action"]))
