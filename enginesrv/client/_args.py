"""The client's defaults, the checks of what a caller passes, and the shaping of answers."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Literal, cast

from enginesrv.client.types import Clock, Framing, LegalMoves, MoveScore
from protocol import messages as m
from protocol.errors import BY_CODE
from protocol.text import MAX_AUTH_TOKEN, response_mapping

TIMEOUT = 10.0
"""Seconds a request waits for its answer unless the call says otherwise."""
SEARCH_TIMEOUT = 600.0
"""Seconds ``go`` waits for a depth or node search unless told otherwise."""
STOP_GRACE = 2.0
"""Seconds a stopped search gets to send its best move before the engine is given up."""
KILL_WAIT = 1.0
"""Seconds an engine process gets to exit after ``quit`` before it is killed."""
TERM_WAIT = 1.0
"""Seconds an engine process gets to exit after SIGTERM (sent when ``quit`` was not enough)
before SIGKILL."""


QueryValue = bool | str | LegalMoves | tuple[MoveScore, ...] | Mapping[str, str | int] | None


INT_MAX = 2**63 - 1
"""The largest integer the protocol carries (docs/protocol.md §4.2)."""


def check_int(what: str, value: int, minimum: int) -> None:
    """An integer argument within ``minimum`` and ``INT_MAX``, checked before it is sent."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= INT_MAX:
        raise ValueError(f"{what} {value!r}: not a whole number from {minimum} to {INT_MAX}")


def check_auth(token: str) -> m.Auth:
    """The ``auth`` command of ``token`` (``NAME:TOKEN``, one word), checked before it is
    sent; no message quotes it."""
    name, _, secret = token.partition(":")
    one_word = not any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in token)
    if not (name and secret and one_word and len(token) <= MAX_AUTH_TOKEN):
        raise ValueError(
            f"token: NAME:TOKEN is wanted, one word of at most {MAX_AUTH_TOKEN} characters (as "
            "enginesrv token add prints it)"
        )
    return m.Auth(token)


def option_value(name: str, value: str | int | bool | None) -> str | None:
    """The text of ``setoption name NAME value VALUE`` for ``value``, after the checks: one
    line each, and no word ``value`` in the name (the text framing would read the rest as
    the value). Compat on is refused: it turns errors into ``info string`` lines, which the
    client would not see as errors."""
    check_text("option name", name)
    if "value" in name.split() or not name.strip():
        raise ValueError(f"option name {name!r}: a name is needed, without the word 'value'")
    if isinstance(value, bool):
        text: str | None = "true" if value else "false"
    else:
        text = None if value is None else str(value)
    if name.strip().lower() == "compat" and text is not None and text.lower() != "false":
        raise ValueError(
            "option Compat: it turns errors into info strings, for UCI clients that cannot read "
            "them; this client reads errors as the protocol sends them"
        )
    if text is not None:
        check_text(f"the value of option {name!r}", text)
    return text


def go_command(
    depth: int | None,
    movetime: int | None,
    nodes: int | None,
    clock: Clock | None,
    infinite: bool,
    searchmoves: Sequence[str] = (),
    avoidmoves: Sequence[str] = (),
) -> m.Go:
    """The ``go`` of a search with these limits, of the first decisions ``searchmoves`` only
    (none: all) less ``avoidmoves``."""
    lists: dict[str, tuple[str, ...]] = {}
    for name, given in (("searchmoves", searchmoves), ("avoidmoves", avoidmoves)):
        if isinstance(given, str):
            raise TypeError(f"go {name}: a sequence of move tokens, not one string {given!r}")
        moves = lists[name] = tuple(given)  # read once: an iterator is read only once
        for move in moves:
            check_token(f"go {name}", move)
            if move in m.GO_WORDS:
                raise ValueError(f"go {name} {move!r}: a word of go's own, not a move")
    for name, value in (("depth", depth), ("movetime", movetime), ("nodes", nodes)):
        if value is not None:
            check_int(f"go {name}", value, 0)
    if clock is not None:
        for name in ("p1time", "p2time"):
            if (given := getattr(clock, name)) is not None:
                check_int(f"go {name}", given, -INT_MAX)
        for name in ("p1inc", "p2inc", "movestogo"):
            if (given := getattr(clock, name)) is not None:
                check_int(f"go {name}", given, 0)
    return m.Go(
        p1time=clock.p1time if clock else None,
        p2time=clock.p2time if clock else None,
        p1inc=clock.p1inc if clock else None,
        p2inc=clock.p2inc if clock else None,
        movestogo=clock.movestogo if clock else None,
        movetime=movetime,
        depth=depth,
        nodes=nodes,
        infinite=infinite,
        searchmoves=lists["searchmoves"],
        avoidmoves=lists["avoidmoves"],
    )


def search_timeout(movetime: int | None, clock: Clock | None) -> float:
    """How long ``go`` waits by default: the move time, or the larger clock, plus
    ``TIMEOUT``; ``SEARCH_TIMEOUT`` for a search bounded by depth or nodes only."""
    if movetime is not None:
        return movetime / 1000 + TIMEOUT
    times = [t for t in (clock.p1time, clock.p2time) if t is not None] if clock else []
    if times:
        return max(0, *times) / 1000 + TIMEOUT
    return SEARCH_TIMEOUT


MAPPINGS = ("outcome", "clock", "table")
"""The queries answered by a mapping (``key=value`` pairs in the text framing)."""


def query_value(framing: Framing, what: str, value: m.ResponseValue) -> QueryValue:
    """The answer to ``query WHAT`` as a Python value, the same in both framings: a bool for
    ``gameover`` and ``p1turn``, ``LegalMoves`` for ``moves`` and ``played`` (the tokens), a
    mapping for ``outcome``, ``clock`` and ``table`` (None while the game goes on, or when no
    clock is kept), ``MoveScore``s for ``scores``, else the text."""
    if what == "scores":
        return move_scores(value)
    if framing == "msgpack":
        return _msgpack_value(what, value)
    raw = value if isinstance(value, str) else ""
    if what in ("gameover", "p1turn"):
        return raw == "true"
    if what in ("moves", "played"):
        return legal_moves(raw)
    if what in MAPPINGS:
        if raw in ("", "none"):
            return None
        pairs = response_mapping(raw).items()
        return {k: n if (n := _small_int(v, signed=True)) is not None else v for k, v in pairs}
    return raw


def _msgpack_value(what: str, value: m.ResponseValue) -> QueryValue:
    if what in ("moves", "played"):
        return legal_moves(value)
    if what in MAPPINGS:
        return dict(value) if isinstance(value, Mapping) else None
    return value if isinstance(value, bool | str) or value is None else str(value)


def move_scores(value: m.ResponseValue) -> tuple[MoveScore, ...]:
    """A ``query scores`` answer: ``SCORE_WORDS`` words a move (a list of them in msgpack,
    the words of the line in text); a group that does not read is left out."""
    words = list(value) if isinstance(value, tuple) else str(value or "").split()
    bounds: dict[str, Literal["lower", "upper"] | None] = {
        "exact": None, "lower": "lower", "upper": "upper"
    }  # fmt: skip
    out: list[MoveScore] = []
    size = m.SCORE_WORDS
    for i in range(0, len(words) - size + 1, size):
        move, kind, value_text, depth_text, bound = words[i : i + size]
        number = _small_int(value_text, signed=True)
        depth = _small_int(depth_text)
        known = kind in ("cp", "win", "loss") and bound in bounds
        if known and number is not None and depth is not None:
            score = m.Score(cast(Literal["cp", "win", "loss"], kind), number)
            out.append(MoveScore(move, score, depth, bounds[bound]))
    return tuple(out)


def bots_from_lines(lines: list[m.ReplyLine]) -> tuple[m.BotInfo, ...]:
    """The bots the ``bot`` lines name, each with what its ``analysis`` line says it offers,
    the levels its ``level`` lines name and its ``expectation`` lines."""
    offers = {x.name: x.features for x in lines if isinstance(x, m.AnalysisLine)}
    levels: dict[str, list[m.LevelLine]] = {}
    scales: dict[str, list[m.ExpectationLine]] = {}
    for x in lines:
        if isinstance(x, m.LevelLine):
            levels.setdefault(x.bot, []).append(x)
        elif isinstance(x, m.ExpectationLine):
            scales.setdefault(x.bot, []).append(x)
    return tuple(
        dataclasses.replace(
            x,
            analysis=offers.get(x.name, x.analysis),
            levels=tuple(levels.get(x.name, x.levels)),
            expectations=tuple(scales.get(x.name, x.expectations)),
        )
        for x in lines
        if isinstance(x, m.BotInfo)
    )


def handshake_from_lines(lines: list[m.ReplyLine]) -> m.Handshake:
    """The handshake the text framing tells in lines (``id``, ``game``, ``bot``, ``limit``,
    ``option``, ``auth``; a plain UGI engine sends only some, and no ``id protocol``:
    version 0)."""
    ids = {line.key: line.value for line in lines if isinstance(line, m.IdLine)}
    protocol = ids.get("protocol", "0")
    return m.Handshake(
        name=ids.get("name", ""),
        author=ids.get("author", ""),
        version=ids.get("version", ""),
        protocol=_small_int(protocol) or 0,
        games=tuple(x for x in lines if isinstance(x, m.GameInfo)),
        bots=bots_from_lines(lines),
        options=tuple(x for x in lines if isinstance(x, m.OptionSpec)),
        limits=tuple(x for x in lines if isinstance(x, m.LimitInfo)),
        auth=next((x.kind for x in lines if isinstance(x, m.AuthLine)), None),
    )


def legal_moves(value: m.ResponseValue) -> LegalMoves:
    """A ``query moves`` answer: the list, or ``count N moves M ...`` (cut to fit a reply),
    or ``count N TEXT`` (too many to list; the text says how one is written)."""
    if isinstance(value, tuple):
        return LegalMoves(value)
    words = str(value or "").split()
    total = _small_int(words[1]) if len(words) >= 2 and words[0] == "count" else None
    if total is not None:
        if words[2:3] == ["moves"]:
            return LegalMoves(tuple(words[3:]), total)
        return LegalMoves((), total, " ".join(words[2:]))
    return LegalMoves(tuple(words))


def check_token(what: str, value: str) -> None:
    """A move or a game name: one token, which no line break can split off."""
    if not value or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{what} {value!r}: one token is needed (no spaces or control characters)")


def check_text(what: str, value: str) -> None:
    """Free text on one line (a position string, an option's name or value)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{what} {value!r}: no control characters (line breaks) are allowed")


def _small_int(text: str, *, signed: bool = False) -> int | None:
    """``text`` as an integer of at most 19 ASCII digits (a sign first when ``signed``), else
    None: what an engine sends is not trusted to be a number Python can read."""
    digits = text[1:] if signed and text[:1] == "-" else text
    if not digits or len(digits) > 19 or not (digits.isascii() and digits.isdigit()):
        return None
    return int(text)


def is_fatal(code: int) -> bool:
    """Whether the error ``code`` ends the connection (docs/protocol.md §6)."""
    known = BY_CODE.get(code)
    return known is not None and known.fatal


def amount(count: int) -> str:
    """``count`` bytes for a person: ``8 MiB`` when whole mebibytes, else ``4096 bytes``."""
    return f"{count >> 20} MiB" if count and count % (1 << 20) == 0 else f"{count} bytes"
