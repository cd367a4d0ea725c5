"""Where a ladder keeps its games (``enginesrv.ladder.store.Section``) and the standings made of
them (``enginesrv.ladder.standings.Board``): game numbers run on across seasons and across
runs, every row is read back as it was kept, a row names its players in name order with the
first one's points, each game's record is beside its season's store; the ratings are those
``enginesrv results DIR`` prints, and a player short of ``min_games`` is provisional."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from enginesrv.cli import main
from enginesrv.event.play.arbiter import GameResult
from enginesrv.event.play.outcome import Outcome, Termination
from enginesrv.event.play.records import Record, RecordMove, format_record
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import ResultsDB
from enginesrv.ladder import store
from enginesrv.ladder.settings import LadderSettings
from enginesrv.ladder.standings import Board, Line
from enginesrv.ladder.store import Seats, Section, read_rows, season_dirs

SETTINGS = LadderSettings(("yoxii",), "2+0.05", "house1")


def result(winner: int | None, plies: int = 3) -> GameResult:
    """A finished game: ``winner``'s seat (0: p1) by the rules, or a draw at the ply cap."""
    if winner is None:
        outcome = Outcome.draw(Termination.MAX_PLIES)
    else:
        outcome = Outcome(Termination.RULES, winner, "totem-blocked")
    record = Record(
        headers={"Game": "yoxii", "Result": outcome.result, "Reason": outcome.reason},
        moves=[RecordMove(token) for token in ("c3", "1@b2", "b3")[:plies]],
    )
    return GameResult(outcome, record, plies, 0.25 * plies, 0.125 * plies)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``enginesrv ARGV...`` in this process: its status, stdout and stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_game_ids_run_on_across_seasons_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seasons of three games: seven games fill seasons 1 and 2 and begin 3, numbered 1 to 7;
    a second run reads all seven back as they were kept, goes on in season 3 with 8 and 9,
    and begins season 4 with 10."""
    monkeypatch.setattr(store, "SEASON_GAMES", 3)
    section = Section(tmp_path, "yoxii", SETTINGS)
    assert section.open() == []
    kept = [section.keep(Seats("alice", "bob"), result(n % 2), (0, 0)) for n in range(7)]
    section.close()
    assert [(row.id, row.round) for row in kept] == [
        (1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (6, 2), (7, 3)
    ]  # fmt: skip
    folder = tmp_path / "yoxii"
    assert season_dirs(folder) == [(n, folder / f"season-{n}") for n in (1, 2, 3)]
    assert section.rows == kept
    again = Section(tmp_path, "yoxii", SETTINGS)
    assert again.open() == kept
    more = [again.keep(Seats("bob", "carol"), result(None), (0, 0)) for _ in range(3)]
    again.close()
    assert [(row.id, row.round) for row in more] == [(8, 3), (9, 3), (10, 4)]
    assert list(read_rows(folder)) == kept + more
    assert Section(tmp_path, "yoxii", SETTINGS).open() == kept + more
    for row in kept + more:
        games = folder / f"season-{row.round}" / "games"
        assert (games / f"game-{row.id:05d}.txt").is_file()
    assert sorted(p.name for p in (folder / "season-2" / "games").iterdir()) == [
        "game-00004.txt",
        "game-00005.txt",
        "game-00006.txt",
    ]


def test_a_full_last_season_is_followed_by_the_next_on_reopening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that ends with its last season exactly full: the next run's first game is the
    next number, in a new season."""
    monkeypatch.setattr(store, "SEASON_GAMES", 3)
    section = Section(tmp_path, "yoxii", SETTINGS)
    section.open()
    for _ in range(6):
        section.keep(Seats("alice", "bob"), result(0), (0, 0))
    section.close()
    again = Section(tmp_path, "yoxii", SETTINGS)
    assert [row.id for row in again.open()] == [1, 2, 3, 4, 5, 6]
    row = again.keep(Seats("alice", "bob"), result(1), (0, 0))
    again.close()
    assert (row.id, row.round) == (7, 3)
    assert (tmp_path / "yoxii" / "season-3" / "games" / "game-00007.txt").is_file()


def test_a_season_left_half_made_by_a_kill_does_not_stop_the_ladder(tmp_path: Path) -> None:
    """A run killed while it made a season's store (the first game's, here) leaves the
    season's folder without ``results.sqlite`` (its ``games/``, perhaps the store's
    temporary): the next run opens the ladder all the same, with no game lost (none was
    stored), and stores its first game as game 1."""
    season = tmp_path / "yoxii" / "season-1"
    (season / "games").mkdir(parents=True)
    (season / "results.sqlite.new").write_bytes(b"SQLite format 3\x00")
    section = Section(tmp_path, "yoxii", SETTINGS)
    assert section.open() == []
    row = section.keep(Seats("alice", "bob"), result(0), (0, 0))
    section.close()
    assert row.id == 1
    assert list(read_rows(tmp_path / "yoxii")) == [row]


def test_a_row_names_its_players_in_name_order(tmp_path: Path) -> None:
    """``first`` and ``second`` in the order of the names, ``p1`` and ``p2`` the seats,
    ``first_points`` from the first's side; ``pair`` the game's own number, ``pairing`` and
    ``opening`` 0; the record as the arbiter wrote it, under ``season-1/games/``; the
    season's store says which ladder it is of; a hidden-information game's seeds kept."""
    section = Section(tmp_path, "yoxii", SETTINGS)
    section.open()
    played = [
        (Seats("bob", "alice"), result(0)),
        (Seats("bob", "alice"), result(1)),
        (Seats("alice", "bob"), result(0, plies=2)),
        (Seats("carol", "bob"), result(None)),
    ]
    rows = [section.keep(seats, game, (0, 0)) for seats, game in played[:3]]
    rows.append(section.keep(*played[3], (11, 12)))
    section.close()
    assert rows[0] == GameRow(
        id=1, round=1, pairing=0, first="alice", second="bob", p1="bob", p2="alice", pair=1,
        opening=0, winner="p1", reason="totem-blocked", first_points=0.0, plies=3, wall=0.75,
        engine_time=0.375, record="games/game-00001.txt",
    )  # fmt: skip
    assert [(r.first, r.second, r.p1, r.winner, r.first_points) for r in rows] == [
        ("alice", "bob", "bob", "p1", 0.0),
        ("alice", "bob", "bob", "p2", 1.0),
        ("alice", "bob", "alice", "p1", 1.0),
        ("bob", "carol", "carol", "draw", 0.5),
    ]
    assert [(r.id, r.pair, r.plies, r.reason) for r in rows][2:] == [
        (3, 3, 2, "totem-blocked"),
        (4, 4, 3, "max-plies"),
    ]
    season = tmp_path / "yoxii" / "season-1"
    for row, (_, game) in zip(rows, played, strict=True):
        assert row.record == f"games/game-{row.id:05d}.txt"
        assert (season / row.record).read_text(encoding="utf-8") == format_record(game.record)
    db = ResultsDB(season / "results.sqlite", read_only=True)
    try:
        assert json.loads(db.get("ladder") or "") == {"game": "yoxii", "tc": "2+0.05"}
        assert db.get("seeds:4") == "[11, 12]"
        assert db.get("seeds:1") is None
    finally:
        db.close()


PLAYED = [
    # (p1, p2, winner seat or None for a draw)
    ("alice", "bob", 0),
    ("alice", "bob", 1),
    ("carol", "alice", None),
    ("carol", "house1", 0),
    ("house1", "carol", 0),
    ("bob", "house1", None),
    ("alice", "house1", 0),
    ("house1", "alice", 0),
    ("bob", "carol", 0),
    ("carol", "bob", 0),
    ("dave", "alice", None),
]


def ladder_folder(folder: Path) -> list[GameRow]:
    """A ladder's folder (its settings, anchored at house1) holding the games ``PLAYED``."""
    SETTINGS.kept(folder)
    section = Section(folder, "yoxii", SETTINGS)
    section.open()
    rows = [section.keep(Seats(p1, p2), result(won), (0, 0)) for p1, p2, won in PLAYED]
    section.close()
    return rows


def test_the_ratings_are_those_results_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The board's ratings of the stored games are, figure for figure, those of
    ``enginesrv results DIR --json``, anchored at the first house bot (0)."""
    rows = ladder_folder(tmp_path)
    board = Board("house1", 10).add_all(rows)
    table = board.ratings()
    assert table.anchor == "house1"
    elo = {rating.player: rating.elo for rating in table.ratings}
    assert elo["house1"] == 0.0
    assert sorted(elo) == ["alice", "bob", "carol", "dave", "house1"]
    code, out, err = run_cli(capsys, "results", str(tmp_path), "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert printed["ladder"] == {"games": ["yoxii"], "tc": "2+0.05"}
    report = printed["results"]["yoxii"]
    assert report["games"] == len(PLAYED) == board.games
    assert report["anchor"] == "house1"
    assert report["ratings"] == [rating.to_json() for rating in table.ratings]
    assert report["leaderboard"] == [line.to_json() for line in board.leaderboard()]
    assert report["pairings"] == [pairing.to_json() for pairing in board.standings]


def test_a_player_short_of_min_games_is_provisional(tmp_path: Path) -> None:
    """With ``min_games`` 3, dave (one game) is listed last with no rating, saying how many
    of the 3 he has played; the others are listed by rating with the table's figures; the
    form is each player's results in the order played."""
    rows = ladder_folder(tmp_path)
    board = Board("house1", 3).add_all(rows)
    lines = board.leaderboard()
    assert lines[-1] == Line("dave", None, None, 1, 0.5, "D", "provisional: 1 of 3 games")
    table = {rating.player: rating for rating in board.ratings().ratings}
    rated = [line for line in lines if line.elo is not None]
    assert [line.player for line in rated] == [
        r.player for r in board.ratings().ratings if r.player != "dave"
    ]
    for line in rated:
        rating = table[line.player]
        assert (line.elo, line.error, line.games, line.score) == (
            rating.elo,
            rating.error,
            rating.games,
            rating.score,
        )
    form = {line.player: line.form for line in lines}
    assert form == {"alice": "WLDWLD", "bob": "LWDWL", "carol": "DWLLW", "dave": "D",
                    "house1": "LWDLW"}  # fmt: skip
    six = Board("house1", 6).add_all(rows).leaderboard()
    assert [(line.player, line.elo is None) for line in six] == [
        ("alice", False),  # 6 games: rated
        ("bob", True),
        ("carol", True),
        ("house1", True),
        ("dave", True),
    ]


def test_results_lists_a_provisional_player(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``enginesrv results DIR`` (default ``min_games`` 10: everyone provisional here) lists
    each player's line with no rating, its games, score and form."""
    ladder_folder(tmp_path)
    code, out, err = run_cli(capsys, "results", str(tmp_path))
    assert code == 0, err
    assert out.startswith("Ladder: game yoxii; 11 games; tc=2+0.05; rated from house1 at 0\n")
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert lines["dave"] == ["dave", "-", "1", "50.0%", "D"]
    assert lines["alice"] == ["alice", "-", "6", "50.0%", "WLDWLD"]
