"""The mobility bot: an example of an enginesrv bot plug-in.

It plays the move that leaves the opponent the fewest replies (and, while the same player
keeps acting, itself the most), a game-agnostic idea that needs nothing but the rules
interface. Ties are broken by a seeded random choice.
"""

from __future__ import annotations

import random
from typing import ClassVar

from bots.engine import (
    Engine,
    InfoFn,
    Limits,
    Option,
    SearchInfo,
    SearchResult,
    StopFn,
    ignore_info,
    never_stop,
)
from games import Game, State


class MobilityBot(Engine):
    """Minimise the opponent's choices one ply ahead."""

    name: ClassVar[str] = "mybot"
    games = None  # every game: it only uses the rules interface
    options: ClassVar[tuple[Option, ...]] = (Option("Seed", "spin", 0, 0, 2**31 - 1),)

    def __init__(self) -> None:
        super().__init__()
        self._rng = random.Random(0)

    def new_game(self, game: Game) -> None:
        del game
        self._rng = random.Random(self.values["Seed"])

    def search(
        self,
        state: State,
        limits: Limits,
        stop: StopFn = never_stop,
        on_info: InfoFn = ignore_info,
    ) -> SearchResult:
        del limits
        moves = state.legal_moves()
        if not len(moves):
            return SearchResult(None, None)
        me = state.to_move()
        work = state.copy()
        best_score: int | None = None
        best: list[int] = []
        for move in moves:
            if stop():
                break
            work.push(move)
            if work.is_terminal():
                outcome = work.outcome()
                score = 10_000 if outcome is not None and outcome.winner_seat == me else -10_000
            else:
                replies = work.count_moves()
                score = replies if work.to_move() == me else -replies
            work.pop()
            if best_score is None or score > best_score:
                best_score, best = score, [move]
            elif score == best_score:
                best.append(move)
        move = self._rng.choice(best) if best else moves[0]
        token = state.move_to_str(move)
        on_info(SearchInfo(depth=1, nodes=len(moves), pv=(token,)))
        return SearchResult(move, token, depth=1, nodes=len(moves), pv=(token,))
