"""The player instances of an event: one made from each spec (``make_player``), and the
players of one concurrent game slot, started when first needed and afresh after a failure
(``Slot``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import trio

import games
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.engine_player import TextEnginePlayer
from enginesrv.event.play.players import (
    Deadlines,
    Player,
    PlayerSpec,
)
from enginesrv.event.play.private_log import LOG_CAP
from enginesrv.event.play.trace import file_safe_name
from enginesrv.search.child import SearchRunner
from enginesrv.search.pool import WorkerPool


def make_player(
    spec: PlayerSpec,
    pool: SearchRunner | None,
    deadlines: Deadlines | None = None,
    *,
    stderr: Path | None = None,
    wrapper: tuple[str, ...] = (),
    traces: Path | None = None,
    log_cap: int = LOG_CAP,
) -> Player:
    """A fresh player instance for ``spec`` (bots share ``pool``; a ``cmd:`` engine's standard
    error is appended to ``stderr`` when given; an external engine's protocol traces go to
    ``traces`` when given)."""
    if spec.kind == "bot":
        return BotPlayer(spec, pool, move_timeout=(deadlines or Deadlines()).move)
    return TextEnginePlayer(
        spec, deadlines, stderr=stderr, wrapper=wrapper, traces=traces, log_cap=log_cap
    )


class Slot:
    """The player instances of one concurrent game slot (one per player, started lazily)."""

    def __init__(
        self,
        specs: list[PlayerSpec],
        pool: WorkerPool | None,
        deadlines: Deadlines,
        logs: Path | None,
        isolate: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None,
        *,
        traces: Path | None = None,
        log_cap: int = LOG_CAP,
    ) -> None:
        self.specs = specs
        self.pool = pool
        self.deadlines = deadlines
        self.logs = logs
        self.isolate = isolate
        """The command to run a ``cmd:`` engine's command under (``--isolate``), if any."""
        self.traces = traces
        """Where the external engines' protocol traces are published (``--debug``), if at all."""
        self.log_cap = log_cap
        """The most bytes of each stream of an external engine kept per game."""
        self.players: dict[int, Player] = {}

    async def get(self, index: int, game: games.Game) -> Player:
        player = self.players.get(index)
        if player is not None and player.alive:
            return player
        if player is not None:
            await player.close()
        stderr = None
        if self.logs is not None:
            stderr = self.logs / f"{file_safe_name(self.specs[index].name)}.stderr"
        spec = self.specs[index]
        wrapper = self.isolate(spec.command) if self.isolate and spec.kind == "cmd" else ()
        player = make_player(
            spec,
            self.pool,
            self.deadlines,
            stderr=stderr,
            wrapper=wrapper,
            traces=self.traces,
            log_cap=self.log_cap,
        )
        self.players[index] = player
        await player.start(game)
        return player

    async def publish_traces(
        self, game_id: int, seats: tuple[int, int], *, finished: bool = True
    ) -> None:
        """The game ``game_id`` is over, or was stopped before its end (not ``finished``):
        publish what each external engine of it sent and read (``seats``: the players'
        indexes as p1 and p2; ``TextEnginePlayer.publish_trace``)."""
        for seat, index in enumerate(seats):
            player = self.players.get(index)
            if isinstance(player, TextEnginePlayer):
                await player.publish_trace(game_id, seat, finished=finished)

    async def close(self) -> None:
        with trio.CancelScope(shield=True):
            for player in self.players.values():
                await player.close()
            self.players.clear()
