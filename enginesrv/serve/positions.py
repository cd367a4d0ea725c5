"""The position part of a ``Session``: ``position``, ``play``, ``undo``, ``query`` and ``show``,
each checked completely before the session changes."""

from __future__ import annotations

import games
from enginesrv.serve.offload import offload
from enginesrv.serve.settings import (
    MOVES_LISTED,
    MOVES_ON_LOOP,
    REPLY_OVERHEAD,
    TOKEN_OVERHEAD,
    RequestError,
    Settings,
    request_error,
    too_many_moves,
)
from protocol import messages as m
from protocol.errors import (
    BAD_ARGUMENTS,
    GAME_OVER,
    INVALID_POSITION,
    PLY_LIMIT,
)


class Positions(Settings):
    """The commands on the session's position (a base of ``Session``)."""

    max_reply: int
    peer: str | None

    async def _set_position(self, fen: str | None, moves: tuple[str, ...]) -> None:
        game, _ = self._require_game("position")
        most = self.config.max_plies
        if most and len(moves) > most:
            raise request_error(PLY_LIMIT, too_many_moves(len(moves), most))

        def build() -> games.State:
            try:
                state = game.state_from_string(fen) if fen is not None else game.new_state()
            except games.InvalidPositionError as exc:
                raise request_error(INVALID_POSITION, f"position {fen!r}: {exc.reason}") from None
            # moves as the session's holder was shown them (a view may be given the
            # opponent's Yin Yang setup as laws:?,?,?,?)
            try:
                games.replay(game, state, moves, shown=True)
            except games.ReplayError as exc:
                raise RequestError(m.InvalidMove(exc.text, exc.reason)) from None
            return state

        # a frame may carry thousands of moves: replayed off the event loop
        self.state = await offload(self.peer, build) if len(moves) > MOVES_ON_LOOP else build()
        self.played = list(moves)

    def _play(self, token: str) -> str:
        _, state = self._require_game("play")
        if state.is_terminal():
            raise request_error(GAME_OVER, f"play: the game is over ({state.outcome()})")
        most = self.config.max_plies
        if most and len(self.played) >= most:
            raise request_error(
                PLY_LIMIT,
                f"play: the game has reached the server's limit of {most} plies in a "
                "session's game (limit plies); start a new one",
            )
        try:
            move = state.parse_shown_move(token)  # as the session's holder was shown it
        except games.GameError as exc:
            raise RequestError(m.InvalidMove(token, exc.reason)) from None
        state.push(move)
        self.played.append(token)
        return state.to_string()

    def _undo(self, n: int) -> str:
        _, state = self._require_game("undo")
        available = min(len(self.played), state.ply())
        if n > available:
            raise request_error(
                BAD_ARGUMENTS, f"undo: only {available} move(s) can be taken back, not {n}"
            )
        for _ in range(n):
            state.pop()
            self.played.pop()
        return state.to_string()

    def _query(self, what: str) -> m.ResponseValue:
        _, state = self._require_game("query")
        outcome = state.outcome()
        match what:
            case "gameover":
                return state.is_terminal()
            case "p1turn":
                return state.to_move() == games.P1
            case "result":
                if outcome is None:
                    return "none"
                return "draw" if outcome.winner == "draw" else f"{outcome.winner}win"
            case "moves":
                count = state.count_moves()
                if count > MOVES_LISTED:
                    return f"count {count} {state.describe_moves()}".rstrip()
                return self._fit_moves(sorted(state.move_to_str(mv) for mv in state.legal_moves()))
            case "position":
                return state.to_string()
            case "turn":
                seat = state.to_move()
                return "none" if seat < 0 else f"p{seat + 1}"
            case "outcome":
                return None if outcome is None else outcome.as_dict()
            case "played":
                return self._fit_moves(list(self.played))
            case "clock":
                return "none"  # a plain session keeps no clocks (a refereed game does)
            case _:  # "phase"
                return state.phase()

    def _fit_moves(self, tokens: list[str]) -> m.ResponseValue:
        """The move list, or, when it would make a reply longer than the line or frame limit,
        ``count N moves`` and the first moves that fit (docs/protocol.md §4.1)."""
        room = self.max_reply - REPLY_OVERHEAD[self.framing]
        extra = TOKEN_OVERHEAD[self.framing]
        costs = [len(t.encode()) + extra for t in tokens]
        if sum(costs) <= room:
            return tuple(tokens)
        head = f"count {len(tokens)} moves"
        room -= len(head)
        kept = 0
        for cost in costs:
            if cost > room:
                break
            room -= cost
            kept += 1
        return " ".join([head, *tokens[:kept]])

    def _show(self) -> str:
        game, state = self._require_game("show")
        seat = state.to_move()
        turn = "nobody (game over)" if seat < 0 else f"{game.colours[seat]} (p{seat + 1})"
        lines = [
            state.render(),
            f"to act:   {turn}",
            f"phase:    {state.phase()} ({state.phase_name()})",
            f"position: {state.to_string()}",
        ]
        if (outcome := state.outcome()) is not None:
            lines.append(f"outcome:  {outcome}")
        return "\n".join(lines)

    # -- searching -----------------------------------------------------------------------------
