"""Arbiter targets: built-in bots keep their time, also on a busy machine or with the watch page
open; the arbiter's own overhead per move.

Usage: python benchmarks/arbiter.py [--game G ...] [--games 50] [--control st=0.2 ...]
                                    [--player alphabeta] [--opponent greedy]
                                    [--concurrency N] [--busy] [--max-plies N] [--out DIR]
                                    [--watch [--viewer chromium|websocket|none] [--web PORT]]

For every game (default: yinsh, yohoho, yoxii, yinyang) and every control (default: ``st=0.2``
and ``tc=2+0.05``) it plays a match between the two bots through the arbiter exactly as
``enginesrv match`` does (worker processes, clocks on the arbiter's side; concurrency 2 unless
``--concurrency`` says otherwise), then reports:

* games, plies and the time forfeits of the bots (target: none);
* the overrun of every move: the time the arbiter measured from ``go`` to the answer minus the
  time the move was given (its ``--st``, or what its clock allowed), read from the records'
  ``over=`` notes, and of each move lost on time from its forfeit comment: p50, p99 and the
  largest (target: p99 at most 10 ms);
* the arbiter's overhead per move (the games' wall time minus the go-to-answer times).

``--watch`` runs the README's watch example instead, as a user does: the program itself,
``python -m enginesrv.cli match GAME bot:PLAYER bot:OPPONENT --games N --st 0.5 --web 0 --out
DIR`` (default game yoxii and control ``st=0.5``; the README's concurrency, 1, unless
``--concurrency`` is given; ``--web PORT`` to choose the port), in a process group of its own.
Once it prints its ``web http://...`` line, ONE viewer keeps its watch page open to the end: a
headless chromium (/usr/bin/chromium through Playwright, started before the match as a
person's browser is; the page must reach ``body[data-state=watching]``, its page and console
errors are counted, and nothing is asked of it until the match ends), or, where chromium is
missing or with ``--viewer websocket``, a WebSocket on ``/events`` that reads every message as
the page does (it says so). ``--viewer none`` runs the same command with nobody watching, for
comparison. The figures above are then read from the event's ``results.sqlite`` and records,
with the CPU seconds the arbiter, its search workers and the viewer used from the ``web`` line
on (sampled from /proc every second).

``--busy`` keeps one extra CPU-bound process per core running during the matches, as a machine
that also does other work: the bots must keep their deadlines anyway. Every process it starts
is ended when it stops, also on Ctrl-C or SIGTERM (the watched match's group is interrupted,
then killed). Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

import trio

from enginesrv.event.config import EventConfig
from enginesrv.event.prepared import prepare
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.standings import load_results
from enginesrv.event.tournament import Finished, run_event

if TYPE_CHECKING:
    from playwright.sync_api import Browser

GAMES = ("yinsh", "yohoho", "yoxii", "yinyang")
CONTROLS = ("st=0.2", "tc=2+0.05")
WATCH_GAME, WATCH_CONTROL = "yoxii", "st=0.5"
"""The README's watch example: ``enginesrv match yoxii ... --st 0.5 --web 8081``."""
P99_TARGET_MS = 10
OVER = re.compile(r"\bover=(-?\d+)")
FORFEIT = re.compile(r"^# (p[12] .*)$", re.MULTILINE)
"""The arbiter's comment on a forfeit in a record (``# p1 alphabeta: 590 ms used of 500 ms``)."""
USED = re.compile(r"(\d+) ms used of (\d+) ms")
NO_MOVE = re.compile(r"no move after ([\d.]+) s")
REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
WEB_LINE_TIMEOUT = 60.0
"""Seconds the watched match gets to print its ``web`` line."""
PAGE_TIMEOUT_MS = 30_000
"""How long the page gets to reach ``body[data-state=watching]``."""
STOP_TIMEOUT = 10.0
"""Seconds an interrupted match gets to stop before its group is killed."""
TICK = os.sysconf("SC_CLK_TCK")
"""/proc's CPU time unit, per second."""


def percentile(values: list[int], share: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(
    label: str, rows: list[GameRow], out: Path, wall: float, *, st_ms: int | None, extra: str = ""
) -> bool:
    """Print one line of figures for the games ``rows`` stored in ``out``; whether the targets
    (no time forfeit, p99 overrun at most ``P99_TARGET_MS``) were met. A forfeited move counts
    in the overruns too: what its comment says was used less what it was given (``st_ms``
    for a move the arbiter gave up on)."""
    plies = sum(r.plies for r in rows)
    texts = [p.read_text(encoding="utf-8") for p in sorted((out / "games").glob("game-*.txt"))]
    overruns = [int(m.group(1)) for text in texts for m in OVER.finditer(text)]
    forfeits: list[str] = []
    for row in rows:
        if row.reason == "time-forfeit" and row.record is not None:
            comment = FORFEIT.search((out / row.record).read_text(encoding="utf-8"))
            detail = comment.group(1) if comment else "?"
            forfeits.append(f"game {row.id}, ply {row.plies + 1}: {detail}")
            used, gave_up = USED.search(detail), NO_MOVE.search(detail)
            if used:
                overruns.append(int(used.group(1)) - int(used.group(2)))
            elif gave_up and st_ms is not None:
                overruns.append(round(1000 * float(gave_up.group(1))) - st_ms)
    own = 1000 * sum(r.wall - r.engine_time for r in rows) / max(1, plies)
    p99 = percentile(overruns, 0.99) if overruns else 0
    ok = bool(rows) and not forfeits and p99 <= P99_TARGET_MS
    over = (
        f"overrun p50 {percentile(overruns, 0.5)} ms p99 {p99} ms max {max(overruns)} ms"
        if overruns
        else "no timed move"
    )
    reasons = Counter(r.reason for r in rows)
    print(
        f"{label} {'PASS' if ok else 'FAIL'} | {len(rows)} games, {plies} plies, {wall:.0f} s "
        f"| time forfeits {len(forfeits)} | {over} over {len(overruns)} moves | arbiter "
        f"overhead {own:.2f} ms/move | "
        + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
        + extra,
        flush=True,
    )
    for line in forfeits:
        print(f"  time forfeit: {line}", flush=True)
    return ok


def run_one(args: argparse.Namespace, game: str, control: str, root: Path) -> bool:
    kind, value = split_control(control)
    out = root / f"{game}-{kind}"
    limit = {"st": float(value)} if kind == "st" else {"tc": value}
    config = prepare(
        EventConfig(
            game,
            (f"name=a:bot:{args.player}", f"name=b:bot:{args.opponent}"),
            games=args.games,
            concurrency=args.concurrency or 2,
            max_plies=args.max_plies,
            event="arbiter benchmark",
            **limit,
        ),
        out,
        resume=False,
    )

    def on_game(done: Finished) -> None:
        if done.done % 10 == 0 or done.done == done.total:
            print(f"  {game} {control}: {done.done}/{done.total} games", file=sys.stderr)

    started = time.monotonic()
    trio.run(lambda: run_event(config, out, on_game=on_game))
    wall = time.monotonic() - started
    st_ms = round(1000 * float(value)) if kind == "st" else None
    return summary(f"{game:8} {control:10}", load_results(out)[2], out, wall, st_ms=st_ms)


def split_control(control: str) -> tuple[str, str]:
    kind, _, value = control.partition("=")
    if kind not in ("st", "tc") or not value:
        raise SystemExit(f"--control {control!r}: write st=SECONDS or tc=TC")
    return kind, value


# -- the README's watch example ----------------------------------------------------------------


def _terminated(signum: int, frame: object) -> NoReturn:
    del frame
    raise SystemExit(128 + signum)  # the finally clauses end the match and the viewer


def start_match(
    args: argparse.Namespace, game: str, control: str, out: Path, log: IO[bytes]
) -> tuple[subprocess.Popen[bytes], str]:
    """The watched match, in a process group of its own, and its page's address (its first
    stdout line). Raises SystemExit (its group killed) if it prints no ``web`` line in time."""
    kind, value = split_control(control)
    command = [
        sys.executable, "-m", "enginesrv.cli", "match", game, f"bot:{args.player}",
        f"bot:{args.opponent}", "--games", str(args.games), f"--{kind}", value,
        "--web", str(args.web), "--out", str(out), "--event", "arbiter benchmark, watched",
    ]  # fmt: skip
    if args.concurrency:
        command += ["--concurrency", str(args.concurrency)]
    print("  " + " ".join(command[2:]), file=sys.stderr, flush=True)
    process = subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        data = b""
        deadline = time.monotonic() + WEB_LINE_TIMEOUT
        while b"\n" not in data:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([process.stdout], [], [], max(0.0, left))
            chunk = os.read(process.stdout.fileno(), 4096) if ready else b""
            if not chunk:
                raise SystemExit(f"the match printed no 'web' line ({process.poll()}): {data!r}")
            data += chunk
        line = data.decode("utf-8", "replace").splitlines()[0]
        if not line.startswith("web http://"):
            raise SystemExit(f"the match's first line is not its 'web' line: {line!r}")
    except BaseException:
        end_match(process)
        raise
    return process, line.split(" ", 1)[1]


def end_match(process: subprocess.Popen[bytes]) -> None:
    """Interrupt the match's group if it still runs (its stored games are kept), then kill
    whatever of the group is left."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=STOP_TIMEOUT)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_TIMEOUT)
    if process.stdout is not None:
        process.stdout.close()


class CpuMeter:
    """CPU seconds of the match's process, of the rest of its group (the search workers) and of
    this script with its other descendants (the viewer), from /proc: each process counts
    with the most it was seen to have used, so sample often. What each had used when the match
    printed its ``web`` line (``start``: the browser's own start-up, say) is not counted."""

    def __init__(self) -> None:
        self.match = -1
        self.seen: dict[int, tuple[str, int]] = {}
        self.before: dict[int, int] = {}

    def start(self, match: int) -> None:
        """Count from now, ``match`` being the match's process (its group's leader)."""
        self.sample()
        self.before = {pid: ticks for pid, (_, ticks) in self.seen.items()}
        self.match = match

    def sample(self) -> None:
        parents: dict[int, int] = {}
        stats: dict[int, tuple[int, int]] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                pid = int(entry.name)
                parents[pid] = int(fields[1])
                stats[pid] = (int(fields[2]), int(fields[11]) + int(fields[12]))
        for pid, (group, ticks) in stats.items():
            if pid == self.match:
                role = "arbiter"
            elif group == self.match:
                role = "workers"
            elif pid == os.getpid() or self._descends(pid, parents):
                role = "viewer"  # this script (a WebSocket viewer's thread) and its children
            else:
                continue
            self.seen[pid] = (role, max(ticks, self.seen.get(pid, ("", 0))[1]))

    def _descends(self, pid: int, parents: dict[int, int]) -> bool:
        for _ in range(64):
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
            if pid <= 1:
                return False
        return False

    def text(self) -> str:
        used: Counter[str] = Counter()
        for pid, (role, ticks) in self.seen.items():
            used[role] += ticks - self.before.get(pid, 0)
        return ", ".join(
            f"{role} {used[role] / TICK:.0f}" for role in ("arbiter", "workers", "viewer")
        )


@contextlib.contextmanager
def open_chromium() -> Iterator[Browser]:
    """A headless chromium, started before the match as a person's browser runs before they
    open the page (its own start-up is not what is measured); closed at the end."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (only this viewer needs it)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def watch_with_chromium(
    browser: Browser, url: str, match: subprocess.Popen[bytes], cpu: CpuMeter
) -> str:
    """Keep one page of ``browser`` on ``url`` until the match ends; what it saw, in words."""
    problems: list[str] = []
    page = browser.new_page()
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "console",
        lambda message: problems.append(message.text) if message.type == "error" else None,
    )
    page.goto(url)
    page.wait_for_selector("body[data-state=watching]", timeout=PAGE_TIMEOUT_MS)
    while match.poll() is None:
        # Playwright's own wait, so that its connection is served; nothing else is asked of
        # the page meanwhile (a person watching asks nothing either)
        page.wait_for_timeout(1000)
        cpu.sample()
    last = page.inner_text("[data-testid=event-progress]", timeout=PAGE_TIMEOUT_MS)
    errors = f", {len(problems)} page errors ({problems[0][:80]})" if problems else ""
    return f"chromium page: {last}{errors}"


def watch_with_websocket(url: str, match: subprocess.Popen[bytes], cpu: CpuMeter) -> str:
    """Read ``/events`` on one WebSocket, as the page does, until the match ends."""
    from trio_websocket import ConnectionClosed, open_websocket_url  # noqa: PLC0415

    counts: Counter[str] = Counter()
    done = threading.Event()

    async def read() -> None:
        async with trio.open_nursery() as nursery:

            async def until_done() -> None:
                while not done.is_set():
                    await trio.sleep(0.2)
                nursery.cancel_scope.cancel()

            nursery.start_soon(until_done)
            with contextlib.suppress(ConnectionClosed, OSError):
                address = url.replace("http://", "ws://", 1).rstrip("/") + "/events"
                async with open_websocket_url(address) as socket:
                    while True:
                        message = await socket.get_message()
                        counts[str(message).split('"type":"', 1)[-1].split('"', 1)[0]] += 1
            nursery.cancel_scope.cancel()

    reader = threading.Thread(target=trio.run, args=(read,), name="watcher", daemon=True)
    reader.start()
    try:
        while match.poll() is None:
            time.sleep(1)
            cpu.sample()
    finally:
        done.set()
        reader.join(timeout=STOP_TIMEOUT)
    return "WebSocket on /events: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def run_watched(args: argparse.Namespace, game: str, control: str, root: Path) -> bool:
    """The README's watch example with one viewer (module docstring); whether targets were met."""
    out = root / f"{game}-{control.replace('=', '')}-watched"
    viewer = args.viewer
    if viewer == "chromium" and not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        print(f"  no chromium at {CHROMIUM}: the viewer is a WebSocket on /events", flush=True)
        viewer = "websocket"
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(tempfile.TemporaryFile())
        browser = stack.enter_context(open_chromium()) if viewer == "chromium" else None
        cpu = CpuMeter()
        started = time.monotonic()
        match, url = start_match(args, game, control, out, log)
        cpu.start(match.pid)
        try:
            print(f"  {url}: viewer {viewer}", file=sys.stderr, flush=True)
            if browser is not None:
                seen = watch_with_chromium(browser, url, match, cpu)
            elif viewer == "websocket":
                seen = watch_with_websocket(url, match, cpu)
            else:
                seen = "nobody watching"
                while match.poll() is None:
                    time.sleep(1)
                    cpu.sample()
            match.wait(timeout=STOP_TIMEOUT)
        finally:
            end_match(match)
        wall = time.monotonic() - started
        if match.returncode != 0:
            log.seek(0)
            print(log.read().decode("utf-8", "replace")[-2000:], file=sys.stderr)
    rows = load_results(out)[2]
    kind, value = split_control(control)
    st_ms = round(1000 * float(value)) if kind == "st" else None
    extra = f" | CPU s: {cpu.text()} | {seen} | exit {match.returncode}"
    label = f"{game} {control} watched"
    return summary(label, rows, out, wall, st_ms=st_ms, extra=extra) and match.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", action="append", choices=GAMES, help="repeatable (all four)")
    parser.add_argument("--games", type=int, default=50, help="games per game and control")
    parser.add_argument("--control", action="append", help="st=S or tc=TC, repeatable")
    parser.add_argument("--player", default="alphabeta")
    parser.add_argument("--opponent", default="greedy")
    parser.add_argument("--concurrency", type=int, help="2 (with --watch: the README's, 1)")
    parser.add_argument("--max-plies", type=int, default=400)
    parser.add_argument("--busy", action="store_true", help="one CPU-bound process per core")
    parser.add_argument("--out", help="keep the events here (default: a temporary directory)")
    parser.add_argument(
        "--watch", action="store_true", help=f"the README's watch example ({WATCH_GAME} st=0.5)"
    )
    parser.add_argument("--viewer", choices=("chromium", "websocket", "none"), default="chromium")
    parser.add_argument("--web", type=int, default=0, help="--watch: the page's port (0: free)")
    args = parser.parse_args()
    root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="arbiter-bench-"))
    signal.signal(signal.SIGTERM, _terminated)
    burners: list[subprocess.Popen[bytes]] = []
    try:
        if args.busy:
            for _ in range(os.cpu_count() or 1):
                burners.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        print(
            f"{args.player} vs {args.opponent}, concurrency {args.concurrency or 'default'}"
            f"{', busy: ' + str(len(burners)) + ' CPU-bound processes' if burners else ''}",
            flush=True,
        )
        ok = True
        run = run_watched if args.watch else run_one
        for game in args.game or ((WATCH_GAME,) if args.watch else GAMES):
            for control in args.control or ((WATCH_CONTROL,) if args.watch else CONTROLS):
                ok = run(args, game, control, root) and ok
    except KeyboardInterrupt:
        print(f"interrupted; the events so far: {root}", file=sys.stderr)
        return 130  # everything it started has been ended on the way here
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(f"events: {root}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
