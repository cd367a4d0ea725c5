"""What ``enginesrv results`` prints (``write_report``): a title, the standings tables, the
crosstable, how the games ended per player, and the engines' search figures."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from typing import TextIO

import games
from enginesrv.cli.display import write_table, write_tables
from enginesrv.event.config import EventConfig
from enginesrv.event.results.report import (
    MAX_PLIES,
    crosstable,
    player_names,
    reason_kind,
    reasons,
    search_report,
)
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.standings import PairingResult
from enginesrv.event.results.wording import printable

MAX_CROSSTABLE_PLAYERS = 32
"""The most players whose crosstable ``results`` prints: a table of N players is N lines of
N cells each as wide as the longest name, which for 1,000 players of 100-character names
would be 100 MB of text."""


def write_report(
    out: TextIO,
    config: EventConfig,
    standings: list[PairingResult],
    rows: list[GameRow],
    out_dir: Path,
    *,
    anchor: str | None = None,
) -> None:
    """What ``enginesrv results`` prints: a title, the tables of ``write_tables``, the
    crosstable, how the games ended per player, and the engines' search figures. Names and
    reasons come from the store: every line is ``printable``.

    Raises:
        RatingError: ``anchor`` is not a player with a finite rating.
        EventError: the store names a record that is refused (``report.search_report``).
    """
    text = io.StringIO()
    _write_report(text, config, standings, rows, out_dir, anchor=anchor)
    # split at line feeds only: splitlines would break a line at a name's \x1e or \u2028
    out.write("\n".join(printable(line) for line in text.getvalue().split("\n")))


def _write_report(
    out: TextIO,
    config: EventConfig,
    standings: list[PairingResult],
    rows: list[GameRow],
    out_dir: Path,
    *,
    anchor: str | None = None,
) -> None:
    """The report of ``write_report``, its lines as the store gives them."""
    names = player_names(standings)
    limits = config.move_limits().describe()
    out.write(f"Event: {config.event}; game {config.game}; {len(rows)} games; {limits}\n\n")
    write_tables(out, config.sprt_params(), standings, anchor=anchor)
    _write_crosstable(out, standings, names)
    _write_endings(out, reasons(rows, names), names)
    _write_search(out, config, rows, names, out_dir)


def _write_crosstable(out: TextIO, standings: list[PairingResult], names: list[str]) -> None:
    """The crosstable of an event of three players or more (with two, the pairing table is
    the whole of it), or a line saying why it is left out."""
    if len(names) > MAX_CROSSTABLE_PLAYERS:
        out.write(
            f"\ncrosstable: not shown for more than {MAX_CROSSTABLE_PLAYERS} players "
            f"({len(names)} here; results --json has it)\n"
        )
    elif len(names) > 2:
        table = crosstable(standings, names)
        out.write("\ncrosstable (wins-draws-losses of the row's player)\n")
        body = []
        for a in names:
            cells = (
                "-" if a == b else "-".join(map(str, table[a].get(b, [0, 0, 0]))) for b in names
            )
            body.append((a, *cells))
        write_table(out, ("player", *names), body)


ENDING_COLUMNS = (
    ("W", "win", ""),
    ("W:rules", "win", "rules"),
    ("W:forfeit", "win", "forfeit"),
    ("W:adj", "win", "adjudication"),
    ("D", "draw", ""),
    ("D:rules", "draw", "rules"),
    ("D:adj", "draw", "adjudication"),
    ("D:max-plies", "draw", MAX_PLIES),
    ("L", "loss", ""),
    ("L:rules", "loss", "rules"),
    ("L:forfeit", "loss", "forfeit"),
    ("L:adj", "loss", "adjudication"),
)
"""The columns of the table of how the games ended: heading, the result from the player's
side, and the kind of reason (``report.reason_kind``) counted; "" counts every reason."""


def _write_endings(out: TextIO, ends: dict[str, dict[str, int]], names: list[str]) -> None:
    """How each player's games ended (``report.reasons``): a table of the results by kind of
    reason, then a line per player giving each reason."""
    out.write("\nhow the games ended (W, D, L: by the rules, a forfeit, adjudication, max plies)\n")
    body = []
    for name in names:
        count: Counter[tuple[str, str]] = Counter()
        for key, n in ends.get(name, {}).items():
            outcome, _, reason = key.partition(":")
            count[(outcome, reason_kind(reason))] += n
            count[(outcome, "")] += n
        body.append((name, *(str(count[(outcome, kind)]) for _, outcome, kind in ENDING_COLUMNS)))
    write_table(out, ("player", *(heading for heading, _, _ in ENDING_COLUMNS)), body)
    for name in names:
        parts = []
        for outcome, label in (("win", "won"), ("draw", "drew"), ("loss", "lost")):
            got = [
                f"{key.partition(':')[2]} {n}"
                for key, n in ends.get(name, {}).items()
                if key.startswith(outcome + ":")
            ]
            if got:
                parts.append(f"{label} {', '.join(got)}")
        if parts:
            out.write(f"  {name}: {'; '.join(parts)}\n")


def _write_search(
    out: TextIO, config: EventConfig, rows: list[GameRow], names: list[str], out_dir: Path
) -> None:
    """What the engines reported of their searches, per player, read from the game records
    (``report.search_report``); the records that could not be read are named."""
    search = search_report(rows, names, games.load(config.game), out_dir)
    reported = [n for n in names if search.players[n].moves]
    if reported:
        out.write("\nsearch (as the engines reported it; time as the arbiter measured it)\n")
        body = []
        for name in reported:
            s = search.players[name]
            body.append(
                (
                    name,
                    str(s.moves),
                    "-" if s.avg_depth is None else f"{s.avg_depth:.1f}",
                    "-" if s.nps is None else f"{s.nps:,.0f}",
                    "-" if s.ms_per_move is None else f"{s.ms_per_move:.0f}",
                    f"{s.ms / 1000:.1f}",
                )
            )
        write_table(out, ("player", "moves", "avg depth", "nodes/s", "ms/move", "time s"), body)
    for problem in search.unread:
        out.write(f"  not counted: {problem}\n")
