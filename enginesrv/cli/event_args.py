"""The arguments of ``enginesrv match``, ``enginesrv tournament`` and ``enginesrv results``.

Flags follow cutechess-cli and fastchess where they have one (``--tc 40/60+0.6``, ``--st``,
``--games``, ``--rounds``, ``--repeat``, ``--openings``, ``--concurrency``, ``--sprt``). A flag
of a setting that a ``--config`` file may give too defaults to None (``action="store_true"``
ones included), so that ``event_config`` can tell a flag given from one left out.
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import games
from enginesrv.cli.common import Subcommands, port
from enginesrv.cli.event_config import setting_type
from enginesrv.event.play.controls import DEFAULT_MAX_PLIES
from enginesrv.event.runners.cluster import parse_listen

PLAYERS_HELP = (
    "bot:NAME[:OPTION=VALUE,...] (a built-in or plug-in bot, e.g. bot:alphabeta:Hash=64), "
    "cmd:COMMAND (an engine speaking the text protocol or UGI over stdio), or "
    "tcp:HOST:PORT (a running server); name=NAME: before any of them names the player, "
    "tc=TC: gives it a time control of its own (tc=1:00+1:bot:alphabeta)"
)
"""How a player is written, at the end of the description of ``match`` and ``tournament``."""


class _EventCommand(NamedTuple):
    name: str
    summary: str
    description: str
    players: str
    """The help of the PLAYER arguments."""


_MATCH = _EventCommand(
    name="match",
    summary="play a match between two players",
    description="Play a match between two players as a fair arbiter: every move checked with "
    "the rules, clocks kept on the arbiter's side, forfeits and adjudications recorded with "
    "their reason, colours alternated.",
    players="the two players",
)
_TOURNAMENT = _EventCommand(
    name="tournament",
    summary="play a round robin or gauntlet tournament",
    description="Play every pairing of the players (round robin), or the first player against "
    "each other one (--gauntlet).",
    players="two or more players",
)


def cluster_listen(text: str) -> tuple[str, int] | None:
    """``--cluster-listen``: ``[HOST][:PORT]`` or ``off``."""
    try:
        return parse_listen(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_event(sub: Subcommands, *, tournament: bool) -> argparse.ArgumentParser:
    """``enginesrv tournament``, or with ``tournament`` false ``enginesrv match``."""
    command = _TOURNAMENT if tournament else _MATCH
    p = sub.add_parser(
        command.name,
        help=command.summary,
        description=f"{command.description} {PLAYERS_HELP}.",
    )
    p.add_argument("game", metavar="GAME", nargs="?", help="game: " + ", ".join(games.available()))
    p.add_argument("players", metavar="PLAYER", nargs="*", help=command.players)
    _add_event_flags(p, tournament=tournament)
    return p


def add_results(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv results``."""
    p = sub.add_parser(
        "results",
        help="print the results of a match or tournament directory",
        description="Print the results stored in DIR/results.sqlite: per pairing W/D/L (from "
        "the first-named player's side), score, Elo with its 95% interval, LOS, the pentanomial "
        "of paired games, and the SPRT log-likelihood ratio when SPRT ran; a rating table of "
        "all players fitted by maximum likelihood over all games (docs/tournaments.md); the "
        "crosstable; how each player's games ended; and each player's search depth, nodes per "
        "second and time where the engines reported them.",
    )
    p.add_argument("dir", metavar="DIR", help="the --out directory of the event")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: pairings, ratings, crosstable, reasons, search",
    )
    p.add_argument(
        "--anchor",
        metavar="NAME",
        help="rate the player NAME at 0 Elo (without it the rated players average 0)",
    )
    return p


def _add_event_flags(p: argparse.ArgumentParser, *, tournament: bool) -> None:
    """The flags of ``match`` and ``tournament``, in the order ``--help`` lists them."""
    p.add_argument(
        "--config", metavar="FILE", help="a TOML file of settings (game, players, and the flags)"
    )
    add_game_flags(p)
    p.add_argument(
        "--rating-interval",
        metavar="N",
        type=setting_type("rating_interval", int),
        help="print the rating table after every N games (default 0: at the end only)",
    )
    if tournament:
        p.add_argument(
            "--gauntlet", action="store_true", default=None, help="the first player meets the rest"
        )
    _add_watch(p)


def add_game_flags(p: argparse.ArgumentParser, *, tune: bool = False) -> None:
    """The flags of how an event's games are played: limits, schedule, adjudication,
    engines' timeouts, containment, traces and cluster. ``tune``: those of ``enginesrv
    tune``, whose schedule is its own (no ``--games`` here, ``--rounds``, ``--repeat``
    nor ``--sprt``)."""
    _add_move_limits(p)
    _add_schedule(p, tune=tune)
    _add_adjudication(p, sprt=not tune)
    _add_engine_timeouts(p)
    _add_containment(p)
    _add_traces(p)
    _add_cluster(p)


def _add_move_limits(p: argparse.ArgumentParser) -> None:
    """What a player may take for a move: a clock, a time, a depth or a node count."""
    p.add_argument(
        "--tc",
        metavar="TC",
        help="each player's clock, [MOVES/]TIME[+INC] with TIME in seconds, M:SS or H:MM:SS "
        "and INC in seconds (e.g. 40/60+0.6, 2+0.05, 1:30+1), or inf (no clock); a player's "
        "own tc=TC: replaces it (and --st) for that player",
    )
    p.add_argument(
        "--st",
        metavar="SECONDS",
        type=setting_type("st", float),
        help="seconds per move (default 1, no other limit)",
    )
    p.add_argument(
        "--depth", metavar="D", type=setting_type("depth", int), help="search depth per move"
    )
    p.add_argument("--nodes", metavar="N", type=setting_type("nodes", int), help="nodes per move")


def _add_schedule(p: argparse.ArgumentParser, *, tune: bool) -> None:
    """Which games are played, in what order and how many at once, and where they are kept."""
    if not tune:
        p.add_argument(
            "--games",
            metavar="N",
            type=setting_type("games", int),
            help="games per pairing and round (default 2)",
        )
        p.add_argument(
            "--rounds", metavar="N", type=setting_type("rounds", int), help="rounds (default 1)"
        )
        p.add_argument(
            "--repeat",
            action="store_true",
            default=None,
            help="play each opening twice, colours swapped",
        )
    p.add_argument(
        "--openings", metavar="FILE", help="openings: 'moves TOKEN ...' or 'fen POSITION' lines"
    )
    p.add_argument(
        "--openings-order",
        choices=("sequential", "random"),
        help="take the openings in file order (default) or shuffled by --seed",
    )
    p.add_argument(
        "--concurrency",
        metavar="N",
        type=setting_type("concurrency", int),
        help="games played at once (default 1)",
    )
    p.add_argument(
        "--seed",
        metavar="S",
        type=setting_type("seed", int),
        help="the seed of every random choice (default 1)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="keep DIR/results.sqlite, DIR/games/ and DIR/logs/ (to resume)",
    )
    p.add_argument("--resume", action="store_true", help="finish the event stored in --out DIR")


def _add_adjudication(p: argparse.ArgumentParser, *, sprt: bool) -> None:
    """What the arbiter decides before the rules do (the SPRT for the event, a draw or a
    resignation for a game), the lateness it forgives, and the event's name in the records."""
    if sprt:
        p.add_argument(
            "--sprt", metavar="elo0=E0,elo1=E1,alpha=A,beta=B", help="stop at an SPRT decision"
        )
    p.add_argument(
        "--max-plies",
        metavar="N",
        type=setting_type("max_plies", int),
        help=f"adjudicate a draw after N plies (default {DEFAULT_MAX_PLIES})",
    )
    p.add_argument(
        "--repetitions",
        metavar="N",
        type=setting_type("repetitions", int),
        help="a draw when a position occurs N times",
    )
    p.add_argument(
        "--resign", metavar="movecount=N,score=CP", help="resign on a low score held N moves"
    )
    p.add_argument(
        "--draw", metavar="movenumber=N,movecount=N,score=CP", help="a draw on level scores"
    )
    p.add_argument(
        "--timemargin",
        metavar="MS",
        type=setting_type("timemargin", int),
        help="lateness forgiven on a clock (default 0)",
    )
    p.add_argument("--event", metavar="NAME", help="the event name written into the records")


def _add_engine_timeouts(p: argparse.ArgumentParser) -> None:
    """How long an engine may take to start, to be ready, and for a move without a clock."""
    p.add_argument(
        "--startup-timeout",
        metavar="SECONDS",
        type=setting_type("startup_timeout", float),
        help="wait for ugiok (default 10)",
    )
    p.add_argument(
        "--ready-timeout",
        metavar="SECONDS",
        type=setting_type("ready_timeout", float),
        help="wait for readyok (default 5)",
    )
    p.add_argument(
        "--move-timeout",
        metavar="SECONDS",
        type=setting_type("move_timeout", float),
        help="without a clock (--depth, --nodes), the longest one move may take before the "
        "player is forfeited with stall (default 60)",
    )


def _add_containment(p: argparse.ArgumentParser) -> None:
    """What the cmd: engines may see and reach (bubblewrap)."""
    p.add_argument(
        "--isolate",
        action="store_true",
        default=None,
        help="run each cmd: engine under bubblewrap (bwrap): the file system read-only, its "
        "own /proc, a private empty /tmp, /var/tmp, /dev/shm and TMPDIR, no view of the "
        "event's directory, and no network",
    )
    p.add_argument(
        "--isolate-network",
        action="store_true",
        default=None,
        help="with --isolate: keep the host's network for the engines",
    )
    p.add_argument(
        "--no-contain",
        action="store_true",
        default=None,
        help="in a game with hidden information (yinyang), run the cmd: engines as they are; "
        "by default they run as under --isolate but with the network, where bubblewrap can",
    )


def _add_traces(p: argparse.ArgumentParser) -> None:
    """What is kept of the engines' conversation and logs."""
    p.add_argument(
        "--debug",
        action="store_true",
        default=None,
        help="trace every line sent to and read from each cmd: and tcp: engine, time-stamped, "
        "into DIR/logs/game-NNNNN-pS-NAME.trace once each game is over (without --out, into a "
        "temporary directory named on stderr)",
    )
    p.add_argument(
        "--log-cap",
        metavar="MIB",
        type=setting_type("log_cap", int),
        help="keep at most MIB mebibytes of each cmd: engine's standard error, and of each "
        "--debug trace, per game; the rest is left out, and the log says where it was cut "
        "(default 64)",
    )


def _add_cluster(p: argparse.ArgumentParser) -> None:
    """Where the games are played when not here: a Dask cluster."""
    p.add_argument(
        "--cluster",
        metavar="tcp://HOST:PORT",
        default=None,
        help="play the games on the workers of the Dask scheduler at this address, as many at "
        "once as it has worker threads; this machine keeps the results, records and display "
        "(docs/distributed.md; needs the distributed extra)",
    )
    p.add_argument(
        "--cluster-listen",
        metavar="[HOST][:PORT]|off",
        type=cluster_listen,
        default=argparse.SUPPRESS,
        help="with --cluster: where the workers send each game's result straight back (default: "
        "this machine's address on the way to the scheduler, any free port); off: the results "
        "come through Dask, a few milliseconds later each",
    )


def _add_watch(p: argparse.ArgumentParser) -> None:
    """The page to watch the event on (``--web``)."""
    p.add_argument(
        "--web",
        metavar="PORT",
        type=port,
        default=None,
        help="serve a page to watch the games live and replay the finished ones on PORT (0: "
        "any free port), and their feed on /events; prints 'web http://HOST:PORT/' first "
        "(docs/web.md; needs the web extra)",
    )
    p.add_argument(
        "--web-host", metavar="HOST", default="127.0.0.1", help="the address of --web (127.0.0.1)"
    )
