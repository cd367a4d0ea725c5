"""The ``bot:`` players: a built-in or plug-in bot searching in a worker process of the
arbiter's pool, so that a slow or broken bot never blocks the arbiter."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import replace

import trio

import games
from bots.engine import Engine, OptionError
from bots.registry import BotError, create_bot
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import (
    MOVE_TIMEOUT,
    ForfeitError,
    GameOptions,
    GoRequest,
    Player,
    PlayerSpec,
    PlayerSpecError,
    Reply,
    is_timed,
)
from enginesrv.search import timeman
from enginesrv.search.child import SearchOutcome, SearchRunner
from enginesrv.search.jobs import SearchJob
from enginesrv.search.pool import GRACE, stall_grace

_BOT_INSTANCES = itertools.count(1)
STOPPED_SEARCH = 0.05
"""Seconds a bot searches when a stop came before any worker took its search."""
BOT_OVERHEAD_MS = 50
"""Milliseconds a bot keeps back from each move's time for the trip to and from its worker
and for the moments a busy machine does not run it: the arbiter measures the whole."""


def check_bot(spec: PlayerSpec, game: str) -> Engine:
    """A configured instance of a ``bot:`` player's bot, to check that it can play ``game``.

    Raises:
        PlayerSpecError: an unknown bot, a game it does not play, or a bad option.
    """
    try:
        engine = create_bot(spec.bot)
    except BotError as exc:
        raise PlayerSpecError(f"player {spec.text!r}: {exc}") from None
    if not engine.supports(game):
        raise PlayerSpecError(f"player {spec.text!r}: {spec.bot} does not play {game}")
    for key, value in spec.options:
        try:
            engine.set_option(key, value)
        except OptionError as exc:
            raise PlayerSpecError(f"player {spec.text!r}: {exc}") from None
    return engine


def _never_ran(outcome: SearchOutcome) -> bool:
    """Whether a search ended before any worker took it (stopped while it waited)."""
    return outcome.result is None and outcome.error is None and not outcome.killed


class BotPlayer(Player):
    """A bot searching in the arbiter's worker pool.

    With a clock the bot keeps its tables from one move to the next when the pool gives it the
    same worker; without one (depth or node limits) every search starts afresh, so that a game
    replays exactly whatever worker it lands on (resumed tournaments end as uninterrupted ones).
    """

    def __init__(
        self,
        spec: PlayerSpec,
        pool: SearchRunner | None,
        *,
        overhead_ms: int = BOT_OVERHEAD_MS,
        move_timeout: float = MOVE_TIMEOUT,
        peer: str | None = None,
        most_ms: int = 0,
    ) -> None:
        """``most_ms``: the longest one search may take (0: what its clock allows)."""
        super().__init__(spec)
        self.peer = peer
        """The address the searches count against in the pool's per-address cap (None: the
        arbiter's own, uncapped)."""
        self.most_ms = most_ms
        self.retry_stopped = True
        """Whether a search stopped before it had a worker searches for a moment once one is
        free (False once no one waits for the decision: a refereed game's page left)."""
        self.pool = pool
        self.overhead_ms = overhead_ms
        self.move_timeout = move_timeout
        self.game = ""
        self.session = ""
        self.instance = next(_BOT_INSTANCES)
        self.game_key = ""
        self.seed = 0
        self.secret_seed = 0
        self.game_options: GameOptions = ()
        """Options for the game being played only (``new_game``), after the spec's."""
        self.fresh = True
        self.has_seed = False
        self.has_secret_seed = False

    async def start(self, game: games.Game) -> None:
        engine = check_bot(self.spec, game.name)
        self.has_seed = any(option.name == "Seed" for option in engine.options)
        self.has_secret_seed = any(option.name == "SecretSeed" for option in engine.options)
        self.game = game.name
        self.alive = True

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        # one worker-side bot per player instance, not per game: a new game clears its tables
        # (new_game), while a bot per game would make the workers drop a full table at every
        # game's first moves, time that move's clock pays for
        self.session = f"{self.spec.name}#{self.instance}"
        self.game_key = key
        self.seed = seed
        self.secret_seed = secret_seed
        self.game_options = options
        self.fresh = True

    async def go(
        self,
        request: GoRequest,
        stop: trio.Event | None = None,
        on_hold: Callable[[bool], None] | None = None,
    ) -> Reply:
        """The bot's decision; ``stop`` set early makes it answer with its best so far.
        ``on_hold``: told when the search takes a worker (True) and when it is suspended
        (False); its time then runs only while it holds one (``WorkerPool.search``)."""
        clocks = request.clocks
        budget = timeman.search_time(
            clocks,
            request.seat,
            request.turn,
            self.overhead_ms,
            most_ms=self.most_ms,
            weight=request.weight,
            expected=request.expected,
        )
        job = self._job(request, budget)
        self.fresh = False
        if self.pool is None:
            raise ForfeitError(Termination.CRASH, "no search workers are running")
        started = trio.current_time()
        hard = request.forfeit_at
        grace = None
        if hard is not None and budget.deadline is not None:
            # a worker that stalls is stopped and killed before its clock runs out, and its
            # best move so far played (``stall_grace``)
            grace = stall_grace(GRACE, budget.deadline, hard - started)
            hard = min(hard, started + budget.deadline + grace)
        if hard is None:
            hard = started + self.move_timeout
        outcome = await self.pool.search(
            job,
            on_info=lambda info: None,
            stop=trio.Event() if stop is None else stop,
            hard_deadline=hard,
            peer=self.peer,
            on_hold=on_hold,
            grace=grace,
        )
        if stop is not None and stop.is_set() and _never_ran(outcome) and self.retry_stopped:
            # stopped before a worker took the search: a stop asks for the best move so far,
            # and a bot that never searched has none, so it searches for a moment, unstopped
            # (a stop is never a way to make the bot forfeit)
            brief = replace(job, target=STOPPED_SEARCH, deadline=STOPPED_SEARCH, issued=None)
            outcome = await self.pool.search(
                brief,
                on_info=lambda info: None,
                stop=trio.Event(),
                hard_deadline=hard,
                peer=self.peer,
                on_hold=on_hold,
            )
        return self._reply(outcome, trio.current_time() - started, request)

    def _job(self, request: GoRequest, budget: timeman.SearchTime) -> SearchJob:
        """The search job of ``request`` within ``budget``, with the player's options and
        the game's seeds."""
        clocks = request.clocks
        options = (*self.spec.options, *self.game_options)
        given = {k.lower() for k, _ in options}
        if self.has_seed and "seed" not in given:
            options = (*options, ("Seed", str(self.seed)))
        if self.has_secret_seed and self.secret_seed and "secretseed" not in given:
            options = (*options, ("SecretSeed", str(self.secret_seed)))
        return SearchJob(
            session=self.session,
            game=self.game,
            position=request.position,
            bot=self.spec.bot,
            options=tuple((k, v) for k, v in options),
            depth=clocks.depth,
            nodes=clocks.nodes,
            target=budget.target,
            deadline=budget.deadline,
            new_game=self.fresh or not is_timed(clocks),
            game_key=self.game_key,
            issued=time.monotonic(),
            from_pv=budget.from_pv,
        )

    def _reply(self, outcome: SearchOutcome, elapsed: float, request: GoRequest) -> Reply:
        """The answer made of a search's ``outcome``, ``elapsed`` seconds after the request.

        Raises:
            ForfeitError: the bot failed, or has no move.
        """
        result = outcome.result
        if outcome.error is not None:
            raise ForfeitError(Termination.CRASH, f"the bot failed: {outcome.error}")
        last = outcome.last_info
        if result is None and outcome.killed and last is not None and last.pv:
            # its worker stalled: the best move it reported, as an engine that is stopped
            # sends (the arbiter checks it as any other)
            return Reply(
                last.pv[0], elapsed, last.score, last.depth or 0, last.nodes or 0, last.time
            )
        if result is None:
            if request.forfeit_at is not None:
                raise ForfeitError(Termination.TIME_FORFEIT, f"no move after {elapsed:.3f} s")
            if outcome.killed:
                raise ForfeitError(
                    Termination.STALL, f"no move within the move timeout of {self.move_timeout:g} s"
                )
            raise ForfeitError(Termination.STALL, "the search ended without a move")
        return Reply(result.token, elapsed, result.score, result.depth, result.nodes, result.time)

    async def close(self) -> None:
        self.alive = False
