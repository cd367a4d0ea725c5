"""A session's board: its game, its position and the moves played since the position was set,
with the commands on them (``position``, ``play``, ``undo``, ``query``, ``show``, and the
``Game`` option), each checked completely before anything changes. In a game the server
referees, the board holds the view of the session's client, which the referee hands it
(``Board.hold``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

import games
from bots.engine import RootScore
from enginesrv.serve.offload import offload
from enginesrv.serve.settings import (
    MOVES_LISTED,
    MOVES_ON_LOOP,
    REPLY_OVERHEAD,
    TOKEN_OVERHEAD,
    Framing,
    RequestError,
    SessionConfig,
    request_error,
    too_many_moves,
)
from protocol import messages as m
from protocol.errors import (
    BAD_ARGUMENTS,
    GAME_OVER,
    INVALID_POSITION,
    NO_GAME,
    PLY_LIMIT,
)


def result_text(outcome: games.Outcome | None) -> str:
    """``query result``'s answer: ``p1win``, ``p2win``, ``draw``, or ``none`` while the game
    goes on."""
    if outcome is None:
        return "none"
    return "draw" if outcome.winner == "draw" else f"{outcome.winner}win"


def _turn(state: games.State) -> str:
    seat = state.to_move()
    return "none" if seat < 0 else f"p{seat + 1}"


def _outcome(state: games.State) -> m.ResponseValue:
    outcome = state.outcome()
    return None if outcome is None else outcome.as_dict()


STATE_ANSWERS: Final[dict[str, Callable[[games.State], m.ResponseValue]]] = {
    "gameover": lambda state: state.is_terminal(),
    "p1turn": lambda state: state.to_move() == games.P1,
    "result": lambda state: result_text(state.outcome()),
    "position": lambda state: state.to_string(),
    "turn": _turn,
    "outcome": _outcome,
    "phase": lambda state: state.phase(),
}
"""The ``query`` subjects answered from the position alone (docs/protocol.md §4.1)."""


class SortedMoves:
    """The sorted move lists of the long lists listed last, shared by every session (paging
    through a long list, ``query moves start K``, then sorts it once): lists of at least
    ``shortest`` moves (a shorter one fits a reply, and costs little to list again), at most
    ``most_lists`` of them and ``capacity`` moves in all, the least recently used first to
    go. Lists are computed on the offload thread; a lock keeps the table whole."""

    def __init__(self, capacity: int, *, shortest: int = 1000, most_lists: int = 16) -> None:
        self.capacity = capacity
        self.shortest = shortest
        self.most_lists = most_lists
        self._lists: OrderedDict[tuple[str, str], tuple[str, ...]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The lists held."""
        return len(self._lists)

    @property
    def held(self) -> int:
        """The moves held, over all the lists."""
        return self._held

    def of(self, state: games.State) -> tuple[str, ...]:
        """The sorted move tokens of ``state``."""
        key = (state.game.name, state.to_string())
        with self._lock:
            found = self._lists.get(key)
            if found is not None:
                self._lists.move_to_end(key)
                return found
        tokens = tuple(sorted(state.move_to_str(mv) for mv in state.legal_moves()))
        if not self.shortest <= len(tokens) <= self.capacity:
            return tokens
        with self._lock:
            if key not in self._lists:
                self._lists[key] = tokens
                self._held += len(tokens)
            while self._held > self.capacity or len(self._lists) > self.most_lists:
                _, dropped = self._lists.popitem(last=False)
                self._held -= len(dropped)
        return tokens


SORTED_MOVES = SortedMoves(200_000)
"""The lists of the process: about 15 MB at most, and 16 keys of at most a line each."""


class Board:
    """A session's game and position (module docstring)."""

    def __init__(
        self, config: SessionConfig, *, framing: Framing, max_reply: int, peer: str | None
    ) -> None:
        """``max_reply``: the longest reply the connection sends (a line or a frame);
        ``peer``: whose share of the threads the costly commands take (``offload``)."""
        self.config = config
        self.framing = framing
        self.max_reply = max_reply
        self.peer = peer
        self.game: games.Game | None = None
        self.state: games.State | None = None
        self.played: list[str] = []
        """The moves played since the position was set, as the session's holder was shown
        them."""
        self.scores: tuple[str, tuple[RootScore, ...]] = ("", ())
        """The position string of the last search's position, and its root moves' scores
        (``query scores``: none once the position is another)."""

    def keep_scores(self, position: str, scores: tuple[RootScore, ...]) -> None:
        """What the search of ``position`` (the board's position string) learnt of its
        first decisions."""
        self.scores = (position, scores)

    def set_game(self, game: games.Game) -> None:
        """A new game of ``game``, from its start position."""
        self.game = game
        self.state = game.new_state()
        self.played = []
        self.scores = ("", ())  # a new game: what the searches learnt is forgotten

    def hold(self, game: games.Game, state: games.State, played: list[str]) -> None:
        """Hold what a referee shows the session's client: its view of the game, and the
        moves played as it was shown them."""
        self.game = game
        self.state = state
        self.played = played

    def require(self, verb: str) -> tuple[games.Game, games.State]:
        """The game and the position.

        Raises:
            RequestError: no game is set (error 200, naming ``verb``).
        """
        if self.game is None or self.state is None:
            raise request_error(
                NO_GAME, f"{verb}: no game is set; send setoption name Game value NAME"
            )
        return self.game, self.state

    async def set_position(self, fen: str | None, moves: tuple[str, ...]) -> None:
        """``position``: ``fen`` (None: the start position), then ``moves``."""
        game, _ = self.require("position")
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

    def play(self, token: str) -> str:
        """``play``: the new position string."""
        _, state = self.require("play")
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

    def undo(self, n: int) -> str:
        """``undo n``: the new position string."""
        _, state = self.require("undo")
        available = min(len(self.played), state.ply())
        if n > available:
            raise request_error(
                BAD_ARGUMENTS, f"undo: only {available} move(s) can be taken back, not {n}"
            )
        for _ in range(n):
            state.pop()
            self.played.pop()
        return state.to_string()

    def query(self, what: str, start: int = 0) -> m.ResponseValue:
        """The answer to ``query what`` (docs/protocol.md §4.1); for ``moves``, the sorted
        list from its ``start``-th move on."""
        _, state = self.require("query")
        match what:
            case "moves":
                count = state.count_moves()
                if count > MOVES_LISTED:
                    return f"count {count} {state.describe_moves()}".rstrip()
                if start and start >= count:  # past the end: an empty page, listing nothing
                    return f"count {count} moves"
                return self.fit_moves(SORTED_MOVES.of(state), start)
            case "played":
                return self.fit_moves(list(self.played))
            case "clock":
                return "none"  # a plain session keeps no clocks (a refereed game does)
            case "scores":
                position, scores = self.scores
                return self.fit_scores(scores if position == state.to_string() else ())
        return STATE_ANSWERS.get(what, STATE_ANSWERS["phase"])(state)

    def fit_moves(self, tokens: Sequence[str], start: int = 0) -> m.ResponseValue:
        """The move list, or, when it would make a reply longer than the line or frame limit
        or a ``start`` is given, ``count N moves`` and the moves from the ``start``-th on that
        fit (docs/protocol.md §4.1)."""
        room = self.max_reply - REPLY_OVERHEAD[self.framing]
        extra = TOKEN_OVERHEAD[self.framing]
        costs = [len(t.encode()) + extra for t in tokens[start:]]
        if not start and sum(costs) <= room:
            return tuple(tokens)
        head = f"count {len(tokens)} moves"
        room -= len(head)
        kept = 0
        for cost in costs:
            if cost > room:
                break
            room -= cost
            kept += 1
        return " ".join([head, *tokens[start : start + kept]])

    def fit_scores(self, scores: tuple[RootScore, ...]) -> tuple[str, ...]:
        """``query scores``: ``SCORE_WORDS`` words per move (docs/protocol.md §4.1), as many
        moves as fit in a reply, in the order given (deepest, then best, first)."""
        room = self.max_reply - REPLY_OVERHEAD[self.framing]
        extra = TOKEN_OVERHEAD[self.framing]
        words: list[str] = []
        for each in scores:
            entry = [
                each.token, each.score.kind, str(each.score.value), str(each.depth),
                each.bound or "exact",
            ]  # fmt: skip
            cost = sum(len(w.encode()) + extra for w in entry)
            if cost > room:
                break
            room -= cost
            words += entry
        return tuple(words)

    def show(self) -> str:
        """``show``: the position drawn, with whose turn it is, its phase and its string."""
        game, state = self.require("show")
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
