"""The msgpack framing: msgpack-RPC over a byte stream.

* request ``[0, msgid, method, [params]]``, response ``[1, msgid, error, result]``,
  notification ``[2, method, [params]]``; ``params`` is ``[]`` or ``[map]`` of named arguments,
  named as the text framing names them.
* ``error`` is nil or ``[code, name, message, data]`` with the codes of ``protocol.errors``.
* Decoding is strict (``raw=False``: strings are UTF-8; ``strict_map_key``: keys are strings)
  and bounded: ``max_frame`` caps the bytes buffered and every string, array and map length,
  so a few bytes cannot announce a huge allocation. A decoder whose unpacker failed is never
  used again (msgpack-python does not support it); it keeps raising the same fatal error.
* Unknown keys in a params or result map are ignored: that is how fields are added without a
  new protocol version.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, fields
from typing import Final, Literal, TypeAlias, cast

from protocol.errors import (
    BAD_ARGUMENTS,
    BAD_FRAME,
    UNKNOWN_COMMAND,
    ProtocolError,
)
from protocol.messages import (
    ANALYSE_INT_FIELDS,
    GO_INT_FIELDS,
    GO_LIST_FIELDS,
    MAX_POSITIONS,
    METHODS,
    OFFER_KINDS,
    OPTION_TYPES,
    QUERY_WHATS,
    Ack,
    Analyse,
    Analysis,
    AnalysisItem,
    Auth,
    BestMove,
    BotInfo,
    BotList,
    Cancel,
    Command,
    Decline,
    ErrorReply,
    ExpectationLine,
    GameInfo,
    Go,
    Handshake,
    Info,
    InvalidMove,
    LevelLine,
    LimitInfo,
    NewGame,
    Notification,
    Offer,
    OptionList,
    Options,
    OptionSpec,
    Ping,
    Play,
    Pong,
    Position,
    Query,
    ReadyOk,
    Reply,
    Request,
    Response,
    ResponseValue,
    RpcResult,
    Score,
    SetOption,
    ShowText,
    Stop,
    TableNote,
    Ugi,
    Undo,
    id_problem,
    too_many_positions,
)
from protocol.rpc import DEFAULT_MAX_FRAME, NOTIFY, REQUEST, RESPONSE, FrameReader, pack

MAX_MSGID: Final = 2**32 - 1
_MAX_INT: Final = 2**63 - 1

Role: TypeAlias = Literal["server", "client"]
Params: TypeAlias = Mapping[str, object]


def _bad(message: str, msgid: int | None, method: str | None) -> ProtocolError:
    return ProtocolError(BAD_ARGUMENTS, message, msgid=msgid, method=method)


class _Args:
    """Typed access to a params map, raising 101 with the request's id on a wrong type."""

    def __init__(self, params: Params, msgid: int | None, method: str) -> None:
        self.params = params
        self.msgid = msgid
        self.method = method

    def fail(self, message: str) -> ProtocolError:
        return _bad(f"{self.method}: {message}", self.msgid, self.method)

    def integer(self, key: str, *, minimum: int | None = 0, required: bool = False) -> int | None:
        value = self.params.get(key)
        if value is None:
            if required:
                raise self.fail(f"{key!r} is required")
            return None
        if type(value) is not int or abs(value) > _MAX_INT:
            raise self.fail(f"{key!r} must be an integer, got {_show(value)}")
        if minimum is not None and value < minimum:
            raise self.fail(f"{key!r} must be at least {minimum}, got {value}")
        return value

    def text(self, key: str, *, required: bool = False, token: bool = False) -> str | None:
        value = self.params.get(key)
        if value is None:
            if required:
                raise self.fail(f"{key!r} is required")
            return None
        if not isinstance(value, str):
            raise self.fail(f"{key!r} must be a string, got {type(value).__name__}")
        _check_text(self, key, value, token=token)
        return value

    def flag(self, key: str) -> bool:
        value = self.params.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(f"{key!r} must be true or false, got {_show(value)}")
        return value

    def tokens(self, key: str) -> tuple[str, ...]:
        value = self.params.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"{key!r} must be an array of strings")
        for item in value:
            _check_text(self, key, item, token=True)
        return tuple(value)


def _check_text(args: _Args, key: str, value: str, *, token: bool) -> None:
    # Every value must be writable in the text framing too, so both framings carry the same
    # messages: tokens are single words, other text is a single line.
    if token and (not value or len(value.split()) != 1 or value != value.strip()):
        raise args.fail(f"{key!r} must be one non-empty token without spaces, got {_show(value)}")
    if not token and ("\n" in value or "\r" in value):
        raise args.fail(f"{key!r} must not contain a line break")


def _ugi(a: _Args) -> Command:
    return Ugi(a.integer("protocol"), a.text("client"))


def _ping(a: _Args) -> Command:
    return Ping(cast(int, a.integer("token", required=True)))


MAX_AUTH_TOKEN: Final = 256
"""The longest token ``auth`` takes."""


def _auth(a: _Args) -> Command:
    # never quotes the token: an error or a log line must not carry one
    token = a.params.get("token")
    if not isinstance(token, str) or not 0 < len(token) <= MAX_AUTH_TOKEN or token != token.strip():
        raise a.fail(f"'token' must be a string of 1 to {MAX_AUTH_TOKEN} characters, one word")
    if len(token.split()) != 1:
        raise a.fail(f"'token' must be a string of 1 to {MAX_AUTH_TOKEN} characters, one word")
    return Auth(token)


def _setoption(a: _Args) -> Command:
    name = cast(str, a.text("name", required=True))
    if not name.strip():
        raise a.fail("'name' must not be empty")
    value = a.params.get("value")
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif type(value) is int:
        value = str(value)
    elif value is not None and not isinstance(value, str):
        raise a.fail(f"'value' must be a string, number or boolean, got {_show(value)}")
    if isinstance(value, str):
        _check_text(a, "value", value, token=False)
    return SetOption(name, value)


def _newgame(a: _Args) -> Command:
    return NewGame(a.text("game", token=True))


def _position(a: _Args) -> Command:
    return Position(a.text("fen"), a.tokens("moves"))


def _go(a: _Args) -> Command:
    p1time = a.integer("p1time", minimum=None)
    p2time = a.integer("p2time", minimum=None)
    # a search of depth 0 makes no move: depth must be at least 1
    inc1, inc2, togo, movetime, depth, nodes = (
        a.integer(k, minimum=1 if k == "depth" else 0) for k in GO_INT_FIELDS[2:]
    )
    lists = {key: a.tokens(key) for key in ("searchmoves", "avoidmoves")}
    for key, moves in lists.items():
        if key in a.params and not moves:
            raise a.fail(f"'{key}' needs at least one move")
    return Go(
        p1time,
        p2time,
        inc1,
        inc2,
        togo,
        movetime,
        depth,
        nodes,
        infinite=a.flag("infinite"),
        searchmoves=lists["searchmoves"],
        avoidmoves=lists["avoidmoves"],
    )


_MAX_PRIORITY: Final = 2**31 - 1


def _analysis_id(a: _Args, value: object, where: str) -> str:
    if not isinstance(value, str):
        raise a.fail(f"{where}: an id must be a string, got {_show(value)}")
    problem = id_problem(value)
    if problem is not None:
        raise a.fail(f"{where}: id {_show(value)}: {problem}")
    return value


def _analysis_item(a: _Args, raw: object, index: int) -> AnalysisItem:
    if not isinstance(raw, dict):
        raise a.fail(f"positions[{index}] must be a map, got {_show(raw)}")
    ident = _analysis_id(a, raw.get("id"), f"positions[{index}]")
    item = _Args(raw, a.msgid, f"{a.method}: id {ident}")
    ints = {
        key: item.integer(key, minimum=1 if key in ("depth", "multipv") else 0)
        for key in ANALYSE_INT_FIELDS
    }
    lists = {key: item.tokens(key) for key in GO_LIST_FIELDS}
    for key, moves in lists.items():
        if key in raw and not moves:
            raise item.fail(f"{key!r} needs at least one move")
    return AnalysisItem(
        ident,
        item.text("fen"),
        item.tokens("moves"),
        **ints,  # type: ignore[arg-type]  # each an int or None, checked above
        **lists,  # type: ignore[arg-type]
    )


def _analyse(a: _Args) -> Command:
    raw = a.params.get("positions")
    if not isinstance(raw, list) or not raw:
        raise a.fail("'positions' must be a non-empty array of maps")
    if len(raw) > MAX_POSITIONS:  # before reading them: each takes microseconds
        raise a.fail(too_many_positions(len(raw)))
    priority = a.integer("priority", minimum=-_MAX_PRIORITY) or 0
    if priority > _MAX_PRIORITY:
        raise a.fail(f"'priority' must be at most {_MAX_PRIORITY}, got {priority}")
    return Analyse(tuple(_analysis_item(a, r, i) for i, r in enumerate(raw)), priority)


def _cancel(a: _Args) -> Command:
    raw = a.params.get("ids", [])
    if not isinstance(raw, list):
        raise a.fail(f"'ids' must be an array of strings, got {_show(raw)}")
    return Cancel(tuple(dict.fromkeys(_analysis_id(a, v, "ids") for v in raw)))


def _stop(a: _Args) -> Command:
    return Stop(a.integer("search"))


def _query(a: _Args) -> Command:
    what = cast(str, a.text("what", required=True))
    if what not in QUERY_WHATS:
        raise a.fail(f"'what' must be one of {' '.join(QUERY_WHATS)}, got {_show(what)}")
    start = a.integer("start") or 0
    if start and what != "moves":
        raise a.fail(f"'start' goes with 'what' moves only, not {_show(what)}")
    if start > 999_999_999:
        raise a.fail(f"'start' must be at most 999999999, got {start}")
    return Query(what, start)


def _play(a: _Args) -> Command:
    return Play(cast(str, a.text("move", required=True, token=True)))


def _undo(a: _Args) -> Command:
    n = a.integer("n", minimum=1)
    return Undo(1 if n is None else n)


def _offer_kind(a: _Args) -> str:
    kind = cast(str, a.text("kind", required=True))
    if kind not in OFFER_KINDS:
        raise a.fail(f"'kind' must be one of {' '.join(OFFER_KINDS)}, got {_show(kind)}")
    return kind


def _offer(a: _Args) -> Command:
    return Offer(_offer_kind(a))


def _decline(a: _Args) -> Command:
    return Decline(_offer_kind(a))


def _options(a: _Args) -> Command:
    return Options(all=a.flag("all"))


_COMMANDS: Final[Mapping[type[Command], Callable[[_Args], Command]]] = {
    Ugi: _ugi,
    Ping: _ping,
    Auth: _auth,
    SetOption: _setoption,
    NewGame: _newgame,
    Position: _position,
    Go: _go,
    Stop: _stop,
    Query: _query,
    Play: _play,
    Undo: _undo,
    Offer: _offer,
    Decline: _decline,
    Options: _options,
    Analyse: _analyse,
    Cancel: _cancel,
}
"""How the command of each method with arguments is read from its params map."""


def command_from_params(method: str, params: Params, msgid: int | None = None) -> Command:
    """Build the command of a msgpack request from its method and params map.

    Raises:
        ProtocolError: 100 for an unknown method, 101 for a wrong or missing argument.
    """
    cls = METHODS.get(method)
    if cls is None:
        raise ProtocolError(
            UNKNOWN_COMMAND, f"unknown method {method!r}", msgid=msgid, method=method
        )
    build = _COMMANDS.get(cls)
    if build is None:
        return cls()  # type: ignore[call-arg]  # the commands without arguments
    return build(_Args(params, msgid, method))


def params_of(command: Command | AnalysisItem) -> dict[str, object]:
    """The params map of a command: its fields in order, those at their default left out,
    sequences as arrays (of maps, for the positions of ``analyse``)."""
    out: dict[str, object] = {}
    for each in fields(command):
        value = getattr(command, each.name)
        if each.default is MISSING or value != each.default:
            if isinstance(value, tuple):
                value = [params_of(v) if isinstance(v, AnalysisItem) else v for v in value]
            out[each.name] = value
    return out


# ---------------------------------------------------------------------------------------------
# Results (server -> client)


def score_map(score: Score) -> dict[str, object]:
    """``{"cp": 35}``, ``{"win": 7}``, with ``"bound"`` when the score is a bound."""
    out: dict[str, object] = {score.kind: score.value}
    if score.bound is not None:
        out["bound"] = score.bound
    return out


def option_map(option: OptionSpec) -> dict[str, object]:
    """The map form of an option spec."""
    out: dict[str, object] = {"name": option.name, "type": option.type}
    if option.default is not None:
        out["default"] = option.default
    if option.min is not None:
        out["min"] = option.min
    if option.max is not None:
        out["max"] = option.max
    if option.vars:
        out["vars"] = list(option.vars)
    return out


def info_map(info: Info) -> dict[str, object]:
    """The params map of an ``info`` notification."""
    out: dict[str, object] = {}
    if info.search is not None:
        out["search"] = info.search
    for key in ("depth", "seldepth", "multipv", "nodes", "nps", "time", "hashfull"):
        value = getattr(info, key)
        if value is not None:
            out[key] = value
    if info.score is not None:
        out["score"] = score_map(info.score)
    if info.pv:
        out["pv"] = list(info.pv)
    if info.string is not None:
        out["string"] = info.string
    return out


def analysis_map(reply: Analysis) -> dict[str, object]:
    """The params map of an ``analysis`` notification."""
    out: dict[str, object] = {}
    if reply.request is not None:
        out["request"] = reply.request
    out["id"] = reply.id
    out["move"] = reply.move
    out["lines"] = [info_map(info) for info in reply.lines]
    for key in ("nodes", "time"):
        value = getattr(reply, key)
        if value is not None:
            out[key] = value
    for key in ("stopped", "cancelled"):
        if getattr(reply, key):
            out[key] = True
    if reply.error is not None:
        keys = ("code", "name", "message", "data")
        out["error"] = dict(zip(keys, error_of(reply.error), strict=True))
    return out


def _value_obj(value: ResponseValue) -> object:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _bot_map(bot: BotInfo) -> dict[str, object]:
    out: dict[str, object] = {"name": bot.name, "games": list(bot.games)}
    if bot.analysis:
        out["analysis"] = list(bot.analysis)
    if bot.levels:
        out["levels"] = [_level_map(level) for level in bot.levels]
    if bot.expectations:
        out["expectations"] = {line.game: line.scale for line in bot.expectations}
    return out


def _level_map(level: LevelLine) -> dict[str, object]:
    out: dict[str, object] = {"level": level.number, "name": level.name}
    for key in ("game", "elo", "interval"):
        value = getattr(level, key)
        if value is not None:
            out[key] = value
    return out


def _handshake_map(reply: Handshake) -> dict[str, object]:
    return {
        "name": reply.name,
        "author": reply.author,
        "version": reply.version,
        "protocol": reply.protocol,
        "games": [
            {"name": g.name, "colours": list(g.colours), "start": g.start} for g in reply.games
        ],
        "bots": [_bot_map(b) for b in reply.bots],
        "options": [option_map(o) for o in reply.options],
        "limits": {lim.name: lim.value for lim in reply.limits},
        **({} if reply.auth is None else {"auth": reply.auth}),
    }


def _best_move_map(reply: BestMove) -> dict[str, object]:
    out: dict[str, object] = {"move": reply.move}
    if reply.ponder is not None:
        out["ponder"] = reply.ponder
    if reply.score is not None:
        out["score"] = score_map(reply.score)
    for key in ("depth", "seldepth", "nodes", "time"):
        value = getattr(reply, key)
        if value is not None:
            out[key] = value
    if reply.pv:
        out["pv"] = list(reply.pv)
    if reply.stopped is not None:
        out["stopped"] = reply.stopped
    return out


def result_of(reply: Reply) -> dict[str, object]:
    """The result map of a successful reply (errors and ``info`` travel otherwise)."""
    match reply:
        case Handshake():
            return _handshake_map(reply)
        case Pong(token):
            return {"token": token}
        case BestMove():
            return _best_move_map(reply)
        case Response(value):
            return {"value": _value_obj(value)}
        case OptionList(options):
            return {"options": [option_map(o) for o in options]}
        case BotList(bots):
            return {"bots": [_bot_map(b) for b in bots]}
        case ShowText(text):
            return {"text": text}
        case ReadyOk() | Ack():
            return {}
        case Info() | ErrorReply() | InvalidMove() | Analysis() | TableNote():
            raise TypeError(f"{type(reply).__name__} is not a result")


def error_of(reply: ErrorReply | InvalidMove) -> list[object]:
    """The ``[code, name, message, data]`` error array."""
    if isinstance(reply, InvalidMove):
        data: Mapping[str, object] | None = {"move": reply.move, "reason": reply.reason}
        return [201, "illegal-move", f"{reply.move}: {reply.reason}", data]
    return [reply.code, reply.name, reply.message, None if reply.data is None else dict(reply.data)]


def encode_request(msgid: int, command: Command) -> bytes:
    """A request frame."""
    return pack([REQUEST, msgid, command.METHOD, [params_of(command)]])


def encode_notify(command: Command) -> bytes:
    """A command sent as a notification (no response; for ``stop`` and ``quit``)."""
    return pack([NOTIFY, command.METHOD, [params_of(command)]])


def encode_reply(msgid: int | None, reply: Reply) -> bytes:
    """The frame of a reply: a response to ``msgid``, or for ``info`` (and errors without an
    id) a notification."""
    if isinstance(reply, Info):
        return pack([NOTIFY, "info", [info_map(reply)]])
    if isinstance(reply, Analysis):
        return pack([NOTIFY, "analysis", [analysis_map(reply)]])
    if isinstance(reply, TableNote):
        return pack([NOTIFY, "table", [dict(reply.values)]])
    if isinstance(reply, (ErrorReply, InvalidMove)):
        error = error_of(reply)
        if msgid is None:
            keys = ("code", "name", "message", "data")
            return pack([NOTIFY, "error", [dict(zip(keys, error, strict=True))]])
        return pack([RESPONSE, msgid, error, None])
    if msgid is None:
        raise ValueError(f"a {type(reply).__name__} result needs the id of its request")
    return pack([RESPONSE, msgid, None, result_of(reply)])


# ---------------------------------------------------------------------------------------------
# Decoding


_SHOW = reprlib.Repr()
_SHOW.maxlevel = 2
_SHOW.maxlist = _SHOW.maxdict = _SHOW.maxtuple = 4
_SHOW.maxstring = _SHOW.maxother = 40


def _show(value: object, width: int = 60) -> str:
    """A short repr of a received value for an error text: bounded in length, depth and
    time whatever the value (a plain repr of a deeply nested frame recurses past Python's
    limit, and one of a huge array takes long and quotes it whole)."""
    text = _SHOW.repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _frame_error(message: str) -> ProtocolError:
    return ProtocolError(BAD_FRAME, message)


def _params(raw: object, msgid: int | None, method: str) -> Params:
    if not isinstance(raw, list) or len(raw) > 1 or (raw and not isinstance(raw[0], dict)):
        raise _bad(f"{method}: params must be [] or [map], got {_show(raw)}", msgid, method)
    return cast(Params, raw[0]) if raw else {}


def _is_int(value: object) -> bool:
    return type(value) is int


def parse_request(frame: object) -> Request:
    """The request or notification of a frame a server received.

    Raises:
        ProtocolError: fatal 103 when the frame is not a request or notification at all; 100
            or 101 (carrying the msgid) when the method or its params are wrong.
    """
    if not isinstance(frame, list):
        raise _frame_error(f"a frame must be an array, got {type(frame).__name__}")
    if len(frame) == 4 and frame[0] == REQUEST and _is_int(frame[0]):
        _, msgid, method, raw = frame
        if not _is_int(msgid) or not 0 <= msgid <= MAX_MSGID:
            raise _frame_error(
                f"a request id must be an integer 0..2**32-1, got {_show(msgid, 40)}"
            )
    elif len(frame) == 3 and frame[0] == NOTIFY and _is_int(frame[0]):
        _, method, raw = frame
        msgid = None
    else:
        raise _frame_error(f"not a request or notification: {_show(frame)}")
    if not isinstance(method, str) or not method or len(method) > 64:
        raise _frame_error(f"a method must be a short string, got {_show(method, 40)}")
    return Request(command_from_params(method, _params(raw, msgid, method), msgid), msgid)


def _score(raw: object) -> Score | None:
    if not isinstance(raw, dict):
        return None
    bound = raw.get("bound")
    for kind in ("cp", "win", "loss"):
        value = raw.get(kind)
        if _is_int(value):
            return Score(kind, value, bound if bound in ("lower", "upper") else None)  # type: ignore[arg-type]
    return None


def _opt_int(raw: Mapping[str, object], key: str) -> int | None:
    value = raw.get(key)
    return value if _is_int(value) else None  # type: ignore[return-value]


def _strs(raw: object) -> tuple[str, ...]:
    if isinstance(raw, list) and all(isinstance(v, str) for v in raw):
        return tuple(raw)
    return ()


def info_from_map(raw: Mapping[str, object]) -> Info:
    """An ``info`` notification's params map as an ``Info`` (wrong-typed fields are dropped)."""
    string = raw.get("string")
    return Info(
        depth=_opt_int(raw, "depth"),
        seldepth=_opt_int(raw, "seldepth"),
        score=_score(raw.get("score")),
        nodes=_opt_int(raw, "nodes"),
        nps=_opt_int(raw, "nps"),
        time=_opt_int(raw, "time"),
        hashfull=_opt_int(raw, "hashfull"),
        pv=_strs(raw.get("pv")),
        string=string if isinstance(string, str) else None,
        search=_opt_int(raw, "search"),
        multipv=_opt_int(raw, "multipv"),
    )


def analysis_from_map(raw: Mapping[str, object]) -> Analysis:
    """An ``analysis`` notification's params map as an ``Analysis`` (wrong-typed fields are
    dropped).

    Raises:
        ProtocolError: fatal 103 when it has no id, or its error is malformed.
    """
    ident, move, lines = raw.get("id"), raw.get("move"), raw.get("lines")
    if not isinstance(ident, str):
        raise _frame_error(f"an analysis needs an id, got {_show(raw)}")
    error = raw.get("error")
    return Analysis(
        ident,
        move if isinstance(move, str) else None,
        tuple(info_from_map(v) for v in lines if isinstance(v, dict))
        if isinstance(lines, list)
        else (),
        _opt_int(raw, "nodes"),
        _opt_int(raw, "time"),
        stopped=raw.get("stopped") is True,
        cancelled=raw.get("cancelled") is True,
        error=None if error is None else _error_reply(error),
        request=_opt_int(raw, "request"),
    )


def _error_reply(raw: object) -> ErrorReply:
    if isinstance(raw, dict):
        raw = [raw.get("code"), raw.get("name"), raw.get("message"), raw.get("data")]
    if (
        not isinstance(raw, list)
        or len(raw) != 4
        or not _is_int(raw[0])
        or not isinstance(raw[1], str)
        or not isinstance(raw[2], str)
        or not (raw[3] is None or isinstance(raw[3], dict))
    ):
        raise _frame_error(f"an error must be [code, name, message, data], got {_show(raw)}")
    return ErrorReply(raw[0], raw[1], raw[2], raw[3])


def parse_server_frame(
    frame: object,
) -> RpcResult | Info | ErrorReply | Analysis | Notification:
    """What a client receives: a response, or an ``info``/``error``/other notification.

    Raises:
        ProtocolError: fatal 103 when the frame is not a response or notification.
    """
    if not isinstance(frame, list):
        raise _frame_error(f"a frame must be an array, got {type(frame).__name__}")
    if len(frame) == 4 and frame[0] == RESPONSE and _is_int(frame[0]):
        _, msgid, error, result = frame
        if not _is_int(msgid):
            raise _frame_error(f"a response id must be an integer, got {_show(msgid, 40)}")
        return RpcResult(msgid, None if error is None else _error_reply(error), result)
    if len(frame) == 3 and frame[0] == NOTIFY and _is_int(frame[0]) and isinstance(frame[1], str):
        params = _params(frame[2], None, frame[1])
        if frame[1] == "info":
            return info_from_map(params)
        if frame[1] == "error":
            return _error_reply(dict(params))
        if frame[1] == "analysis":
            return analysis_from_map(params)
        return Notification(frame[1], params)
    raise _frame_error(f"not a response or notification: {_show(frame)}")


def _option(raw: object) -> OptionSpec:
    if not isinstance(raw, dict) or raw.get("type") not in OPTION_TYPES:
        raise _bad(f"not an option: {_show(raw)}", None, "options")
    default = raw.get("default")
    return OptionSpec(
        str(raw.get("name", "")),
        raw["type"],
        None if default is None else str(default),
        _opt_int(raw, "min"),
        _opt_int(raw, "max"),
        _strs(raw.get("vars")),
    )


def _bot(raw: object) -> BotInfo:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise _bad(f"not a bot: {_show(raw)}", None, "bots")
    name = raw["name"]
    levels = tuple(_level(name, level) for level in _list(raw, "levels") if isinstance(level, dict))
    scales = raw.get("expectations", {})
    expectations = tuple(
        ExpectationLine(name, game, cast(int, scale))
        for game, scale in (scales.items() if isinstance(scales, dict) else ())
        if isinstance(game, str) and _is_int(scale)
    )
    return BotInfo(name, _strs(raw.get("games")), _strs(raw.get("analysis")), levels, expectations)


def _level(bot: str, raw: Mapping[str, object]) -> LevelLine:
    number, name, game = raw.get("level"), raw.get("name"), raw.get("game")
    if not _is_int(number) or not isinstance(name, str):
        raise _bad(f"not a level: {_show(raw)}", None, "bots")
    return LevelLine(
        cast(int, number),
        name,
        bot,
        game if isinstance(game, str) else None,
        _opt_int(raw, "elo"),
        _opt_int(raw, "interval"),
    )


def _list(raw: Mapping[str, object], key: str) -> list[object]:
    value = raw.get(key, [])
    return value if isinstance(value, list) else []


def _handshake(result: Mapping[str, object]) -> Reply:
    games = []
    for g in _list(result, "games"):
        if not isinstance(g, dict) or len(_strs(g.get("colours"))) != 2:
            raise _bad(f"ugi: not a game: {_show(g)}", None, "ugi")
        c1, c2 = _strs(g.get("colours"))
        games.append(GameInfo(str(g.get("name")), (c1, c2), str(g.get("start"))))
    limits = result.get("limits", {})
    return Handshake(
        name=str(result.get("name", "")),
        author=str(result.get("author", "")),
        version=str(result.get("version", "")),
        protocol=_opt_int(result, "protocol") or 0,
        games=tuple(games),
        bots=tuple(_bot(b) for b in _list(result, "bots")),
        options=tuple(_option(o) for o in _list(result, "options")),
        limits=tuple(
            LimitInfo(k, v)
            for k, v in (limits.items() if isinstance(limits, dict) else ())
            if _is_int(v)
        ),
        auth=auth if isinstance(auth := result.get("auth"), str) else None,
    )


def _pong(result: Mapping[str, object]) -> Reply:
    token = _opt_int(result, "token")
    if token is None:
        raise _bad("ping: the result has no token", None, "ping")
    return Pong(token)


def _best_move(result: Mapping[str, object]) -> Reply:
    move = result.get("move")
    stopped = result.get("stopped")
    return BestMove(
        move if isinstance(move, str) else None,
        ponder=p if isinstance(p := result.get("ponder"), str) else None,
        score=_score(result.get("score")),
        depth=_opt_int(result, "depth"),
        seldepth=_opt_int(result, "seldepth"),
        nodes=_opt_int(result, "nodes"),
        time=_opt_int(result, "time"),
        pv=_strs(result.get("pv")),
        stopped=stopped if isinstance(stopped, bool) else None,
    )


def _response(result: Mapping[str, object]) -> Reply:
    value = result.get("value")
    if isinstance(value, list):
        value = _strs(value)
    return Response(cast(ResponseValue, value))  # the wire's value, as it came


_RESULTS: Final[Mapping[str, Callable[[Mapping[str, object]], Reply]]] = {
    "ugi": _handshake,
    "isready": lambda result: ReadyOk(),
    "ping": _pong,
    "go": _best_move,
    "query": _response,
    "play": _response,
    "undo": _response,
    "options": lambda result: OptionList(tuple(_option(o) for o in _list(result, "options"))),
    "bots": lambda result: BotList(tuple(_bot(b) for b in _list(result, "bots"))),
    "show": lambda result: ShowText(str(result.get("text", ""))),
}
"""How the result map of each method is read (that of any other method is an ``Ack``)."""


def parse_result(method: str, result: object) -> Reply:
    """Turn the result map of a response to ``method`` into its reply object (client side).

    Raises:
        ProtocolError: 101 when the result does not have the shape the method promises.
    """
    if not isinstance(result, dict):
        raise _bad(f"{method}: a result must be a map, got {_show(result)}", None, method)
    read = _RESULTS.get(method)
    return Ack() if read is None else read(result)


class MsgpackDecoder:
    """Incremental msgpack-RPC decoder (sans I/O): frames cut by ``protocol.rpc.FrameReader``,
    each then read as the role's messages.

    Args:
        role: ``"server"`` decodes requests and notifications into ``Request`` objects;
            ``"client"`` decodes responses and notifications.
        max_frame: the largest frame in bytes; also caps the bytes buffered at once.
    """

    def __init__(self, role: Role = "server", *, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.role = role
        self.max_frame = max_frame
        self._frames = FrameReader(max_frame)

    def feed(self, data: bytes | bytearray) -> None:
        """Add received bytes.

        Raises:
            ProtocolError: fatal 102 when more than ``max_frame`` bytes would be buffered.
        """
        self._frames.feed(data)

    def next_message(
        self,
    ) -> Request | RpcResult | Info | ErrorReply | Analysis | Notification | None:
        """The next message; None when more data is needed.

        Raises:
            ProtocolError: non-fatal (100, 101, with ``msgid``) for a well-framed request with
                a wrong method or params; fatal for anything else.
        """
        whole, frame = self._frames.next_frame()
        if not whole:
            return None
        try:
            if self.role == "server":
                return parse_request(frame)
            return parse_server_frame(frame)
        except ProtocolError as exc:
            if exc.fatal:
                self._frames.poison(exc)
            raise

    @property
    def last_size(self) -> int:
        """The bytes of the last message read (its frame)."""
        return self._frames.last_size

    def __iter__(
        self,
    ) -> Iterator[Request | RpcResult | Info | ErrorReply | Analysis | Notification]:
        """Messages until more data is needed (see ``TextDecoder.__iter__``)."""
        while (message := self.next_message()) is not None:
            yield message
