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
from enginesrv.event import files
from enginesrv.event.wording import printable

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
    ],
)
@pytest.mark.parametrize("command", ["results", "export"])
def test_a_record_path_outside_the_events_games_is_refused_unread(
    capsys: pytest.CaptureFixture[str], event: Path, command: str, record: str, reason: str
) -> None:
    record = record.format(secret=event.parent / "secret.txt")
    store_record(event, record)
    code, out, err = run(capsys, command, str(event), *(["-o", "-"] * (command == "export")))
    refused(code, out, err, "game 1", f"its record {record!r} {reason}")
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
        (make_view, "the results database is damaged (games is not a plain table)"),
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
        ({"rounds": 10**6, "games": 10**6}, "more than 1,000,000"),
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
    path.write_text("# Game: yoxii\n" + "c3\n" * (files.MAX_RECORD_BYTES // 3 + 1))
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    refused(code, out, err, f"{path}:1: a record longer than {files.MAX_RECORD_BYTES:,}")
    path.write_bytes(b"# Game: yoxii\n" + b"c" * (files.MAX_RECORD_BYTES + 10))
    code, out, err = run(capsys, "replay", "yoxii", str(path))
    refused(code, out, err, f"{path}:2: a line longer than {files.MAX_RECORD_BYTES:,} bytes")


def test_replay_of_a_huge_file_is_refused_unread(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from enginesrv.event import sgf

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
