"""Crafted stores, records and files against ``enginesrv results``, ``export`` and ``replay``:
each ends in one line on stderr with exit status 2 within 10 s, having read at most 100 MB,
with a peak RSS at most 100 MB above that of ``enginesrv results`` on a small good event.

Usage: python benchmarks/hostile_files.py [--keep DIR] [--only TEXT] [--timeout 60]

A good event (a two-game Yoxii match) is played once; each case copies it and crafts the copy
as an attacker who can write the event's directory would (or crafts a file for ``replay``):
record paths to ``/etc/passwd``, ``/dev/zero``, a FIFO, through ``..`` or a symbolic link
out; a record or a store far past its cap (sparse files: nothing is written); a store that is
a FIFO, garbage, a recursive view, a value of a gigabyte's worth, a stored configuration of
the wrong types or of 10**18 games, or nested 100,000 deep; a store near its cap full of
small games (more than an event has); 10,000 rows naming one record of 1 MiB; a record that
is a hard link out; a trigger that never ends (under ``--resume`` too); reasons of 1 MB of
ESC; gauntlets of 1,000 players; records past what ``results`` reads; the store of the
largest event; files of records and SGF files at their caps. Each command
runs as a program under a wrapper that writes, as it exits, the bytes it read (``rchar`` of
``/proc/self/io``) and its peak RSS (``VmHWM``). The cases with an ESC in the stored reasons
and the largest event are the ones that succeed: the check there is that no ESC reaches
stdout.
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from enginesrv.event import config  # noqa: E402
from enginesrv.event.play import sgf  # noqa: E402
from enginesrv.event.results import files  # noqa: E402

TIME_S = 10.0
READ_MB = 100.0
RSS_MB = 100.0
GIB = 1 << 30

WRAPPER = """
import atexit, os, sys
def stats():
    read = next(l for l in open("/proc/self/io") if l.startswith("rchar:")).split()[1]
    hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
    with open(os.environ["HOSTILE_FILES_STATS"], "w") as out:
        out.write(f"{read} {hwm}")
atexit.register(stats)
from enginesrv.cli import main
sys.exit(main(sys.argv[1:]))
"""


@dataclass
class Outcome:
    status: int
    stderr: str
    stdout: str
    elapsed: float
    read_mb: float
    rss_mb: float


def run(argv: list[str], stats: Path, timeout: float = 60) -> Outcome:
    env = dict(os.environ, HOSTILE_FILES_STATS=str(stats))
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", WRAPPER, *argv],
            capture_output=True, text=True, errors="replace", check=False, cwd=ROOT,
            env=env, timeout=timeout,
        )  # fmt: skip
        status, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        status, out, err = -1, "", f"timed out after {timeout:g} s\n"
    elapsed = time.monotonic() - started
    read, hwm = (int(x) for x in stats.read_text().split()) if stats.exists() else (0, 0)
    stats.unlink(missing_ok=True)
    return Outcome(status, err, out, elapsed, read / 1e6, hwm / 1024)


def sql(event: Path, statement: str, *args: object) -> None:
    db = sqlite3.connect(event / "results.sqlite")
    with db:
        db.execute(statement, args)
    db.close()


def config_change(**change: object) -> Callable[[Path, Path], None]:
    def craft(event: Path, work: Path) -> None:
        del work
        db = sqlite3.connect(event / "results.sqlite")
        text = db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0]
        config = json.loads(text)
        config.update(change)
        with db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
        db.close()

    return craft


def record_path(path: str) -> Callable[[Path, Path], None]:
    def craft(event: Path, work: Path) -> None:
        sql(event, "UPDATE games SET record = ? WHERE id = 1", path.format(work=work))

    return craft


def record_link(target: str) -> Callable[[Path, Path], None]:
    def craft(event: Path, work: Path) -> None:
        del work
        record = event / "games" / "game-00001.txt"
        record.unlink()
        record.symlink_to(target)

    return craft


def record_fifo(event: Path, work: Path) -> None:
    del work
    record = event / "games" / "game-00001.txt"
    record.unlink()
    os.mkfifo(record)


def sparse(path: Path, size: int) -> None:
    with open(path, "wb") as file:
        file.truncate(size)


def huge_record(event: Path, work: Path) -> None:
    del work
    sparse(event / "games" / "game-00001.txt", GIB)


def near_cap_record(event: Path, work: Path) -> None:
    """A record just under its cap, of one-character lines: the most a record can cost."""
    del work
    head = (event / "games" / "game-00001.txt").read_text().split("\n")
    headers = "".join(line + "\n" for line in head if line.startswith("#"))
    body = "c\n" * ((files.MAX_RECORD_BYTES - len(headers)) // 2)
    (event / "games" / "game-00001.txt").write_text(headers + body)


def huge_store(event: Path, work: Path) -> None:
    del work
    sparse(event / "results.sqlite", GIB)


def store_fifo(event: Path, work: Path) -> None:
    del work
    (event / "results.sqlite").unlink()
    os.mkfifo(event / "results.sqlite")


def wal_fifo(event: Path, work: Path) -> None:
    del work
    os.mkfifo(event / "results.sqlite-wal")


def store_link(event: Path, work: Path) -> None:
    shutil.move(event / "results.sqlite", work / "elsewhere.sqlite")
    (event / "results.sqlite").symlink_to(work / "elsewhere.sqlite")


def garbage_store(event: Path, work: Path) -> None:
    del work
    (event / "results.sqlite").write_bytes(b"SQLite format 3\x00" + os.urandom(1 << 20))


def recursive_view(event: Path, work: Path) -> None:
    del work
    values = (
        "x AS id, 1 AS round, 0 AS pairing, 'random' AS first, 'greedy' AS second, "
        "'random' AS p1, 'greedy' AS p2, 0 AS pair, 0 AS opening, 'p1' AS winner, "
        "'goal' AS reason, 1 AS first_points, 1 AS plies, 0 AS wall, 0 AS engine_time, "
        "NULL AS record"
    )
    sql(event, "DROP TABLE games")
    sql(
        event,
        "CREATE VIEW games AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
        f"SELECT {values} FROM n",
    )


def long_value(event: Path, work: Path) -> None:
    del work
    sql(event, "UPDATE games SET reason = ? WHERE id = 1", "x" * (60 << 20))


def full_store(event: Path, work: Path) -> None:
    """A store just under its cap, full of the smallest rows that pass every check: more
    games than an event may have, refused as they are read."""
    del work
    config_change(games=config.MAX_SCHEDULE)(event, event)
    db = sqlite3.connect(event / "results.sqlite")
    row = db.execute("SELECT * FROM games WHERE id = 1").fetchone()
    with db:
        db.execute("PRAGMA journal_mode=OFF")
        n = 3
        while (event / "results.sqlite").stat().st_size < files.MAX_STORE_BYTES - (2 << 20):
            db.executemany(
                "INSERT INTO games VALUES (?, 1, 0, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 0, 0, NULL)",
                [(i, *row[3:8], row[9], row[10], row[11], row[12]) for i in range(n, n + 10_000)],
            )
            db.commit()
            n += 10_000
    db.close()


def largest_store(event: Path, work: Path) -> None:
    """The store of the largest event: ``MAX_SCHEDULE`` games whose players have names of
    100 characters of 4 bytes each, each game with its record and secret seeds."""
    del work
    one, two = "\U0001f600" * 100, "\U0001f601" * 100
    config_change(games=config.MAX_SCHEDULE)(event, event)
    db = sqlite3.connect(event / "results.sqlite")
    with db:
        db.execute("UPDATE games SET first = ?, second = ?, p1 = ?, p2 = ?", (one, two, one, two))
        db.executemany(
            "INSERT INTO games VALUES (?, 1, 0, ?, ?, ?, ?, 0, 0, 'draw', 'score-adjudication', "
            "0.5, 3000, 86400.123456789, 86400.123456789, ?)",
            [
                (i, one, two, one, two, files.record_name(i))
                for i in range(3, config.MAX_SCHEDULE + 1)
            ],
        )
        db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [
                (f"seeds:{i}", json.dumps([2**63 - 1] * 2))
                for i in range(1, config.MAX_SCHEDULE + 1)
            ],
        )
    db.close()
    # each game its own record, as an event writes them (a copy of the first game's)
    text = (event / "games" / "game-00001.txt").read_bytes()
    for i in range(3, config.MAX_SCHEDULE + 1):
        (event / files.record_name(i)).write_bytes(text)
    print(f"(the largest store: {(event / 'results.sqlite').stat().st_size:,} bytes)")


def big_comment_record() -> str:
    """A record of yoxii just under its cap, of comment lines of 1,000 characters."""
    line = "# " + "c" * 1000 + "\n"
    return "# Game: yoxii\n" + line * ((files.MAX_RECORD_BYTES - 100) // len(line))


def rows(event: Path, count: int, record: Callable[[int], str | None], reason: str = "") -> None:
    """Games 1 to ``count`` as copies of game 1, game N naming ``record(N)`` (and the reason
    ``reason`` when one is given)."""
    db = sqlite3.connect(event / "results.sqlite")
    row = db.execute("SELECT * FROM games WHERE id = 1").fetchone()
    with db:
        db.execute("DELETE FROM games")
        db.executemany(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (n, *row[1:10], (chr(64 + n % 26) + reason) if reason else row[10], *row[11:15],
                 record(n))
                for n in range(1, count + 1)
            ],
        )  # fmt: skip
    db.execute("VACUUM")
    db.close()


def one_record_many_rows(event: Path, work: Path) -> None:
    """10,000 rows naming one record of 1 MiB (it took results 761 s and 10.5 GB of reads)."""
    del work
    (event / "games" / "game-00001.txt").write_text(big_comment_record())
    rows(event, config.MAX_SCHEDULE, lambda n: "games/game-00001.txt")


def hard_link_record(event: Path, work: Path) -> None:
    record = event / "games" / "game-00001.txt"
    record.unlink()
    os.link(work / "secret.txt", record)


def never_ending_trigger(event: Path, work: Path) -> None:
    """A trigger that never ends on the next game stored (``--resume`` hung on it)."""
    del work
    sql(event, "DELETE FROM games WHERE id = 2")
    sql(
        event,
        "CREATE TRIGGER t AFTER INSERT ON games BEGIN SELECT count(*) FROM (WITH RECURSIVE "
        "c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c); END",
    )


def nested_config(event: Path, work: Path) -> None:
    """A stored configuration of 100,000 nested lists (a RecursionError traceback)."""
    del work
    sql(event, "DELETE FROM games WHERE id = 2")
    sql(event, "UPDATE meta SET value = ? WHERE key = 'config'", "[" * 100_000)


def big_reasons(event: Path, work: Path) -> None:
    """22 games with reasons of 1 MB of ESC, under the store's cap (52 s and 1.85 GB)."""
    del work
    rows(event, 22, lambda n: None, reason="\x1b" * 1_000_000)


def records_past_results_cap(event: Path, work: Path) -> None:
    """90 games, each its own record of 1 MiB: results reads 64 MiB of them and says so."""
    del work
    text = big_comment_record()
    for n in range(1, 91):
        (event / files.record_name(n)).write_text(text)
    rows(event, 90, files.record_name)


def gauntlet(name: Callable[[int], str]) -> Callable[[Path, Path], None]:
    """A stored gauntlet of 1,000 players named ``name(N)``."""
    return config_change(players=[f"name={name(n)}:bot:random" for n in range(1000)], gauntlet=True)


def escape_reason(event: Path, work: Path) -> None:
    del work
    sql(event, "UPDATE games SET reason = ?", "goal\x1b]0;owned\x07\x1b[2J")


def bad_players(event: Path, work: Path) -> None:
    config_change(players=["bot:random"] * 100_000)(event, work)


STORE_CASES: list[tuple[str, Callable[[Path, Path], None]]] = [
    ("record /etc/passwd", record_path("/etc/passwd")),
    ("record /dev/zero", record_path("/dev/zero")),
    ("record ../secret", record_path("games/../../secret.txt")),
    ("record absolute", record_path("{work}/secret.txt")),
    ("record link out", record_link("/etc/passwd")),
    ("record link /dev/zero", record_link("/dev/zero")),
    ("record FIFO", record_fifo),
    ("record 1 GiB", huge_record),
    ("store 1 GiB", huge_store),
    ("store FIFO", store_fifo),
    ("store -wal FIFO", wal_fifo),
    ("store link out", store_link),
    ("store garbage", garbage_store),
    ("store recursive view", recursive_view),
    ("store 60 MB value", long_value),
    ("config games 'two'", config_change(games="two")),
    ("config games 10**18", config_change(games=10**18)),
    ("config max_plies null", config_change(max_plies=None)),
    ("config 100,000 players", bad_players),
    ("config seed [1]", config_change(seed=[1])),
    ("store of small rows", full_store),
    ("10,000 rows, one record", one_record_many_rows),
    ("record hard link out", hard_link_record),
    ("store trigger", never_ending_trigger),
    ("config nested 100,000", nested_config),
    ("22 reasons of 1 MB ESC", big_reasons),
]
"""Cases of ``results`` and ``export`` that must end in a one-line error."""

HEAVY_CASES: list[tuple[str, Callable[[Path, Path], None]]] = [
    ("record near its cap", near_cap_record),
    ("store of the largest event", largest_store),
    ("ESC in reasons", escape_reason),
    ("1,000-player gauntlet", gauntlet(lambda n: f"{n:04d}" + "\u00e9" * 96)),
    ("1,000 players, one name", gauntlet(lambda n: "\u00e9" * 100)),
]
"""Cases that are not errors, or need not be: what they cost is measured all the same."""

RESULTS_CASES: list[tuple[str, Callable[[Path, Path], None]]] = [
    ("records past results' cap", records_past_results_cap),
]
"""Cases of ``results`` alone, not errors: ``export`` of the same event reads what it writes,
90 MiB, a record at a time."""

RESUME_CASES: list[tuple[str, Callable[[Path, Path], None]]] = [
    ("store trigger", never_ending_trigger),
    ("config nested 100,000", nested_config),
]
"""Cases of ``match --resume`` that must end in a one-line error, no game played."""


def replay_cases(work: Path, good: Path) -> list[tuple[str, str, str]]:
    """(name, game, file) for ``replay``."""
    fifo = work / "replay.fifo"
    os.mkfifo(fifo)
    sparse(work / "huge.txt", GIB)
    sparse(work / "huge.sgf", GIB)
    lines = work / "line.txt"
    lines.write_bytes(b"# Game: yoxii\n" + b"c" * (sgf.MAX_RECORDS_FILE - 100))
    many = work / "many.txt"
    record = "# Game: yoxii\n" + "c\n" * ((files.MAX_RECORD_BYTES - 100) // 2)
    with open(many, "w") as file:
        for _ in range(sgf.MAX_RECORDS_FILE // len(record)):
            file.write(record)
    sgf_lines = work / "lines.sgf"
    sgf_lines.write_text("(;GM[24]\n;P0[place wr E 1\nsecond line\x1b[2J])")
    cap = files.MAX_RECORD_BYTES
    sgf_values = work / "values.sgf"
    sgf_values.write_text("(;A" + "[]" * ((cap - 6) // 2) + ")")
    sgf_value = work / "value.sgf"
    sgf_value.write_text('(;GM[24];P0[id "' + "\x1b" * (cap - 40) + '"])')
    sgf_unclosed = work / "unclosed.sgf"
    sgf_unclosed.write_text("(;A[" + "x" * (cap - 10))
    sgf_command = work / "command.sgf"
    sgf_command.write_text("(;GM[24];P0[" + "\x1b[2J" * 200_000 + "])")
    long_game = work / "long_game.txt"
    long_game.write_text("# Game: " + "\x1b" * (cap - 100) + "\n")
    return [
        ("replay FIFO", "yoxii", str(fifo)),
        ("replay /dev/zero", "yoxii", "/dev/zero"),
        ("replay 1 GiB", "yoxii", str(work / "huge.txt")),
        ("replay 1 GiB .sgf", "yinsh", str(work / "huge.sgf")),
        ("replay 64 MB one line", "yoxii", str(lines)),
        ("replay 64 MB of records", "yoxii", str(many)),
        ("replay SGF on 2 lines", "yinsh", str(sgf_lines)),
        ("replay ESC in reason", "yoxii", str(good / "games" / "game-00001.esc")),
        ("replay SGF of 500,000 []", "yinsh", str(sgf_values)),
        ("replay SGF value of 1 MiB", "yinsh", str(sgf_value)),
        ("replay SGF unclosed 1 MiB", "yinsh", str(sgf_unclosed)),
        ("replay SGF command 800 kB", "yinsh", str(sgf_command)),
        ("replay Game header 1 MiB", "yoxii", str(long_game)),
    ]


@dataclass
class Bench:
    """One run: where the cases are built, what a command is given, and the targets missed."""

    work: Path
    good: Path
    """The good event every crafted case is a copy of."""
    stats: Path
    """Where the wrapper writes a command's bytes read and peak RSS."""
    timeout: float
    only: str
    idle: float
    """The peak RSS of ``enginesrv results`` on the good event, MB."""
    missed: int = 0

    def run(self, argv: list[str]) -> Outcome:
        return run(argv, self.stats, self.timeout)

    def crafted(self, index: int, craft: Callable[[Path, Path], None]) -> Path:
        """A copy of the good event, numbered ``index``, as ``craft`` leaves it."""
        event = self.work / f"case{index:02d}"
        shutil.copytree(self.good, event, symlinks=True)
        craft(event, self.work)
        return event

    def report(self, name: str, command: str, outcome: Outcome, *, error: bool = True) -> None:
        """Print a command's line, and count it missed when it is not what ``error`` asks."""
        one_line = outcome.stderr.count("\n") == 1 and "Traceback" not in outcome.stderr
        raw = "\x1b" in outcome.stdout + outcome.stderr or "TOP-SECRET" in outcome.stdout
        extra = outcome.rss_mb - self.idle
        ok = (
            (not error or (outcome.status == 2 and one_line))
            and not raw
            and outcome.elapsed <= TIME_S
            and outcome.read_mb <= READ_MB
            and extra <= RSS_MB
        )
        self.missed += not ok
        said = outcome.stderr.strip().splitlines()[-1] if outcome.stderr.strip() else ""
        said = said.replace(str(self.work), "W")
        print(
            f"{name:<26} {command:<8} {outcome.status:>4} {'yes' if one_line else 'NO':>6} "
            f"{outcome.elapsed:>6.2f} {outcome.read_mb:>8.1f} {extra:>8.1f}  "
            f"{'ok' if ok else 'MISSED'}: {said[:150]}",
            flush=True,
        )


def play_good_event(work: Path) -> Path:
    """The good event (a two-game Yoxii match), with a copy of its first record whose reason
    holds ESC sequences (``game-00001.esc``, for ``replay``)."""
    good = work / "good"
    subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:random", "bot:greedy",
         "--depth", "1", "--games", "2", "--out", str(good)],
        check=True, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    text = (good / "games" / "game-00001.txt").read_text()
    (good / "games" / "game-00001.esc").write_text(
        text.replace("# Reason: ", "# Reason: \x1b[2J\x1b]0;owned\x07", 1)
    )
    return good


def run_store_cases(bench: Bench) -> None:
    """``results`` and ``export`` of each crafted store (the heavy ones are not errors)."""
    for index, (name, craft) in enumerate(STORE_CASES + HEAVY_CASES):
        if bench.only not in name:
            continue
        event = bench.crafted(index, craft)
        error = (name, craft) in STORE_CASES
        for command in ("results", "export"):
            argv = [command, str(event), *(["-o", "-"] if command == "export" else [])]
            bench.report(name, command, bench.run(argv), error=error)


def run_results_cases(bench: Bench) -> None:
    for index, (name, craft) in enumerate(RESULTS_CASES, 100):
        if bench.only in name:
            event = bench.crafted(index, craft)
            bench.report(name, "results", bench.run(["results", str(event)]), error=False)


def run_resume_cases(bench: Bench) -> None:
    for index, (name, craft) in enumerate(RESUME_CASES, 200):
        if bench.only in name:
            event = bench.crafted(index, craft)
            outcome = bench.run(["match", "--resume", "--out", str(event)])
            bench.report(name, "resume", outcome)


def run_replay_cases(bench: Bench) -> None:
    for name, game, path in replay_cases(bench.work, bench.good):
        if bench.only in name:
            outcome = bench.run(["replay", game, path])
            # the SGF files that are games, not errors: what they cost is measured
            error = "ESC" not in name and "[]" not in name and "value of" not in name
            bench.report(name, "replay", outcome, error=error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", metavar="DIR", help="build the cases in DIR and keep them")
    parser.add_argument("--only", metavar="TEXT", default="", help="the cases named so")
    parser.add_argument("--timeout", metavar="S", type=float, default=60.0, help="per command")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="hostile-files-"))
    if args.keep:
        work.mkdir(parents=True)  # a new directory: nothing of the user's is ever removed
    (work / "secret.txt").write_text("TOP-SECRET\n")
    good = play_good_event(work)
    stats = work / "stats"
    idle = min(run(["results", str(good)], stats).rss_mb for _ in range(3))
    print(f"idle 'enginesrv results' on a good event: peak RSS {idle:.1f} MB")
    print(f"{'case':<26} {'command':<8} {'exit':>4} {'1 line':>6} {'s':>6} {'read MB':>8} "
          f"{'RSS+ MB':>8}  verdict: stderr")  # fmt: skip
    bench = Bench(work, good, stats, args.timeout, args.only, idle)
    run_store_cases(bench)
    run_results_cases(bench)
    run_resume_cases(bench)
    run_replay_cases(bench)
    print(f"{bench.missed} targets missed" if bench.missed else "every target met")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bench.missed else 0


if __name__ == "__main__":
    sys.exit(main())
