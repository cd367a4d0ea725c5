"""The players connected to a ladder (``Lobby``): each connection a ``Link``, one game at a
time, idle between games. An account may hold ``LINKS_PER_PLAYER`` links at once (so play as
many games at once); the house bots are links of their own that never drop.

A link that comes in under the name of a player whose connection dropped during a game is
given to that game first (``reclaim``): the game goes on where it was (docs/ladder.md,
"Disconnections").
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import trio

from enginesrv.client import AsyncEngine


@dataclass(eq=False)
class Link:
    """One connection of a player (``engine``), or a house bot (``house``: its spec)."""

    name: str
    engine: AsyncEngine | None
    peer: str
    games: frozenset[str]
    """The ladder's games it plays."""
    house: str = ""
    digest: str = ""
    """The digest of the token it logged in with (``TokenFile.match``)."""
    revoked: bool = False
    """Its player was revoked, or given another token, since: no more games."""
    busy: bool = False
    since: float = 0.0
    """When it last became idle (``trio.current_time``)."""
    serial: int = field(default_factory=itertools.count(1).__next__)

    @property
    def alive(self) -> bool:
        return self.engine is None or self.engine.alive


class Lobby:
    """Who is connected, who is idle, and who is wanted back (module docstring). All on one
    event loop."""

    def __init__(self, links_per_player: int) -> None:
        self.links_per_player = links_per_player
        self.links: dict[str, list[Link]] = {}
        self._held: Counter[str] = Counter()
        """Slots of links being greeted (``holding``): counted against the limit."""
        self.house: set[str] = set()
        """The names of the house bots."""
        self.changed = trio.Event()
        """Set when a link became idle or joined (the pairer waits on it)."""
        self._wanted: dict[str, list[trio.MemorySendChannel[Link]]] = {}

    def _wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def refusal(self, name: str) -> str | None:
        """Why a new link of ``name`` would be refused now (None: it would not)."""
        if self.held(name) >= self.links_per_player:
            return f"{name} holds its limit of {self.links_per_player} connections"
        return None

    @contextlib.contextmanager
    def holding(self, name: str) -> Iterator[None]:
        """Keep a slot of ``name``'s for a link being greeted, until the block ends (by
        then it has joined, or failed)."""
        self._held[name] += 1
        try:
            yield
        finally:
            self._held[name] -= 1
            if not self._held[name]:
                del self._held[name]

    def held(self, name: str) -> int:
        """The connections ``name`` holds: its links, and those being greeted."""
        return len(self.links.get(name, ())) + self._held[name]

    def is_house(self, name: str) -> bool:
        return name in self.house

    def join(self, link: Link) -> None:
        """A new link: to a game that wants its player back, else idle."""
        if link.house:
            self.house.add(link.name)
        self.links.setdefault(link.name, []).append(link)
        wanted = self._wanted.get(link.name)
        while wanted:
            channel = wanted.pop(0)
            try:
                link.busy = True
                channel.send_nowait(link)
                return
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                link.busy = False
        self.idle(link)

    def idle(self, link: Link) -> None:
        """``link`` has no game now."""
        link.busy = False
        link.since = trio.current_time()
        self._wake()

    def leave(self, link: Link) -> None:
        """``link`` is gone."""
        held = self.links.get(link.name, [])
        if link in held:
            held.remove(link)
        if not held:
            self.links.pop(link.name, None)

    def idle_links(self) -> list[Link]:
        """The links waiting for a game, the longest waiting first."""
        found = [
            link
            for held in self.links.values()
            for link in held
            if not link.busy and link.alive and not link.revoked
        ]
        return sorted(found, key=lambda link: (link.since, link.serial))

    def take(self, name: str, game: str) -> Link | None:
        """An idle link of ``name`` that plays ``game``, taken for a game of someone else's
        (a challenge: marked busy, the pairer passes it by); None when it has none."""
        for link in self.idle_links():
            if link.name == name and game in link.games:
                link.busy = True
                return link
        return None

    async def reclaim(self, name: str, seconds: float) -> Link | None:
        """The next link that comes in under ``name`` within ``seconds`` (taken for the
        caller's game), or None."""
        send, receive = trio.open_memory_channel[Link](1)
        self._wanted.setdefault(name, []).append(send)
        try:
            with trio.move_on_after(max(0.0, seconds)):
                return await receive.receive()
            return None
        finally:
            waiting = self._wanted.get(name, [])
            if send in waiting:
                waiting.remove(send)
            if not waiting:
                self._wanted.pop(name, None)
            send.close()
            # a link handed over as the wait ran out is idle again, not lost
            try:
                late = receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                pass
            else:
                self.idle(late)
            receive.close()

    def review(self, digests: dict[str, str]) -> list[Link]:
        """Mark the links whose player is no longer in ``digests`` (name to digest), or has
        another token now, as revoked; those of them that are idle (to be closed)."""
        idle = []
        for held in self.links.values():
            for link in held:
                if link.house or link.revoked or digests.get(link.name) == link.digest:
                    continue
                link.revoked = True
                if not link.busy:
                    idle.append(link)
        return idle

    def counts(self) -> dict[str, int]:
        """The links each connected player holds."""
        return {name: len(held) for name, held in self.links.items() if held}
