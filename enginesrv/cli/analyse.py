"""``enginesrv analyse``: every ply of a record, or of every game of an event, searched on the
worker pool and judged against the best line; the records written back annotated, and each
player's moves summed up (``enginesrv.analyse``; docs/tournaments.md, "Analysing games")."""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import trio

import games
from bots.eval import evaluator_for
from enginesrv.analyse.judge import PlayerSummary
from enginesrv.analyse.plies import BadRecordError, Game, plies_of
from enginesrv.analyse.report import Judged, annotate, judge_game, score_text, summaries
from enginesrv.analyse.search import Found, Limits, Timing, search_positions
from enginesrv.cli.common import CommandError, Subcommands, positive
from enginesrv.cli.display import duration
from enginesrv.event.play.records import Record, RecordError, format_record
from enginesrv.event.play.sgf import generate_records_file
from enginesrv.event.results.wording import printable

DEFAULT_MOVETIME = 500
MAX_RECORDS = 10_000
"""The most records one analysis reads (an event's, or a file's)."""


def add_analyse(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv analyse``."""
    p = sub.add_parser(
        "analyse",
        help="analyse every ply of game records, marking the mistakes",
        description="Search every position of a game record (a file of one or more), or of "
        "every game of an event directory (DIR/games/), on worker processes, several "
        "positions at a time; judge each move played against the best line by the drop of "
        "the mover's expected score (?! 10 points or more, ? 20, ?? 30); write each record "
        "back with score=, best=, pv=, loss= and mark= on its moves, and print each "
        "player's mean loss, accuracy and marks. With -o the results are kept as they come: "
        "the same command again goes on where a stopped one was. docs/tournaments.md, "
        "'Analysing games', defines the figures.",
    )
    p.add_argument("game", metavar="GAME", help="game name: " + ", ".join(games.available()))
    p.add_argument("source", metavar="RECORD|DIR", help="a record file, or an event directory")
    p.add_argument(
        "-o",
        "--out",
        metavar="PATH",
        help="where the annotated records go: a file for a record file (default: stdout), a "
        "directory for an event (default DIR/analysis); it also keeps the progress",
    )
    limit = p.add_mutually_exclusive_group()
    limit.add_argument(
        "--movetime",
        metavar="MS",
        type=positive,
        help=f"ms a position (default {DEFAULT_MOVETIME})",
    )
    limit.add_argument("--depth", metavar="N", type=positive, help="plies a position")
    p.add_argument(
        "--workers",
        metavar="N",
        type=positive,
        default=min(2, os.cpu_count() or 1),
        help="positions searched at once, each in a worker process (default 2)",
    )
    p.add_argument("--json", action="store_true", help="print the analysis as one JSON object")
    return p


@dataclass
class _Source:
    """The records analysed, each with where it came from and where it goes."""

    records: list[tuple[str, Record]] = field(default_factory=list)
    out_dir: Path | None = None
    out_file: Path | None = None


def cmd_analyse(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv analyse`` (module docstring)."""
    game = _game(args.game)
    limits = (
        Limits(depth=args.depth)
        if args.depth
        else Limits(movetime=args.movetime or DEFAULT_MOVETIME)
    )
    source = _source(Path(args.source), args.out, game)
    parsed = [(name, record, _plies(game, record, name)) for name, record in source.records]
    positions = [ply.position for _, _, g in parsed for ply in g.plies]
    store = _store_path(source)
    if source.out_dir is not None:
        try:
            source.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"{printable(str(source.out_dir))}: {exc.strerror or exc}") from None
    options: tuple[tuple[str, str | None], ...] = ()
    if game.hidden_information:
        options = (("SecretSeed", "1"),)  # the same samples every time: an analysis repeats
    progress = _Progress(err, len(set(positions)))
    timing = Timing()
    try:
        found = trio.run(
            lambda: search_positions(
                game.name, positions, limits, workers=args.workers, store=store,
                on_found=progress.tell, options=options, timing=timing,
            )
        )  # fmt: skip
    except OSError as exc:
        raise CommandError(f"the progress file: {exc}") from None
    progress.close()
    scale = evaluator_for(game.name).expectation_scale
    done = [(record, g, judge_game(g, found, scale)) for _, record, g in parsed]
    players = summaries(done)
    _write_records(source, parsed, done, out if not args.json else None)
    if args.json:
        report = _json(parsed, done, players, limits)
        report["seconds"] = {"workers": round(timing.ready, 3), "all": round(timing.total, 3)}
        out.write(json.dumps(report, indent=1) + "\n")
    else:
        _write_summary(out if source.out_file or source.out_dir else err, players, progress)
    if store is not None:
        store.unlink(missing_ok=True)  # everything is in the records now


def _game(name: str) -> games.Game:
    try:
        return games.load(name)
    except games.UnknownGameError as exc:
        raise CommandError(f"game {printable(name)!r}: {exc.reason}") from None


def _source(path: Path, out: str | None, game: games.Game) -> _Source:
    """The records of ``path`` (a file, or an event directory's games), checked to be of
    ``game``, and where the annotated ones go."""
    found = _Source()
    if path.is_dir():
        folder = path / "games" if (path / "games").is_dir() else path
        files = sorted(p for p in folder.iterdir() if p.suffix == ".txt" and p.is_file())
        if not files:
            raise CommandError(f"{printable(str(path))}: no game records (*.txt) there")
        for file in files[:MAX_RECORDS]:
            found.records += [(str(file), r) for r in _read(file)]
        found.out_dir = Path(out) if out else path / "analysis"
    else:
        found.records = [(str(path), r) for r in _read(path)]
        found.out_file = Path(out) if out else None
    for name, record in found.records:
        if record.game not in (None, game.name):
            raise CommandError(f"{printable(name)}: a record of {record.game}, not {game.name}")
    if not found.records:
        raise CommandError(f"{printable(str(path))}: no game record in it")
    return found


def _read(path: Path) -> list[Record]:
    try:
        out = []
        for record in generate_records_file(path):
            out.append(record)
            if len(out) > MAX_RECORDS:
                raise CommandError(f"{printable(str(path))}: more than {MAX_RECORDS} records")
        return out
    except RecordError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"{printable(str(path))}: {exc.strerror or exc}") from None


def _plies(game: games.Game, record: Record, name: str) -> Game:
    try:
        return plies_of(game, record, printable(name))
    except BadRecordError as exc:
        raise CommandError(str(exc)) from None


def _store_path(source: _Source) -> Path | None:
    """Where the results are kept as they come: beside the output (none for stdout)."""
    if source.out_dir is not None:
        return source.out_dir / "progress.jsonl"
    if source.out_file is not None:
        return source.out_file.with_name(source.out_file.name + ".progress.jsonl")
    return None


class _Progress:
    """A status line on a terminal: positions done of all, time, estimate of what is left."""

    def __init__(self, err: TextIO, total: int) -> None:
        self.err, self.total = err, total
        self.live = err.isatty()
        self.done = self.searched = self.failed = 0
        self.began = time.monotonic()

    def tell(self, position: str, found: Found | None) -> None:
        del position
        self.done += 1
        self.failed += found is None
        if not self.live:
            return
        spent = time.monotonic() - self.began
        eta = duration(spent / self.done * (self.total - self.done)) if self.done else "-"
        bar = "#" * (20 * self.done // max(1, self.total))
        self.err.write(f"\r\x1b[K[{bar:<20}] {self.done}/{self.total} positions, "
                       f"{duration(spent)}, eta {eta}")  # fmt: skip
        self.err.flush()

    def close(self) -> None:
        if self.live:
            self.err.write("\r\x1b[K")
            self.err.flush()


def _write_records(
    source: _Source,
    parsed: list[tuple[str, Record, Game]],
    done: list[tuple[Record, Game, list[Judged]]],
    out: TextIO | None,
) -> None:
    texts = [format_record(annotate(record, judged)) for record, _, judged in done]
    if source.out_dir is not None:
        source.out_dir.mkdir(parents=True, exist_ok=True)
        for (name, _, _), text in zip(parsed, texts, strict=True):
            _replace(source.out_dir / Path(name).name, text)
    elif source.out_file is not None:
        _replace(source.out_file, "\n".join(texts))
    elif out is not None:
        out.write("\n".join(texts))


def _replace(target: Path, text: str) -> None:
    temporary = target.with_name(f".{target.name}.{os.getpid()}.new")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise CommandError(
            f"{printable(str(target))}: cannot write: {exc.strerror or exc}"
        ) from None


def _write_summary(out: TextIO, players: list[PlayerSummary], progress: _Progress) -> None:
    out.write(
        f"{'player':<20} {'moves':>5} {'loss':>6} {'accuracy':>8} {'?!':>3} {'?':>3} {'??':>3}\n"
    )
    for p in players:
        out.write(
            f"{printable(p.player)[:20]:<20} {p.moves:>5} {p.mean_loss:>6.1f} {p.accuracy:>8.1f} "
            f"{p.marks['?!']:>3} {p.marks['?']:>3} {p.marks['??']:>3}\n"
        )
    if progress.failed:
        out.write(f"warning: {progress.failed} positions could not be searched\n")


def _json(
    parsed: list[tuple[str, Record, Game]],
    done: list[tuple[Record, Game, list[Judged]]],
    players: list[PlayerSummary],
    limits: Limits,
) -> dict[str, object]:
    out_games = []
    for (name, _, _), (_, game, judged) in zip(parsed, done, strict=True):
        plies = []
        for ply, each in zip(game.plies, judged, strict=True):
            entry: dict[str, object] = {
                "ply": ply.number,
                "mover": f"p{ply.mover + 1}",
                "move": ply.token,
            }
            if each.found is not None:
                entry.update(score=score_text(each.found.score), best=each.found.best,
                             pv=list(each.found.pv), depth=each.found.depth)  # fmt: skip
            if each.verdict is not None:
                entry.update(loss=round(each.verdict.loss, 2), mark=each.verdict.mark)
            plies.append(entry)
        out_games.append({"source": name, "plies": plies})
    return {
        "limits": limits.describe(),
        "games": out_games,
        "players": [p.to_json() for p in players],
    }
