"""The engine interface every bot plugs into, and the value objects it trades in.

A bot is an ``Engine`` subclass. The server (or an in-process match) creates one per session,
sets its options, calls ``new_game`` at the start of each game and ``search`` for every move.
Search is synchronous and pure: it reads the position it is given, reports progress through
``on_info``, polls ``stop`` and returns a ``SearchResult``. It never prints, never formats wire
text and reads the time only through ``Limits.clock``.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeAlias

from games import Game, Move, State

OptionValue: TypeAlias = bool | int | str | None
OptionType: TypeAlias = Literal["check", "spin", "combo", "string", "button"]


class OptionError(ValueError):
    """Raised by ``Engine.set_option`` for an unknown option or a value it does not accept.

    The message names the option and the value.
    """


@dataclass(frozen=True, slots=True)
class Option:
    """A typed option, as UCI describes them.

    Attributes:
        name: the option's name (matched without regard to case).
        type: ``check`` (bool), ``spin`` (int within ``min``..``max``), ``combo`` (one of
            ``vars``), ``string``, or ``button`` (no value).
        default: the value before any ``set_option``.
        hidden: left out of a plain ``options`` listing (a GUI's), listed only when every
            option is asked for (``options all``), and set like any other: the evaluation
            weights a tuner moves (``bots.eval.tuning``).
        games: the games the option bears on, None for every game (a listing of every option
            for a session of one game leaves out the others').
    """

    name: str
    type: OptionType
    default: OptionValue = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()
    hidden: bool = False
    games: tuple[str, ...] | None = None

    def parse(self, text: str | None) -> OptionValue:
        """Turn wire text into a typed value.

        Raises:
            OptionError: the text is not a value of this option.
        """
        if self.type == "button":
            return None
        if text is None:
            raise OptionError(f"option {self.name!r} needs a value")
        if self.type == "check":
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                raise OptionError(f"option {self.name!r}: {text!r} is not true or false")
            return lowered == "true"
        if self.type == "spin":
            try:
                value = int(text.strip())
            except ValueError:
                raise OptionError(f"option {self.name!r}: {text!r} is not a whole number") from None
            low = self.min if self.min is not None else value
            high = self.max if self.max is not None else value
            if not low <= value <= high:
                raise OptionError(f"option {self.name!r}: {value} is not in {low}..{high}")
            return value
        if self.type == "combo":
            for var in self.vars:
                if var.lower() == text.strip().lower():
                    return var
            raise OptionError(
                f"option {self.name!r}: {text!r} is not one of {', '.join(self.vars)}"
            )
        return text

    def text(self, value: OptionValue) -> str:
        """The wire text of a value (``true``/``false`` for a check)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else str(value)


@dataclass(frozen=True, slots=True)
class Score:
    """A score from the side to move: ``cp`` (hundredths of the evaluation's unit), or a
    proven ``win``/``loss`` in ``value`` plies."""

    kind: Literal["cp", "win", "loss"]
    value: int

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"


@dataclass(frozen=True, slots=True)
class Limits:
    """What bounds one search. None means no bound of that kind; no bound at all means search
    until ``stop``.

    Attributes:
        depth: the deepest iteration, in plies.
        nodes: the most nodes.
        target: seconds after the start after which the search should not begin another
            iteration (soft).
        deadline: seconds after the start by which the search must return (hard).
        clock: the only clock a bot may read (seconds, monotonic). Tests inject a fake one.
        from_pv: the time comes from a clock that budgets whole turns (not a fixed time per
            decision, nor a depth or node count): a decision that continues the turn of the
            previous search, in the position that search expected, may be answered from its
            principal variation at once.
        lines: how many lines to report (MultiPV): the best ``lines`` first decisions, each
            with its exact score and its principal variation, best first; 1 by default.
        root_moves: the only first decisions to search (legal moves of the position, its
            ``searchmoves``); None: all of them.
        avoid_moves: first decisions never to search (its ``avoidmoves``).
        score_forced: search a single legal move too, for its score (an analysis); otherwise
            a forced move is answered at once, without a score.
    """

    depth: int | None = None
    nodes: int | None = None
    target: float | None = None
    deadline: float | None = None
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    from_pv: bool = False
    lines: int = 1
    root_moves: tuple[Move, ...] | None = None
    avoid_moves: tuple[Move, ...] = ()
    score_forced: bool = False

    @property
    def restricted(self) -> bool:
        """Whether some first decisions are left out (``root_moves``, ``avoid_moves``)."""
        return self.root_moves is not None or bool(self.avoid_moves)

    @property
    def searches_forced(self) -> bool:
        """Whether a position with a single legal first decision is searched all the same:
        for its score, when the search is restricted (the one move searched may not be the
        only legal one), or only ``stop`` ends it."""
        return self.score_forced or self.restricted or self.is_infinite

    @property
    def is_infinite(self) -> bool:
        """Whether only ``stop`` ends the search."""
        return self.depth is None and self.nodes is None and self.deadline is None


@dataclass(frozen=True, slots=True)
class SearchInfo:
    """Progress of a search, reported after each completed iteration (or as a note).

    Attributes:
        depth: the completed depth in plies; seldepth the deepest ply reached.
        score: from the side to move at the root.
        nodes: nodes searched so far; nps per second; time in milliseconds.
        pv: the principal variation as move tokens.
        hashfull: transposition table use in permille.
        string: a free-text note instead of (or with) the figures.
        line: which line this is (1 = the best) when the search reports several
            (``Limits.lines``); None when it reports one.
    """

    depth: int | None = None
    seldepth: int | None = None
    score: Score | None = None
    nodes: int | None = None
    nps: int | None = None
    time: int | None = None
    pv: tuple[str, ...] = ()
    hashfull: int | None = None
    string: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class RootScore:
    """What a search learnt of one first decision: its token, the score it got at ``depth``
    (from the side to move), and ``bound`` (``"lower"``, ``"upper"``) when that score is only
    a bound on the move's value (None: exact)."""

    token: str
    score: Score
    depth: int
    bound: Literal["lower", "upper"] | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The answer of a search.

    Attributes:
        move: the move to play, None only when the position has no legal move.
        token: its token (what a wire or a record carries).
        score, depth, seldepth, nodes, time, pv, hashfull: the figures of the last completed
            iteration (time in milliseconds).
        stopped: whether the search was cut short by ``stop`` or its deadline rather than
            ending by its own limits.
        root_scores: each first decision searched, with the score of its deepest search
            (``RootScore``), deepest first and best first; empty for a bot that keeps none.
    """

    move: Move | None
    token: str | None
    score: Score | None = None
    depth: int = 0
    seldepth: int = 0
    nodes: int = 0
    time: int = 0
    pv: tuple[str, ...] = ()
    hashfull: int = 0
    stopped: bool = False
    root_scores: tuple[RootScore, ...] = ()


StopFn: TypeAlias = Callable[[], bool]
InfoFn: TypeAlias = Callable[[SearchInfo], None]


def never_stop() -> bool:
    """A ``stop`` callable that never asks to stop."""
    return False


def ignore_info(info: SearchInfo) -> None:
    """An ``on_info`` callable that drops the reports."""
    del info


@dataclass(frozen=True, slots=True)
class LevelInfo:
    """A level of a bot's ``Level`` option: its number (1 the weakest), its name, and per game
    the Elo measured for it and the half-width of that figure's 95% interval."""

    number: int
    name: str
    elo: tuple[tuple[str, int, int], ...] = ()
    """(game, Elo, half-width) for each game measured."""


class Engine(ABC):
    """A bot. Subclasses set ``name``, ``games`` and ``options`` and implement ``search``.

    Attributes:
        name: the registry name (``alphabeta``).
        games: the games it plays, None for every game.
        options: its own options; their current values are in ``values``.
        analysis: whether its searches honour ``Limits.lines`` and ``Limits.root_moves``
            (a server refuses MultiPV above 1, ``searchmoves`` and ``avoidmoves`` for a bot
            that does not).
        levels: the levels of its ``Level`` option, weakest first (``LevelInfo``), for a bot
            that has one; the handshake names them.
    """

    name: ClassVar[str]
    games: ClassVar[tuple[str, ...] | None] = None
    options: ClassVar[tuple[Option, ...]] = ()
    analysis: ClassVar[bool] = False
    levels: ClassVar[tuple[LevelInfo, ...]] = ()

    def __init__(self) -> None:
        self.values: dict[str, OptionValue] = {o.name: o.default for o in self.options}

    def game_names(self) -> tuple[str, ...] | None:
        """The games this bot plays, None for every game."""
        return self.games

    @classmethod
    def expectation_scale(cls, game: str) -> float | None:
        """What this bot's scores mean in ``game``: ``cp v`` is an expected score of
        ``1 / (1 + exp(-v / scale))`` for the side it is from (a proven win 1, a loss 0), as
        ``enginesrv analyse`` reads them; None when its scores have no such reading."""
        del game
        return None

    def supports(self, game: str) -> bool:
        """Whether this bot plays ``game``."""
        names = self.game_names()
        return names is None or game in names

    def option(self, name: str) -> Option:
        """The option called ``name`` (any case).

        Raises:
            OptionError: no such option.
        """
        for opt in self.options:
            if opt.name.lower() == name.lower():
                return opt
        known = ", ".join(o.name for o in self.options if not o.hidden) or "none"
        if any(o.hidden for o in self.options):
            known += ", and the hidden ones that `options all` lists"
        raise OptionError(f"{self.name} has no option {name!r} (its options: {known})")

    def set_option(self, name: str, text: str | None) -> None:
        """Set an option from its wire text.

        Raises:
            OptionError: unknown option or bad value; nothing is changed then.
        """
        opt = self.option(name)
        self.values[opt.name] = opt.parse(text)

    def new_game(self, game: Game) -> None:  # noqa: B027 - a hook, empty by default
        """A new game begins: forget what was learnt (tables, history). Default: nothing."""

    @abstractmethod
    def search(
        self,
        state: State,
        limits: Limits,
        stop: StopFn = never_stop,
        on_info: InfoFn = ignore_info,
    ) -> SearchResult:
        """Choose a move for the side to act in ``state``.

        The state is left as it was given. ``stop`` is polled often enough that a request to
        stop is obeyed within 20 ms; the result then holds the best move found so far.
        """
