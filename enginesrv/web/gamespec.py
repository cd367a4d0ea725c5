"""The address of a refereed game (``/ws?game=yoxii&opponent=bot:random&...``, docs/web.md):
what it may ask for (``GameSpec``) and its reading, field by field (``parse_game_spec``)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

import games
from enginesrv.event.play.bot_player import check_bot
from enginesrv.event.play.controls import TimeControl
from enginesrv.event.play.players import PlayerSpecError, parse_player
from enginesrv.serve.settings import MAX_CLOCK, MAX_MOVETIME

HUMAN = "human"
INVITE = "invite"
"""The opponent of a game between two pages: a person who opens the invite's link."""
DEFAULT_MOVETIME = 1000
"""Milliseconds a bot is given per decision in a game without a clock."""
MIN_CLOCK_MS = 1000
"""The least time a refereed game's clock may start with: less, and the bot (which keeps back
``BOT_OVERHEAD_MS`` and a trip to its worker) would lose on time before it could move."""
PAGE_OPTIONS = ("Depth", "Samples", "Quiescence", "Aspiration", "Level")
"""The bot options a refereed game's address may set: how strong the bot plays, nothing more.
The others are the server's: the seeds bear on the bot's secrets (a page that chose the seed
of the bot's hidden decisions could make them again), and ``Hash``, ``Threads`` and the like on
the server's memory and workers, which the server shares out itself."""
FIELDS = {"game", "opponent", "side", "tc", "movetime", "position"}


class GameSpecError(ValueError):
    """A refereed game's address cannot be used; the message names the field and why."""


@dataclass(frozen=True)
class GameSpec:
    """What a refereed game's address asks for (``/ws?game=yoxii&opponent=bot:random&...``)."""

    game: str
    opponent: str = HUMAN
    """``human`` (two people at one screen), ``invite`` (two people at two pages) or a
    ``bot:NAME[:OPTION=VALUE,...]`` player."""
    side: int = games.P1
    """The person's seat against a bot, or the inviter's in the first game (0 = p1)."""
    control: TimeControl | None = None
    movetime: int = DEFAULT_MOVETIME
    start: str | None = None
    """A position string to start from (None: the game's start position)."""

    @property
    def against_bot(self) -> bool:
        return self.opponent not in (HUMAN, INVITE)


def parse_game_spec(
    query: str, *, max_movetime: int = MAX_MOVETIME, max_clock: int = MAX_CLOCK, external: str = ""
) -> GameSpec | None:
    """The game asked for by a ``/ws`` address's query string; None when it asks for none
    (a plain protocol session). ``max_movetime`` and ``max_clock`` are the server's limits
    (ms; 0: none), which a refereed game's times keep to as a session's do. ``external``:
    the kind of the players a page may challenge here (``ladder`` takes ``ladder:NAME``,
    whose name is the challenges' to judge: ``enginesrv.web.challenge``).

    Raises:
        GameSpecError: a field that cannot be used (the message says which and why).
    """
    fields = dict(parse_qsl(query, keep_blank_values=True))
    if "game" not in fields and "opponent" not in fields:
        return None
    unknown = sorted(set(fields) - FIELDS)
    if unknown:
        raise GameSpecError(f"unknown field {unknown[0]!r}: the fields are {', '.join(FIELDS)}")
    name = fields.get("game", "")
    try:
        game = games.load(name)
    except games.GameError as exc:
        raise GameSpecError(f"game {name!r}: {exc}") from None
    opponent = fields.get("opponent", HUMAN) or HUMAN
    if opponent not in (HUMAN, INVITE) and not (external and opponent.startswith(external + ":")):
        _check_opponent(opponent, game)
    side_text = fields.get("side", "p1")
    if side_text not in ("p1", "p2"):
        raise GameSpecError(f"side {side_text!r}: write p1 or p2")
    control = _control(fields.get("tc", ""), max_clock)
    movetime = _movetime(fields.get("movetime", str(DEFAULT_MOVETIME)), max_movetime)
    start = fields.get("position") or None
    if start is not None:
        _check_start(start, game, between_people=opponent == INVITE)
    return GameSpec(game.name, opponent, 0 if side_text == "p1" else 1, control, movetime, start)


def _check_opponent(opponent: str, game: games.Game) -> None:
    """Refuse a bot the page may not play against (or not as it asks)."""
    try:
        spec = parse_player(opponent)
    except PlayerSpecError as exc:
        raise GameSpecError(str(exc)) from None
    if spec.kind != "bot":
        raise GameSpecError(f"opponent {opponent!r}: write human, invite or bot:NAME[:OPTIONS]")
    if spec.tc is not None:
        raise GameSpecError(f"opponent {opponent!r}: the tc field sets the clock, not tc=")
    _check_page_options(spec.options)
    try:
        check_bot(spec, game.name)
    except PlayerSpecError as exc:
        raise GameSpecError(str(exc)) from None


def _check_page_options(options: tuple[tuple[str, str], ...]) -> None:
    """Refuse a bot option a page may not set (``PAGE_OPTIONS``)."""
    allowed = {name.lower() for name in PAGE_OPTIONS}
    for key, _ in options:
        if key.lower() not in allowed:
            raise GameSpecError(
                f"opponent: option {key!r} is the server's to set; a page may set "
                f"{', '.join(PAGE_OPTIONS)}"
            )


def _control(text: str, max_clock: int) -> TimeControl | None:
    """The clock of the ``tc`` field (None: no clock)."""
    tc = text.replace(" ", "+")  # a "+" left unescaped in an address
    if not tc or tc == "none":
        return None
    try:
        control = TimeControl.parse(tc)
    except ValueError as exc:
        raise GameSpecError(str(exc)) from None
    if control.infinite:
        return None  # no clock, as with none
    if control.moves:
        raise GameSpecError(f"time control {tc!r}: write SECONDS[+INCREMENT]")
    if control.base_ms < MIN_CLOCK_MS:
        raise GameSpecError(
            f"time control {tc!r}: at least {MIN_CLOCK_MS // 1000} s, or the bot could not "
            "move in time"
        )
    if max_clock and max(control.base_ms, control.inc_ms) > max_clock:
        raise GameSpecError(
            f"time control {tc!r}: over the server's limit of {max_clock // 1000} s on a "
            "clock (limit clock)"
        )
    return control


def _movetime(text: str, max_movetime: int) -> int:
    """The bot's time per decision of the ``movetime`` field (ms)."""
    most = max_movetime or 3_600_000
    if not text.isdigit() or len(text) > 9 or not 0 < int(text) <= most:
        raise GameSpecError(
            f"movetime {text[:20]!r}: write milliseconds, 1 to {most} (limit movetime)"
        )
    return int(text)


def _check_start(start: str, game: games.Game, *, between_people: bool) -> None:
    """Refuse a start position that is not a full position of a game going on, or, for a game
    between two pages, one that holds a secret (the inviter would know the other's)."""
    # quoted short: a page is told the reason in a close frame, which holds 123 bytes
    shown = repr(start if len(start) <= 40 else start[:40] + "...")
    try:
        state = game.state_from_string(start)
    except games.InvalidPositionError as exc:
        raise GameSpecError(f"position {shown}: {exc.reason}") from None
    if state.is_terminal():
        raise GameSpecError(f"position {shown}: the game is over there")
    if state.is_view():
        raise GameSpecError(
            f"position {shown}: a view (it leaves something unknown); a refereed game starts "
            "from a full position"
        )
    whole = state.to_string()
    if between_people and any(state.view(seat).to_string() != whole for seat in (0, 1)):
        raise GameSpecError(
            f"position {shown}: it holds what a player keeps secret (laws written); a game "
            "between two pages starts before, so that each player writes their own"
        )
