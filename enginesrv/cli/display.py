"""How events are shown: the standings tables a match or tournament ends with and ``enginesrv
results`` begins with (``write_tables``), and the live progress of a running match or
tournament (``Display``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TextIO

from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.results.ratings import RatingTable
from enginesrv.event.results.report import pairing_ratings, player_names
from enginesrv.event.results.standings import PairingResult
from enginesrv.event.results.stats import SprtParams
from enginesrv.event.results.wording import result_words
from enginesrv.event.tournament import Finished


def _fmt_elo(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.1f}"


def _fmt_ci(value: float | None) -> str:
    if value is None or math.isnan(value) or math.isinf(value):
        return "inf"
    return f"{value:.1f}"


def write_table(
    out: TextIO, head: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (0,)
) -> None:
    """An aligned table: the columns ``left`` flush left, the others flush right."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        cells = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.write("  ".join(cells).rstrip() + "\n")


def write_tables(
    out: TextIO,
    sprt: SprtParams | None,
    standings: list[PairingResult],
    *,
    anchor: str | None = None,
) -> None:
    """The pairing table, the rating table and the SPRT line of an event whose SPRT is
    ``sprt`` (what a run ends with).

    Raises:
        RatingError: ``anchor`` is not a player with a finite rating.
    """
    rows = []
    for pairing in standings:
        s = pairing.summary(sprt)
        t = s.trinomial
        penta = "-" if s.pentanomial is None else " ".join(map(str, s.pentanomial.counts()))
        rows.append(
            (
                f"{pairing.first} vs {pairing.second}",
                *map(str, (t.wins, t.draws, t.losses, t.games)),
                f"{100 * t.score:.1f}%",
                _fmt_elo(s.estimate.elo),
                _fmt_ci(s.estimate.ci95),
                f"{100 * s.los:.1f}%",
                penta,
            )
        )
    head = ("pairing", "W", "D", "L", "games", "score", "elo", "+/-95%", "LOS", "pentanomial")
    write_table(out, head, rows)
    out.write("\n")
    write_ratings(out, pairing_ratings(standings, player_names(standings), anchor=anchor))
    if sprt is not None and standings:
        s = standings[0].summary(sprt)
        verdict = {"H0": "H0 accepted", "H1": "H1 accepted", None: "no decision yet"}[s.decision]
        llr = "-" if s.llr is None else f"{s.llr:.2f}"
        out.write(
            f"SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g} alpha={sprt.alpha:g} "
            f"beta={sprt.beta:g}: LLR {llr} [{sprt.lower:.2f}, {sprt.upper:.2f}] {verdict}\n"
        )


def write_ratings(out: TextIO, table: RatingTable) -> None:
    """The rating table, best first, with a note under it for each player left unrated."""
    anchored = f" (anchor {table.anchor} = 0)" if table.anchor else " (average 0)"
    out.write(f"ratings{anchored}\n")
    rows = []
    for rank, r in enumerate(table.ratings, 1):
        rows.append(
            (
                str(rank) if r.elo is not None else "-",
                r.player,
                "-" if r.elo is None else f"{r.elo:+.1f}",
                "-" if r.error is None else f"{r.error:.1f}",
                str(r.games),
                f"{r.points:g}",
                f"{100 * r.score:.1f}%",
            )
        )
    write_table(out, ("rank", "player", "elo", "+/-95%", "games", "points", "score"), rows, (1,))
    for r in table.ratings:
        if r.elo is None:
            out.write(f"  {r.player}: no rating: {r.note}\n")


class Display:
    """Progress: one line per finished game on stdout; on a terminal also a status line on
    stderr (games done, running score, Elo so far, ETA), redrawn after each game."""

    def __init__(self, out: TextIO, err: TextIO, event: PreparedEvent, *, live: bool) -> None:
        self.out = out
        self.err = err
        self.event = event
        self.config = event.config
        self.live = live
        self.where = ""
        """Where the games are played, when not here (``on the cluster ADDRESS``)."""
        self.status = ""
        self.first_done = 0
        self.done = 0
        self.total = 0

    def start(self, done: int, total: int) -> None:
        self.first_done = self.done = done
        self.total = total
        limits = self.event.limits.describe()
        what = "match" if len(self.config.players) == 2 else "tournament"
        resumed = f", resuming after {done} games" if done else ""
        self.err.write(
            f"{what} {self.config.game}: {' vs '.join(self.config.players)}, {total} games, "
            f"{limits}, {self.where or f'concurrency {self.config.concurrency}'}{resumed}\n"
        )
        self.err.flush()

    def _clear(self) -> None:
        if self.live:
            self.err.write("\r\x1b[K")
            self.err.flush()

    def game(self, done: Finished) -> None:
        self._clear()
        item, result = done.game, done.result
        pairing = done.pairings[item.pairing]
        words = result_words(result.outcome, done.names, result.detail)
        line = (
            f"game {item.id}/{done.total}: {done.names[0]} (p1) vs {done.names[1]} (p2): "
            f"{words}; {result.plies} plies"
        )
        if len(self.config.players) == 2:
            got = pairing.wins + pairing.draws / 2
            played = pairing.wins + pairing.draws + pairing.losses
            line += f"; score {pairing.first} {got:g} - {played - got:g} {pairing.second}"
        self.out.write(line + "\n")
        interval = self.config.rating_interval
        if interval and done.done % interval == 0 and done.done < done.total:
            self.out.write(f"\nafter {done.done} games:\n")
            names = player_names(done.pairings)
            write_ratings(self.out, pairing_ratings(done.pairings, names))
            self.out.write("\n")
        self.out.flush()
        summary = pairing.summary(done.sprt)
        self.done = done.done
        self.status = (
            f"[{done.done}/{done.total}] {pairing.first} vs {pairing.second}: "
            f"{summary.trinomial.wins}-{summary.trinomial.draws}-{summary.trinomial.losses} "
            f"elo {_fmt_elo(summary.estimate.elo)} +/- {_fmt_ci(summary.estimate.ci95)}"
            + (f" llr {summary.llr:.2f}" if summary.llr is not None else "")
        )
        self.tick(done.elapsed)

    def tick(self, elapsed: float) -> None:
        """Redraw the status line with the time so far and the estimate of what is left."""
        if not self.live:
            return
        played = self.done - self.first_done
        left = self.total - self.done
        eta = f"eta {duration(elapsed / played * left)}" if played else "eta -"
        status = self.status or f"[{self.done}/{self.total}]"
        self.err.write(f"\r\x1b[K{status} time {duration(elapsed)} {eta}")
        self.err.flush()

    def close(self) -> None:
        self._clear()
        self.status = ""
        self.live = False


def duration(value: float) -> str:
    seconds = max(0, round(value))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
