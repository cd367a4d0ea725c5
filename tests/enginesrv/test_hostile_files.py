"""Crafted stores, records and files, as an attacker who can write an event's directory (or
hand a user a file to replay) would make them: ``results``, ``export`` and ``replay`` read
nothing outside the event's directory, never block on a FIFO or read a device, never read past
a cap, and end each in one line on stderr, exit status 2, naming the file or game and why."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from enginesrv.cli import main
from enginesrv.event.results import files
from enginesrv.event.results.wording import printable, quoted

ROOT = Path(__file__).resolve().parents[2]
SECRET = "TOP-SECRET-LINE the attacker wants printed"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def refused(code: int, out: str, err: str, *needles: str) -> None:
    """Exit status 2, one line on stderr holding every needle, no traceback, no secret."""
    assert code == 2, (out, err)
    assert err.count("\n") == 1, err
    assert err.endswith("\n")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    assert SECRET not in out + err
    assert "\x1b" not in out + err


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished match of two Yoxii games."""
    out = tmp_path_factory.mktemp("event") / "ev"
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:random", "bot:greedy",
         "--depth", "1", "--games", "2", "--out", str(out)],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def event(played: Path, tmp_path: Path) -> Path:
    """A copy of the match for the attacker to craft, and a secret file beside it."""
    (tmp_path / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    copy = tmp_path / "ev"
    shutil.copytree(played, copy)
    return copy


def sql(event: Path, statement: str, *args: object) -> None:
    db = sqlite3.connect(event / "results.sqlite")
    with db:
        db.execute(statement, args)
    db.close()


def store_record(event: Path, record: str) -> None:
    sql(event, "UPDATE games SET record = ? WHERE id = 1", record)


# -- record paths a store names ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ("{secret}", "is an absolute path, outside the event's directory"),
        ("games/../../secret.txt", "goes up with '..', outside the event's directory"),
        ("../secret.txt", "goes up with '..', outside the event's directory"),
        ("/etc/passwd", "is an absolute path, outside the event's directory"),
        ("/dev/zero", "is an absolute path, outside the event's directory"),
        ("results.sqlite", "is not a file of the event's games/ directory"),
        ("games/./game-00002.txt", "is not a file of the event's games/ directory"),
        ("games/sub/game-00001.txt", "is not a file of the event's games/ directory"),
        ("games/game-00002.txt", "is not the record the event writes for game 1"),
        ("games/game-1.txt", "is not the record the event writes for game 1"),
        ("games/secret.txt", "is not the record the event writes for game 1"),
    ],
)
@pytest.mark.parametrize("command", ["results", "export"])
def test_a_record_path_outside_the_events_games_is_refused_unread(
    capsys: pytest.CaptureFixture[str], event: Path, command: str, record: str, reason: str
) -> None:
    record = record.format(secret=event.parent / "secret.txt")
    store_record(event, record)
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
    refused(code, out, err, "game 1", f"its record {quoted(record)} {reason}")
    assert out == ""


@pytest.mark.parametrize("command", ["results", "export"])
def test_a_record_that_is_a_symbolic_link_out_is_refused(
    capsys: pytest.CaptureFixture[str], event: Path, command: str
) -> None:
    record = event / "games" / "game-00001.txt"
    record.unlink()
    record.symlink_to(event.parent / "secret.txt")
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
    refused(code, out, err, "game 1", "is a symbolic link, which is not followed")


@pytest.mark.parametrize("command", ["results", "export"])
def test_a_games_directory_that_is_a_symbolic_link_out_is_refused(
    capsys: pytest.CaptureFixture[str], event: Path, command: str
) -> None:
    elsewhere = event.parent / "elsewhere"
    (event / "games").rename(elsewhere)
    (elsewhere / "game-00001.txt").write_text(f"# Game: yoxii\n# Reason: {SECRET}\n")
    (event / "games").symlink_to(elsewhere)
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
    refused(code, out, err, "game 1", "games/, which is not a directory of the event's own")


@pytest.mark.parametrize("command", ["results", "export"])
def test_a_record_larger_than_the_cap_is_refused_after_no_read(
    capsys: pytest.CaptureFixture[str], event: Path, command: str
) -> None:
    with open(event / "games" / "game-00002.txt", "r+b") as file:
        file.truncate(files.MAX_RECORD_BYTES + 1)  # sparse: nothing is written
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
    refused(code, out, err, "game 2", f"is larger than {files.MAX_RECORD_BYTES:,} bytes")


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command as a program, so that a read that blocks fails the test, not hangs it."""
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", *argv],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=30,
    )  # fmt: skip


@pytest.mark.parametrize("command", ["results", "export"])
def test_a_record_that_is_a_fifo_is_refused_without_waiting_for_a_writer(
    event: Path, command: str
) -> None:
    record = event / "games" / "game-00001.txt"
    record.unlink()
    os.mkfifo(record)
    proc = cli(command, str(event), *(["-o", "-"] * (command == "export")))
    refused(proc.returncode, proc.stdout, proc.stderr, "game 1", "is a FIFO, not a regular file")


# -- the store itself --------------------------------------------------------------------------


def make_fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def make_link_out(path: Path) -> None:
    secret = path.parent.parent / "secret.sqlite"
    shutil.copy(path, secret)
    path.unlink()
    path.symlink_to(secret)


def make_huge(path: Path) -> None:
    with open(path, "r+b") as file:
        file.truncate(files.MAX_STORE_BYTES + 1)


def make_huge_log(path: Path) -> None:
    with open(path.with_name(path.name + "-wal"), "wb") as file:
        file.truncate(files.MAX_STORE_BYTES + 1)


def make_fifo_journal(path: Path) -> None:
    os.mkfifo(path.with_name(path.name + "-journal"))


def make_garbage(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096) + SECRET.encode())


def make_torn(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\xff" * 200 + data[300:])


def make_view(path: Path) -> None:
    """``games`` as a view that never ends."""
    db = sqlite3.connect(path)
    columns = ", ".join(
        f"{value} AS {name}"
        for name, value in (
            ("id", "x"), ("round", "1"), ("pairing", "0"), ("first", "'random'"),
            ("second", "'greedy'"), ("p1", "'random'"), ("p2", "'greedy'"), ("pair", "0"),
            ("opening", "0"), ("winner", "'p1'"), ("reason", "'goal'"), ("first_points", "1"),
            ("plies", "1"), ("wall", "0"), ("engine_time", "0"), ("record", "NULL"),
        )
    )  # fmt: skip
    with db:
        db.execute("DROP TABLE games")
        db.execute(
            "CREATE VIEW games AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
            f"FROM n) SELECT {columns} FROM n"
        )
    db.close()


def make_computed(path: Path) -> None:
    """A column computed on every read (here a harmless one: a gigabyte's worth is refused
    as a value too long too)."""
    db = sqlite3.connect(path)
    with db:
        db.execute("ALTER TABLE games RENAME COLUMN reason TO old_reason")
        db.execute(
            "ALTER TABLE games ADD COLUMN reason TEXT GENERATED ALWAYS AS (old_reason) VIRTUAL"
        )
    db.close()


def make_long_value(path: Path) -> None:
    db = sqlite3.connect(path)
    with db:
        db.execute(
            "UPDATE games SET reason = ? WHERE id = 1", ("x" * (files.MAX_STORED_VALUE + 1),)
        )
    db.close()


@pytest.mark.parametrize(
    ("craft", "reason"),
    [
        (make_fifo, "results.sqlite is a FIFO, not a regular file: it is not read"),
        (make_link_out, "results.sqlite is a symbolic link, not a regular file"),
        (make_huge, f"results.sqlite is larger than {files.MAX_STORE_BYTES:,} bytes"),
        (make_huge_log, f"results.sqlite-wal is larger than {files.MAX_STORE_BYTES:,} bytes"),
        (make_fifo_journal, "results.sqlite-journal is a FIFO, not a regular file"),
        (make_garbage, "the results database is damaged"),
        (make_torn, "the results database is damaged"),
        (
            make_view,
            "the results database is damaged (its schema holds view 'games', which an event "
            "never makes)",
        ),
        (make_computed, "the results database is damaged (table games has a computed column)"),
        (
            make_long_value,
            f"the results database is damaged (a value longer than "
            f"{files.MAX_STORED_VALUE:,} bytes)",
        ),
    ],
)
@pytest.mark.parametrize("command", ["results", "export"])
def test_a_crafted_store_is_one_line_and_read_no_further(
    capsys: pytest.CaptureFixture[str],
    event: Path,
    command: str,
    craft: Callable[[Path], None],
    reason: str,
) -> None:
    craft(event / "results.sqlite")
    argv = (command, str(event), *(["-o", "-"] * (command == "export")))
    if "FIFO" in reason:  # as a program: a read that blocks fails the test, not hangs it
        proc = cli(*argv)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    else:
        code, out, err = run(capsys, *argv)
    refused(code, out, err, reason)
    assert out == ""


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"games": 10**18}, "not valid: games: 1000000000000000000"),
        ({"games": "2"}, 'the stored configuration has games = "2"'),
        ({"max_plies": [1000]}, "the stored configuration has max_plies = [1000]"),
        ({"rounds": 10**4, "games": 10**4}, "more than 10,000"),
        ({"players": ["bot:random"] * 5000}, "players: 2 to 1000 players, not 5000"),
        ({"event": "cup\x1b[2J"}, "the name 'cup\\x1b[2J'"),
    ],
)
def test_a_crafted_stored_configuration_is_one_line(
    capsys: pytest.CaptureFixture[str], event: Path, change: dict[str, object], reason: str
) -> None:
    db = sqlite3.connect(event / "results.sqlite")
    config = json.loads(db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
    config.update(change)
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
    db.close()
    for command in ("results", "export"):
        code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
        refused(code, out, err, "the results database is damaged", reason)


# -- what is printed ---------------------------------------------------------------------------


def test_an_escape_sequence_in_a_stored_reason_never_reaches_the_terminal(
    capsys: pytest.CaptureFixture[str], event: Path
) -> None:
    sql(event, "UPDATE games SET reason = ? WHERE id = 1", "goal\x1b]0;owned\x07\x1b[2J")
    code, out, err = run(capsys, "results", str(event))
    assert code == 0, err
    assert "goal\\x1b]0;owned\\x07\\x1b[2J" in out
    assert "\x1b" not in out + err
    assert "\x07" not in out + err


def test_an_escape_sequence_in_a_record_is_escaped_by_replay_and_export(
    capsys: pytest.CaptureFixture[str], event: Path
) -> None:
    path = event / "games" / "game-00001.txt"
    text = path.read_text(encoding="utf-8")
    reason = next(line for line in text.splitlines() if line.startswith("# Reason: "))
    crafted = text.replace(reason, f"{reason}\x1b[31m\u202e\x9b", 1)
    crafted = crafted.replace("# P1: random", "# P1: random\x1b[8m", 1)
    path.write_text(crafted, encoding="utf-8")
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    assert code == 0, err
    assert f"reason {reason.removeprefix('# Reason: ')}\\x1b[31m\\u202e\\x9b\n" in out
    code, out, err = run(capsys, "export", str(event), "-o", "-")
    assert code == 0, err
    assert "# P1: random\\x1b[8m\n" in out
    code, out2, err = run(capsys, "replay", "yoxii", str(event / "games" / "none.txt"))
    for text in (out, out2, err):
        assert not any(char in text for char in "\x1b\u202e\x9b")


def test_printable_escapes_what_a_terminal_acts_on_and_keeps_the_rest() -> None:
    assert printable("alphabeta é 名前 ♟") == "alphabeta é 名前 ♟"
    assert printable("a\x1b[2J\x00\t\n\r\x7f\x85\u202e\u200b\u2028b") == (
        "a\\x1b[2J\\x00\\x09\\x0a\\x0d\\x7f\\x85\\u202e\\u200b\\u2028b"
    )


# -- the file replay is given ------------------------------------------------------------------


def test_replay_refuses_a_fifo_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "game.txt"
    os.mkfifo(fifo)
    proc = cli("replay", "yoxii", str(fifo))
    refused(proc.returncode, proc.stdout, proc.stderr, str(fifo), "is a FIFO, not a regular file")


def test_replay_refuses_a_device_and_a_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "replay", "yoxii", "/dev/zero")
    refused(code, out, err, "/dev/zero: cannot read file: it is a character device")
    code, out, err = run(capsys, "replay", "yoxii", str(tmp_path))
    refused(code, out, err, f"{tmp_path}: cannot read file: it is a directory")
    link = tmp_path / "zero.txt"
    link.symlink_to("/dev/zero")
    code, out, err = run(capsys, "replay", "yoxii", str(link))
    refused(code, out, err, f"{link}: cannot read file: it is a character device")


def test_replay_reads_a_record_at_a_time_and_refuses_one_past_the_cap(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "many.txt"
    line = "c3  ; k=" + "v" * 200 + "\n"
    path.write_text("# Game: yoxii\n" + line * (files.MAX_RECORD_BYTES // len(line) + 1))
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    refused(code, out, err, f"{path}:1: a record longer than {files.MAX_RECORD_BYTES:,}")
    # a record of one-character lines ends at the line past the cap, never read further
    path.write_text("# Game: yoxii\n" + "c\n" * (files.MAX_RECORD_BYTES // 2 - 10))
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    cap = files.MAX_RECORD_LINES
    refused(code, out, err, f"{path}:{cap + 1}: a record of more than {cap:,} lines (it begins")
    path.write_bytes(b"# Game: yoxii\n" + b"c" * (files.MAX_RECORD_BYTES + 10))
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    refused(code, out, err, f"{path}:2: a line longer than {files.MAX_RECORD_BYTES:,} bytes")


def test_replay_of_a_huge_file_is_refused_unread(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from enginesrv.event.play import sgf

    path = tmp_path / "huge.txt"
    with open(path, "wb") as file:
        file.truncate(sgf.MAX_RECORDS_FILE + 1)
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    refused(code, out, err, f"is larger than {sgf.MAX_RECORDS_FILE:,} bytes")
    sgf_path = tmp_path / "huge.sgf"
    with open(sgf_path, "wb") as file:
        file.truncate(files.MAX_RECORD_BYTES + 1)
    code, out, err = run(capsys, "replay", "yinsh", str(sgf_path))
    refused(code, out, err, f"is larger than {files.MAX_RECORD_BYTES:,} bytes")


def test_an_sgf_error_is_one_line_whatever_the_command_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "game.sgf"
    path.write_text("(;GM[24]\n;P0[place wr E 1\nand more\x1b[2J])", encoding="utf-8")
    code, out, err = run(capsys, "replay", "yinsh", str(path))
    refused(
        code, out, err,
        f"{path}:2: unknown boardspace command: P0[place wr E 1 and more\\x1b[2J]",
    )  # fmt: skip
    path.write_text("(;GM[2\x1b[2J4])", encoding="utf-8")
    code, out, err = run(capsys, "replay", "yinsh", str(path))
    refused(code, out, err, "GM[2\\x1b[2J4] is not a boardspace YINSH game")


def test_replay_of_a_file_of_bad_games_stops_at_the_tenth(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from enginesrv.cli.rules import MAX_BAD_GAMES

    record = "# Game: yoxii\n" + "c\n" * (files.MAX_RECORD_LINES - 1)
    path = tmp_path / "bad.txt"
    path.write_text(record * (MAX_BAD_GAMES + 5))
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    refused(code, out, err, f"{path}:2: game 1: move 1 'c'", "the check stopped there")
    assert out.count("\nerror line ") == MAX_BAD_GAMES
    assert out.splitlines()[-1] == (
        f"checked {MAX_BAD_GAMES} games, {MAX_BAD_GAMES} bad, stopped at the 10th bad game"
    )


WORST_NUMBER = str(-(2**63))
"""The longest number the protocol carries (20 characters)."""


def worst_record(plies: int) -> str:
    """The longest record an event writes of ``plies`` plies: names of 100 characters of 4
    bytes, tokens of 64 characters and every annotation, each number of 20 characters."""
    from enginesrv.event.play.records import Record, RecordMove, format_record

    name = "\U0001f600" * 100
    token = "t" * 64
    notes = (
        ("ms", WORST_NUMBER), ("over", WORST_NUMBER), ("score", f"loss:{WORST_NUMBER}"),
        ("depth", WORST_NUMBER), ("nodes", WORST_NUMBER), ("shown", token),
        ("clock", WORST_NUMBER),
    )  # fmt: skip
    position = "p" * 1000
    headers = {
        "Game": "yinsh+blitz", "Start": position, "Event": name, "Date": "2026-12-03",
        "P1": name, "P2": name, "TimeControl": "tc=40/86400+86400 depth=1000 nodes=10**12",
        "Result": "p1", "Reason": "score-adjudication", "Final": position,
    }  # fmt: skip
    comments = [f"p1 {name}: played {token!r}: " + "r" * 1000, f"p2 {name} resigned"]
    moves = [RecordMove(token, notes, i + 1) for i in range(plies)]
    return format_record(Record(headers=headers, moves=moves, comments=comments))


def test_the_longest_record_an_event_writes_is_read_back(tmp_path: Path) -> None:
    """max_plies' cap, the record's cap and replay's line cap agree: the longest game an event
    may play is a record ``results``, ``export`` and ``replay`` read."""
    from enginesrv.event.config import WHOLE_RANGES
    from enginesrv.event.play.sgf import stored_record

    assert WHOLE_RANGES["max_plies"] == (1, files.MAX_PLIES)
    one = worst_record(1)
    ply_line = one.split("\n")[-2]
    assert len(ply_line.encode()) + 1 <= files.MAX_PLY_LINE_BYTES
    assert len(one.encode()) - len(ply_line.encode()) - 1 <= files.MAX_HEADER_BYTES
    text = worst_record(files.MAX_PLIES)
    size = len(text.encode())
    assert size <= files.MAX_PLIES * files.MAX_PLY_LINE_BYTES + files.MAX_HEADER_BYTES
    assert size <= files.MAX_RECORD_BYTES
    assert text.count("\n") <= files.MAX_RECORD_LINES
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "game-00001.txt").write_text(text, encoding="utf-8")
    assert len(stored_record(tmp_path, "games/game-00001.txt", 1).moves) == files.MAX_PLIES


def test_every_games_tokens_fit_the_longest_ply_line() -> None:
    """The tokens (and the forms shown of them) of random games of every rules are at most
    the 64 characters a ply line is sized for (``files.MAX_PLY_LINE_BYTES``)."""
    import random

    import games

    for name in games.available():
        game = games.load(name)
        rng = random.Random(1)
        for _ in range(3):
            state = game.new_state()
            for _ in range(150):
                if state.is_terminal():
                    break
                moves = state.legal_moves()
                picks = [moves[rng.randrange(len(moves))] for _ in range(20)]
                for move in picks:
                    assert len(state.move_to_str(move)) <= 64, name
                    assert len(state.public_move_str(move, 1 - state.to_move())) <= 64, name
                state.push(picks[0])


def test_the_largest_store_an_event_writes_is_read_back(event: Path) -> None:
    """MAX_SCHEDULE and the store's cap agree: games of the longest names (100 characters of
    4 bytes each, stored twice) and their secret seeds take at most MAX_STORE_ROW_BYTES each,
    so the store of the largest event and its configuration fit under MAX_STORE_BYTES."""
    from enginesrv.event.config import MAX_SCHEDULE
    from enginesrv.event.results.rows import GameRow
    from enginesrv.event.results.store import ResultsDB, stored_event

    path = event / "results.sqlite"
    before = path.stat().st_size
    one, two = "\U0001f600" * 100, "\U0001f601" * 100
    db = ResultsDB(path)
    count = 400
    for n in range(MAX_SCHEDULE - count + 1, MAX_SCHEDULE + 1):
        row = GameRow(
            n, MAX_SCHEDULE, MAX_SCHEDULE, one, two, two, one, MAX_SCHEDULE, MAX_SCHEDULE,
            "draw", "score-adjudication", 0.5, files.MAX_PLIES, 86_400.123456789,
            86_400.123456789, f"games/game-{n:05d}.txt",
        )  # fmt: skip
        db.add(row, [(f"seeds:{n}", json.dumps([2**63 - 1, 2**63 - 1]))])
    db.close()
    per_game = (path.stat().st_size - before) / count
    assert per_game <= files.MAX_STORE_ROW_BYTES
    largest = MAX_SCHEDULE * files.MAX_STORE_ROW_BYTES + files.MAX_STORED_VALUE + (64 << 10)
    assert largest <= files.MAX_STORE_BYTES
    assert len(stored_event(event, "")[1]) == count + 2


@pytest.mark.parametrize("command", ["results", "export"])
def test_a_store_of_more_games_than_an_event_has_is_refused(
    capsys: pytest.CaptureFixture[str], event: Path, command: str
) -> None:
    from enginesrv.event.config import MAX_SCHEDULE

    db = sqlite3.connect(event / "results.sqlite")
    row = db.execute("SELECT * FROM games WHERE id = 1").fetchone()
    with db:
        db.executemany(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(n, *row[1:]) for n in range(3, MAX_SCHEDULE + 2)],
        )
    db.close()
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] if command == "export" else []))
    refused(code, out, err, f"more than {MAX_SCHEDULE:,} games, more than an event has")


# -- many rows, one record; hard links; the bytes of records read -------------------------------


def add_games(event: Path, count: int, record: Callable[[int], str | None]) -> None:
    """Games 3 to ``count`` as copies of game 1, game N naming ``record(N)``."""
    db = sqlite3.connect(event / "results.sqlite")
    row = db.execute("SELECT * FROM games WHERE id = 1").fetchone()
    with db:
        db.executemany(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(n, *row[1:-1], record(n)) for n in range(3, count + 1)],
        )
    db.close()


@pytest.mark.parametrize("command", ["results", "export"])
def test_rows_naming_one_record_are_refused_at_the_first_not_its_own(
    capsys: pytest.CaptureFixture[str], event: Path, command: str
) -> None:
    """10,000 rows naming one record of 1 MiB took results 761 s and 10.5 GB of reads."""
    add_games(event, 10_000, lambda n: "games/game-00001.txt")
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
    refused(
        code, out, err,
        "game 3: its record 'games/game-00001.txt' is not the record the event writes for "
        "game 3 (games/game-00003.txt)",
    )  # fmt: skip
    assert out == ""


@pytest.mark.parametrize("command", ["results", "export"])
def test_a_record_that_is_a_hard_link_is_refused(
    capsys: pytest.CaptureFixture[str], event: Path, command: str
) -> None:
    record = event / "games" / "game-00001.txt"
    record.unlink()
    os.link(event.parent / "secret.txt", record)
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
    refused(
        code, out, err,
        "game 1: its record 'games/game-00001.txt' has 2 hard links (a record the event "
        "writes has one): it may be a file from outside the event's directory",
    )  # fmt: skip
    assert out == ""


def test_results_reads_records_up_to_its_cap_and_says_what_it_left(
    capsys: pytest.CaptureFixture[str], event: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from enginesrv.event.results import report

    first = len((event / "games" / "game-00001.txt").read_bytes())
    for n in range(3, 6):
        shutil.copy(event / "games" / "game-00002.txt", event / "games" / f"game-{n:05d}.txt")
    add_games(event, 5, files.record_name)
    monkeypatch.setattr(report, "MAX_RESULTS_RECORD_BYTES", first)
    code, out, err = run(capsys, "results", str(event))
    assert (code, err) == (0, "")
    assert out.endswith(
        f"  not counted: 4 games: not read, past the {first:,} bytes of records results reads\n"
    )
    monkeypatch.setattr(report, "MAX_RESULTS_RECORD_BYTES", first + 1)
    code, out, err = run(capsys, "results", str(event))
    assert out.endswith(
        f"  not counted: 3 games: not read, past the {first + 1:,} bytes of records results reads\n"
    )


def test_export_holds_one_record_at_a_time(tmp_path: Path, event: Path) -> None:
    """An export wrote nothing until it held every record's text: 10,000 records of 1 MiB
    would be 10 GB of memory. Now each is written as it is read."""
    import tracemalloc

    big = "# Game: yoxii\n" + ("# " + "c" * 1000 + "\n") * 1000  # 1 MB of comments
    for n in range(1, 21):
        (event / "games" / f"game-{n:05d}.txt").write_text(big, encoding="utf-8")
    add_games(event, 20, files.record_name)
    output = tmp_path / "all.txt"
    tracemalloc.start()
    try:
        assert main(["export", str(event), "-o", str(output)]) in (0, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert output.stat().st_size == 20 * len(big) + 19
    assert peak < 8 * len(big)  # a few records' worth, not twenty


# -- what the store's schema holds ---------------------------------------------------------------


NEVER_ENDS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)


@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        (f"CREATE TRIGGER t AFTER INSERT ON games BEGIN {NEVER_ENDS}; END", "trigger 't'"),
        (
            "CREATE TRIGGER rewrite AFTER INSERT ON games BEGIN "
            "UPDATE games SET first_points = 1; END",
            "trigger 'rewrite'",
        ),
        (f"CREATE VIEW v AS {NEVER_ENDS}", "view 'v'"),
        ("CREATE INDEX i ON games (lower(reason))", "index 'i'"),
        ("CREATE TABLE extra (x)", "table 'extra'"),
    ],
)
def test_a_store_holding_a_trigger_view_or_index_is_refused_by_every_opener(
    capsys: pytest.CaptureFixture[str], event: Path, statement: str, shown: str
) -> None:
    """``--resume`` ran a trigger stored in the store on its first game: one that never ends
    hung it for ever, one that rewrites the results would have rewritten them."""
    from enginesrv.event.config import EventError
    from enginesrv.event.results.store import ResultsDB

    sql(event, "DELETE FROM games WHERE id = 2")
    sql(event, statement)
    reason = (
        f"the results database is damaged (its schema holds {shown}, which an event never makes)"
    )
    for command in ("results", "export"):
        code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
        refused(code, out, err, reason)
    with pytest.raises(EventError) as caught:
        ResultsDB(event / "results.sqlite")  # as an event opens it, to write
    assert str(caught.value) == f"{event / 'results.sqlite'}: {reason}; it is kept as it is"
    proc = cli("match", "--resume", "--out", str(event))
    refused(proc.returncode, proc.stdout, proc.stderr, reason)
    assert sqlite3.connect(event / "results.sqlite").execute(
        "SELECT count(*) FROM games"
    ).fetchone() == (1,)


# -- the stored configuration ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        '{"a":' * 100_000,
        '{"game": "yoxii", "players": ' + "[" * 50_000 + "]" * 50_000 + "}",
    ],
    ids=["lists", "objects", "in-players"],
)
def test_a_deeply_nested_stored_configuration_is_one_line(
    capsys: pytest.CaptureFixture[str], event: Path, text: str
) -> None:
    """It ended in a RecursionError traceback, exit status 1."""
    sql(event, "UPDATE meta SET value = ? WHERE key = 'config'", text)
    reason = (
        "the results database is damaged (the stored configuration nests lists or objects "
        "more than 8 deep)"
    )
    for command in ("results", "export"):
        code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
        refused(code, out, err, reason)
    code, out, err = run(capsys, "match", "--resume", "--out", str(event))
    refused(code, out, err, reason)


def test_strings_in_a_stored_configuration_do_not_count_as_nesting() -> None:
    from enginesrv.event.results.stored_config import _nesting

    assert _nesting('{"a": ["[[[[", "\\"[{"], "b": {"c": []}}') == 3
    assert _nesting('"' + '\\"' * 500_000 + '"') == 0


# -- long texts in rows, many players ------------------------------------------------------------


def test_a_row_of_a_long_reason_is_refused_cut(
    capsys: pytest.CaptureFixture[str], event: Path
) -> None:
    """22 reasons of 1 MB of ESC took results 52 s and 1.85 GB."""
    sql(event, "UPDATE games SET reason = ? WHERE id = 2", "B" + "\x1b" * 1_000_000)
    code, out, err = run(capsys, "results", str(event))
    refused(code, out, err, "game 2 has reason = 'B" + "\\x1b" * 36 + "'...); it is kept")
    assert len(err) < 400
    sql(event, "UPDATE games SET reason = ? WHERE id = 2", "r" * 200)
    code, out, err = run(capsys, "results", str(event))
    assert (code, err) == (0, "")


def test_a_stored_gauntlet_of_a_thousand_players_is_reported_without_its_crosstable(
    capsys: pytest.CaptureFixture[str], event: Path
) -> None:
    """A 1,000-player gauntlet printed a crosstable of 1,000 by 1,000 cells: 103 MB."""
    db = sqlite3.connect(event / "results.sqlite")
    config = json.loads(db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
    config["players"] = [f"name={n:04d}{'é' * 96}:bot:random" for n in range(1000)]
    config["gauntlet"] = True
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
    db.close()
    code, out, err = run(capsys, "results", str(event))
    assert (code, err) == (0, "")
    assert (
        "\ncrosstable: not shown for more than 32 players (1000 here; results --json has it)\n"
        in out
    )
    assert len(out) < 2_000_000


def test_a_thousand_players_of_one_name_are_numbered_in_one_pass() -> None:
    """display_names was cubic: 1,000 identical names of 100 characters took seconds."""
    import time

    from enginesrv.event.play.players import parse_player
    from enginesrv.event.schedule import display_names

    name = "é" * 90
    specs = [parse_player(f"name={name}:bot:random")] * 5000 + [parse_player("bot:random")]
    started = time.perf_counter()
    names = display_names(specs)
    assert time.perf_counter() - started < 1
    assert names == [name] + [f"{name}#{n}" for n in range(2, 5001)] + ["random"]
    assert display_names(
        parse_player(f"name={text}:bot:random") for text in ("a", "a", "a#2", "a", "b", "a")
    ) == ["a", "a#2", "a#2#2", "a#3", "b", "a#4"]


# -- SGF at its cap, quoted values -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(;A" + "[]" * ((files.MAX_RECORD_BYTES - 6) // 2) + ")",
        '(;GM[24];P0[id "' + "\x1b" * (files.MAX_RECORD_BYTES - 40) + '"])',
        "(;GM[24];P0[id " + "\\]" * ((files.MAX_RECORD_BYTES - 40) // 2) + "])",
        "(;A[" + "x" * (files.MAX_RECORD_BYTES - 10),
    ],
    ids=["values", "one-value", "escapes", "unclosed"],
)
def test_an_sgf_at_its_cap_is_scanned_in_little_memory(text: str) -> None:
    """The value scan kept some 200 bytes a character: 229 to 274 MB for a file of 1 MiB."""
    import tracemalloc

    from enginesrv.event.play.records import RecordError
    from enginesrv.event.play.sgf import import_boardspace_sgf

    tracemalloc.start()
    try:
        try:
            import_boardspace_sgf(text, "cap.sgf")
        except RecordError as exc:
            assert str(exc) == "cap.sgf:1: malformed SGF near 'A[xxxxxxxxxxxxxxxxxx'"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * files.MAX_RECORD_BYTES // 2  # 20 MB: the values, not state per char


def test_an_sgf_value_scan_keeps_its_escapes() -> None:
    from enginesrv.event.play.sgf import _sgf_nodes

    nodes = _sgf_nodes("(;GN[a\\]b\\\\]C [x]\n [y\\\n]Z[\\\\\\]])", "t.sgf")
    assert [(p.ident, p.values, p.line) for p in nodes[0]] == [
        ("GN", ("a]b\\",), 1), ("C", ("x", "y\n"), 1), ("Z", ("\\]",), 3),
    ]  # fmt: skip


def test_the_sgf_value_scan_reads_as_the_old_pattern_did() -> None:
    """The unrolled, possessive scan matches what ``(?:[^\\]\\\\]|\\\\.)*`` matched, on every
    short text of SGF's special characters."""
    import itertools
    import re

    from enginesrv.event.play import sgf

    old_value = r"\[(?:[^\]\\]|\\.)*\]"
    old_lexeme = re.compile(
        rf"(?P<space>\s+)|(?P<punct>[();])|(?P<ident>[A-Za-z][A-Za-z0-9]*)(?P<values>(?:\s*{old_value})+)",
        re.DOTALL,
    )
    old_values = re.compile(r"\[((?:[^\]\\]|\\.)*)\]", re.DOTALL)
    for size in range(1, 8):
        for chars in itertools.product("A[]\\ x\n", repeat=size):
            text = "".join(chars)
            old, new = old_lexeme.match(text), sgf._SGF_LEXEME.match(text)
            assert (old and old.group()) == (new and new.group()), text
            if old and old.group("values"):
                values = old.group("values")
                assert old_values.findall(values) == sgf._SGF_VALUE.findall(values), text


def test_every_quoted_value_of_an_error_is_cut(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    """An SGF command of 800,000 characters gave an error line of 3.2 MB; a Game header of
    1 MB a line of 4 MB; a bad move line of a stored record a 'not counted' line as long."""
    path = tmp_path / "cmd.sgf"
    path.write_text("(;GM[24];P0[" + "\x1b[2J" * 200_000 + "])", encoding="utf-8")
    code, out, err = run(capsys, "replay", "yinsh", str(path))
    refused(code, out, err, f"{path}:1: unknown boardspace command: P0[" + "\\x1b[2J" * 19)
    assert len(err) < 300
    path = tmp_path / "game.txt"
    path.write_text("# Game: " + "x\x1b" * 500_000 + "\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    refused(code, out, err, f"{path}:1: the record is a 'x\\x1bx", "'... game, not 'yoxii'")
    assert len(err) < 400
    (event / "games" / "game-00002.txt").write_text(
        "# Game: yoxii\n" + "a b" * 300_000 + "\n", encoding="utf-8"
    )
    code, out, err = run(capsys, "results", str(event))
    assert (code, err) == (0, "")
    line = next(line for line in out.splitlines() if "not counted" in line)
    assert line.startswith(f"  not counted: games/game-00002.txt: {event / 'games'}")
    assert len(line) <= 220


# -- openings of a stored event ------------------------------------------------------------------


def test_an_openings_file_that_is_not_one_quotes_none_of_its_lines(
    capsys: pytest.CaptureFixture[str], event: Path
) -> None:
    """A crafted store naming ~/.netrc as its openings printed its first line on --resume."""
    import games
    from enginesrv.event.play.openings import OpeningsError, read_openings

    secret = event.parent / "secret.txt"
    with pytest.raises(OpeningsError) as caught:
        read_openings(secret, games.load("yoxii"))
    assert str(caught.value) == (
        f"{secret}:1: write 'moves TOKEN TOKEN ...' or 'fen POSITION': line 1 is neither"
    )
    db = sqlite3.connect(event / "results.sqlite")
    config = json.loads(db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
    config["openings"] = str(secret)
    config["games"] = 4
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
    db.close()
    proc = cli("match", "--resume", "--out", str(event))
    refused(proc.returncode, proc.stdout, proc.stderr, "line 1 is neither")


def test_an_export_that_fails_once_writing_leaves_its_file_as_it_was(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    """Each record is written as it is read: one found bad after the first was written fails
    the export, and the file given with -o is the old one, with no temporary one left."""
    path = event / "games" / "game-00002.txt"
    path.write_text(path.read_text(encoding="utf-8") + "not a move\n", encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "all.txt"
    target.write_text("kept\n")
    code, out, err = run(capsys, "export", str(event), "-o", str(target))
    refused(code, out, err, "game 2: its record", "whitespace in move line 'not a move'")
    assert target.read_text() == "kept\n"
    assert sorted(out_dir.iterdir()) == [target]
    code, out, err = run(capsys, "export", str(event), "-o", os.devnull, "--skip-missing")
    assert (code, out) == (0, "")
    assert err.endswith(f"1 games of {event} written to {os.devnull} (1 left out)\n")
