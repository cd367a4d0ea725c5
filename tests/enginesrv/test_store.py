"""The results store is safe: one run at a time holds an event directory (``DIR/lock``), and a
damaged database, configuration or game row is a one-line error naming the file, which is
left byte for byte as it was."""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from enginesrv.cli import main
from enginesrv.event.config import EventConfig
from enginesrv.event.lock import LOCK_NAME, lock_event
from enginesrv.event.results.store import ResultsDB
from tests.enginesrv.cluster_support import journal_mode

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "enginesrv" / "fakes" / "fake_engine.py"
MATCH = ("match", "yoxii", "bot:random", "bot:random:Seed=2", "--games", "2", "--depth", "1")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``enginesrv ARGS`` in this process: the exit status, stdout and stderr."""
    capsys.readouterr()
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def one_line_error(err: str, *needles: str) -> None:
    assert err.count("\n") == 1, err
    assert err.endswith("\n"), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


@pytest.fixture(scope="module")
def finished_event(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished two-game match (copy it before changing it)."""
    out = tmp_path_factory.mktemp("store") / "event"
    assert main([*MATCH, "--out", str(out)]) == 0
    assert not (out / LOCK_NAME).exists()  # a run that ends removes its lock file
    return out


@pytest.fixture
def event(finished_event: Path, tmp_path: Path) -> Path:
    out = tmp_path / "event"
    shutil.copytree(finished_event, out)
    return out


@pytest.fixture
def held_lock(event: Path) -> Iterator[int]:
    """``event``'s lock, held by this test (as another run would) with PID 4242 in it."""
    fd = os.open(event / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, b"4242\n")
        yield fd
    finally:
        os.close(fd)


# -- the lock --------------------------------------------------------------------------------------


def test_a_second_run_is_refused_while_the_directory_is_held(
    event: Path, held_lock: int, capsys: pytest.CaptureFixture[str]
) -> None:
    del held_lock
    before = digest(event / "results.sqlite")
    message = f"{event} is in use by another run (PID 4242); wait for it or stop it"
    for args in (
        ("match", "--resume", "--out", str(event)),
        ("tournament", "--resume", "--out", str(event)),
        (*MATCH, "--resume", "--out", str(event)),
        (*MATCH, "--out", str(event)),
    ):
        status, out, err = run(capsys, *args)
        assert status == 2, (args, out, err)
        one_line_error(err, message)
        assert out == ""
    assert digest(event / "results.sqlite") == before
    assert (event / LOCK_NAME).read_text() == "4242\n"  # the holder's file is left alone
    # reading the results needs no lock
    status, out, err = run(capsys, "results", str(event))
    assert (status, err) == (0, "")
    assert "random vs random:Seed=2" in out


def test_a_running_event_holds_its_directory_and_a_killed_one_blocks_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "running"
    child = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", *MATCH[:5], "1000", "--depth", "1",
         "--out", str(out)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        lock = out / LOCK_NAME
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if lock.exists() and lock.read_text().strip() == str(child.pid):
                break
            time.sleep(0.02)
        else:
            pytest.fail("the run never wrote its PID into its lock file")
        status, _, err = run(capsys, "match", "--resume", "--out", str(out))
        assert status == 2
        one_line_error(err, f"{out} is in use by another run (PID {child.pid})")
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    # kill -9 leaves the file, but not the lock: the directory is free again
    assert lock.read_text().strip() == str(child.pid)
    with lock_event(out):
        assert lock.read_text().strip() == str(os.getpid())
    assert not lock.exists()


def test_a_running_event_logs_ahead_and_its_store_is_one_file_again_at_the_end(
    tmp_path: Path,
) -> None:
    import trio

    from enginesrv.event.prepared import prepare
    from enginesrv.event.tournament import Finished, run_event

    out = tmp_path / "wal"
    event = prepare(EventConfig("yoxii", ("bot:random", "bot:random:Seed=2"), depth=1, games=3),
                     out, resume=False)  # fmt: skip
    seen: list[tuple[str, int, bool]] = []

    def on_game(finished: Finished) -> None:
        # while the event runs, another reader sees every game stored so far
        db = sqlite3.connect(f"{(out / 'results.sqlite').resolve().as_uri()}?mode=ro", uri=True)
        try:
            mode = str(db.execute("PRAGMA journal_mode").fetchone()[0])
            count = db.execute("SELECT count(*) FROM games").fetchone()[0]
        finally:
            db.close()
        seen.append((mode, count, (out / "results.sqlite-wal").exists()))
        assert count == finished.done

    trio.run(lambda: run_event(event, out, on_game=on_game))
    assert [mode for mode, _, _ in seen] == ["wal"] * 3
    assert all(wal for _, _, wal in seen)
    assert journal_mode(out / "results.sqlite") == "delete"
    assert not [p.name for p in out.iterdir() if p.name.startswith("results.sqlite-")]


def test_a_killed_event_keeps_its_logged_games_and_a_resume_finishes_it_in_one_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "killed"
    child = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", *MATCH[:5], "40", "--depth", "1",
         "--out", str(out)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if len(list((out / "games").glob("game-*.txt"))) >= 3:
                break
            time.sleep(0.02)
        else:
            pytest.fail("the run stored no three games")
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    # the games are in the log beside the store, and read from there
    assert (out / "results.sqlite-wal").exists()
    status, text, err = run(capsys, "results", str(out), "--json")
    assert status == 0, err
    import json

    stored = json.loads(text)["games"]
    assert stored >= 2
    status, _, err = run(capsys, "match", "--resume", "--out", str(out))
    assert status == 0, err
    status, text, err = run(capsys, "results", str(out), "--json")
    assert json.loads(text)["games"] == 40
    assert journal_mode(out / "results.sqlite") == "delete"
    assert not [p.name for p in out.iterdir() if p.name.startswith("results.sqlite-")]


def test_a_stale_lock_file_does_not_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "stale"
    out.mkdir()
    (out / LOCK_NAME).write_text("999999999\n")  # a killed run's: nobody holds it
    status, stdout, err = run(capsys, *MATCH, "--out", str(out))
    assert status == 0, err
    assert "game 2/2" in stdout
    assert not (out / LOCK_NAME).exists()


def test_a_refused_event_leaves_no_directory_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "event"
    status, _, err = run(capsys, "match", "yoxii", "bot:random", "bot:nobot", "--depth", "1",
                         "--out", str(out))  # fmt: skip
    assert status == 2
    one_line_error(err, "unknown bot 'nobot'")
    assert not (tmp_path / "new").exists()


# -- damage ----------------------------------------------------------------------------------------


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(db: Path) -> None:
        connection = sqlite3.connect(db)
        try:
            with connection:
                connection.execute(statement)
        finally:
            connection.close()

    return damage


def _null_reason(db: Path) -> None:
    """A NULL where a value is needed (in a table made again without NOT NULL)."""
    connection = sqlite3.connect(db)
    try:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(games)")]
        connection.executescript(
            f"ALTER TABLE games RENAME TO old; CREATE TABLE games ({', '.join(columns)});"
            "INSERT INTO games SELECT * FROM old; DROP TABLE old;"
            "UPDATE games SET reason = NULL WHERE id = 2; VACUUM;"
        )
    finally:
        connection.close()


def _garbage(db: Path) -> None:
    db.write_bytes(random.Random(1).randbytes(db.stat().st_size))


def _bad_pages(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[4096 + 100 :] = b"\x5a" * (len(data) - 4096 - 100)  # every page after the first
    db.write_bytes(bytes(data))


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "garbage bytes": (_garbage, "(file is not a database)"),
    "damaged pages": (_bad_pages, "malformed"),
    "a dropped table": (_sql("DROP TABLE games"), "(no table games)"),
    "a dropped column": (_sql("ALTER TABLE games DROP COLUMN record"), "no column record"),
    "config not JSON": (
        _sql("UPDATE meta SET value = '{\"game\": \"yoxii\", ' WHERE key = 'config'"),
        "the stored configuration is not JSON",
    ),
    "config field of the wrong type": (
        _sql(
            "UPDATE meta SET value = json_set(value, '$.players', 'bot:random') "
            "WHERE key = 'config'"
        ),
        'players = "bot:random"',
    ),
    "a row of the wrong type": (
        _sql("UPDATE games SET plies = 'many' WHERE id = 2"),
        "game 2 has plies = 'many'",
    ),
    "a NULL in a row": (_null_reason, "game 2 has reason = None"),
    "a row value out of range": (
        _sql("UPDATE games SET winner = 'nobody' WHERE id = 1"),
        "game 1 has winner = 'nobody'",
    ),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_store_is_a_one_line_error_and_is_kept(
    kind: str, event: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage, detail = DAMAGE[kind]
    db = event / "results.sqlite"
    damage(db)
    before, files = digest(db), listing(event)
    for args in (
        ("results", str(event)),
        ("results", str(event), "--json"),
        ("match", "--resume", "--out", str(event)),
        ("tournament", "--resume", "--out", str(event)),
        (*MATCH, "--resume", "--out", str(event)),
    ):
        status, out, err = run(capsys, *args)
        assert status == 2, (args, out, err)
        one_line_error(err, f"{db}: the results database is damaged", detail, "kept as it is")
        assert digest(db) == before, args
        assert listing(event) == files, args


def test_a_failed_resume_keeps_a_store_without_games_and_a_new_event_leaves_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an engine that plays another game stops the event before any game is stored
    args = ("match", "yoxii", "bot:random", f"cmd:{sys.executable} {FAKE} good yinsh",
            "--depth", "1")  # fmt: skip
    fresh = tmp_path / "fresh"
    status, _, err = run(capsys, *args, "--out", str(fresh))
    assert status == 2
    assert "the engine plays yinsh, not yoxii" in err.splitlines()[-1]
    assert not (fresh / "results.sqlite").exists()  # this run made it: nothing is left
    # the same event, stored by an earlier run killed before its first game ended
    kept = tmp_path / "kept"
    kept.mkdir()
    config = EventConfig("yoxii", (args[2], args[3]), depth=1)
    ResultsDB.create(kept / "results.sqlite", config).close()
    before = digest(kept / "results.sqlite")
    status, _, err = run(capsys, "match", "--resume", "--out", str(kept))
    assert status == 2
    assert "the engine plays yinsh, not yoxii" in err.splitlines()[-1]
    assert digest(kept / "results.sqlite") == before  # it was there before: never removed


def test_yin_yang_secret_seeds_are_drawn_per_game_kept_at_its_end_and_replay_it(
    tmp_path: Path,
) -> None:
    import json as json_

    from bots.engine import Engine, Limits
    from bots.registry import create_bot
    from enginesrv.event.play.plan import secret_seeds
    from enginesrv.event.play.records import parse_record
    from enginesrv.event.schedule import game_seeds
    from games import load

    config = EventConfig("yinyang", ("bot:alphabeta", "bot:random"), seed=3)
    assert game_seeds(config, 1) == game_seeds(config, 1)  # public: from the event's seed
    assert secret_seeds() != secret_seeds()  # secret: from the operating system
    runs = []
    for run_number in range(2):
        out = tmp_path / f"yy{run_number}"
        proc = subprocess.run(
            [sys.executable, "-m", "enginesrv.cli", "match", "yinyang", "bot:alphabeta",
             "bot:random", "--depth", "1", "--games", "2", "--seed", "3", "--out", str(out)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        db = sqlite3.connect(out / "results.sqlite")
        try:
            stored = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'seeds:%'"))
            rows = list(db.execute("SELECT id, p1, p2, record FROM games ORDER BY id"))
        finally:
            db.close()
        assert sorted(stored) == sorted(f"seeds:{row[0]}" for row in rows)
        runs.append(stored)
        game = load("yinyang")
        for game_id, p1, p2, record_name in rows:
            seeds = json_.loads(stored[f"seeds:{game_id}"])
            assert len(seeds) == 2
            assert all(isinstance(x, int) and x > 0 for x in seeds)
            # the audit: the public seeds and the stored secret ones replay the game exactly
            record = parse_record((out / record_name).read_text())
            bots: list[Engine] = []
            for seat, name in enumerate((p1, p2)):
                bot = create_bot(name)
                if any(option.name == "Seed" for option in bot.options):
                    bot.set_option("Seed", str(game_seeds(config, game_id)[seat]))
                bot.set_option("SecretSeed", str(seeds[seat]))
                bot.new_game(game)
                bots.append(bot)
            state = game.new_state()
            for move in record.moves:
                seat = state.to_move()
                # as the arbiter does: a search bounded by depth alone starts afresh, so that
                # the game replays whatever worker each move lands on (``BotPlayer``)
                bots[seat].new_game(game)
                result = bots[seat].search(state.view(seat), Limits(depth=1))
                assert result.token == move.token, (game_id, state.ply())
                state.push(state.parse_move(move.token))
            # the replay ends where the game did; a game the arbiter adjudicated (a repeated
            # position, the ply cap) ends in a position the rules would play on from
            assert state.to_string() == record.final
            reason = record.headers["Reason"]
            assert state.is_terminal() != (reason in ("repetition", "max-plies")), reason
    # two runs with one --seed: new secrets for every game
    assert set(runs[0].values()).isdisjoint(runs[1].values())
