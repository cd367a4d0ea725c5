"""What ``enginesrv results DIR`` says of a ladder's folder: for each game it plays, its
pairings, the rating table fitted over every game of its history (``ladder.standings.Board``:
the same fit, anchored as the ladder anchors it, so the figures are the ladder's own) and the
leaderboard. Read without writing, while the ladder runs too."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TextIO

from enginesrv.cli.display import write_table, write_tables
from enginesrv.event.results.wording import printable
from enginesrv.ladder.settings import MIN_GAMES, LadderSettings, read_settings
from enginesrv.ladder.standings import Board, Line
from enginesrv.ladder.store import read_rows


def ladder_boards(
    folder: Path, anchor: str | None = None, min_games: int = MIN_GAMES
) -> tuple[LadderSettings, dict[str, Board]] | None:
    """The settings and standings of the ladder in ``folder`` (``anchor``: another player
    rated at 0); None when it is no ladder's folder.

    Raises:
        LadderError: a damaged settings file or store.
    """
    settings = read_settings(folder)
    if settings is None:
        return None
    boards = {}
    for game in settings.games:
        board = Board(anchor or settings.anchor, min_games)
        boards[game] = board.add_all(read_rows(folder / game))
    return settings, boards


def _elo(line: Line) -> str:
    if line.elo is None:
        return "-"
    error = "" if line.error is None else f" +/- {line.error:.0f}"
    return f"{line.elo:+.0f}{error}"


def write_ladder_report(out: TextIO, settings: LadderSettings, boards: dict[str, Board]) -> None:
    """The report of a ladder (module docstring), every line printable.

    Raises:
        RatingError: an anchor asked for that has no finite rating.
    """
    text = io.StringIO()
    for game, board in boards.items():
        table = board.ratings()
        anchored = f"; rated from {table.anchor} at 0" if table.anchor else ""
        text.write(f"Ladder: game {game}; {board.games} games; tc={settings.tc}{anchored}\n\n")
        if not board.games:
            text.write("no game yet\n\n")
            continue
        write_tables(text, None, board.standings, anchor=table.anchor)
        text.write(f"\nleaderboard (rated after {board.min_games} games; form: newest last)\n")
        rows = [
            (line.player, _elo(line), str(line.games), f"{100 * line.score:.1f}%", line.form)
            for line in board.leaderboard()
        ]
        write_table(text, ("player", "elo", "games", "score", "form"), rows)
        text.write("\n")
    out.write("\n".join(printable(line) for line in text.getvalue().split("\n")))
