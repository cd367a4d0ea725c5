"""The schedule of an event and its seeds: which games are played, in which order, with
which colours and openings, and the seeds every game's bots get. All of it follows from the
configuration alone, never from the order games finish in, so a resumed event ends with
exactly the games an uninterrupted one plays."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable
from dataclasses import dataclass

from enginesrv.event.config import EventConfig
from enginesrv.event.play.players import (
    NAME_LIMIT,
    PlayerSpec,
    parse_player,
)


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of the schedule. ``first`` and ``second`` index the pairing's players (the
    first-named is ``first``); ``p1`` is the one that moves first."""

    id: int
    round: int
    pairing: int
    first: int
    second: int
    p1: int
    pair: int
    opening: int

    @property
    def p2(self) -> int:
        """The player that moves second: the one of the pairing that is not ``p1``."""
        return self.second if self.p1 == self.first else self.first

    @property
    def seats(self) -> tuple[int, int]:
        """The players (their indexes among the event's) as p1 and p2."""
        return self.p1, self.p2


def pairings(count: int, gauntlet: bool) -> list[tuple[int, int]]:
    """The pairings of ``count`` players: every two (round robin) or the first with each."""
    if gauntlet:
        return [(0, j) for j in range(1, count)]
    return [(i, j) for i in range(count) for j in range(i + 1, count)]


def make_schedule(config: EventConfig, openings: int) -> list[ScheduledGame]:
    """The games of the event, in the order they are started (module docstring)."""
    pairs = pairings(len(config.players), config.gauntlet)
    order = list(range(openings))
    if config.openings_order == "random":
        random.Random(f"openings:{config.seed}").shuffle(order)
    out: list[ScheduledGame] = []
    for rnd in range(config.rounds):
        for number, (i, j) in enumerate(pairs):
            for g in range(config.games):
                k = rnd * config.games + g
                pair = k // 2
                slot = pair if config.repeat else k
                out.append(
                    ScheduledGame(
                        id=len(out) + 1,
                        round=rnd + 1,
                        pairing=number,
                        first=i,
                        second=j,
                        p1=i if k % 2 == 0 else j,
                        pair=pair,
                        opening=order[slot % openings],
                    )
                )
    return out


def game_seeds(config: EventConfig, game_id: int) -> tuple[int, int]:
    """The ``Seed`` of p1's and p2's bots in one game: from the event seed and the game alone."""
    rng = random.Random(f"game:{config.seed}:{game_id}")
    return rng.randrange(2**31), rng.randrange(2**31)


def named_specs(players: Iterable[str]) -> list[PlayerSpec]:
    """The event's player specs, each named by its display name (``display_names``).

    Raises:
        PlayerSpecError: a spec that does not parse.
    """
    specs = [parse_player(text) for text in players]
    names = display_names(specs)
    return [dataclasses.replace(s, name=n) for s, n in zip(specs, names, strict=True)]


def display_names(specs: Iterable[PlayerSpec]) -> list[str]:
    """Unique display names: a repeated name gets ``#2``, ``#3``... (cut to keep at most
    ``NAME_LIMIT`` characters), the first number not taken. In one pass, near-linear: the
    names taken are a set, and each name's numbers resume where they stopped."""
    out: list[str] = []
    taken: set[str] = set()
    # the last number tried for each name: those below it are taken, and stay taken
    tried: dict[str, int] = {}
    for spec in specs:
        n = tried.get(spec.name, 1)
        name = _numbered(spec.name, n)
        while name in taken:
            n += 1
            name = _numbered(spec.name, n)
        tried[spec.name] = n
        taken.add(name)
        out.append(name)
    return out


def _numbered(name: str, n: int) -> str:
    """``name`` as the ``n``-th player of that name is shown: itself for the first, then with
    ``#n`` (within NAME_LIMIT: the name is cut before it if need be)."""
    if n == 1:
        return name
    suffix = f"#{n}"
    return name[: NAME_LIMIT - len(suffix)] + suffix
