"""A session's settings: the configuration every session of a server shares
(``SessionConfig``), the options each session sets (``Bot``, ``Hash``, ``MoveOverhead``,
``Compat`` and the bot's own) with the handshake that lists them (``Options``; the ``Game``
option is the session's board's, ``enginesrv.serve.positions``), and the errors a refused
command raises (``RequestError``, and ``NoMoveError`` for a ``go`` with nothing to search)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import games
from bots.engine import Engine, OptionError
from bots.registry import BotError
from enginesrv import __version__
from enginesrv.search.pool import GRACE
from enginesrv.serve.catalog import bot_class, bot_games, bot_infos, bot_names, game_infos, supports
from enginesrv.serve.quotas import Metered
from protocol import messages as m
from protocol.errors import BAD_ARGUMENTS, BUSY, ErrorCode

MOVES_LISTED = 100_000
"""``query moves`` lists at most this many moves; beyond it, it reports the count."""
MOVES_ON_LOOP = 64
"""Moves of a ``position`` command replayed on the event loop; more are replayed on a thread
(``enginesrv.serve.offload``)."""
REPLY_OVERHEAD = {"text": len("response "), "msgpack": 64}
"""Bytes of a ``query moves`` reply besides its tokens (the keyword; msgpack's envelope)."""
TOKEN_OVERHEAD = {"text": 1, "msgpack": 3}
"""Bytes a token costs besides its text: a space, or at most a msgpack string header."""
MAX_MOVETIME = 60_000
"""Milliseconds a search may be given at most: the largest ``go movetime``, and the most a
search takes from a clock (the ``movetime`` limit)."""
MAX_CLOCK = 86_400_000
"""Milliseconds a ``go`` may say a clock shows at most (the ``clock`` limit): a day."""
MAX_PLIES = 4000
"""Plies a session's game may reach (the ``plies`` limit): above the longest game an event
plays (``--max-plies`` is at most 3000)."""
MAX_ANALYSES = 1024
"""Positions of ``analyse`` requests a session holds at once, waiting or searched (the
``analyses`` limit)."""
Framing = Literal["text", "msgpack"]


def too_many_moves(moves: int, most: int) -> str:
    """The text of error 305 for a ``position`` of ``moves`` moves over the limit ``most``."""
    return (
        f"position: {moves} moves are over the server's limit of {most} plies in a session's "
        "game (limit plies)"
    )


def too_many_analysed(ident: str, moves: int, most: int) -> str:
    """The text of error 305 for the position ``ident`` of an ``analyse`` of ``moves`` moves
    over the limit ``most``."""
    return (
        f"analyse: id {ident}: {moves} moves are over the server's limit of {most} plies "
        "(limit plies)"
    )


@dataclass(frozen=True)
class SessionConfig:
    """What every session of a server shares."""

    name: str = "enginesrv"
    author: str = "the enginesrv developers"
    default_game: str | None = None
    default_bot: str = "alphabeta"
    limits: tuple[m.LimitInfo, ...] = ()
    hash_limit: int | None = None
    """The largest ``Hash`` (MB) one search may have: the server's hash budget shared by its
    workers (None: only the option's own maximum)."""
    hash_budget: int | None = None
    """The server's hash budget (MB), named when a ``Hash`` over ``hash_limit`` is refused."""
    grace: float = GRACE
    """Seconds a search gets past its deadline before the worker is killed."""
    max_movetime: int = MAX_MOVETIME
    """The ``movetime`` limit (ms; 0: none)."""
    max_clock: int = MAX_CLOCK
    """The ``clock`` limit (ms; 0: none)."""
    max_plies: int = MAX_PLIES
    """The ``plies`` limit (0: none)."""
    max_analyses: int = MAX_ANALYSES
    """The ``analyses`` limit: positions a session holds at once."""
    analyses_at_once: int = 1
    """The positions of a session's analyses searched at once (its peer's share of the
    workers, ``peersearches``)."""
    auth: str | None = None
    """What a client must present before anything but the handshake (``"token"``: a server
    with ``--tokens``; None: nothing), as the handshake announces it."""
    searches: str = ""
    """Empty when the sessions' own bot searches; else why it does not (a server of rules
    only, such as a ladder's page): ``go`` and ``analyse`` are refused with it
    (``check_searches``), a refereed game's ``go`` is the referee's as ever."""


class RequestError(Exception):
    """A command is rejected: the reply to send instead of its result."""

    def __init__(self, reply: m.ErrorReply | m.InvalidMove) -> None:
        super().__init__(str(reply))
        self.reply = reply


def check_searches(config: SessionConfig, verb: str, runner: object = None) -> None:
    """Refuse ``verb`` (``go``, ``analyse``) on a server whose bot searches nothing, or for
    an account whose search time is used (``runner``: the session's, ``Metered`` then)."""
    if config.searches:
        raise request_error(BUSY, f"{verb}: {config.searches}")
    refusal = runner.refusal(verb) if isinstance(runner, Metered) else None
    if refusal is not None:
        raise request_error(BUSY, refusal)


def request_error(
    code: ErrorCode, message: str, data: dict[str, object] | None = None
) -> RequestError:
    return RequestError(m.ErrorReply(code.code, code.name, message, data))


class NoMoveError(Exception):
    """A ``go`` that has no move to search (the game is over, the side to act's moves are
    hidden): it is answered with its error and then its one best move, none (in msgpack both
    are one error response, with ``{move: nil}``)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.code} {code.name}: {message}")
        self.code = code
        self.message = message


DEFAULT_HASH = 64
MAX_HASH = 4096
MAX_LINES = 256
"""The most lines a search reports (``MultiPV``); a position with fewer moves reports one a
move."""


class Options:
    """A session's options but ``Game`` (its board's): ``Bot``, ``Hash``, ``MoveOverhead``,
    ``MultiPV``, ``Compat`` and the bot's own, with the handshake and the listing that show
    them. Every setter checks its value completely before changing anything."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config
        self.bot_name = config.default_bot
        self.bot_options: dict[str, str | None] = {}
        self.hash_mb = min(DEFAULT_HASH, config.hash_limit or DEFAULT_HASH)
        self.move_overhead = 50
        self.multipv = 1
        """The lines a search reports; above 1 only for a bot that offers analysis."""
        self.compat = False
        self.fresh_game = True
        """Whether the next search starts a new game for the bot (it forgets its tables)."""

    def handshake(self, game: games.Game | None) -> m.Handshake:
        """The answer to ``ugi``, ``game`` being the session's (the ``Game`` option's value)."""
        return m.Handshake(
            name=self.config.name,
            author=self.config.author,
            version=__version__,
            protocol=m.PROTOCOL_VERSION,
            games=game_infos(),
            bots=bot_infos(),
            options=self.specs(game),
            limits=self.config.limits,
            auth=self.config.auth,
        )

    def bot_class(self) -> type[Engine]:
        return bot_class(self.bot_name)

    def specs(self, game: games.Game | None, *, every: bool = False) -> tuple[m.OptionSpec, ...]:
        """The options of the session, ``Game`` (whose value is ``game``) first, then the
        bot's own: those a plain listing shows, or with ``every`` also its hidden ones (the
        evaluation weights) that bear on ``game`` (all of them before a game is set)."""
        specs = [
            m.OptionSpec(
                "Game",
                "combo",
                game.name if game is not None else "",
                vars=tuple(games.available()),
            ),
            m.OptionSpec("Bot", "combo", self.bot_name, vars=tuple(bot_names())),
            m.OptionSpec("Hash", "spin", str(self.hash_mb), 1, self._hash_max()),
            m.OptionSpec("MoveOverhead", "spin", str(self.move_overhead), 0, 5000),
            m.OptionSpec("MultiPV", "spin", str(self.multipv), 1, MAX_LINES),
            m.OptionSpec("Compat", "check", "true" if self.compat else "false"),
        ]
        listed = {spec.name.lower() for spec in specs}
        for option in self.bot_class().options:
            if option.name.lower() in listed:
                continue  # a session option (the bot's Hash is the session's), or a repeat
            if option.hidden and not every:
                continue
            if game is not None and option.games is not None and game.name not in option.games:
                continue  # another game's weight: set, but not shown
            listed.add(option.name.lower())
            current = self.bot_options.get(option.name)
            default = current if current is not None else option.text(option.default)
            specs.append(
                m.OptionSpec(
                    option.name,
                    option.type,
                    None if option.type == "button" else default,
                    option.min,
                    option.max,
                    option.vars,
                )
            )
        return tuple(specs)

    def set(self, name: str, value: str | None, game: games.Game | None) -> None:
        """``setoption name value`` for any option but ``Game``, ``game`` being the session's.

        Raises:
            RequestError: an unknown option or a bad value (error 101); nothing changed.
        """
        key = name.strip().lower()
        if key == "bot":
            self._set_bot(value, game)
        elif key == "hash":
            self.hash_mb = self._hash(name, value)
        elif key == "moveoverhead":
            self.move_overhead = self._spin(name, value, 0, 5000)
        elif key == "multipv":
            lines = self._spin(name, value, 1, MAX_LINES)
            if lines > 1 and not self.bot_class().analysis:
                raise request_error(
                    BAD_ARGUMENTS,
                    f"setoption: bot {self.bot_name!r} reports one line: MultiPV must be 1 "
                    "(the handshake's analysis lines name the bots that report more)",
                )
            self.multipv = lines
        elif key == "compat":
            lowered = (value or "").strip().lower()
            if lowered not in ("true", "false"):
                raise request_error(
                    BAD_ARGUMENTS, f"setoption: Compat is true or false, not {value!r}"
                )
            self.compat = lowered == "true"
        else:
            self._set_bot_option(name, value, game)

    def _set_bot(self, value: str | None, game: games.Game | None) -> None:
        chosen = next((b for b in bot_names() if b.lower() == (value or "").lower()), None)
        if chosen is None:
            raise request_error(
                BAD_ARGUMENTS,
                f"setoption: unknown bot {value!r}; known bots: {', '.join(bot_names())}",
            )
        try:
            plays = bot_games(chosen)
        except BotError as exc:
            raise request_error(BAD_ARGUMENTS, f"setoption: {exc}") from None
        if game is not None and plays is not None and game.name not in plays:
            raise request_error(
                BAD_ARGUMENTS, f"setoption: bot {chosen!r} does not play {game.name}"
            )
        self.bot_name = chosen
        self.bot_options = {}  # the new bot starts from its defaults, and so do its tables
        self.fresh_game = True
        if not bot_class(chosen).analysis:
            self.multipv = 1  # a bot that reports one line

    def _hash_max(self) -> int:
        limit = self.config.hash_limit
        return MAX_HASH if limit is None else max(1, min(MAX_HASH, limit))

    def _hash(self, name: str, value: str | None) -> int:
        number = self._spin(name, value, 1, MAX_HASH)
        if number > self._hash_max():
            budget = self.config.hash_budget
            whose = (
                f"the server's hash budget of {budget} MB leaves {self._hash_max()} MB "
                "to each search"
                if budget is not None
                else f"the most a search may have is {self._hash_max()} MB"
            )
            raise request_error(BAD_ARGUMENTS, f"setoption: Hash {number} MB is too much: {whose}")
        return number

    def _spin(self, name: str, value: str | None, low: int, high: int) -> int:
        try:
            number = int((value or "").strip())
        except ValueError:
            raise request_error(
                BAD_ARGUMENTS, f"setoption: {name} needs a whole number, not {value!r}"
            ) from None
        if not low <= number <= high:
            raise request_error(BAD_ARGUMENTS, f"setoption: {name} must be in {low}..{high}")
        return number

    def _set_bot_option(self, name: str, value: str | None, game: games.Game | None) -> None:
        options = self.bot_class().options
        option = next((o for o in options if o.name.lower() == name.strip().lower()), None)
        if option is None:
            known = ", ".join(spec.name for spec in self.specs(game))  # each once, as listed
            if any(o.hidden for o in options):
                known += "; `options all` lists the hidden ones too"
            raise request_error(
                BAD_ARGUMENTS, f"setoption: unknown option {name!r} (options: {known})"
            )
        try:
            parsed = option.parse(value)
        except OptionError as exc:
            raise request_error(BAD_ARGUMENTS, f"setoption: {exc}") from None
        # kept in its canonical spelling (a combo's own var, true/false, a plain number), so
        # `options` and the search see the value the option means, not the client's case
        keep = option.type in ("string", "button")
        self.bot_options[option.name] = value if keep else option.text(parsed)

    def job_options(self) -> tuple[tuple[str, str | None], ...]:
        """Every option of the bot with the value ``options`` reports, so the worker's bot
        searches with exactly those (a kept bot never keeps a value the session dropped): the
        hidden ones only when the session set them, since the worker gives every option the
        job leaves out its default."""
        options: dict[str, str | None] = {}
        for option in self.bot_class().options:
            if option.type == "button" or (option.hidden and option.name not in self.bot_options):
                continue
            if option.name == "Hash":
                options["Hash"] = str(self.hash_mb)
            elif option.name in self.bot_options:
                options[option.name] = self.bot_options[option.name]
            elif option.default is not None:
                options[option.name] = option.text(option.default)
        return tuple(sorted(options.items()))

    def new_game(self, game: games.Game) -> None:
        """The session plays a new game of ``game``: the bot starts afresh, and a bot that
        does not play the game gives way to one that does (the default, else any)."""
        self.fresh_game = True
        if not supports(self.bot_name, game.name):
            for name in [self.config.default_bot, *bot_names()]:
                if supports(name, game.name):
                    self.bot_name = name
                    self.bot_options = {}
                    break


def load_game(name: str, verb: str) -> games.Game:
    """The game called ``name``, matched without regard to case (a combo value).

    Raises:
        RequestError: no game is called so (error 101, naming ``verb``).
    """
    known = games.available()
    chosen = next((g for g in known if g.lower() == name.strip().lower()), None)
    if chosen is None:
        raise request_error(
            BAD_ARGUMENTS, f"{verb}: unknown game {name!r}; known games: {', '.join(known)}"
        )
    return games.load(chosen)
