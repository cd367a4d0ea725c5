"""The message model: frozen value objects for every command and reply of protocol version 1.

Both framings decode to, and encode from, these objects, so one dispatcher serves both. Moves
and positions are opaque strings here; nothing in this module knows a rule of any game.

Commands go from client to server; each class names its wire method in ``METHOD`` (the text
command word and the msgpack-RPC method are the same). Replies go from server to client. A few
replies exist only as text lines that together make one msgpack result (the ``ugi`` handshake,
the ``bots``/``options`` listings, ``show``); those have their own line classes for clients
that read the text framing line by line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeAlias

PROTOCOL_VERSION = 1
"""The major version of the protocol described by docs/protocol.md."""

QUERY_WHATS: tuple[str, ...] = (
    "gameover",
    "p1turn",
    "result",
    "moves",
    "position",
    "turn",
    "outcome",
    "phase",
    "clock",
    "played",
    "scores",
    "table",
)
"""What ``query`` may ask: the three of UGI, then the extensions for rules-free clients."""

OFFER_KINDS: tuple[str, ...] = ("draw", "takeback", "rematch")
"""What a player of a game between two clients may offer the other (``offer``, ``decline``)."""

SCORE_WORDS = 5
"""The words of one move of ``query scores``: the move, the score's kind and value, the depth,
and ``exact``, ``lower`` or ``upper``."""

GO_INT_FIELDS: tuple[str, ...] = (
    "p1time",
    "p2time",
    "p1inc",
    "p2inc",
    "movestogo",
    "movetime",
    "depth",
    "nodes",
)
"""The integer limits of ``go``, in the order they are written."""

GO_LIST_FIELDS: tuple[str, ...] = ("searchmoves", "avoidmoves")
"""The limits of ``go`` that are lists of move tokens (a text line's list runs up to the next
limit's word: no token may be one of ``GO_WORDS``)."""

GO_WORDS: frozenset[str] = frozenset((*GO_INT_FIELDS, *GO_LIST_FIELDS, "infinite"))
"""The words of ``go``'s limits."""

ANALYSE_INT_FIELDS: tuple[str, ...] = ("depth", "nodes", "movetime", "multipv")
"""The integer limits of a position of ``analyse``, in the order they are written."""

ANALYSE_WORDS: frozenset[str] = frozenset(
    (*ANALYSE_INT_FIELDS, *GO_LIST_FIELDS, "id", "startpos", "fen", "moves", "priority")
)
"""The words of an ``analyse`` line (no move token nor id may be one of them)."""

MAX_ID = 64
"""The longest id of a position of ``analyse``, in characters."""

MAX_POSITIONS = 4096
"""The most positions one ``analyse`` request may hold: a request of more is refused on its
count, before its positions are read (reading each takes some microseconds of the event
loop)."""


def too_many_positions(count: int) -> str:
    """Why an ``analyse`` of ``count`` positions, over ``MAX_POSITIONS``, is refused."""
    return (
        f"{count} positions are over the {MAX_POSITIONS} one request may hold; send them in several"
    )


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be the id of a position of ``analyse`` (None: it can): an id is
    one token of at most ``MAX_ID`` characters that is not a word of the line."""
    if not value or len(value.split()) != 1 or value != value.strip():
        return "an id is one token without spaces"
    if len(value) > MAX_ID:
        return f"an id has at most {MAX_ID} characters, not {len(value)}"
    if value in ANALYSE_WORDS:
        return f"{value!r} is a word of analyse, not an id"
    return None


OPTION_TYPES: tuple[str, ...] = ("check", "spin", "combo", "string", "button")

ANALYSIS_FEATURES: tuple[str, ...] = ("multipv", "searchmoves")
"""What a bot may offer analysis: several lines (``MultiPV``), a restricted root (``go
searchmoves``, ``go avoidmoves``)."""

# ---------------------------------------------------------------------------------------------
# Commands: client -> server


@dataclass(frozen=True, slots=True)
class Ugi:
    """``ugi``: start of the handshake; answered by the capabilities and ``ugiok``.

    ``protocol`` and ``client`` can only be given in the msgpack framing (the text form stays
    exactly UGI's bare ``ugi``).
    """

    METHOD: ClassVar[str] = "ugi"
    protocol: int | None = None
    client: str | None = None


@dataclass(frozen=True, slots=True)
class IsReady:
    """``isready``: answered by ``readyok`` at once, even during a search."""

    METHOD: ClassVar[str] = "isready"


@dataclass(frozen=True, slots=True)
class Ping:
    """``ping N``: answered by ``pong N`` at once, even during a search."""

    METHOD: ClassVar[str] = "ping"
    token: int


@dataclass(frozen=True, slots=True)
class Auth:
    """``auth TOKEN``: the client's token, on a server that requires one (the handshake's
    ``auth token`` line); silent on success, the fatal error 307 otherwise. Its ``repr``
    never shows the token, in a log or a traceback."""

    METHOD: ClassVar[str] = "auth"
    token: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class SetOption:
    """``setoption name NAME [value VALUE]``; silent on success."""

    METHOD: ClassVar[str] = "setoption"
    name: str
    value: str | None = None


@dataclass(frozen=True, slots=True)
class NewGame:
    """``uginewgame [GAME]``: a new game (of ``game``, else of the Game option)."""

    METHOD: ClassVar[str] = "uginewgame"
    game: str | None = None


@dataclass(frozen=True, slots=True)
class Position:
    """``position startpos|fen POS [moves M ...]``; ``fen`` None means the start position."""

    METHOD: ClassVar[str] = "position"
    fen: str | None = None
    moves: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Go:
    """``go`` with its limits; times in milliseconds. Answered by exactly one ``bestmove``."""

    METHOD: ClassVar[str] = "go"
    p1time: int | None = None
    p2time: int | None = None
    p1inc: int | None = None
    p2inc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    infinite: bool = False
    searchmoves: tuple[str, ...] = ()
    """Only these first decisions are searched (none given: all)."""
    avoidmoves: tuple[str, ...] = ()
    """These first decisions are never searched."""


@dataclass(frozen=True, slots=True)
class AnalysisItem:
    """One position of an ``analyse`` request: its id, the position (``fen`` None: the start
    position, then ``moves``) and its limits (``multipv`` None: the session's ``MultiPV``)."""

    id: str
    fen: str | None = None
    moves: tuple[str, ...] = ()
    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    multipv: int | None = None
    searchmoves: tuple[str, ...] = ()
    avoidmoves: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Analyse:
    """``analyse [priority N] id ID ... (startpos|fen POS) [moves M ...] ...``: search many
    positions, each answered on its own (``Analysis``) as it finishes; a higher ``priority``
    goes first among the session's analyses."""

    METHOD: ClassVar[str] = "analyse"
    positions: tuple[AnalysisItem, ...]
    priority: int = 0


@dataclass(frozen=True, slots=True)
class Cancel:
    """``cancel [ID ...]``: end the analyses of these ids (none given: every analysis of the
    session): one that waits is answered at once, one that runs with its best move so far."""

    METHOD: ClassVar[str] = "cancel"
    ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Stop:
    """``stop``: the running search ends with its best move. ``search`` (msgpack only) names
    the ``go`` request to cancel."""

    METHOD: ClassVar[str] = "stop"
    search: int | None = None


@dataclass(frozen=True, slots=True)
class Quit:
    """``quit``: end the session and close the connection."""

    METHOD: ClassVar[str] = "quit"


@dataclass(frozen=True, slots=True)
class Query:
    """``query WHAT`` with WHAT one of ``QUERY_WHATS``; answered by ``response``.
    ``query moves start N``: the legal moves from the ``N``-th (0-based) of their sorted list
    on, for a list too long for one reply."""

    METHOD: ClassVar[str] = "query"
    what: str
    start: int = 0


@dataclass(frozen=True, slots=True)
class Play:
    """``play MOVE``: play a move on the session position; answered by the new position."""

    METHOD: ClassVar[str] = "play"
    move: str


@dataclass(frozen=True, slots=True)
class Undo:
    """``undo [N]``: take back N moves (default 1); answered by the new position."""

    METHOD: ClassVar[str] = "undo"
    n: int = 1


@dataclass(frozen=True, slots=True)
class Resign:
    """``resign``: the client's player gives up the game the server referees."""

    METHOD: ClassVar[str] = "resign"


@dataclass(frozen=True, slots=True)
class Offer:
    """``offer KIND`` (one of ``OFFER_KINDS``), in a game between two clients the server
    referees: the offer made to the other player, or, when the other made the same offer,
    its acceptance. Answered by ``response`` with what came of it."""

    METHOD: ClassVar[str] = "offer"
    kind: str


@dataclass(frozen=True, slots=True)
class Decline:
    """``decline KIND``: refuse the other player's offer of ``KIND``, or withdraw one's own."""

    METHOD: ClassVar[str] = "decline"
    kind: str


@dataclass(frozen=True, slots=True)
class Bots:
    """``bots``: list the bots and the games each plays."""

    METHOD: ClassVar[str] = "bots"


@dataclass(frozen=True, slots=True)
class Options:
    """``options [all]``: list the options of the session (the bot's included); with ``all``
    also those a plain listing leaves out (a bot's evaluation weights)."""

    METHOD: ClassVar[str] = "options"
    all: bool = False


@dataclass(frozen=True, slots=True)
class Show:
    """``show``: a drawing of the session position."""

    METHOD: ClassVar[str] = "show"


Command: TypeAlias = (
    Ugi
    | IsReady
    | Ping
    | Auth
    | SetOption
    | NewGame
    | Position
    | Go
    | Stop
    | Quit
    | Query
    | Play
    | Undo
    | Resign
    | Offer
    | Decline
    | Bots
    | Options
    | Show
    | Analyse
    | Cancel
)

COMMAND_CLASSES: tuple[type[Command], ...] = (
    Ugi,
    IsReady,
    Ping,
    Auth,
    SetOption,
    NewGame,
    Position,
    Go,
    Stop,
    Quit,
    Query,
    Play,
    Undo,
    Resign,
    Offer,
    Decline,
    Bots,
    Options,
    Show,
    Analyse,
    Cancel,
)
METHODS: dict[str, type[Command]] = {cls.METHOD: cls for cls in COMMAND_CLASSES}


@dataclass(frozen=True, slots=True)
class Request:
    """A decoded command with its msgpack-RPC id (None for text and for notifications)."""

    command: Command
    msgid: int | None = None


# ---------------------------------------------------------------------------------------------
# Replies: server -> client


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option: ``option name N type T [default D] [min A] [max B] [var V]...`` (UCI form).

    ``default`` is text as on the wire (``true``/``false`` for a check); None for a button.
    """

    name: str
    type: Literal["check", "spin", "combo", "string", "button"]
    default: str | None = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game the server plays: ``game NAME colours C1 C2 start POSITION``."""

    name: str
    colours: tuple[str, str]
    start: str


@dataclass(frozen=True, slots=True)
class LevelLine:
    """``level N name NAME bot BOT [game GAME elo E interval I]``: a level of a bot's ``Level``
    option (1 the weakest), and the Elo measured for it in a game with the half-width of that
    figure's 95% interval; one line per game measured, or one without a game when none is."""

    number: int
    name: str
    bot: str
    game: str | None = None
    elo: int | None = None
    interval: int | None = None


@dataclass(frozen=True, slots=True)
class ExpectationLine:
    """``expectation BOT game GAME scale N``: what the bot's scores mean in a game: ``cp v`` is
    an expected score of ``1 / (1 + exp(-v / N))`` for the side the score is from (a proven win
    1, a loss 0), so that a GUI can turn scores into winning chances and weigh a move's loss as
    ``enginesrv analyse`` does."""

    bot: str
    game: str
    scale: int


@dataclass(frozen=True, slots=True)
class BotInfo:
    """A bot: ``bot NAME games G ...``, what it offers analysis (``analysis NAME F ...``:
    ``multipv``, several lines; ``searchmoves``, a restricted root), in ``ANALYSIS_FEATURES``
    order, its levels (``level`` lines) and what its scores mean (``expectation`` lines)."""

    name: str
    games: tuple[str, ...]
    analysis: tuple[str, ...] = ()
    levels: tuple[LevelLine, ...] = ()
    expectations: tuple[ExpectationLine, ...] = ()


@dataclass(frozen=True, slots=True)
class AnalysisLine:
    """``analysis NAME FEATURE ...``: the text line that tells what bot ``NAME`` offers
    analysis; a client folds it into the bot's ``BotInfo``."""

    name: str
    features: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LimitInfo:
    """A limit of the connection: ``limit NAME VALUE`` (line and frame in bytes, inflight in
    requests, idle in milliseconds; 0 means no limit)."""

    name: str
    value: int


@dataclass(frozen=True, slots=True)
class IdLine:
    """``id KEY VALUE``: name, author, version, protocol."""

    key: str
    value: str


@dataclass(frozen=True, slots=True)
class Handshake:
    """The answer to ``ugi``: one msgpack result, or a sequence of text lines ending in
    ``ugiok``."""

    name: str
    author: str
    version: str
    protocol: int
    games: tuple[GameInfo, ...] = ()
    bots: tuple[BotInfo, ...] = ()
    options: tuple[OptionSpec, ...] = ()
    limits: tuple[LimitInfo, ...] = ()
    auth: str | None = None
    """What a client must present before anything but the handshake: ``"token"`` (``auth
    TOKEN``), or None when the server asks nothing."""


@dataclass(frozen=True, slots=True)
class AuthLine:
    """``auth KIND``: the handshake's line saying what the server requires (``token``)."""

    kind: str


@dataclass(frozen=True, slots=True)
class UgiOk:
    """``ugiok``: the end of the handshake lines."""


@dataclass(frozen=True, slots=True)
class ReadyOk:
    """``readyok``."""


@dataclass(frozen=True, slots=True)
class Pong:
    """``pong N``."""

    token: int


@dataclass(frozen=True, slots=True)
class Score:
    """A search score from the side to move: ``cp N`` (hundredths of a unit of the game's
    evaluation), or a proven ``win N``/``loss N`` in N plies. ``bound`` marks a fail-high or
    fail-low score (``lowerbound``/``upperbound`` on the wire)."""

    kind: Literal["cp", "win", "loss"]
    value: int
    bound: Literal["lower", "upper"] | None = None

    def __str__(self) -> str:
        """The text framing's form: ``cp 35``, ``win 7``, ``loss 4 upperbound``."""
        text = f"{self.kind} {self.value}"
        return text if self.bound is None else f"{text} {self.bound}bound"


@dataclass(frozen=True, slots=True)
class Info:
    """``info ...``: search progress, or ``info string TEXT``.

    ``search`` is the id of the ``go`` request it belongs to (msgpack only; it is not compared).
    """

    depth: int | None = None
    seldepth: int | None = None
    score: Score | None = None
    nodes: int | None = None
    nps: int | None = None
    time: int | None = None
    hashfull: int | None = None
    pv: tuple[str, ...] = ()
    string: str | None = None
    search: int | None = field(default=None, compare=False)
    multipv: int | None = None
    """Which line this is (1 = the best) when the search reports several (``MultiPV``)."""


@dataclass(frozen=True, slots=True)
class BestMove:
    """``bestmove MOVE``; ``move`` None is ``bestmove none`` (no move: the game is over).

    In the msgpack framing the result of ``go`` also carries the search's final figures; the
    text framing has only the move (the figures were in the last ``info``).
    """

    move: str | None
    ponder: str | None = None
    score: Score | None = None
    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    time: int | None = None
    pv: tuple[str, ...] = ()
    stopped: bool | None = None


@dataclass(frozen=True, slots=True)
class Analysis:
    """One position of an ``analyse`` request, answered: its best move (None: none, the game
    being over, its moves hidden, or the position cancelled before it was searched), its lines
    (one ``Info`` per line, ``multipv`` 1 the best, each with its depth, score and variation),
    the nodes and milliseconds searched, and why it ended early.

    Text: one ``analysisinfo id ID ...`` line per line, then ``analysisok id ID bestmove
    MOVE|none [nodes N] [time T] [stopped|cancelled] [error CODE NAME TEXT]``. msgpack: one
    ``analysis`` notification; ``request`` is the id of the ``analyse`` request it answers
    (not compared).
    """

    id: str
    move: str | None
    lines: tuple[Info, ...] = ()
    nodes: int | None = None
    time: int | None = None
    stopped: bool = False
    cancelled: bool = False
    error: ErrorReply | None = None
    request: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class AnalysisInfo:
    """``analysisinfo id ID ...``: one line of an answered position, as a text client reads
    it."""

    id: str
    info: Info


@dataclass(frozen=True, slots=True)
class AnalysisOk:
    """``analysisok id ID bestmove MOVE|none ...``: the end of an answered position, as a text
    client reads it (``Analysis`` without its lines)."""

    id: str
    move: str | None
    nodes: int | None = None
    time: int | None = None
    stopped: bool = False
    cancelled: bool = False
    error: ErrorReply | None = None


ResponseValue: TypeAlias = bool | int | str | tuple[str, ...] | Mapping[str, str | int] | None


@dataclass(frozen=True, slots=True)
class Response:
    """``response VALUE``: the answer to ``query``, ``play`` and ``undo``.

    Text encoding: booleans as ``true``/``false``, None as ``none``, a tuple of tokens joined
    by spaces, a mapping as ``key=value`` pairs. The text decoder returns the raw text; only the
    msgpack framing keeps the type.
    """

    value: ResponseValue


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """``error CODE NAME TEXT``, or a msgpack-RPC error ``[code, name, message, data]``."""

    code: int
    name: str
    message: str
    data: Mapping[str, object] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class InvalidMove:
    """``invalidmove MOVE REASON``: a rejected move (error 201 in the msgpack framing)."""

    move: str
    reason: str


@dataclass(frozen=True, slots=True)
class OptionList:
    """The answer to ``options``: ``option`` lines then ``optionsok``."""

    options: tuple[OptionSpec, ...]


@dataclass(frozen=True, slots=True)
class OptionsOk:
    """``optionsok``: the end of an ``options`` listing."""


@dataclass(frozen=True, slots=True)
class BotList:
    """The answer to ``bots``: ``bot`` lines then ``botsok``."""

    bots: tuple[BotInfo, ...]


@dataclass(frozen=True, slots=True)
class BotsOk:
    """``botsok``: the end of a ``bots`` listing."""


@dataclass(frozen=True, slots=True)
class ShowText:
    """The answer to ``show``: the drawing, as ``show LINE`` lines then ``showok``."""

    text: str


@dataclass(frozen=True, slots=True)
class ShowLine:
    """One ``show LINE`` (the line kept exactly, spaces included)."""

    line: str


@dataclass(frozen=True, slots=True)
class ShowOk:
    """``showok``: the end of a drawing."""


@dataclass(frozen=True, slots=True)
class TableNote:
    """``table KEY=VALUE ...``: a notification to a player of a game between two clients that
    the game's table changed (a decision, an offer, a player gone or back, the end, a
    rematch); its values are those of ``query table``."""

    values: Mapping[str, str | int]


@dataclass(frozen=True, slots=True)
class Ack:
    """A success with nothing to say: no text at all, ``{}`` as a msgpack result."""


Reply: TypeAlias = (
    Handshake
    | ReadyOk
    | Pong
    | Info
    | BestMove
    | Response
    | ErrorReply
    | InvalidMove
    | OptionList
    | BotList
    | ShowText
    | Analysis
    | TableNote
    | Ack
)
"""What a server sends (one object per answer)."""

ReplyLine: TypeAlias = (
    IdLine
    | GameInfo
    | BotInfo
    | AnalysisLine
    | LevelLine
    | ExpectationLine
    | LimitInfo
    | AuthLine
    | OptionSpec
    | UgiOk
    | ReadyOk
    | Pong
    | Info
    | BestMove
    | Response
    | ErrorReply
    | InvalidMove
    | OptionsOk
    | BotsOk
    | ShowLine
    | ShowOk
    | AnalysisInfo
    | AnalysisOk
    | TableNote
)
"""What a client reads from the text framing, one object per line."""


@dataclass(frozen=True, slots=True)
class RpcResult:
    """A msgpack-RPC response as a client reads it: the id and either an error or the result
    map (its shape depends on the method of the request; see ``protocol.mpack.parse_result``).
    """

    msgid: int
    error: ErrorReply | None
    result: object


@dataclass(frozen=True, slots=True)
class Notification:
    """A msgpack-RPC notification other than ``info`` and ``error``: kept raw for forward
    compatibility."""

    method: str
    params: Mapping[str, object]
