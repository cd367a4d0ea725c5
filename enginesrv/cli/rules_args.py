"""The arguments of the rules tools: ``perft``, ``moves``, ``show``, ``replay``, ``export`` and
``bench``. Each ``add_*`` adds its command's parser to the subcommands and returns it; the
command's handler (``enginesrv.cli.rules``, ``enginesrv.cli.export``) is set by
``build_parser``."""

from __future__ import annotations

import argparse

import games
from enginesrv.cli.common import Subcommands, natural, positive


def _game_help() -> str:
    return "game name: " + ", ".join(games.available())


def _add_position_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", metavar="GAME", help=_game_help())
    p.add_argument(
        "--pos",
        metavar="POSITION",
        help="start from this position string (quote it) instead of the start position",
    )
    p.add_argument(
        "--moves",
        metavar="MOVE",
        nargs="+",
        default=[],
        help="move tokens to play first, each checked for legality",
    )


def add_perft(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv perft``."""
    p = sub.add_parser(
        "perft",
        help="count the positions DEPTH plies ahead (rules test)",
        description="Count the leaf nodes DEPTH plies below a position, one ply per decision. "
        "The count is the last line of stdout; with --divide a 'MOVE COUNT' line per legal move "
        "comes first. Timing goes to stderr.",
    )
    _add_position_args(p)
    p.add_argument("depth", metavar="DEPTH", type=natural, help="plies to look ahead (>= 0)")
    p.add_argument("--divide", action="store_true", help="print the count below each root move")
    return p


def add_moves(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv moves``."""
    p = sub.add_parser(
        "moves",
        help="list the legal move tokens of a position",
        description="Print the legal move tokens of a position, one per line, sorted.",
    )
    _add_position_args(p)
    return p


def add_show(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv show``."""
    p = sub.add_parser(
        "show",
        help="draw a position with its side to act, phase and counters",
        description="Draw the board with coordinates, and print the side to act, the phase, "
        "the game's counters, the position string and, once the game is over, the outcome.",
    )
    _add_position_args(p)
    return p


def add_replay(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv replay``."""
    p = sub.add_parser(
        "replay",
        help="replay game records, checking every move",
        description="Replay a game record (the enginesrv record format, or a boardspace .sgf for "
        "Yinsh), checking every move, and print the final position and outcome. A bad record "
        "stops at its first bad move, with the move's number and the reason. A file of several "
        "records (as 'enginesrv export' writes) is checked game by game, each in a block "
        "headed 'game K (line L)', then 'checked N games, B bad'; the error names the first "
        "bad game and its line.",
    )
    p.add_argument("game", metavar="GAME", help=_game_help())
    p.add_argument("file", metavar="FILE", help="the record file (one record or many)")
    p.add_argument(
        "--game",
        dest="pick",
        metavar="K",
        type=positive,
        help="only the K-th game of a file of several records (1 = the first)",
    )
    shown = p.add_mutually_exclusive_group()
    shown.add_argument(
        "--ply",
        metavar="N",
        type=natural,
        help="also draw the board after ply N (0: the start) of each game, as 'show' does",
    )
    shown.add_argument(
        "--step", action="store_true", help="also draw the board after every ply of each game"
    )
    return p


def add_export(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv export``."""
    p = sub.add_parser(
        "export",
        help="write all games of an event into one record file",
        description="Write the record of every finished game of a match or tournament "
        "(DIR/results.sqlite and DIR/games/) into one file, in game order, one record after "
        "another, each beginning with its '# Game:' header; 'enginesrv replay' reads it back. "
        "FILE is replaced if it exists; nothing is written when the export fails. A game whose "
        "record is missing or unreadable fails the export, naming the game, unless "
        "--skip-missing.",
    )
    p.add_argument("dir", metavar="DIR", help="the --out directory of the event")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        required=True,
        help="the file to write ('-': standard output)",
    )
    p.add_argument(
        "--skip-missing",
        action="store_true",
        help="leave out games whose record is missing or unreadable, with a warning on stderr "
        "for each",
    )
    return p


def add_bench(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv bench``."""
    p = sub.add_parser(
        "bench",
        help="benchmark the search (default) or the rules (--rules)",
        description="Search fixed positions of each game with alphabeta at a fixed depth and "
        "print nodes, time and nodes/s per position, and whether the compiled search or the "
        "Python reference searched (ENGINESRV_PURE_PYTHON=1 chooses the reference); with "
        "--rules, run fixed perft positions "
        "and seeded random playouts instead (each game's playouts line says how many games were "
        "played to their end by the rules and how many stopped at the turn cap). The last "
        "line is 'bench: nodes N time MS nps R'; "
        "its node total is a signature that changes only when the search, the evaluations or "
        "the rules change.",
    )
    p.add_argument(
        "--game",
        metavar="GAME",
        action="append",
        help="only this game (repeatable); default: every game with bench positions",
    )
    p.add_argument("--depth", metavar="D", type=positive, help="search depth for every position")
    p.add_argument("--rules", action="store_true", help="benchmark the rules engines instead")
    p.add_argument(
        "--deep", action="store_true", help="with --rules: include the deep perft targets"
    )
    p.add_argument(
        "--playouts",
        metavar="N",
        type=natural,
        default=200,
        help="with --rules: random games per game (default 200)",
    )
    return p
