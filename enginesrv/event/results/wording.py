"""How a game's end reads in words: who won and why, naming the players, never a seat code
(``p1 time-forfeit`` reads as if p1 had won on time when p1 lost on time); and how any text
read from a file or a store is shown on a terminal (``printable``)."""

from __future__ import annotations

import unicodedata

from enginesrv.event.play.outcome import Outcome, other, seat_name

_GAME_ENDS = {
    # Yinsh
    "target-reached": "removed the rings it needed",
    "pool-empty": "more rings removed when the markers ran out",
    "two-passes": "more rings removed when neither side could move",
    # Yohoho
    "goal-row": "its Admiral reached the goal row",
    "admiral-trapped": "the opposing Admiral was trapped",
    "no-legal-action": "the opponent had no legal action",
    # Yoxii
    "totem-blocked": "totem blocked",
    # Yin Yang
    "goal": "reached its goal",
    "both-goals": "both goals were reached",
    "no-legal-token": "the opponent had no legal token",
}
"""The games' own reasons (named in each rule file), as the winner's part."""

_LOSER_DID = {
    "time-forfeit": "lost on time",
    "illegal-move": "played an illegal move",
    "crash": "crashed",
    "disconnect": "disconnected",
    "stall": "stalled",
    "resign": "resigned (its scores stayed below the resign threshold)",
}
"""The arbiter's reasons for a loss, as what the loser did."""

_DRAWS = {
    "max-plies": "the ply limit was reached",
    "repetition": "a position repeated",
    "score-adjudication": "adjudicated on level scores",
    "agreement": "both players agreed to a draw",
    "pool-empty": "the markers ran out with as many rings removed on each side",
    "two-passes": "neither side could move, with as many rings removed on each side",
    "totem-blocked": "totem blocked with the scores level",
}


def reason_words(reason: str) -> str:
    """A reason in words, without naming anyone (``goal-row`` -> ``its Admiral reached ...``)."""
    for table in (_GAME_ENDS, _LOSER_DID, _DRAWS):
        if reason in table:
            return table[reason]
    return reason.replace("-", " ")


def result_words(outcome: Outcome, names: tuple[str, str], detail: str = "") -> str:
    """``greedy wins: alphabeta lost on time (239 ms used of 200 ms)``,
    ``alphabeta wins: totem blocked``, ``draw: the ply limit was reached``.

    ``names`` are the players of p1 and p2; ``detail`` is what a forfeited player did, when
    the arbiter said.
    """
    extra = f" ({detail})" if detail else ""
    reason = outcome.reason
    if outcome.winner is None:
        return f"draw: {_DRAWS.get(reason, reason_words(reason))}{extra}"
    won, lost = names[outcome.winner], names[other(outcome.winner)]
    if won == lost:
        won, lost = f"{won} ({outcome.result})", f"{lost} ({seat_name(other(outcome.winner))})"
    if reason in _LOSER_DID:
        return f"{won} wins: {lost} {_LOSER_DID[reason]}{extra}"
    return f"{won} wins: {reason_words(reason)}{extra}"


_NOT_SHOWN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""The Unicode categories ``printable`` escapes: control characters (C0, DEL, C1), format
characters (bidirectional overrides, zero-width ones), lone surrogates, and the line and
paragraph separators."""

MAX_SHOWN = 200
"""The most characters of a text read from a file or a store that a line shows (``cut``): a
name is at most 100, a reason a few words; what is longer is cut before it is escaped."""

MAX_QUOTED = 80
"""The most characters of a value an error message quotes (``quoted``)."""


def cut(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut to ``limit`` characters, ``...`` ending what was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def quoted(value: str, limit: int = MAX_QUOTED) -> str:
    """``value`` quoted for an error message (``'...'``, as ``repr`` writes it: control and
    format characters escaped), cut to ``limit`` characters before it is quoted."""
    if len(value) <= limit:
        return repr(value)
    return repr(value[: limit - 3]) + "..."


class _Escapes(dict[int, str]):
    """What ``str.translate`` makes of each character: the escape of a character of
    ``_NOT_SHOWN``, the character itself otherwise. The first 0x3000 code points are looked
    up once (the scripts most text is in); any other is looked up as it comes, not kept, so a
    text of many distinct characters costs no memory."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if unicodedata.category(char) in _NOT_SHOWN:
            return _escape(char)
        raise LookupError(code)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


_ESCAPES = _Escapes(
    {
        code: _escape(chr(code))
        for code in range(0x3000)
        if unicodedata.category(chr(code)) in _NOT_SHOWN
    }
)


def printable(text: str) -> str:
    """``text`` as it may be shown on a terminal or in a message of one line: each character
    a terminal could act on or that could break the line (of ``_NOT_SHOWN``: ESC, NUL, a
    line break, a tab, a bidirectional override...) written as an escape, ``\\x1b`` or
    ``\\u202e``; every other character as it is. Every text the program shows that it read
    from a file, a store or its command line goes through here (cut first, ``cut``, where
    it may be long). One pass of ``str.translate``: linear in the text, one string built."""
    if text.isprintable():
        return text
    return text.translate(_ESCAPES)
