"""The players of matches and tournaments, behind one async interface.

* ``bot:NAME[:OPTION=VALUE,...]``: a built-in or plug-in bot, searching in a worker process of
  the arbiter's pool (``enginesrv.search.pool``), so a slow or broken bot never blocks the arbiter;
* ``cmd:COMMAND``: an external engine started as a command (split like a shell would, no shell
  run) that speaks the text protocol over stdin/stdout; plain UGI engines included;
* ``tcp:HOST:PORT``: a running server (``enginesrv serve``) or any engine listening there,
  spoken to in the text framing.

``name=`` before any of them sets the display name (``name=new:bot:alphabeta:Depth=4``),
``options=`` adds options, and ``tc=`` gives the player a time control of its own in the forms
of ``--tc`` (``tc=1:00+1:bot:alphabeta``, ``tc=inf:cmd:./engine``): it replaces the event's
clock or move time for that player. A time control holds no letters but ``inf``, so its value
runs to the first ``:`` that a digit does not follow.

The arbiter drives a ``Player`` through ``start`` (launch and handshake), ``new_game`` before
each game, ``go`` for each decision and ``close``. Every wait has a deadline. A misbehaving
player raises ``ForfeitError`` with one of the forfeit reasons of design §6: ``crash`` (the
process ended or the bot failed), ``disconnect`` (the TCP peer went away), ``stall`` (no
``ugiok``/``readyok`` in time, or no answer to ``isready`` while searching without a clock) or
``time-forfeit`` (no move by the time the clock ran out). A player that failed is dead; the
arbiter starts it afresh for its next game.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

import games
from bots.engine import Score
from enginesrv.event.play.controls import TimeControl
from enginesrv.event.play.outcome import Termination
from enginesrv.event.results.wording import cut
from protocol import messages as m

PlayerKind = Literal["bot", "cmd", "tcp"]
GameOptions = tuple[tuple[str, str], ...]
"""Options (name, value) that a player is given for one game only (``Player.new_game``)."""

MOVE_TIMEOUT = 60.0
"""Seconds a search without a clock may take by default (``--move-timeout``)."""


class PlayerSpecError(ValueError):
    """A player spec that cannot be used; the message names the spec and the reason."""


MAX_DETAIL = 1000
"""The most characters of a forfeit's ``detail``: it often quotes what the engine answered
(an error line may be a mebibyte long), and it is a comment of the game's record, whose
headers and comments keep within ``files.MAX_HEADER_BYTES``."""


_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 127, *range(0x80, 0xA0))}
"""The control characters a forfeit's detail writes escaped (tabs too)."""


class ForfeitError(Exception):
    """A player misbehaved: ``reason`` is the forfeit reason, ``detail`` says what happened
    (cut to ``MAX_DETAIL`` characters)."""

    def __init__(self, reason: Termination, detail: str) -> None:
        # it quotes what a player said, and goes into a record's comment and onto terminals:
        # control characters (a CR would end the comment's line, an ESC drive the terminal)
        # are written escaped
        detail = cut(detail.translate(_ESCAPES), MAX_DETAIL)
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A parsed player spec (module docstring)."""

    text: str
    kind: PlayerKind
    name: str
    bot: str = ""
    options: tuple[tuple[str, str], ...] = ()
    command: tuple[str, ...] = ()
    host: str = ""
    port: int = 0
    tc: TimeControl | None = None
    """The player's own time control (``tc=``), replacing the event's clock or move time."""


def control_character(text: str) -> str | None:
    """The first control character of ``text`` (newline, carriage return, NUL, ...) as a
    readable escape, or None: such a character would end a protocol line early, so that the
    rest reached an engine as a command of its own."""
    for char in text:
        if ord(char) < 32 or ord(char) == 127:
            return repr(char)[1:-1]
    return None


NAME_LIMIT = 100
"""The most characters of a player's or an event's name."""
_NOT_IN_NAMES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories no name may hold: control characters (C0, DEL, C1), format characters
(bidirectional overrides, zero-width ones), lone surrogates (bytes of a command line that
were not UTF-8) and the line and paragraph separators."""
_COMBINING = frozenset({"Mn", "Mc", "Me"})
"""The Unicode categories of combining marks, which a terminal draws over the character
before them: a name may not begin with one (it would be drawn over what precedes the name)."""
_BLANK_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols a terminal draws as nothing: the Hangul fillers (choseong, jungseong,
compatibility and halfwidth) and the blank Braille pattern."""


def name_problem(name: str) -> str | None:
    """What keeps ``name`` from being a player's or an event's name, or None.

    A name goes into a record's ``P1``, ``P2`` or ``Event`` header, into tables printed on a
    terminal and into messages of one line, so it is 1 to ``NAME_LIMIT`` characters with no
    white space at either end (a header's value is read back stripped) and none of the
    characters of ``_NOT_IN_NAMES`` (all called control characters here), beginning with no
    combining mark and with a character a terminal draws (not only white space, combining
    marks and ``_BLANK_FILLERS``), so that a name cannot look like another or like none on
    a terminal. Names are refused, never changed: a stored event is resumed under the names
    it was started with. ``/`` and ``..`` are allowed: a name is part of a file name only
    through ``trace.file_safe_name``.
    """
    if not name:
        return "is empty"
    if len(name) > NAME_LIMIT:
        return f"is longer than {NAME_LIMIT} characters ({len(name)})"
    for char in name:
        if unicodedata.category(char) in _NOT_IN_NAMES:
            return f"holds a control character ({ascii(char)[1:-1]})"
    if name != name.strip():
        return "begins or ends with white space"
    if unicodedata.category(name[0]) in _COMBINING:
        return f"begins with a combining mark ({ascii(name[0])[1:-1]})"
    if all(_invisible(char) for char in name):
        return "has no visible character"
    return None


def _invisible(char: str) -> bool:
    """Whether a terminal draws ``char`` as nothing of its own: white space, a combining mark
    or a blank filler."""
    return char.isspace() or char in _BLANK_FILLERS or unicodedata.category(char) in _COMBINING


def _check_field(text: str, what: str, value: str) -> None:
    bad = control_character(value)
    if bad is not None:
        raise PlayerSpecError(f"player {text!r}: {what} contains a control character ({bad})")


def _check_spec(spec: PlayerSpec) -> PlayerSpec:
    for key, value in spec.options:
        _check_field(spec.text, f"option {key!r}", key)
        _check_field(spec.text, f"the value of option {key!r}", value)
    for word in spec.command:
        _check_field(spec.text, "the command", word)
    _check_field(spec.text, "the host", spec.host)
    _check_field(spec.text, "the bot name", spec.bot)
    _check_field(spec.text, "the name", spec.name)  # last: it may be made of the fields above
    return spec


def _parse_options(text: str, opts: str) -> tuple[tuple[str, str], ...]:
    options: list[tuple[str, str]] = []
    for pair in opts.split(","):
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise PlayerSpecError(f"player {text!r}: option {pair!r} is not NAME=VALUE")
        options.append((key.strip(), value.strip()))
    return tuple(options)


_TC_PREFIX = re.compile(r"tc=((?:[^:]|:(?=[0-9]))*):")
"""``tc=TC:``: a time control's own colons (``1:30``) are followed by digits."""


def parse_player(text: str) -> PlayerSpec:
    """Parse ``bot:...``, ``cmd:...`` or ``tcp:HOST:PORT``, each optionally after the prefixes
    ``name=NAME:`` (the display name), ``options=NAME=VALUE,...:`` (options set with
    ``setoption`` on an external engine, e.g. ``options=Bot=alphabeta,Hash=64:tcp:host:7777``;
    for a bot, added to its own) and ``tc=TC:`` (the player's own time control, e.g.
    ``tc=1:00+1:``), in any order.

    Raises:
        PlayerSpecError: not one of those forms, or a bad time control; the message shows
            the forms.
    """
    spec = text.strip()
    name = ""
    extra: tuple[tuple[str, str], ...] = ()
    tc: TimeControl | None = None
    while spec.startswith(("name=", "options=", "tc=")):
        if spec.startswith("tc="):
            found = _TC_PREFIX.match(spec)
            if found is None:
                raise PlayerSpecError(f"player {text!r}: write tc=TIMECONTROL:<player>")
            if tc is not None:
                raise PlayerSpecError(f"player {text!r}: tc= is given twice")
            try:
                tc = TimeControl.parse(found.group(1))
            except ValueError as exc:
                raise PlayerSpecError(f"player {text!r}: {exc}") from None
            spec = spec[found.end() :]
            continue
        key, _, spec = spec.partition("=")
        value, sep, spec = spec.partition(":")
        if not sep or not value:
            raise PlayerSpecError(f"player {text!r}: write {key}=...:<player>")
        if key == "name":
            name = value
        else:
            extra += _parse_options(text, value)
    kind, _, rest = spec.partition(":")
    bot, _, opts = rest.partition(":")
    if kind == "bot" and bot:
        options = (_parse_options(text, opts) if opts else ()) + extra
        label = bot + (":" + ",".join(f"{k}={v}" for k, v in options) if options else "")
        return _check_spec(PlayerSpec(text, "bot", name or label, bot=bot, options=options, tc=tc))
    if kind == "cmd" and rest.strip():
        try:
            command = tuple(shlex.split(rest))
        except ValueError as exc:
            raise PlayerSpecError(f"player {text!r}: the command cannot be split: {exc}") from None
        if not command or not command[0]:
            raise PlayerSpecError(f"player {text!r}: the command is empty")
        label = command[0].rsplit("/", 1)[-1]
        return _check_spec(
            PlayerSpec(text, "cmd", name or label, options=extra, command=command, tc=tc)
        )
    if kind == "tcp" and rest:
        host, sep, port_text = rest.rpartition(":")
        if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise PlayerSpecError(f"player {text!r}: write tcp:HOST:PORT with a port 1-65535")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]  # an IPv6 address: tcp:[::1]:5000
        return _check_spec(
            PlayerSpec(
                text, "tcp", name or rest, options=extra, host=host, port=int(port_text), tc=tc
            )
        )
    raise PlayerSpecError(
        f"player {text!r}: write bot:NAME[:OPTION=VALUE,...] (a built-in or plug-in bot), "
        "cmd:COMMAND (an engine over stdio) or tcp:HOST:PORT (a running server), optionally "
        "after name=NAME:, options=NAME=VALUE,...: and tc=TIMECONTROL:"
    )


def _prefixes(text: str) -> tuple[list[str], str]:
    """The prefixes of the player spec ``text`` (``name=...:``, ``options=...:``,
    ``tc=...:``), each with its ``:``, and the rest (``bot:...``, ``cmd:...``, ``tcp:...``)."""
    rest = text.strip()
    found: list[str] = []
    while rest.startswith(("name=", "options=", "tc=")):
        tc = _TC_PREFIX.match(rest) if rest.startswith("tc=") else None
        end = tc.end() if tc is not None else rest.index(":") + 1
        found.append(rest[:end])
        rest = rest[end:]
    return found, rest


def renamed(text: str, name: str) -> str:
    """The player spec ``text`` with the display name ``name`` (its own ``name=`` prefix, if
    any, left out). ``text`` is a spec that ``parse_player`` reads; ``name`` holds no ``:``."""
    prefixes, rest = _prefixes(text)
    kept = [p for p in prefixes if not p.startswith("name=")]
    return f"name={name}:" + "".join(kept) + rest


def with_options(text: str, options: tuple[tuple[str, str], ...]) -> str:
    """The player spec ``text`` with ``options`` set over its own: an ``options=`` prefix
    after its other prefixes (a later prefix's value wins, and a bot's prefixes win over the
    options after its name). ``text`` is a spec that ``parse_player`` reads; no name or value
    holds a ``:`` or a ``,``."""
    prefixes, rest = _prefixes(text)
    given = ",".join(f"{k}={v}" for k, v in options)
    return "".join(prefixes) + f"options={given}:" + rest


Clocks = m.Go
"""What the arbiter tells the mover about time and depth: the protocol's ``go`` message."""


def is_timed(clocks: Clocks) -> bool:
    """Whether a clock or a move time bounds this search."""
    return clocks.movetime is not None or clocks.p1time is not None or clocks.p2time is not None


@dataclass(frozen=True, slots=True)
class GoRequest:
    """One decision asked of a player.

    Attributes:
        seat: the mover (0 = p1).
        position: the position string the player is given (its own view).
        start: the start position string of the game and ``moves`` the tokens played since,
            when the player may be given the history (games of perfect information); None when
            it must be given ``position`` alone (a view hiding the opponent's secrets).
        clocks: the limits of this search.
        forfeit_at: ``trio.current_time()`` after which the move is too late (None: no clock).
        turn: where the decision stands in the mover's turn (``State.turn_position``).
        weight: the decision's share of an ordinary decision's time (``State.time_weight``).
        expected: the game's estimate of the mover's decisions left (``State.decisions_left``).
    """

    seat: int
    position: str
    start: str | None
    moves: tuple[str, ...]
    clocks: Clocks
    forfeit_at: float | None
    turn: tuple[int, int] = (0, 1)
    weight: float = 1.0
    expected: int | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A player's answer: the token (None: the player had no move), the last score, depth
    and nodes it reported, and the seconds from the ``go`` to the answer, measured by the
    arbiter."""

    token: str | None
    elapsed: float
    score: Score | None = None
    depth: int = 0
    nodes: int = 0
    search_ms: int | None = None
    """The search time the player itself reported (``time`` of its last ``info``)."""


@dataclass
class Deadlines:
    """Seconds the arbiter waits for each answer of an external engine."""

    startup: float = 10.0
    ready: float = 5.0
    ping_every: float = 5.0
    """While a search without a clock runs: seconds between two ``isready`` checks."""
    move: float = MOVE_TIMEOUT
    """The longest a search without a clock (depth, nodes) may take before the player is
    forfeited with ``stall``: an engine that answers ``isready`` but never ``bestmove`` cannot
    hold a game for ever."""


class Player(ABC):
    """One player instance; it plays one game at a time."""

    def __init__(self, spec: PlayerSpec) -> None:
        self.spec = spec
        self.alive = False

    @property
    def name(self) -> str:
        """The display name."""
        return self.spec.name

    @abstractmethod
    async def start(self, game: games.Game) -> None:
        """Launch and greet the player.

        Raises:
            PlayerSpecError: the player cannot play at all (unknown bot, bad option, a game it
                does not play): a configuration error, not a forfeit.
            ForfeitError: it did not start or answer in time.
        """

    @abstractmethod
    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        """Prepare a new game (``key`` names it). ``seed`` is given to a bot with a ``Seed``
        option; ``secret_seed`` (not 0) to a built-in bot's ``SecretSeed``, over the private
        channel to its worker only: an external engine draws its own secrets. ``options``
        hold for this game only, after the spec's own (the next game sets its own again).

        Raises:
            ForfeitError: no answer in time, or the player is gone.
        """

    @abstractmethod
    async def go(self, request: GoRequest) -> Reply:
        """Ask for a decision.

        Raises:
            ForfeitError: crash, disconnect, stall or time-forfeit.
        """

    @abstractmethod
    async def close(self) -> None:
        """Let the player go (never raises)."""
