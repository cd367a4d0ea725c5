"""A ladder's run (``LadderRun``: what a command line asks for) and its parts while it
runs (``Ladder``), apart from the server that makes them, so that its web port can be given
them."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from enginesrv.event.play.players import Deadlines, PlayerSpec
from enginesrv.ladder.door import Door
from enginesrv.ladder.lobby import Lobby
from enginesrv.ladder.pairing import History
from enginesrv.ladder.referee import Ended, Referee
from enginesrv.ladder.settings import GRACE, LINKS_PER_PLAYER, MIN_GAMES, LadderSettings
from enginesrv.ladder.standings import Board
from enginesrv.ladder.store import Section

CHALLENGES = 4
"""Challenge games played at once by default (``ladder run --challenges``)."""
CONNECTIONS = 256
"""Connections the ladder's doors hold at once (bots, logins in progress, the web port's)."""


@dataclass
class LadderRun:
    """One run of a ladder: its folder and settings, and what belongs to this run."""

    folder: Path
    settings: LadderSettings
    house: tuple[PlayerSpec, ...] = ()
    grace: float = GRACE
    min_games: int = MIN_GAMES
    links_per_player: int = LINKS_PER_PLAYER
    host: str = "127.0.0.1"
    port: int = 0
    tls: ssl.SSLContext | None = None
    reload_tls: Callable[[], ssl.SSLContext] | None = None
    """Makes ``tls`` again from its files (SIGHUP: a renewed certificate); None: never."""
    web: int | None = None
    """The web port (``--web``: the page, the standings, bots over WebSocket); None: none."""
    deadlines: Deadlines = field(default_factory=Deadlines)
    connections: int = CONNECTIONS
    challenges: int = CHALLENGES
    """Games people play against its bots from the web page at once (0: none)."""


@dataclass
class Ladder:
    """A running ladder's parts (for the web page and the tests)."""

    run: LadderRun
    lobby: Lobby
    sections: dict[str, Section]
    boards: dict[str, Board]
    history: History
    door: Door | None = None
    referee: Referee | None = None
    stop: trio.Event = field(default_factory=trio.Event)
    address: tuple[str, int] = ("", 0)
    ended: list[Callable[[Ended], None]] = field(default_factory=list)
    tokens_stamp: tuple[int, ...] | None = None
    """The token file as the links were last reviewed (inode, time, size)."""
    tls_users: list[Callable[[ssl.SSLContext], None]] = field(default_factory=list)
    """What gives each TLS port's new connections a renewed certificate (SIGHUP)."""
