"""An analysed game: each ply judged (``judge``) from what the searches found, written back
into its record as annotations, and summed up per player.

Annotations added to each move (docs/tournaments.md, "Analysing games"): ``score=`` the best
line's score for the mover (``cp:35``, ``win:7``, ``loss:4``, as the arbiter writes scores),
``best=`` its first move, ``pv=`` the line, its tokens joined by ``PV_SEPARATOR`` (a character
no game's notation uses), ``loss=`` the move's loss in expected-score points, and ``mark=``
(``?!``, ``?``, ``??``) when it is large enough. A ``score=`` the record already had (the
playing engine's own) is kept as ``engine_score=``; annotations the analysis writes replace
those of an earlier analysis. The moves and headers are kept as they were, so the record
replays as before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bots.engine import Score
from enginesrv.analyse.judge import PlayerSummary, Verdict, expected, summarise, verdict
from enginesrv.analyse.plies import Game
from enginesrv.analyse.search import Found
from enginesrv.event.play.records import Record, RecordMove

PV_SEPARATOR = "~"
"""Joins the tokens of a ``pv=`` annotation: no game's notation has it (nor white space)."""
OWN_SCORE = "engine_score"
"""The key a record's own ``score=`` moves to."""
WRITTEN = ("score", "best", "pv", "loss", "mark")
"""The annotations the analysis writes."""


@dataclass(frozen=True, slots=True)
class Judged:
    """One ply: what its search found (None: it failed) and the verdict on the move played
    (None when what it left is unknown: the search after it failed, or the record stops
    before the game's end)."""

    found: Found | None
    verdict: Verdict | None


def score_text(score: Score) -> str:
    return f"{score.kind}:{score.value}"


def judge_game(game: Game, found: dict[str, Found], scale: float) -> list[Judged]:
    """Each ply of ``game`` judged from ``found`` (by position), with the evaluation's
    ``scale`` (``judge.expected``)."""
    plies = game.plies
    out: list[Judged] = []
    for i, ply in enumerate(plies):
        here = found.get(ply.position)
        after: float | None = None
        if i + 1 < len(plies):
            following = plies[i + 1]
            there = found.get(following.position)
            if there is not None:
                worth = expected(there.score, scale)
                after = worth if following.mover == ply.mover else 1.0 - worth
        elif game.outcome is not None:
            seat = game.outcome.winner_seat
            after = 0.5 if seat is None else 1.0 if seat == ply.mover else 0.0
        judged = None
        if here is not None and after is not None:
            judged = verdict(expected(here.score, scale), after)
        out.append(Judged(here, judged))
    return out


def annotate(record: Record, judged: list[Judged]) -> Record:
    """``record`` with each move's analysis in its annotations (module docstring)."""
    moves: list[RecordMove] = []
    for move, each in zip(record.moves, judged, strict=True):
        analysed = any(key == "best" for key, _ in move.annotations)
        notes = [
            (OWN_SCORE if key == "score" else key, value)
            for key, value in move.annotations
            # an earlier analysis's are replaced; a record's own score= is the engine's
            if key not in WRITTEN or (key == "score" and not analysed)
        ]
        if each.found is not None:
            found = each.found
            notes += [
                ("score", score_text(found.score)),
                ("best", found.best),
                ("pv", PV_SEPARATOR.join(found.pv or (found.best,))),
            ]
        if each.verdict is not None:
            notes.append(("loss", f"{each.verdict.loss:.1f}"))
            if each.verdict.mark is not None:
                notes.append(("mark", each.verdict.mark))
        moves.append(replace(move, annotations=_unique(notes)))
    return Record(dict(record.headers), moves, list(record.comments), record.line)


def _unique(notes: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """One annotation per key, the last written winning, in the order first written."""
    last = dict(notes)
    seen: list[str] = []
    for key, _ in notes:
        if key not in seen:
            seen.append(key)
    return tuple((key, last[key]) for key in seen)


def players_of(record: Record) -> tuple[str, str]:
    """The players' names from the record's ``P1`` and ``P2`` headers (``p1``, ``p2``
    without them)."""
    return record.headers.get("P1") or "p1", record.headers.get("P2") or "p2"


def summaries(
    games: list[tuple[Record, Game, list[Judged]]],
) -> list[PlayerSummary]:
    """Each player's moves over ``games``, judged, summed up (by name; in order of first
    appearance)."""
    verdicts: dict[str, list[Verdict]] = {}
    for record, game, judged in games:
        names = players_of(record)
        for ply, each in zip(game.plies, judged, strict=True):
            mine = verdicts.setdefault(names[ply.mover], [])
            if each.verdict is not None:
                mine.append(each.verdict)
    return [summarise(name, found) for name, found in verdicts.items()]
