"""One game of an event as a plan (``GamePlan``: who sits where, under which limits, from
which opening) and its playing (``play_planned``), the same wherever it runs: on this machine
(``runners.local``) or on a worker of a cluster (``runners.cluster``).

The secret seeds of a game with hidden information are not part of the plan: they are drawn
where the game is played, as it starts, so that they never travel before the game is over
(``Played.secret_seeds`` carries them back for audit).
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass

import trio

import games
from enginesrv.event.play.arbiter import GameResult, GameSetup, MoveObserver, no_start, play_game
from enginesrv.event.play.players import ForfeitError, Player
from enginesrv.event.play.slots import Slot


@dataclass(frozen=True, slots=True)
class GamePlan:
    """One game to play: its number in the event's schedule, its round, the players (by
    their index among the event's) as p1 and p2, and everything else about it but the
    players themselves (``setup``, whose secret seeds are drawn when it is played)."""

    game_id: int
    round: int
    seats: tuple[int, int]
    setup: GameSetup


@dataclass(frozen=True, slots=True)
class Played:
    """A game played: its result and the secret seeds its bots were given."""

    result: GameResult
    secret_seeds: tuple[int, int]


def secret_seeds() -> tuple[int, int]:
    """The ``SecretSeed`` of p1's and p2's bots in a game with hidden information: drawn from the
    operating system, so that no one who knows the event's seed can compute a bot's secret
    choices (Yin Yang laws)."""
    # 63 bits: a bot's hidden choices are a function of the seed and what its opponent
    # sees, so a seed of fewer bits could be found by trying them all
    return secrets.randbelow(2**63 - 1) + 1, secrets.randbelow(2**63 - 1) + 1


async def play_planned(
    game: games.Game, slot: Slot, plan: GamePlan, on_move: MoveObserver | None = None
) -> Played:
    """Play ``plan`` with the players of ``slot``; a player that cannot start loses the game
    with the reason. ``on_move`` is told each move (``play_game``). The players that failed
    in the game are closed (the slot starts them afresh for its next game)."""
    hidden = secret_seeds() if game.hidden_information else (0, 0)
    setup = dataclasses.replace(plan.setup, secret_seeds=hidden)
    players: list[Player] = []
    for seat, index in enumerate(plan.seats):
        try:
            players.append(await slot.get(index, game))
        except ForfeitError as exc:
            await slot.publish_traces(plan.game_id, plan.seats)
            return Played(no_start(game, setup, seat, exc), hidden)
    finished = False
    try:
        result: GameResult = await play_game(game, (players[0], players[1]), setup, on_move=on_move)
        finished = True
    finally:
        # the game is over (or stopped for good): its protocol traces may be read now; before
        # a failed player is closed, so that its trace ends where its game did
        with trio.CancelScope(shield=True):
            await slot.publish_traces(plan.game_id, plan.seats, finished=finished)
    for seat in result.failed:
        await players[seat].close()
    return Played(result, hidden)
