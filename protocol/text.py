"""The text framing: UTF-8 lines, a strict superset of UGI.

Lines end in LF (CRLF accepted); runs of whitespace separate tokens; empty lines are ignored.
``TextDecoder`` is incremental and sans-I/O: ``feed(bytes)``, then ``next_message()`` until it
returns None. Its ``role`` says which side it serves: a server decodes commands, a client
decodes reply lines. ``encode_command`` and ``encode_reply`` write the other direction.

Strictness: a server-side decoder rejects unknown commands (100) and wrong arguments (101),
each a non-fatal ``ProtocolError`` after which decoding goes on with the next line. A client
reading an engine is lenient about ``info`` keys it does not know, since UGI engines add their
own (``tthits``). A line over the limit (102) or invalid UTF-8 (103) is fatal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, Literal, TypeAlias, assert_never

from protocol.errors import (
    BAD_ARGUMENTS,
    BAD_FRAME,
    FRAME_TOO_LARGE,
    UNKNOWN_COMMAND,
    ErrorCode,
    ProtocolError,
)
from protocol.messages import (
    ANALYSE_INT_FIELDS,
    ANALYSE_WORDS,
    GO_INT_FIELDS,
    GO_LIST_FIELDS,
    GO_WORDS,
    MAX_POSITIONS,
    OFFER_KINDS,
    OPTION_TYPES,
    QUERY_WHATS,
    Ack,
    Analyse,
    Analysis,
    AnalysisInfo,
    AnalysisItem,
    AnalysisLine,
    AnalysisOk,
    Auth,
    AuthLine,
    BestMove,
    BotInfo,
    BotList,
    Bots,
    BotsOk,
    Cancel,
    Command,
    Decline,
    ErrorReply,
    ExpectationLine,
    GameInfo,
    Go,
    Handshake,
    IdLine,
    Info,
    InvalidMove,
    IsReady,
    LevelLine,
    LimitInfo,
    NewGame,
    Offer,
    OptionList,
    Options,
    OptionsOk,
    OptionSpec,
    Ping,
    Play,
    Pong,
    Position,
    Query,
    Quit,
    ReadyOk,
    Reply,
    ReplyLine,
    Request,
    Resign,
    Response,
    ResponseValue,
    Score,
    SetOption,
    Show,
    ShowLine,
    ShowOk,
    ShowText,
    Stop,
    TableNote,
    Ugi,
    UgiOk,
    Undo,
    id_problem,
    too_many_positions,
)

DEFAULT_MAX_LINE: Final = 64 * 1024
"""The default longest line, in bytes, without its line end."""

Role: TypeAlias = Literal["server", "client"]

_INT_RE: Final = re.compile(r"-?[0-9]{1,19}")
_MAX_INT: Final = 2**63 - 1  # the msgpack framing carries 64-bit integers
_INFO_INT_KEYS: Final = ("depth", "seldepth", "multipv", "nodes", "nps", "time", "hashfull")
_OPTION_KEYS: Final = frozenset({"default", "min", "max", "var"})


def _fail(error: ErrorCode, message: str, method: str | None = None) -> ProtocolError:
    return ProtocolError(error, message, method=method)


def _int(token: str, what: str, verb: str, *, minimum: int | None = 0) -> int:
    if not _INT_RE.fullmatch(token) or abs(value := int(token)) > _MAX_INT:
        raise _fail(BAD_ARGUMENTS, f"{verb}: {what} {token!r} is not a whole number", verb)
    if minimum is not None and value < minimum:
        raise _fail(BAD_ARGUMENTS, f"{verb}: {what} {token!r} is below {minimum}", verb)
    return value


def _no_args(cls: Callable[[], Command]) -> Callable[[list[str]], Command]:
    def parse(args: list[str]) -> Command:
        command = cls()
        if args:
            raise _fail(
                BAD_ARGUMENTS,
                f"{command.METHOD} takes no arguments, got {' '.join(args)!r}",
                command.METHOD,
            )
        return command

    return parse


# ---------------------------------------------------------------------------------------------
# Commands (decoded by a server)


def _parse_ping(args: list[str]) -> Command:
    if len(args) != 1:
        raise _fail(BAD_ARGUMENTS, "ping takes one number: ping N", "ping")
    return Ping(_int(args[0], "token", "ping"))


MAX_AUTH_TOKEN: Final = 256
"""The longest token ``auth`` takes."""


def _parse_auth(args: list[str]) -> Command:
    # never quotes its argument: an error or a log line must not carry a token
    if len(args) != 1 or len(args[0]) > MAX_AUTH_TOKEN:
        raise _fail(
            BAD_ARGUMENTS, f"auth takes one token of at most {MAX_AUTH_TOKEN} characters", "auth"
        )
    return Auth(args[0])


def _parse_setoption(args: list[str]) -> Command:
    if len(args) < 2 or args[0] != "name":
        raise _fail(BAD_ARGUMENTS, "usage: setoption name NAME [value VALUE]", SetOption.METHOD)
    rest = args[1:]
    if "value" in rest:
        cut = rest.index("value")
        name_words, value = rest[:cut], " ".join(rest[cut + 1 :])
    else:
        name_words, value = rest, None
    if not name_words:
        raise _fail(BAD_ARGUMENTS, "setoption: the option name is missing", SetOption.METHOD)
    return SetOption(" ".join(name_words), value)


def _parse_newgame(args: list[str]) -> Command:
    if len(args) > 1:
        raise _fail(BAD_ARGUMENTS, "usage: uginewgame [GAME]", NewGame.METHOD)
    return NewGame(args[0] if args else None)


def _parse_position(args: list[str]) -> Command:
    usage = "usage: position startpos|fen POSITION [moves MOVE ...]"
    if not args or args[0] not in ("startpos", "fen"):
        raise _fail(BAD_ARGUMENTS, usage, Position.METHOD)
    cut = args.index("moves") if "moves" in args else len(args)
    moves = tuple(args[cut + 1 :])
    if args[0] == "startpos":
        if cut != 1:
            raise _fail(
                BAD_ARGUMENTS,
                f"position startpos: unexpected {' '.join(args[1:cut])!r}; {usage}",
                Position.METHOD,
            )
        return Position(None, moves)
    if cut == 1:
        raise _fail(BAD_ARGUMENTS, "position fen: the position string is missing", "position")
    return Position(" ".join(args[1:cut]), moves)


_GO_LISTS: Final = GO_LIST_FIELDS
"""The limits of ``go`` followed by move tokens, up to the next limit or the end."""
_GO_WORDS: Final = GO_WORDS


def _go_list(args: list[str], i: int, lists: dict[str, tuple[str, ...]]) -> int:
    """Read the tokens of the list ``args[i]`` into ``lists``; the index after them."""
    key = args[i]
    if key in lists:
        raise _fail(BAD_ARGUMENTS, f"go: {key} given twice", Go.METHOD)
    end = i + 1
    while end < len(args) and args[end] not in _GO_WORDS:
        end += 1
    if end == i + 1:
        raise _fail(BAD_ARGUMENTS, f"go: {key} needs at least one move", Go.METHOD)
    lists[key] = tuple(args[i + 1 : end])
    return end


def _parse_go(args: list[str]) -> Command:
    values: dict[str, int] = {}
    lists: dict[str, tuple[str, ...]] = {}
    infinite = False
    i = 0
    while i < len(args):
        key = args[i]
        if key in _GO_LISTS:
            i = _go_list(args, i, lists)
            continue
        if key == "infinite":
            if infinite:
                raise _fail(BAD_ARGUMENTS, "go: infinite given twice", Go.METHOD)
            infinite = True
            i += 1
            continue
        if key not in GO_INT_FIELDS:
            raise _fail(
                BAD_ARGUMENTS,
                f"go: unknown limit {key!r} (known: {' '.join(GO_INT_FIELDS)} infinite "
                f"{' '.join(_GO_LISTS)})",
                Go.METHOD,
            )
        if key in values:
            raise _fail(BAD_ARGUMENTS, f"go: {key} given twice", Go.METHOD)
        if i + 1 >= len(args):
            raise _fail(BAD_ARGUMENTS, f"go: {key} needs a number", Go.METHOD)
        # A tournament manager may send a clock that has just run below zero: keep it and let
        # time management clamp it, rather than fail the search.
        minimum = None if key in ("p1time", "p2time") else 0
        values[key] = _int(args[i + 1], key, Go.METHOD, minimum=minimum)
        if key == "depth" and values[key] < 1:
            raise _fail(
                BAD_ARGUMENTS, f"go: depth must be at least 1, not {args[i + 1]}", Go.METHOD
            )
        i += 2
    return Go(
        p1time=values.get("p1time"),
        p2time=values.get("p2time"),
        p1inc=values.get("p1inc"),
        p2inc=values.get("p2inc"),
        movestogo=values.get("movestogo"),
        movetime=values.get("movetime"),
        depth=values.get("depth"),
        nodes=values.get("nodes"),
        infinite=infinite,
        searchmoves=lists.get("searchmoves", ()),
        avoidmoves=lists.get("avoidmoves", ()),
    )


def _parse_query(args: list[str]) -> Command:
    if len(args) == 3 and args[:2] == ["moves", "start"]:
        if not re.fullmatch(r"0|[1-9][0-9]{0,8}", args[2]):
            raise _fail(
                BAD_ARGUMENTS,
                f"query moves start: {args[2]!r} is not a whole number from 0 to 999999999",
                Query.METHOD,
            )
        return Query("moves", int(args[2]))
    if len(args) != 1 or args[0] not in QUERY_WHATS:
        got = " ".join(args) or "nothing"
        raise _fail(
            BAD_ARGUMENTS,
            f"query: {got!r} is not one of {' '.join(QUERY_WHATS)} (or moves start N)",
            Query.METHOD,
        )
    return Query(args[0])


def _parse_play(args: list[str]) -> Command:
    if len(args) != 1:
        raise _fail(BAD_ARGUMENTS, "usage: play MOVE (one move token)", Play.METHOD)
    return Play(args[0])


def _parse_options(args: list[str]) -> Command:
    if args and args != ["all"]:
        raise _fail(
            BAD_ARGUMENTS, f"usage: options [all], not options {' '.join(args)}", Options.METHOD
        )
    return Options(all=bool(args))


def _parse_undo(args: list[str]) -> Command:
    if len(args) > 1:
        raise _fail(BAD_ARGUMENTS, "usage: undo [N]", Undo.METHOD)
    return Undo(_int(args[0], "count", Undo.METHOD, minimum=1) if args else 1)


def _offer_kind(verb: str) -> Callable[[list[str]], Command]:
    """The parser of ``offer KIND`` or ``decline KIND``."""
    build = Offer if verb == Offer.METHOD else Decline

    def parse(args: list[str]) -> Command:
        if len(args) != 1 or args[0] not in OFFER_KINDS:
            raise _fail(BAD_ARGUMENTS, f"usage: {verb} {'|'.join(OFFER_KINDS)}", verb)
        return build(args[0])

    return parse


_ANALYSE_USAGE: Final = (
    "usage: analyse [priority N] id ID [depth N] [nodes N] [movetime T] [multipv K] "
    "[searchmoves M ...] [avoidmoves M ...] startpos|fen POSITION [moves M ...] [id ...]"
)
_MAX_PRIORITY: Final = 2**31 - 1


def _analyse_fail(message: str) -> ProtocolError:
    return _fail(BAD_ARGUMENTS, f"analyse: {message}", Analyse.METHOD)


def _until(args: list[str], start: int, words: frozenset[str] | set[str]) -> int:
    """The index of the first of ``words`` at or after ``start`` (the end if none)."""
    end = start
    while end < len(args) and args[end] not in words:
        end += 1
    return end


def _analyse_limits(args: list[str], i: int, ident: str) -> tuple[dict[str, object], int]:
    """The limits of the position ``ident``, from ``args[i]`` up to its ``startpos`` or
    ``fen``; the index of that word."""
    found: dict[str, object] = {}
    while i < len(args) and args[i] not in ("startpos", "fen"):
        key = args[i]
        if key in found:
            raise _analyse_fail(f"id {ident}: {key} given twice")
        if key in GO_LIST_FIELDS:
            end = _until(args, i + 1, ANALYSE_WORDS)
            if end == i + 1:
                raise _analyse_fail(f"id {ident}: {key} needs at least one move")
            found[key] = tuple(args[i + 1 : end])
            i = end
            continue
        if key not in ANALYSE_INT_FIELDS:
            raise _analyse_fail(
                f"id {ident}: {key!r} is not a limit (known: {' '.join(ANALYSE_INT_FIELDS)} "
                f"{' '.join(GO_LIST_FIELDS)}), or startpos or fen is missing"
            )
        if i + 1 >= len(args):
            raise _analyse_fail(f"id {ident}: {key} needs a number")
        minimum = 1 if key in ("depth", "multipv") else 0
        found[key] = _int(args[i + 1], f"id {ident}: {key}", Analyse.METHOD, minimum=minimum)
        i += 2
    if i >= len(args):
        raise _analyse_fail(f"id {ident}: startpos or fen is missing; {_ANALYSE_USAGE}")
    return found, i


def _analyse_item(args: list[str], i: int) -> tuple[AnalysisItem, int]:
    """The position whose id is ``args[i]``; the index after it."""
    if i >= len(args):
        raise _analyse_fail(f"id needs a value; {_ANALYSE_USAGE}")
    ident = args[i]
    problem = id_problem(ident)
    if problem is not None:
        raise _analyse_fail(f"id {ident!r}: {problem}")
    found, i = _analyse_limits(args, i + 1, ident)
    fen: str | None = None
    if args[i] == "fen":
        end = _until(args, i + 1, {"moves", "id"})
        if end == i + 1:
            raise _analyse_fail(f"id {ident}: the position string is missing")
        fen = " ".join(args[i + 1 : end])
        i = end
    else:
        i += 1
    moves: tuple[str, ...] = ()
    if i < len(args) and args[i] == "moves":
        end = _until(args, i + 1, {"id"})
        moves = tuple(args[i + 1 : end])
        i = end
    if i < len(args) and args[i] != "id":
        raise _analyse_fail(f"id {ident}: unexpected {args[i]!r} after the position")
    item = AnalysisItem(ident, fen, moves, **found)  # type: ignore[arg-type]  # checked above
    return item, i


def _parse_analyse(args: list[str]) -> Command:
    priority = 0
    i = 0
    if args[:1] == ["priority"]:
        if len(args) < 2:
            raise _analyse_fail("priority needs a number")
        priority = _int(args[1], "priority", Analyse.METHOD, minimum=-_MAX_PRIORITY)
        if priority > _MAX_PRIORITY:
            raise _analyse_fail(f"priority {priority} is over {_MAX_PRIORITY}")
        i = 2
    if args.count("id") > MAX_POSITIONS:  # each position begins with the word id
        raise _analyse_fail(too_many_positions(args.count("id")))
    items: list[AnalysisItem] = []
    while i < len(args):
        if args[i] != "id":
            raise _analyse_fail(f"expected id, got {args[i]!r}; {_ANALYSE_USAGE}")
        item, i = _analyse_item(args, i + 1)
        items.append(item)
    if not items:
        raise _analyse_fail(f"no position given; {_ANALYSE_USAGE}")
    return Analyse(tuple(items), priority)


def _parse_cancel(args: list[str]) -> Command:
    for ident in args:
        problem = id_problem(ident)
        if problem is not None:
            raise _fail(BAD_ARGUMENTS, f"cancel: id {ident!r}: {problem}", Cancel.METHOD)
    return Cancel(tuple(dict.fromkeys(args)))


_COMMAND_PARSERS: Final[dict[str, Callable[[list[str]], Command]]] = {
    "ugi": _no_args(Ugi),
    "isready": _no_args(IsReady),
    "ping": _parse_ping,
    "auth": _parse_auth,
    "setoption": _parse_setoption,
    "uginewgame": _parse_newgame,
    "position": _parse_position,
    "go": _parse_go,
    "stop": _no_args(Stop),
    "quit": _no_args(Quit),
    "query": _parse_query,
    "play": _parse_play,
    "undo": _parse_undo,
    "resign": _no_args(Resign),
    "offer": _offer_kind(Offer.METHOD),
    "decline": _offer_kind(Decline.METHOD),
    "bots": _no_args(Bots),
    "options": _parse_options,
    "show": _no_args(Show),
    "analyse": _parse_analyse,
    "cancel": _parse_cancel,
}


_SEPARATORS = re.compile(r"[ \t]+")


def _words(line: str) -> list[str]:
    """The tokens of a command line: separated by spaces and tabs only (§4.2: WSP = SP |
    HTAB), so that any other character, Unicode white space and control characters included,
    stays inside its token and gets its error there."""
    return [word for word in _SEPARATORS.split(line) if word]


def parse_command(line: str) -> Command | None:
    """Parse one command line (without its line end); None for a blank line.

    Raises:
        ProtocolError: 100 for an unknown command, 101 for bad arguments (both non-fatal).
    """
    tokens = _words(line)
    if not tokens:
        return None
    parser = _COMMAND_PARSERS.get(tokens[0])
    if parser is None:
        raise _fail(UNKNOWN_COMMAND, f"unknown command {tokens[0]!r}")
    return parser(tokens[1:])


# ---------------------------------------------------------------------------------------------
# Reply lines (decoded by a client)


def _parse_score(args: list[str], i: int) -> tuple[Score, int]:
    if i + 1 >= len(args):
        raise _fail(BAD_ARGUMENTS, "info: score needs a kind and a number", "info")
    kind, value = args[i], _int(args[i + 1], "score", "info", minimum=None)
    if kind == "mate":  # a UCI engine: mate in N moves, negative when mated
        score = Score("win" if value > 0 else "loss", abs(value))
    elif kind in ("cp", "win", "loss"):
        score = Score(kind, value)  # type: ignore[arg-type]  # checked just above
    else:
        raise _fail(BAD_ARGUMENTS, f"info: unknown score kind {kind!r}", "info")
    i += 2
    if i < len(args) and args[i] in ("lowerbound", "upperbound"):
        score = Score(score.kind, score.value, "lower" if args[i] == "lowerbound" else "upper")
        i += 1
    return score, i


def parse_info(args: Sequence[str], *, strict: bool = False, line: str | None = None) -> Info:
    """Parse the tokens after ``info``.

    Unknown keys (other engines send ``tthits``, ``currmove``...) are skipped with the number
    that follows them, unless ``strict``. ``pv`` runs to ``string`` or the end of the line;
    ``string`` runs to the end (its spacing kept when the whole ``line`` is given).

    Raises:
        ProtocolError: 101 for a malformed known key (or any unknown key when strict).
    """
    tokens = list(args)
    ints: dict[str, int] = {}
    score: Score | None = None
    pv: tuple[str, ...] = ()
    string: str | None = None
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key in _INFO_INT_KEYS:
            if i + 1 >= len(tokens):
                raise _fail(BAD_ARGUMENTS, f"info: {key} needs a number", "info")
            ints[key] = _int(tokens[i + 1], key, "info")
            i += 2
        elif key == "score":
            score, i = _parse_score(tokens, i + 1)
        elif key == "pv":
            end = tokens.index("string", i) if "string" in tokens[i:] else len(tokens)
            pv = tuple(tokens[i + 1 : end])
            i = end
        elif key == "string":
            string = _words_after(line, i + 2) if line is not None else " ".join(tokens[i + 1 :])
            break
        elif strict:
            raise _fail(BAD_ARGUMENTS, f"info: unknown key {key!r}", "info")
        else:
            i += 2 if i + 1 < len(tokens) and _INT_RE.fullmatch(tokens[i + 1]) else 1
    return Info(
        depth=ints.get("depth"),
        seldepth=ints.get("seldepth"),
        score=score,
        nodes=ints.get("nodes"),
        nps=ints.get("nps"),
        time=ints.get("time"),
        hashfull=ints.get("hashfull"),
        pv=pv,
        string=string,
        multipv=ints.get("multipv"),
    )


def parse_option(args: Sequence[str]) -> OptionSpec:
    """Parse the tokens after ``option`` (UCI form; names and defaults may hold spaces).

    Raises:
        ProtocolError: 101 when ``name`` or ``type`` is missing or a number is malformed.
    """
    tokens = list(args)
    if not tokens or tokens[0] != "name" or "type" not in tokens:
        raise _fail(BAD_ARGUMENTS, "usage: option name NAME type TYPE ...", "option")
    cut = tokens.index("type")
    name = " ".join(tokens[1:cut])
    if not name or cut + 1 >= len(tokens) or tokens[cut + 1] not in OPTION_TYPES:
        raise _fail(BAD_ARGUMENTS, "option: a name and a known type are needed", "option")
    kind = tokens[cut + 1]
    default: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    vars_: list[str] = []
    i = cut + 2
    while i < len(tokens):
        key = tokens[i]
        j = i + 1
        while j < len(tokens) and tokens[j] not in _OPTION_KEYS:
            j += 1
        text = " ".join(tokens[i + 1 : j])
        if key == "default":
            default = "" if text == "<empty>" else text
        elif key == "min":
            minimum = _int(text, "min", "option", minimum=None)
        elif key == "max":
            maximum = _int(text, "max", "option", minimum=None)
        elif key == "var":
            vars_.append(text)
        else:
            raise _fail(BAD_ARGUMENTS, f"option: unexpected {key!r}", "option")
        i = j
    return OptionSpec(name, kind, default, minimum, maximum, tuple(vars_))  # type: ignore[arg-type]


def _words_after(line: str, count: int) -> str:
    """The text after the first ``count`` tokens of ``line``, inner spacing kept."""
    rest = line.strip()
    for _ in range(count):
        parts = rest.split(None, 1)
        rest = parts[1] if len(parts) == 2 else ""
    return rest


def _id_line(line: str, args: list[str]) -> ReplyLine | None:
    return IdLine(args[0], _words_after(line, 2)) if args else None


def _bestmove_line(line: str, args: list[str]) -> ReplyLine | None:
    if not args:
        return None
    ponder = args[2] if len(args) >= 3 and args[1] == "ponder" else None
    return BestMove(None if args[0] == "none" else args[0], ponder)


def _pong_line(line: str, args: list[str]) -> ReplyLine | None:
    return Pong(_int(args[0], "token", "pong")) if len(args) == 1 else None


def _error_line(line: str, args: list[str]) -> ReplyLine | None:
    if len(args) < 2:
        return None
    return ErrorReply(_int(args[0], "code", "error"), args[1], _words_after(line, 3))


def _invalidmove_line(line: str, args: list[str]) -> ReplyLine | None:
    return InvalidMove(args[0], _words_after(line, 2)) if args else None


def _game_line(line: str, args: list[str]) -> ReplyLine | None:
    if len(args) < 6 or args[1] != "colours" or args[4] != "start":
        return None
    return GameInfo(args[0], (args[2], args[3]), _words_after(line, 6))


def _bot_line(line: str, args: list[str]) -> ReplyLine | None:
    if len(args) < 2 or args[1] != "games":
        return None
    return BotInfo(args[0], tuple(args[2:]))


def _analysis_line(line: str, args: list[str]) -> ReplyLine | None:
    return AnalysisLine(args[0], tuple(args[1:])) if args else None


def _analysisinfo_line(line: str, args: list[str]) -> ReplyLine | None:
    if len(args) < 2 or args[0] != "id":
        return None
    return AnalysisInfo(args[1], parse_info(args[2:]))


def _analysisok_line(line: str, args: list[str]) -> ReplyLine | None:
    if len(args) < 4 or args[0] != "id" or args[2] != "bestmove":
        return None
    found: dict[str, int] = {}
    flags = set()
    error = None
    i = 4
    while i < len(args):
        key = args[i]
        if key in ("nodes", "time") and i + 1 < len(args):
            found[key] = _int(args[i + 1], key, "analysisok")
            i += 2
        elif key in ("stopped", "cancelled"):
            flags.add(key)
            i += 1
        elif key == "error" and i + 2 < len(args):
            text = _words_after(line, i + 4)
            error = ErrorReply(_int(args[i + 1], "code", "analysisok"), args[i + 2], text)
            break
        else:
            return None
    return AnalysisOk(
        args[1],
        None if args[3] == "none" else args[3],
        found.get("nodes"),
        found.get("time"),
        stopped="stopped" in flags,
        cancelled="cancelled" in flags,
        error=error,
    )


def analysis_of(end: AnalysisOk, lines: Sequence[Info]) -> Analysis:
    """The answered position of an ``analysisok`` line and the ``analysisinfo`` lines before
    it."""
    return Analysis(
        end.id,
        end.move,
        tuple(lines),
        end.nodes,
        end.time,
        stopped=end.stopped,
        cancelled=end.cancelled,
        error=end.error,
    )


def _level_line(line: str, args: list[str]) -> ReplyLine | None:
    if len(args) < 5 or args[1] != "name" or args[3] != "bot":
        return None
    fields: dict[str, str] = {}
    rest = args[5:]
    if len(rest) % 2:
        return None
    for key, value in zip(rest[::2], rest[1::2], strict=True):
        if key not in ("game", "elo", "interval") or key in fields:
            return None
        fields[key] = value
    elo, interval = fields.get("elo"), fields.get("interval")
    return LevelLine(
        _int(args[0], "number", "level", minimum=1),
        args[2],
        args[4],
        fields.get("game"),
        None if elo is None else _int(elo, "elo", "level", minimum=None),
        None if interval is None else _int(interval, "interval", "level"),
    )


def _expectation_line(line: str, args: list[str]) -> ReplyLine | None:
    if len(args) != 5 or args[1] != "game" or args[3] != "scale":
        return None
    return ExpectationLine(args[0], args[2], _int(args[4], "scale", "expectation"))


def _auth_line(line: str, args: list[str]) -> ReplyLine | None:
    return AuthLine(args[0]) if len(args) == 1 else None


def _limit_line(line: str, args: list[str]) -> ReplyLine | None:
    return LimitInfo(args[0], _int(args[1], args[0], "limit")) if len(args) == 2 else None


_BARE_LINES: Final[Mapping[str, Callable[[], ReplyLine]]] = {
    "ugiok": UgiOk,
    "readyok": ReadyOk,
    "optionsok": OptionsOk,
    "botsok": BotsOk,
    "showok": ShowOk,
}
"""The reply lines of one word (any words after it are ignored)."""

_REPLY_PARSERS: Final[Mapping[str, Callable[[str, list[str]], ReplyLine | None]]] = {
    "id": _id_line,
    "option": lambda line, args: parse_option(args),
    "info": lambda line, args: parse_info(args, line=line),
    "bestmove": _bestmove_line,
    "response": lambda line, args: Response(_words_after(line, 1)),
    "pong": _pong_line,
    "error": _error_line,
    "invalidmove": _invalidmove_line,
    "show": lambda line, args: ShowLine(line[5:].rstrip("\r") if len(line) > 5 else ""),
    "game": _game_line,
    "bot": _bot_line,
    "analysis": _analysis_line,
    "analysisinfo": _analysisinfo_line,
    "analysisok": _analysisok_line,
    "level": _level_line,
    "expectation": _expectation_line,
    "limit": _limit_line,
    "auth": _auth_line,
    "table": lambda line, args: TableNote(response_mapping(_words_after(line, 1))),
}
"""How each reply line is read from the whole line and its tokens after the first: None when
it is malformed."""


def parse_reply_line(line: str) -> ReplyLine | None:
    """Parse one line a server (or any UGI engine) sent; None for a blank line.

    Raises:
        ProtocolError: 100 for an unknown line, 101 for a malformed one (both non-fatal).
    """
    tokens = line.split()
    if not tokens:
        return None
    verb, args = tokens[0], tokens[1:]
    bare = _BARE_LINES.get(verb)
    if bare is not None:
        return bare()
    parse = _REPLY_PARSERS.get(verb)
    if parse is None:
        raise _fail(UNKNOWN_COMMAND, f"unknown line {line.strip()!r}", verb)
    reply = parse(line, args)
    if reply is None:
        raise _fail(BAD_ARGUMENTS, f"malformed {verb!r} line: {line.strip()!r}", verb)
    return reply


# ---------------------------------------------------------------------------------------------
# The incremental decoder


class TextDecoder:
    """Split a byte stream into lines and parse each into a message.

    Args:
        role: ``"server"`` decodes commands into ``Request`` objects; ``"client"`` decodes
            reply lines.
        max_line: the longest accepted line in bytes, without its line end.
    """

    def __init__(self, role: Role = "server", *, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.role = role
        self.max_line = max_line
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer known to hold no line feed
        self._broken: ProtocolError | None = None
        self.last_size = 0
        """The bytes of the last line read, its line end included."""

    def feed(self, data: bytes) -> None:
        """Add received bytes (any split; empty is fine)."""
        if self._broken is None:
            self._buffer += data

    def next_line(self) -> str | None:
        """The next complete line, decoded, without its line end; None if none is complete.

        Raises:
            ProtocolError: fatal 102 (line too long) or 103 (invalid UTF-8).
        """
        if self._broken is not None:
            raise self._broken
        end = self._buffer.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buffer)
            if self._scanned > self.max_line + 1:  # + 1: room for a CR before the LF
                raise self._break(FRAME_TOO_LARGE, f"a line is longer than {self.max_line} bytes")
            return None
        raw = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        self.last_size = end + 1
        self._scanned = 0
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > self.max_line:
            raise self._break(FRAME_TOO_LARGE, f"a line of {len(raw)} bytes is over the limit")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            # a line that may hold a token is never quoted
            shown = "" if raw.lstrip().startswith(b"auth") else f": {raw[:40]!r}"
            raise self._break(
                BAD_FRAME, f"invalid UTF-8 at byte {exc.start} of a line{shown}"
            ) from None

    def next_message(self) -> Request | ReplyLine | None:
        """The next message, skipping blank lines; None when more data is needed.

        Raises:
            ProtocolError: non-fatal for one bad line (it is consumed; call again for the
                next), fatal for a broken stream (every later call raises it again).
        """
        while (line := self.next_line()) is not None:
            if self.role == "server":
                command = parse_command(line)
                if command is not None:
                    return Request(command)
            else:
                reply = parse_reply_line(line)
                if reply is not None:
                    return reply
        return None

    def __iter__(self) -> Iterator[Request | ReplyLine]:
        """Messages until more data is needed (a ProtocolError ends the iteration; iterate
        again after a non-fatal one)."""
        while (message := self.next_message()) is not None:
            yield message

    @property
    def buffered(self) -> int:
        """Bytes received but not yet consumed."""
        return len(self._buffer)

    def _break(self, error: ErrorCode, message: str) -> ProtocolError:
        self._broken = ProtocolError(error, message)
        self._buffer.clear()
        return self._broken


# ---------------------------------------------------------------------------------------------
# Encoding


def _clean(text: str) -> str:
    """One line of free text: line breaks become spaces, so they cannot break the framing."""
    return text.replace("\r", " ").replace("\n", " ")


def encode_command(command: Command) -> bytes:
    """The text line of a command (with its line feed)."""
    return (_command_text(command) + "\n").encode("utf-8")


def _go_text(command: Go) -> str:
    parts = ["go"]
    for key in GO_INT_FIELDS:
        value = getattr(command, key)
        if value is not None:
            parts.append(f"{key} {value}")
    if command.infinite:
        parts.append("infinite")
    for key in _GO_LISTS:
        moves = getattr(command, key)
        if moves:
            parts.append(f"{key} {' '.join(moves)}")
    return " ".join(parts)


def _analyse_text(command: Analyse) -> str:
    parts = ["analyse"]
    if command.priority:
        parts.append(f"priority {command.priority}")
    for item in command.positions:
        parts.append(f"id {item.id}")
        for key in ANALYSE_INT_FIELDS:
            value = getattr(item, key)
            if value is not None:
                parts.append(f"{key} {value}")
        for key in GO_LIST_FIELDS:
            moves = getattr(item, key)
            if moves:
                parts.append(f"{key} {' '.join(moves)}")
        parts.append("startpos" if item.fen is None else f"fen {_clean(item.fen)}")
        if item.moves:
            parts.append(f"moves {' '.join(item.moves)}")
    return " ".join(parts)


def _command_text(command: Command) -> str:
    match command:
        case Ping(token) | Auth(token):
            text = f"{command.METHOD} {_clean(str(token))}"
        case SetOption(name, value):
            text = f"setoption name {_clean(name)}"
            if value is not None:
                text += f" value {_clean(value)}"
        case NewGame(game):
            text = "uginewgame" if game is None else f"uginewgame {game}"
        case Position(fen, moves):
            text = "position startpos" if fen is None else f"position fen {_clean(fen)}"
            if moves:
                text += f" moves {' '.join(moves)}"
        case Go():
            text = _go_text(command)
        case Query(what, start):
            text = f"query {what}" if not start else f"query {what} start {start}"
        case Play(move):
            text = f"play {move}"
        case Undo(n):
            text = "undo" if n == 1 else f"undo {n}"
        case Offer(kind) | Decline(kind):
            text = f"{command.METHOD} {kind}"
        case Options(every):
            text = "options all" if every else "options"
        case Analyse():
            text = _analyse_text(command)
        case Cancel(ids):
            text = " ".join(("cancel", *ids))
        case _:
            text = command.METHOD
    return text


def format_score(score: Score) -> str:
    """``cp 35``, ``win 7``, ``loss 4 upperbound``."""
    return str(score)


def format_info(info: Info) -> str:
    """The ``info`` line of a progress report (without its line feed)."""
    parts = ["info"]
    for key in ("depth", "seldepth", "multipv"):
        value = getattr(info, key)
        if value is not None:
            parts.append(f"{key} {value}")
    if info.score is not None:
        parts.append("score " + format_score(info.score))
    for key in ("nodes", "nps", "time", "hashfull"):
        value = getattr(info, key)
        if value is not None:
            parts.append(f"{key} {value}")
    if info.pv:
        parts.append("pv " + " ".join(info.pv))
    if info.string is not None:
        parts.append("string " + _clean(info.string))
    return " ".join(parts)


def _analysis_lines(reply: Analysis) -> list[str]:
    """An answered position: its ``analysisinfo`` lines, then its ``analysisok``."""
    head = f"analysisinfo id {reply.id}"
    lines = [head + format_info(info)[len("info") :] for info in reply.lines]
    end = [f"analysisok id {reply.id} bestmove {reply.move or 'none'}"]
    if reply.nodes is not None:
        end.append(f"nodes {reply.nodes}")
    if reply.time is not None:
        end.append(f"time {reply.time}")
    if reply.cancelled:
        end.append("cancelled")
    elif reply.stopped:
        end.append("stopped")
    if reply.error is not None:
        error = reply.error
        end.append(f"error {error.code} {error.name} {_clean(error.message)}")
    return [*lines, " ".join(end)]


def format_option(option: OptionSpec) -> str:
    """The ``option`` line of an option (UCI form)."""
    parts = [f"option name {option.name} type {option.type}"]
    if option.default is not None:
        parts.append(f"default {option.default or '<empty>'}")
    if option.min is not None:
        parts.append(f"min {option.min}")
    if option.max is not None:
        parts.append(f"max {option.max}")
    parts.extend(f"var {v}" for v in option.vars)
    return " ".join(parts)


def format_value(value: ResponseValue) -> str:
    """The text form of a response value."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return _clean(str(value))
    if isinstance(value, tuple):
        return " ".join(value)
    return " ".join(f"{k}={_clean(str(v))}" for k, v in value.items())


def format_level(level: LevelLine) -> str:
    """The ``level`` line of a level."""
    text = f"level {level.number} name {level.name} bot {level.bot}"
    if level.game is not None:
        text += f" game {level.game}"
    if level.elo is not None:
        text += f" elo {level.elo}"
    if level.interval is not None:
        text += f" interval {level.interval}"
    return text


def format_expectation(line: ExpectationLine) -> str:
    """The ``expectation`` line of a bot's scale in a game."""
    return f"expectation {line.bot} game {line.game} scale {line.scale}"


def _bot_lines(bot: BotInfo) -> list[str]:
    """A bot's ``bot`` line, its ``analysis`` line if it offers any, its ``level`` lines and
    its ``expectation`` lines."""
    lines = [f"bot {bot.name} games {' '.join(bot.games)}"]
    if bot.analysis:
        lines.append(f"analysis {bot.name} {' '.join(bot.analysis)}")
    lines += [format_level(level) for level in bot.levels]
    lines += [format_expectation(line) for line in bot.expectations]
    return lines


def _handshake_lines(reply: Handshake) -> list[str]:
    lines = [
        f"id name {reply.name}",
        f"id author {reply.author}",
        f"id version {reply.version}",
        f"id protocol {reply.protocol}",
    ]
    if reply.auth is not None:
        lines.append(f"auth {reply.auth}")
    lines += [
        f"game {g.name} colours {g.colours[0]} {g.colours[1]} start {g.start}" for g in reply.games
    ]
    lines += [line for b in reply.bots for line in _bot_lines(b)]
    lines += [f"limit {lim.name} {lim.value}" for lim in reply.limits]
    lines += [format_option(o) for o in reply.options]
    return [*lines, "ugiok"]


def _reply_lines(reply: Reply) -> list[str]:
    match reply:
        case Handshake():
            lines = _handshake_lines(reply)
        case ReadyOk():
            lines = ["readyok"]
        case Pong(token):
            lines = [f"pong {token}"]
        case Info():
            lines = [format_info(reply)]
        case BestMove(move, ponder):
            text = f"bestmove {move if move is not None else 'none'}"
            lines = [text if ponder is None else f"{text} ponder {ponder}"]
        case Response(value):
            text = format_value(value)
            lines = [f"response {text}" if text else "response"]
        case ErrorReply(code, name, message):
            lines = [f"error {code} {name} {_clean(message)}"]
        case InvalidMove(move, reason):
            lines = [f"invalidmove {move} {_clean(reason)}"]
        case OptionList(options):
            lines = [*(format_option(o) for o in options), "optionsok"]
        case BotList(bots):
            lines = [*(line for b in bots for line in _bot_lines(b)), "botsok"]
        case ShowText(text):
            lines = [*(f"show {line}" for line in text.splitlines()), "showok"]
        case Analysis():
            lines = _analysis_lines(reply)
        case TableNote(values):
            lines = [f"table {format_value(values)}"]
        case Ack():
            lines = []
        case _:
            assert_never(reply)
    return lines


def encode_reply(reply: Reply) -> bytes:
    """The text lines of a reply (each with its line feed; nothing for an ``Ack``)."""
    return "".join(line + "\n" for line in _reply_lines(reply)).encode("utf-8")


_BARE_WORDS: Final[Mapping[type, str]] = {
    UgiOk: "ugiok",
    OptionsOk: "optionsok",
    BotsOk: "botsok",
    ShowOk: "showok",
}
"""The reply lines of one word a client reads as lines (``readyok`` is a reply of its own)."""


def encode_reply_line(line: ReplyLine) -> bytes:
    """The text of one reply line as a client reads it (for tests and proxies)."""
    match line:
        case IdLine(key, value):
            text = f"id {key} {value}"
        case GameInfo(name, colours, start):
            text = f"game {name} colours {colours[0]} {colours[1]} start {start}"
        case BotInfo():
            text = "\n".join(_bot_lines(line))
        case AnalysisLine(name, features):
            text = f"analysis {name} {' '.join(features)}"
        case LevelLine():
            text = format_level(line)
        case ExpectationLine():
            text = format_expectation(line)
        case LimitInfo(name, value):
            text = f"limit {name} {value}"
        case AuthLine(kind):
            text = f"auth {kind}"
        case OptionSpec():
            text = format_option(line)
        case UgiOk() | OptionsOk() | BotsOk() | ShowOk():
            text = _BARE_WORDS[type(line)]
        case ShowLine(content):
            text = f"show {content}"
        case AnalysisInfo(ident, info):
            text = f"analysisinfo id {ident}" + format_info(info)[len("info") :]
        case AnalysisOk():
            text = _analysis_lines(analysis_of(line, ()))[-1]
        case _:
            return encode_reply(line)
    return (text + "\n").encode("utf-8")


def response_mapping(text: str) -> Mapping[str, str]:
    """Read back a mapping written by ``format_value`` (``key=value`` pairs)."""
    out: dict[str, str] = {}
    for pair in text.split():
        key, _, value = pair.partition("=")
        out[key] = value
    return out
