"""The values and errors of the client library (``enginesrv.client``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from protocol import messages as m

Score = m.Score
"""A search score from the side to move (``kind`` cp, win or loss; ``value``; ``bound``)."""
OptionSpec = m.OptionSpec
GameInfo = m.GameInfo
BotInfo = m.BotInfo
Framing = Literal["text", "msgpack"]
TraceKind = Literal["send", "recv", "end"]
TraceCallback = Callable[[TraceKind, str], None]
"""Told everything on the wire (``trace=`` of ``popen`` and ``connect``): ``("send", line)``
for each line written to the engine, ``("recv", line)`` for each line read from it (without
its line end; in msgpack each frame, as JSON), and ``("end", reason)`` once, when the
connection ends. It runs in the reader task or the writer's, and must be quick."""


class ClientError(Exception):
    """Anything that went wrong talking to an engine; the subclasses say what."""


class EngineError(ClientError):
    """The engine answered a request with an error: the protocol's ``code`` and ``name``
    (docs/protocol.md §6), its ``text``, and for a rejected move ``data`` with the move and the
    reason (``invalidmove`` in the text framing is code 201 here)."""

    def __init__(
        self, code: int, name: str, text: str, data: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(f"error {code} {name}: {text}" if text else f"error {code} {name}")
        self.code = code
        self.name = name
        self.text = text
        self.data = data


class EngineTimeoutError(ClientError, TimeoutError):
    """An answer did not come within the time the call allowed. The connection cannot be
    trusted after that in the text framing (a late answer would be taken for the next one), so
    the engine is closed; in msgpack a late answer is recognised by its id and dropped."""


class EngineTerminatedError(ClientError):
    """The engine exited, or the connection closed, before the answer came."""


@dataclass(frozen=True, slots=True)
class Clock:
    """Both players' clocks for ``go``, in milliseconds: what is left (it may be negative),
    the increment per move, and the moves to the next time control."""

    p1time: int | None = None
    p2time: int | None = None
    p1inc: int | None = None
    p2inc: int | None = None
    movestogo: int | None = None


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """What the handshake told: the engine's name, author, version and protocol version (0
    for a plain UGI engine that does not say), the games it plays, its bots, its options (with
    types and defaults), the limits of the connection (docs/protocol.md §2), and what a
    server requires of a client before anything else: ``auth`` is ``"token"`` for a server
    that asks for a token (``connect(..., token=...)``), None for one that asks nothing."""

    name: str
    author: str
    version: str
    protocol: int
    games: tuple[GameInfo, ...] = ()
    bots: tuple[BotInfo, ...] = ()
    options: tuple[OptionSpec, ...] = ()
    limits: Mapping[str, int] = field(default_factory=dict)
    auth: str | None = None

    @classmethod
    def from_handshake(cls, hello: m.Handshake) -> EngineInfo:
        return cls(
            name=hello.name,
            author=hello.author,
            version=hello.version,
            protocol=hello.protocol,
            games=hello.games,
            bots=hello.bots,
            options=hello.options,
            limits={limit.name: limit.value for limit in hello.limits},
            auth=hello.auth,
        )

    def option(self, name: str) -> OptionSpec | None:
        """The option called ``name`` (without regard to case), or None."""
        wanted = name.lower()
        return next((o for o in self.options if o.name.lower() == wanted), None)

    def game(self, name: str) -> GameInfo | None:
        """The game called ``name``, or None."""
        return next((g for g in self.games if g.name == name), None)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The answer to ``go``: the move (None: there was none to make), and the figures of the
    search as the engine last reported them. ``score`` is the last score reported, ``bound``
    its bound (``"lower"``/``"upper"``) when it was only a bound, None when exact;
    ``exact_score`` is the last score that was not a bound. ``stopped`` is True when the search
    ended by a stop or a deadline (msgpack says so; in text it is None)."""

    move: str | None
    score: Score | None = None
    bound: Literal["lower", "upper"] | None = None
    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    time: int | None = None
    pv: tuple[str, ...] = ()
    ponder: str | None = None
    stopped: bool | None = None
    exact_score: Score | None = None


@dataclass(frozen=True, slots=True)
class MoveScore:
    """One first decision of ``query scores``: the ``move``, the ``score`` its deepest search
    gave it at ``depth``, and ``bound`` (``"lower"``/``"upper"``) when that score is only a
    bound (None: exact)."""

    move: str
    score: Score
    depth: int
    bound: Literal["lower", "upper"] | None = None


class LegalMoves(tuple[str, ...]):
    """The legal moves of the side to act, sorted: a tuple of move tokens. ``total`` is their
    number, which is larger than the tuple when the list was too long for one reply or cannot
    be listed at all (Yin Yang's setup, whose ``note`` says how such a move is written);
    ``complete`` says whether the tuple holds them all."""

    total: int
    note: str

    def __new__(
        cls, moves: tuple[str, ...], total: int | None = None, note: str = ""
    ) -> LegalMoves:
        self = super().__new__(cls, moves)
        self.total = len(moves) if total is None else total
        self.note = note
        return self

    @property
    def complete(self) -> bool:
        return self.total == len(self)
