"""One ladder game, from pairing to storing (``Referee.play``): refereed by the arbiter that
plays events (``event.play.arbiter``: clocks, forfeits, adjudication, records, each side's
view alone in a game of hidden information), its players the two links' (a connected bot as
a ``LadderSeat``, a house bot as a ``BotPlayer`` on the ladder's pool of searches), stored
the moment it ends (``store.Section``) and added to the standings (``standings.Board``)."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio

import games
from enginesrv.event.feed import Feed, result_message, standings_message
from enginesrv.event.play.arbiter import GameResult, GameSetup, MoveObserver, no_start, play_game
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.plan import secret_seeds
from enginesrv.event.play.players import (
    Deadlines,
    ForfeitError,
    Player,
    PlayerSpecError,
    parse_player,
)
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.wording import result_words
from enginesrv.ladder.lobby import Link, Lobby
from enginesrv.ladder.pairing import Pairing
from enginesrv.ladder.seat import LadderSeat
from enginesrv.ladder.settings import LadderError, LadderSettings
from enginesrv.ladder.standings import Board, ladder_json
from enginesrv.ladder.store import Seats, Section
from enginesrv.search.child import SearchRunner

log = structlog.get_logger("enginesrv.ladder.referee")


@dataclass
class Ended:
    """A game stored: which game, its row and its result."""

    game: str
    row: GameRow
    result: GameResult


class Referee:
    """Plays the ladder's games (module docstring)."""

    def __init__(  # noqa: PLR0913 (the parts of a ladder it plays with)
        self,
        settings: LadderSettings,
        lobby: Lobby,
        sections: dict[str, Section],
        boards: dict[str, Board],
        pool: SearchRunner | None,
        deadlines: Deadlines,
        grace: float,
        *,
        event: str = "enginesrv ladder",
        on_end: Callable[[Ended], None] | None = None,
        feeds: dict[str, Feed] | None = None,
        leaderboard: Path | None = None,
    ) -> None:
        self.settings = settings
        self.lobby = lobby
        self.sections = sections
        self.boards = boards
        self.pool = pool
        self.deadlines = deadlines
        self.grace = grace
        self.event = event
        self.on_end = on_end
        self.feeds = feeds or {}
        """Each game's watch feed (the web port's ``/events``)."""
        self.leaderboard = leaderboard
        """Where the standings are written after each game (``DIR/leaderboard.json``)."""
        self.house: dict[int, BotPlayer] = {}
        """Each house link's bot, kept across its games (its tables warm)."""
        self.playing = 0
        self._store_lock = trio.Lock()
        self._numbers = iter(range(1, 1 << 62))

    def player_for(self, link: Link) -> Player:
        """The player of ``link`` for a game: its seat, or the house bot, kept warm."""
        if not link.house:
            return LadderSeat(link, self.lobby, self.deadlines, self.grace)
        bot = self.house.get(link.serial)
        if bot is None or not bot.alive:
            bot = BotPlayer(parse_player(link.house), self.pool, move_timeout=self.deadlines.move)
            self.house[link.serial] = bot
        return bot

    async def play(self, pairing: Pairing, links: tuple[Link, Link]) -> Ended | None:
        """Play one paired game and store it; None when it could not be played at all (the
        ladder stops meanwhile: nothing is stored). Gives the links back to the lobby (or
        closes a link that failed)."""
        game = games.load(pairing.game)
        players = (self.player_for(links[0]), self.player_for(links[1]))
        number = next(self._numbers)
        setup = GameSetup(
            key=f"ladder-{number}",
            names=(links[0].name, links[1].name),
            limits=self.settings.limits,
            adjudication=self.settings.adjudication(),
            seeds=(secrets.randbelow(1 << 31), secrets.randbelow(1 << 31)),
            secret_seeds=secret_seeds() if game.hidden_information else (0, 0),
            event=self.event,
        )
        self.playing += 1
        result: GameResult | None = None
        try:
            result = await self._played(game, players, setup, number)
            ended = await self._stored(pairing.game, setup, result)
            self._tell_feed(number, ended)
            return ended
        finally:
            self.playing -= 1
            with trio.CancelScope(shield=True):
                await self._release(players, links, result)

    async def _played(
        self, game: games.Game, players: tuple[Player, Player], setup: GameSetup, number: int
    ) -> GameResult:
        for seat in (0, 1):
            try:
                await players[seat].start(game)
            except ForfeitError as exc:
                return no_start(game, setup, seat, exc)
            except PlayerSpecError as exc:  # an engine that refuses the game's options
                return no_start(game, setup, seat, ForfeitError(Termination.CRASH, str(exc)))
        observer: MoveObserver | None = None
        feed = self.feeds.get(game.name)
        if feed is not None:  # the watchers see the game from its first move on
            base = self.settings.control.base_ms
            observer = feed.game(number, 1, setup.names, game.new_state(), base)
        return await play_game(game, players, setup, on_move=observer)

    async def _stored(self, game: str, setup: GameSetup, result: GameResult) -> Ended:
        section = self.sections[game]
        seats = Seats(setup.names[0], setup.names[1])
        async with self._store_lock:
            try:
                row = await trio.to_thread.run_sync(section.keep, seats, result, setup.secret_seeds)
            except LadderError as exc:
                log.error("ladder_store_failed", game=game, detail=str(exc))
                raise
            self.boards[game].add(row)
            if self.leaderboard is not None:
                await trio.to_thread.run_sync(self._write_leaderboard)
        ended = Ended(game, row, result)
        if self.on_end is not None:
            self.on_end(ended)
        return ended

    def _tell_feed(self, number: int, ended: Ended) -> None:
        feed = self.feeds.get(ended.game)
        if feed is None:
            return
        row, result = ended.row, ended.result
        words = result_words(result.outcome, (row.p1, row.p2), result.detail)
        feed.publish(result_message(number, result.outcome, result.plies, words))
        board = self.boards[ended.game]
        standings = standings_message(board.standings, board.games, 0, None)
        standings["leaderboard"] = [line.to_json() for line in board.leaderboard()]
        feed.publish(standings)

    def _write_leaderboard(self) -> None:
        assert self.leaderboard is not None
        text = json.dumps(ladder_json(self.boards, self.settings.tc), indent=1)
        tmp = self.leaderboard.with_name(self.leaderboard.name + ".new")
        try:
            tmp.unlink(missing_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with open(os.open(tmp, flags, 0o644), "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
            os.replace(tmp, self.leaderboard)
        except OSError as exc:  # the games are stored: the leaderboard is written next time
            log.warning("ladder_leaderboard_not_written", detail=str(exc))

    async def _release(
        self, players: tuple[Player, Player], links: tuple[Link, Link], result: GameResult | None
    ) -> None:
        failed = set(range(2)) if result is None else set(result.failed)
        for seat, (player, link) in enumerate(zip(players, links, strict=True)):
            current = player.link if isinstance(player, LadderSeat) else link
            if link.house:
                if seat in failed:
                    await player.close()
                self.lobby.idle(link)
            elif seat in failed or not current.alive or result is None or current.revoked:
                await player.close()
            else:
                self.lobby.idle(current)
