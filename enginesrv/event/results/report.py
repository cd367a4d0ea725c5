"""What ``enginesrv results`` reports of a stored event besides its pairings: the rating table
(``ratings``), the crosstable, how each player's games ended, and what the engines reported of
their searches (depth, nodes per second, time), read from the game records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import games
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.records import Record, RecordError
from enginesrv.event.play.sgf import stored_record_text
from enginesrv.event.results.files import MAX_RESULTS_RECORD_BYTES
from enginesrv.event.results.ratings import Encounter, RatingTable, fit_ratings
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.standings import PairingResult
from enginesrv.event.results.wording import cut, quoted
from enginesrv.safefiles import FileRefusedError

FORFEITS = frozenset(("time-forfeit", "illegal-move", "crash", "disconnect", "stall"))
"""Reasons a player lost by the arbiter's hand for what it did (or failed to do)."""
ADJUDICATIONS = frozenset(("resign", "score-adjudication", "repetition"))
"""Reasons the arbiter ended a game on the scores or the positions seen."""
MAX_PLIES = "max-plies"


def reason_kind(reason: str) -> str:
    """``rules`` (the game's own end), ``forfeit``, ``adjudication`` or ``max-plies``."""
    if reason in FORFEITS:
        return "forfeit"
    if reason in ADJUDICATIONS:
        return "adjudication"
    if reason == MAX_PLIES:
        return MAX_PLIES
    return "rules"


def pairing_ratings(
    pairings: Iterable[PairingResult], players: Sequence[str], *, anchor: str | None = None
) -> RatingTable:
    """The rating table of the games of ``pairings`` (``fit_ratings``)."""
    encounters = [
        Encounter(p.first, p.second, p.wins + p.draws + p.losses, p.wins + p.draws / 2)
        for p in pairings
    ]
    return fit_ratings(encounters, players, anchor=anchor)


Crosstable = dict[str, dict[str, list[int]]]
"""``{player: {opponent: [wins, draws, losses]}}``, both colours together."""


def crosstable(pairings: Iterable[PairingResult], players: Sequence[str]) -> Crosstable:
    table: Crosstable = {name: {} for name in players}
    for p in pairings:
        if p.wins + p.draws + p.losses == 0:
            continue
        mine = table.setdefault(p.first, {}).setdefault(p.second, [0, 0, 0])
        theirs = table.setdefault(p.second, {}).setdefault(p.first, [0, 0, 0])
        for got, counts in ((p.wins, (0, 2)), (p.draws, (1, 1)), (p.losses, (2, 0))):
            mine[counts[0]] += got
            theirs[counts[1]] += got
    return table


Reasons = dict[str, dict[str, int]]
"""``{player: {"win:REASON" | "draw:REASON" | "loss:REASON": count}}``."""


def reasons(rows: Iterable[GameRow], players: Sequence[str]) -> Reasons:
    """How each player's games ended: the result from its side, and the reason."""
    out: Reasons = {name: {} for name in players}
    for row in rows:
        for name, points in ((row.first, row.first_points), (row.second, 1 - row.first_points)):
            outcome = "win" if points == 1 else "loss" if points == 0 else "draw"
            key = f"{outcome}:{row.reason}"
            counts = out.setdefault(name, {})
            counts[key] = counts.get(key, 0) + 1
    for name in out:
        out[name] = dict(sorted(out[name].items(), key=lambda item: (-item[1], item[0])))
    return out


@dataclass
class SearchTotals:
    """What one player's moves reported, summed over the games whose records were read.

    ``moves`` counts the player's own decisions (book moves excluded); ``depth_moves``,
    ``nodes_moves`` those that reported a depth or a node count; ``ms`` the arbiter's measure
    of every move's time and ``nodes_ms`` that of the moves that reported nodes.
    """

    moves: int = 0
    ms: int = 0
    depth_moves: int = 0
    depth: int = 0
    nodes_moves: int = 0
    nodes: int = 0
    nodes_ms: int = 0
    games: int = 0

    def count(self, notes: dict[str, str]) -> None:
        """Add one move of the player's, by its annotations (``ms``, ``depth``, ``nodes``)."""
        ms = _int(notes.get("ms"))
        self.moves += 1
        self.ms += ms or 0
        depth = _int(notes.get("depth"))
        if depth:
            self.depth_moves += 1
            self.depth += depth
        nodes = _int(notes.get("nodes"))
        if nodes:
            self.nodes_moves += 1
            self.nodes += nodes
            self.nodes_ms += ms or 0

    @property
    def avg_depth(self) -> float | None:
        return self.depth / self.depth_moves if self.depth_moves else None

    @property
    def nps(self) -> float | None:
        return self.nodes * 1000 / self.nodes_ms if self.nodes_ms else None

    @property
    def ms_per_move(self) -> float | None:
        return self.ms / self.moves if self.moves else None

    def to_json(self) -> dict[str, object]:
        return {
            "games": self.games,
            "moves": self.moves,
            "avg_depth": self.avg_depth,
            "nps": self.nps,
            "ms_per_move": self.ms_per_move,
            "time": self.ms / 1000,
        }


@dataclass
class SearchReport:
    """Per player search totals, and the games whose records could not be read."""

    players: dict[str, SearchTotals]
    unread: list[str]


def search_report(
    rows: Iterable[GameRow], players: Sequence[str], game: games.Game, out_dir: Path
) -> SearchReport:
    """Sum each player's reported depth and nodes and its measured time per move, from the
    records' move annotations (``ms``, ``depth``, ``nodes``). Which seat played each move is
    found by replaying the record. A record that is missing or not a record is not counted
    (``unread`` says why), nor are the games whose records come once
    ``MAX_RESULTS_RECORD_BYTES`` have been read (one line of ``unread`` says how many).

    Raises:
        EventError: the store names a record that is refused (``files.read_stored_record``:
            not the one the event writes for that game, not a regular file of one link, too
            long): a crafted store.
    """
    totals = {name: SearchTotals() for name in players}
    unread: list[str] = []
    read = past = 0
    for row in rows:
        if row.record is None:
            continue
        if read >= MAX_RESULTS_RECORD_BYTES:
            past += 1
            continue
        loaded = _load(row, row.record, game, out_dir, unread)
        if loaded is not None:
            size, state, record = loaded
            read += size
            _tally(row, record, state, game=game, totals=totals, unread=unread)
    if past:
        unread.append(
            f"{past} game{'s' if past > 1 else ''}: not read, past the "
            f"{MAX_RESULTS_RECORD_BYTES:,} bytes of records results reads"
        )
    return SearchReport(totals, unread)


def _load(
    row: GameRow, name: str, game: games.Game, out_dir: Path, unread: list[str]
) -> tuple[int, games.State, Record] | None:
    """The size, start position and record of the game ``row`` (its record: ``name``); None,
    with the reason in ``unread``, when it cannot be read.

    Raises:
        EventError: the store names a record that is refused (``search_report``).
    """
    try:
        text, record = stored_record_text(out_dir, name, row.id)
        size = len(text.encode("utf-8"))
        del text
        return size, games.replay(game, record.start_position(), ()), record
    except FileRefusedError as exc:
        raise EventError(
            f"{out_dir / 'results.sqlite'}: game {row.id}: its record {quoted(name)} "
            f"{exc.reason}; it is not read"
        ) from None
    except FileNotFoundError:
        unread.append(f"{name}: missing")
    except OSError as exc:
        unread.append(f"{name}: cannot read file: {exc.strerror or exc}")
    except (RecordError, games.GameError) as exc:
        unread.append(cut(f"{name}: {exc}"))
    return None


def _tally(
    row: GameRow,
    record: Record,
    state: games.State,
    *,
    game: games.Game,
    totals: dict[str, SearchTotals],
    unread: list[str],
) -> None:
    """Add the moves of ``record`` (replayed from ``state``) to their players' ``totals``."""
    seen: set[str] = set()
    names = (row.p1, row.p2)
    for number, move in enumerate(record.moves, 1):
        seat = state.to_move()
        try:
            games.replay(game, state, (move.token,), first=number)
        except games.GameError as exc:
            unread.append(cut(f"{row.record}: {exc}"))
            break
        notes = dict(move.annotations)
        if "book" in notes:
            continue
        player = names[seat]
        seen.add(player)
        totals.setdefault(player, SearchTotals()).count(notes)
    for player in seen:
        totals[player].games += 1


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def report_json(
    config: EventConfig,
    standings: list[PairingResult],
    rows: list[GameRow],
    out_dir: Path,
    *,
    anchor: str | None = None,
) -> dict[str, object]:
    """``enginesrv results --json``: the game, the number of games, the pairings, and the
    ``ratings``, ``crosstable``, ``reasons`` and ``search`` of the event.

    Raises:
        RatingError: ``anchor`` is not a player with a finite rating.
    """
    names = player_names(standings)
    sprt = config.sprt_params()
    table = pairing_ratings(standings, names, anchor=anchor)
    search = search_report(rows, names, games.load(config.game), out_dir)
    return {
        "event": config.event,
        "game": config.game,
        "games": len(rows),
        "pairings": [p.to_json(sprt) for p in standings],
        "anchor": anchor,
        "ratings": [r.to_json() for r in table.ratings],
        "crosstable": crosstable(standings, names),
        "reasons": reasons(rows, names),
        "search": {name: search.players[name].to_json() for name in names},
        "search_unread": search.unread,
    }


def player_names(standings: Iterable[PairingResult]) -> list[str]:
    """The players of the pairings, in the order they first appear (the event's order)."""
    names: dict[str, None] = {}
    for p in standings:
        names.setdefault(p.first)
        names.setdefault(p.second)
    return list(names)
