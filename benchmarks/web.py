"""The web front's targets, measured against a real ``enginesrv serve --web`` process on loopback.

Usage: python benchmarks/web.py [--only PART] [--loads 5] [--replies 60] [--games 50]
           [--seed 1] [--json]

The benchmark starts its own server, ``python -m enginesrv.cli serve --port 0 --web 0 --workers
2``, in a process group of its own. The ``listening`` and ``web`` lines on the server's stdout
give its addresses, and its log (stderr) goes to a temporary file whose tail is printed when
something fails. At the end the server gets SIGTERM and its group is killed; if anything breaks,
the group is killed at once. Parts 1 to 3 drive Debian's chromium (/usr/bin/chromium, headless)
with Playwright, and part 4 talks to ``/ws`` with trio-websocket. Each part prints its figures
with their targets and PASS or FAIL, and a summary comes at the end. The exit status is 1 when a
target is missed or a part breaks (a part that breaks is a FAIL; the other parts still run).

1. transfer: the page's weight. One fresh browser context loads ``/``, then a game of each game
   by its deep link (``/?game=yinsh&opponent=bot:random&side=p1``, then yohoho, yoxii,
   yinyang), waiting each time for the board, so that every board module is fetched. Chromium's
   own network events (the DevTools protocol) give each HTTP response's bytes on the wire: the
   headers, and the body as transferred (compressed only if the server compressed it; the line
   says which). A response the browser's cache served transferred nothing. Each file is listed
   with its size. WebSocket traffic is not counted. Target: the bodies' total under 300 KB
   (1 KB = 1000 bytes).
2. firstboard: the first board drawn on loopback. For each game, ``--loads`` page loads of its
   deep link (against bot:random), each in a new context (a cold cache), interleaved across the
   games. An init script's MutationObserver notes ``performance.now()`` (0 = the navigation's
   start) when the first ``[data-testid=board] [data-square]`` element is in the document.
   Target: the median under 1 s for each game.
3. reply: from a click to the bot's reply. The browser plays Yoxii as p1 against
   ``bot:alphabeta:Depth=1`` by clicking ``[data-legal=true]`` squares and
   ``[data-testid=choices] [data-choice]`` buttons (a choice when one is offered, else a random
   legal square). An in-page recorder notes the time of each click (a capture listener on the
   document) and follows ``body[data-state]``. A measured reply runs from the click that
   completes the person's placement, after which the state goes ``busy``, then ``bot``, then back
   to ``person`` or ``over``, to that moment, when the moves list (``[data-testid=moves] > *``)
   holds the bot's decisions too. A Yoxii turn is two decisions (the Totem, then a placement), so
   a reply is the bot's two decisions and the page's queries between them. Whole games are
   played until ``--replies`` replies are measured. Target: the median under 200 ms; the p90 and
   the max are printed too.
4. concurrent: ``--games`` refereed games at once over ``/ws`` (text framing), across the four
   games (in turn) and both seats (half the games let the bot start), against bot:random. Each
   socket first sends ``ping N`` (answered ``pong N``), and no game starts before every socket
   is open. Then each plays random legal moves (``query turn`` with ``query moves`` in one
   message, then ``play MOVE`` or, on the bot's turn, ``go``) to the end of the game. It ends by
   checking that ``query played`` holds every decision. An error is any ``error`` or
   ``invalidmove`` line, a ``bestmove none``, a line the decoder refuses, a dropped socket, or no
   answer within 30 s (the part's deadline is 120 s). Target: 0 errors, every game finished.
   The server's per-address WebSocket cap is 64, so at most 64 games can come from 127.0.0.1.

The pages of parts 1 to 3 are watched for page errors and console errors: a part whose page
logged one fails. The whole run takes about a minute on 2 cores.

How it talks: the commands of part 4 are written by ``protocol.text.encode_command``, and the
replies are read by the protocol's client-side ``TextDecoder``, never by hand. A Yin Yang setup
decision (``query moves`` answers a count) is four random laws of ``games.yinyang.LAW_TEXTS``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn
from urllib.parse import urlsplit

import trio
from playwright.sync_api import (
    Browser,
    CDPSession,
    ConsoleMessage,
    Page,
    ViewportSize,
    sync_playwright,
)
from trio_websocket import (
    ConnectionClosed,
    DisconnectionTimeout,
    HandshakeError,
    WebSocketConnection,
    open_websocket_url,
)

from games.yinyang import LAW_TEXTS
from protocol import messages as m
from protocol.errors import ProtocolError
from protocol.text import TextDecoder, encode_command, encode_reply_line

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT: ViewportSize = {"width": 1200, "height": 900}
GAMES = ("yinsh", "yohoho", "yoxii", "yinyang")
PARTS = ("transfer", "firstboard", "reply", "concurrent")
BROWSER_PARTS = ("transfer", "firstboard", "reply")
WORKERS = 2
REPLY_GAME = "yoxii"
REPLY_BOT = "bot:alphabeta:Depth=1"
WS_PEER_CAP = 64
"""WebSockets one address may hold on the server (``--max-websockets-per-peer``)."""

KB = 1000
TARGET_TRANSFER = 300 * KB
TARGET_FIRST_BOARD_MS = 1000.0
TARGET_REPLY_MS = 200.0

STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
PAGE_TIMEOUT_MS = 20_000
"""Milliseconds a page load, a redraw or a bot reply may take in the browser parts."""
SETTLE_TIMEOUT = 5.0
"""Seconds the browser's network events get to arrive once the last page is drawn."""
MAX_CLICKS = 400
"""Clicks one browser game may take (a Yoxii game is some 60)."""
REPLY_TIMEOUT = 30.0
CONNECT_TIMEOUT = 10.0
CONCURRENT_DEADLINE = 120.0
MAX_DECISIONS = 6000
"""Decisions one socket's game may take (random Yohoho games run to some 2,000)."""
LOG_TAIL = 40

SETTLED = "() => ['person', 'over'].includes(document.body.dataset.state)"

FIRST_BOARD_SCRIPT = """
(() => {
  const observer = new MutationObserver(() => {
    if (window.__firstBoard === undefined &&
        document.querySelector("[data-testid=board] [data-square]") !== null) {
      window.__firstBoard = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { childList: true, subtree: true });
})();
"""

REPLY_RECORDER = """
() => {
  const moves = () => document.querySelectorAll("[data-testid=moves] > *").length;
  const bench = { clickAt: null, before: 0, busy: false, bot: false, doneAt: null, moves: null };
  window.__bench = bench;
  window.__arm = () => Object.assign(bench, {
    clickAt: null, before: moves(), busy: false, bot: false, doneAt: null, moves: null,
  });
  document.addEventListener("click", () => {
    if (bench.clickAt === null) bench.clickAt = performance.now();
  }, true);
  new MutationObserver((records) => {
    if (bench.clickAt === null || bench.doneAt !== null) return;
    // each record holds the value before it: the value it set is the next one's old value
    records.forEach((record, i) => {
      const value = i + 1 < records.length ? records[i + 1].oldValue : document.body.dataset.state;
      if (bench.doneAt !== null) return;
      if (value === "busy") bench.busy = true;
      else if (value === "bot" && bench.busy) bench.bot = true;
      else if ((value === "person" || value === "over") && bench.bot) {
        bench.doneAt = performance.now();
        bench.moves = moves();
      }
    });
  }).observe(document.body, { attributes: true, attributeFilter: ["data-state"],
                              attributeOldValue: true });
}
"""


class BenchmarkError(Exception):
    """A part cannot go on (the message says why)."""


SIGNALLED: list[int] = []
"""The signal that interrupts the run (SIGTERM, SIGINT), once one has come."""


def _terminated(signum: int, frame: object) -> NoReturn:
    del frame
    SIGNALLED.append(signum)
    # the finally clauses close the browser and kill the server's group; Playwright may turn
    # this into an error of its own (the browser closed), which run_part sees as the signal
    raise SystemExit(128 + signum)


# -- the report ----------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    figure: str
    target: str
    passed: bool


@dataclass
class Report:
    """Lines for a person (stderr with ``--json``), figures for ``--json``, and the targets."""

    json_only: bool
    figures: dict[str, Any] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    broke: bool = False
    """A part (or the server's start) broke: the server's group is killed, the run fails."""

    def say(self, text: str = "") -> None:
        print(text, file=sys.stderr if self.json_only else sys.stdout, flush=True)

    def check(self, name: str, figure: str, target: str, passed: bool) -> None:
        self.targets.append(Target(name, figure, target, passed))
        self.say(f"  {'PASS' if passed else 'FAIL'} {name}: {figure} (target {target})")


def median_p90_max(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p90 = ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]  # nearest rank
    return statistics.median(ordered), p90, ordered[-1]


def kb(count: int) -> str:
    return f"{count / KB:.1f} KB"


# -- the server ----------------------------------------------------------------------------


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    listening: str = ""
    url: str = ""
    """``http://HOST:PORT/``"""

    def ws(self, query: str) -> str:
        return self.url.replace("http://", "ws://", 1) + f"ws?{query}"

    def check_alive(self) -> None:
        status = self.process.poll()
        if status is not None:
            raise BenchmarkError(f"the server exited with status {status}")

    def log_tail(self) -> str:
        self.log.flush()
        self.log.seek(0)
        lines = self.log.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-LOG_TAIL:])


def start_server(log: IO[bytes]) -> ServerProcess:
    """The server, once it has printed its ``listening`` and ``web`` lines.

    Raises:
        BenchmarkError: it exited or said nothing within STARTUP_TIMEOUT (its group is killed).
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--web", "0",
         "--workers", str(WORKERS)],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
        start_new_session=True,
    )  # fmt: skip
    server = ServerProcess(process, log)
    try:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        data = b""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        # the program's own two lines on its stdout; nothing else is written there
        while data.count(b"\n") < 2:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchmarkError(f"no 'listening' and 'web' lines within {STARTUP_TIMEOUT} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise BenchmarkError(f"the server exited ({process.wait()}) before its lines")
                data += chunk
        listening, web = data.decode("utf-8", "replace").splitlines()[:2]
        if not listening.startswith("listening ") or not web.startswith("web http://"):
            raise BenchmarkError(f"unexpected lines from the server: {listening!r}, {web!r}")
        server.listening = listening.split(" ", 1)[1]
        server.url = web.split(" ", 1)[1].rstrip("/") + "/"
    except BaseException:
        kill_group(process)
        raise
    return server


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the server's process group (the server and its workers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_TIMEOUT)


def stop_server(server: ServerProcess, *, broke: bool) -> int | None:
    """SIGTERM and the server's exit status (None: it did not stop and was killed); its group is
    killed afterwards (anything left), or at once when something broke."""
    process = server.process
    if broke or process.poll() is not None:
        kill_group(process)
        return None if broke else process.returncode
    process.terminate()
    try:
        status: int | None = process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        status = None
    kill_group(process)
    return status


# -- the browser ---------------------------------------------------------------------------


def deep_link(server: ServerProcess, game: str, opponent: str, side: str = "p1") -> str:
    return f"{server.url}?game={game}&opponent={opponent}&side={side}"


def watch(page: Page, problems: list[str]) -> None:
    """Page errors and console errors of ``page`` are added to ``problems``."""

    def on_error(error: object) -> None:
        problems.append(f"page error: {error}")

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console: {message.text}")

    page.on("pageerror", on_error)
    page.on("console", on_console)


def no_problems(report: Report, part: str, problems: list[str]) -> None:
    """A target of no page error and no console error."""
    for problem in problems[:5]:
        report.say(f"  {part}: {problem}")
    report.check(f"{part} page", f"{len(problems)} page or console errors", "0", not problems)


@dataclass
class Fetch:
    """One HTTP request of the page, from chromium's network events."""

    url: str = ""
    status: int = 0
    headers: int = 0
    """Bytes of the response's headers on the wire."""
    wire: int | None = None
    """Bytes on the wire, headers and body (None until the load has finished)."""
    cached: bool = False
    encoding: str = ""
    failed: str = ""

    @property
    def body(self) -> int:
        """The body's bytes as transferred (0 from the cache)."""
        if self.cached or self.wire is None:
            return 0
        return max(0, self.wire - self.headers)

    @property
    def settled(self) -> bool:
        return bool(self.url) and (self.cached or self.wire is not None or bool(self.failed))


class FetchLog:
    """The page's HTTP requests by chromium's request id, kept from its network events (the
    DevTools protocol)."""

    def __init__(self) -> None:
        self.fetches: dict[str, Fetch] = {}

    def listen(self, cdp: CDPSession) -> None:
        cdp.on("Network.responseReceived", self.received)
        cdp.on("Network.loadingFinished", self.finished)
        cdp.on("Network.requestServedFromCache", self.from_cache)
        cdp.on("Network.loadingFailed", self.failed)

    def fetch(self, event: dict[str, Any]) -> Fetch:
        return self.fetches.setdefault(event["requestId"], Fetch())

    def received(self, event: dict[str, Any]) -> None:
        fetch = self.fetch(event)
        response = event["response"]
        headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
        fetch.url = response["url"]
        fetch.status = int(response["status"])
        fetch.encoding = headers.get("content-encoding", "")
        if response.get("fromDiskCache") or response.get("fromPrefetchCache"):
            fetch.cached = True
        if not fetch.cached:  # from the cache, this counts what was cached, not sent
            fetch.headers = int(response.get("encodedDataLength", 0))

    def finished(self, event: dict[str, Any]) -> None:
        self.fetch(event).wire = int(event["encodedDataLength"])

    def from_cache(self, event: dict[str, Any]) -> None:
        self.fetch(event).cached = True

    def failed(self, event: dict[str, Any]) -> None:
        self.fetch(event).failed = str(event.get("errorText", "failed"))


def load_every_game(
    browser: Browser, server: ServerProcess, problems: list[str]
) -> dict[str, Fetch]:
    """Load ``/``, then a deep link of each game, in one fresh context; its requests, once
    their network events have come in (or SETTLE_TIMEOUT has passed)."""
    log = FetchLog()
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        watch(page, problems)
        cdp = context.new_cdp_session(page)
        log.listen(cdp)
        cdp.send("Network.enable")
        page.goto(server.url, timeout=PAGE_TIMEOUT_MS)
        page.wait_for_selector(
            "[data-testid=game-select] option", state="attached", timeout=PAGE_TIMEOUT_MS
        )
        for game in GAMES:
            page.goto(deep_link(server, game, "bot:random"), timeout=PAGE_TIMEOUT_MS)
            page.wait_for_selector("[data-testid=board] [data-square]", timeout=PAGE_TIMEOUT_MS)
            page.wait_for_function(SETTLED, timeout=PAGE_TIMEOUT_MS)
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while not all(f.settled for f in log.fetches.values()) and time.monotonic() < deadline:
            page.wait_for_timeout(50)  # the last network events are still on their way
    finally:
        context.close()
    return log.fetches


def broken_fetches(fetches: dict[str, Fetch]) -> list[str]:
    """The requests that failed, were answered with an error status, or never finished."""
    broken = [f"{f.url}: {f.failed}" for f in fetches.values() if f.failed]
    broken += [f"{f.url}: status {f.status}" for f in fetches.values() if f.status >= 400]
    broken += [f"{f.url or '?'}: never finished" for f in fetches.values() if not f.settled]
    return broken


def files_fetched(fetches: dict[str, Fetch]) -> dict[str, dict[str, Any]]:
    """Per path: its size (the body of a 200 from the network), its requests, those from the
    network and the bytes they transferred."""
    files: dict[str, dict[str, Any]] = {}
    for fetch in fetches.values():
        if not fetch.url:
            continue
        path = urlsplit(fetch.url).path or "/"
        entry = files.setdefault(
            path, {"path": path, "size": None, "requests": 0, "network": 0, "transferred": 0}
        )
        entry["requests"] += 1
        if not fetch.cached and fetch.wire is not None:
            entry["network"] += 1
            entry["transferred"] += fetch.body
            if fetch.status == 200 and entry["size"] is None:
                entry["size"] = fetch.body
    return files


def say_files(report: Report, files: dict[str, dict[str, Any]]) -> None:
    report.say(f"  {'file':28} {'size':>8}  requests (from the network), bytes transferred")
    for path in sorted(files):
        entry = files[path]
        size = "?" if entry["size"] is None else f"{entry['size']:,}"
        report.say(
            f"  {path:28} {size:>8}  {entry['requests']} ({entry['network']}), "
            f"{entry['transferred']:,}"
        )


def measure_transfer(browser: Browser, server: ServerProcess, report: Report) -> None:
    report.say("transfer: / then a deep link of each game, in one fresh context")
    problems: list[str] = []
    fetches = load_every_game(browser, server, problems)
    broken = broken_fetches(fetches)
    files = files_fetched(fetches)
    network = [f for f in fetches.values() if f.url and not f.cached and f.wire is not None]
    total = sum(f.body for f in network)
    header_bytes = sum(f.headers for f in network)
    encodings = sorted({f.encoding for f in network if f.encoding})
    compression = f"compressed ({', '.join(encodings)})" if encodings else "uncompressed"
    once = sum(entry["size"] or 0 for entry in files.values())
    say_files(report, files)
    report.say(
        f"  {len(fetches)} requests, {len(network)} from the network, "
        f"{len(fetches) - len(network)} from the cache; bodies {total:,} bytes ({compression}; "
        f"every file once: {once:,}), headers {header_bytes:,} bytes more"
    )
    for problem in broken:
        report.say(f"  transfer: {problem}")
    report.figures["transfer"] = {
        "bytes": total,
        "header_bytes": header_bytes,
        "once_bytes": once,
        "compressed": bool(encodings),
        "encodings": encodings,
        "requests": len(fetches),
        "from_network": len(network),
        "files": [files[path] for path in sorted(files)],
        "problems": broken + problems,
    }
    report.check(
        "page transfer",
        f"{kb(total)} of response bodies, {compression}",
        f"< {TARGET_TRANSFER // KB} KB",
        total < TARGET_TRANSFER and not broken,
    )
    no_problems(report, "transfer", problems)


def measure_first_board(
    browser: Browser, server: ServerProcess, report: Report, loads: int
) -> None:
    report.say(f"firstboard: {loads} loads of each game's deep link, each in a new context")
    samples: dict[str, list[float]] = {game: [] for game in GAMES}
    problems: list[str] = []
    for _ in range(loads):
        for game in GAMES:  # interleaved: a slow moment of the machine spreads over the games
            context = browser.new_context(viewport=VIEWPORT)
            try:
                context.add_init_script(FIRST_BOARD_SCRIPT)
                page = context.new_page()
                watch(page, problems)
                page.goto(deep_link(server, game, "bot:random"), timeout=PAGE_TIMEOUT_MS)
                page.wait_for_function(
                    "() => window.__firstBoard !== undefined", timeout=PAGE_TIMEOUT_MS
                )
                samples[game].append(float(page.evaluate("window.__firstBoard")))
            finally:
                context.close()
    figures: dict[str, Any] = {}
    for game in GAMES:
        median = statistics.median(samples[game])
        shown = ", ".join(f"{s:.0f}" for s in samples[game])
        figures[game] = {"median_ms": median, "samples_ms": samples[game]}
        report.check(
            f"first board {game}",
            f"median {median:.0f} ms of {shown}",
            f"< {TARGET_FIRST_BOARD_MS:.0f} ms",
            median < TARGET_FIRST_BOARD_MS,
        )
    report.figures["firstboard"] = {"loads": loads, "games": figures, "problems": problems}
    no_problems(report, "firstboard", problems)


@dataclass
class Click:
    """What one click led to, from the in-page recorder."""

    reply_ms: float | None
    """From the click to the bot's reply drawn (None: the click asked for no reply)."""
    bot_decisions: int


def click_once(page: Page, rng: random.Random) -> Click:
    """Click a choice when one is offered, else a random legal square, and wait until the page
    is back to the person (or the game is over)."""
    page.evaluate("window.__arm()")
    choices = page.locator("[data-testid=choices] [data-choice]")
    offered = choices.count()
    if offered:
        choices.nth(rng.randrange(offered)).click(timeout=PAGE_TIMEOUT_MS)
    else:
        legal = page.locator("[data-legal=true]")
        count = legal.count()
        if not count:
            raise BenchmarkError("the person is to act but nothing can be clicked")
        legal.nth(rng.randrange(count)).click(timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function(SETTLED, timeout=PAGE_TIMEOUT_MS)
    bench = page.evaluate("window.__bench")
    if bench["doneAt"] is None:
        return Click(None, 0)
    # the moves list: the person's decision and the bot's
    return Click(bench["doneAt"] - bench["clickAt"], int(bench["moves"]) - bench["before"] - 1)


def measure_replies(
    browser: Browser, server: ServerProcess, report: Report, replies: int, rng: random.Random
) -> None:
    report.say(f"reply: {REPLY_GAME} as p1 against {REPLY_BOT} by clicks, {replies} replies")
    samples: list[float] = []
    decisions: Counter[int] = Counter()
    problems: list[str] = []
    played = 0
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        watch(page, problems)
        while len(samples) < replies:
            if played >= replies // 4 + 10:
                raise BenchmarkError(f"{played} games gave only {len(samples)} replies")
            page.goto(deep_link(server, REPLY_GAME, REPLY_BOT), timeout=PAGE_TIMEOUT_MS)
            page.evaluate(REPLY_RECORDER)
            page.wait_for_function(SETTLED, timeout=PAGE_TIMEOUT_MS)
            played += 1
            for _ in range(MAX_CLICKS):
                if page.evaluate("document.body.dataset.state") == "over":
                    break
                click = click_once(page, rng)
                if click.reply_ms is not None:
                    samples.append(click.reply_ms)
                    decisions[click.bot_decisions] += 1
            else:
                raise BenchmarkError(f"a game did not end within {MAX_CLICKS} clicks")
    finally:
        context.close()
    median, p90, worst = median_p90_max(samples)
    grown = ", ".join(f"{n} decision(s) {k} times" for n, k in sorted(decisions.items()))
    report.say(f"  {len(samples)} replies in {played} games; the bot's replies: {grown}")
    report.figures["reply"] = {
        "games": played,
        "replies": len(samples),
        "median_ms": median,
        "p90_ms": p90,
        "max_ms": worst,
        "bot_decisions": {str(n): k for n, k in sorted(decisions.items())},
        "samples_ms": samples,
        "problems": problems,
    }
    unshown = sum(k for n, k in decisions.items() if n < 1)
    if unshown:
        report.say(f"  {unshown} replies ended with no bot decision in the moves list")
    report.check(
        "click to bot reply",
        f"median {median:.0f} ms, p90 {p90:.0f} ms, max {worst:.0f} ms",
        f"median < {TARGET_REPLY_MS:.0f} ms",
        median < TARGET_REPLY_MS and not unshown,
    )
    no_problems(report, "reply", problems)


# -- many games over /ws -------------------------------------------------------------------


class RefusedError(Exception):
    """An answer that counts as an error (the message quotes it)."""


ANSWERS: dict[type, type] = {m.Ping: m.Pong, m.Query: m.Response, m.Play: m.Response,
                             m.Go: m.BestMove}  # fmt: skip


class GameSocket:
    """One refereed game's WebSocket in the text framing: commands by the protocol's encoder,
    replies by its client-side decoder."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self.decoder = TextDecoder("client")

    async def ask(self, *commands: m.Command) -> list[m.ReplyLine]:
        """Send the commands in one message; their answers, in order (``info`` skipped).

        Raises:
            RefusedError: an error line, an invalid move, a line the decoder refused, an answer of
                the wrong kind.
            ConnectionClosed: the socket dropped.
            trio.TooSlowError: no line within REPLY_TIMEOUT.
        """
        await self.ws.send_message(b"".join(encode_command(c) for c in commands).decode())
        answers: list[m.ReplyLine] = []
        while len(answers) < len(commands):
            line = await self._line()
            if isinstance(line, m.ErrorReply | m.InvalidMove):
                raise RefusedError(encode_reply_line(line).decode().rstrip("\n"))
            if isinstance(line, m.Info):
                continue
            due = ANSWERS[type(commands[len(answers)])]
            if not isinstance(line, due):
                raise RefusedError(
                    f"{encode_reply_line(line).decode().rstrip()!r} for a {due.__name__}"
                )
            answers.append(line)
        return answers

    async def _line(self) -> m.ReplyLine:
        while True:
            try:
                line = self.decoder.next_message()
            except ProtocolError as exc:
                raise RefusedError(f"a line the decoder refused: {exc}") from None
            if line is not None:
                assert not isinstance(line, m.Request)  # a client's decoder reads replies only
                return line
            with trio.fail_after(REPLY_TIMEOUT):
                message = await self.ws.get_message()
            if not isinstance(message, str):
                raise RefusedError(f"a binary message of {len(message)} bytes on a text socket")
            self.decoder.feed(message.encode())

    async def value(self, *commands: m.Command) -> list[str]:
        """The ``response`` values of queries and plays."""
        return [str(getattr(line, "value", "")) for line in await self.ask(*commands)]


def random_move(moves: str, rng: random.Random) -> str:
    """A random legal move from ``query moves``'s answer."""
    words = moves.split()
    if words[:1] == ["count"]:
        if words[2:3] == ["moves"] and len(words) > 3:  # a list cut to the line limit
            return rng.choice(words[3:])
        if len(words) > 2 and words[2].startswith("laws:"):  # Yin Yang's setup
            return "laws:" + ",".join(rng.choice(LAW_TEXTS) for _ in range(4))
        raise RefusedError(f"no move can be made of {moves[:80]!r}")
    if not words:
        raise RefusedError("the person is to act but query moves lists nothing")
    return rng.choice(words)


@dataclass
class GameRun:
    index: int
    game: str
    side: str
    person: int = 0
    bot: int = 0
    finished: bool = False
    outcome: str = ""
    error: str = ""
    seconds: float = 0.0


@dataclass
class Gate:
    """No game starts before every socket is open (or has failed to open)."""

    count: int
    arrived: int = 0
    open_now: int = 0
    peak: int = 0
    all_in: trio.Event = field(default_factory=trio.Event)

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived >= self.count:
            self.all_in.set()


async def play_out(peer: GameSocket, run: GameRun, rng: random.Random) -> None:
    for _ in range(MAX_DECISIONS):
        turn, moves = await peer.value(m.Query("turn"), m.Query("moves"))
        if turn == "none":
            break
        if turn == run.side:
            await peer.ask(m.Play(random_move(moves, rng)))
            run.person += 1
        else:
            (best,) = await peer.ask(m.Go())
            if not isinstance(best, m.BestMove) or best.move is None:
                raise RefusedError("bestmove none while the game goes on")
            run.bot += 1
    else:
        raise RefusedError(f"no end after {MAX_DECISIONS} decisions")
    run.outcome, played = await peer.value(m.Query("outcome"), m.Query("played"))
    words = played.split()
    held = int(words[1]) if words[:1] == ["count"] else len(words)
    if held != run.person + run.bot:
        raise RefusedError(f"query played holds {held} decisions, {run.person + run.bot} were made")
    run.finished = True


async def one_game(server: ServerProcess, run: GameRun, gate: Gate, rng: random.Random) -> None:
    started = trio.current_time()
    arrived = False
    url = server.ws(f"game={run.game}&opponent=bot:random&side={run.side}")
    try:
        async with open_websocket_url(
            url, connect_timeout=CONNECT_TIMEOUT, disconnect_timeout=CONNECT_TIMEOUT
        ) as ws:
            gate.open_now += 1
            gate.peak = max(gate.peak, gate.open_now)
            try:
                peer = GameSocket(ws)
                (pong,) = await peer.ask(m.Ping(run.index))
                if not isinstance(pong, m.Pong) or pong.token != run.index:
                    raise RefusedError(f"ping {run.index} answered {pong}")
                arrived = True
                gate.arrive()
                await gate.all_in.wait()
                await play_out(peer, run, rng)
            finally:
                gate.open_now -= 1
    except RefusedError as exc:
        run.error = str(exc)
    except ConnectionClosed as exc:
        why = "" if exc.reason is None else f"{exc.reason.code} {exc.reason.reason or ''}"
        run.error = f"the socket dropped: {why}".rstrip(" :")
    except HandshakeError as exc:
        run.error = f"the socket did not open: {exc!r}"
    except DisconnectionTimeout:
        run.error = "the socket did not close in time"
    except trio.TooSlowError:
        run.error = f"no answer within {REPLY_TIMEOUT:.0f} s"
    except OSError as exc:
        run.error = f"the socket broke: {exc}"
    finally:
        if not arrived:
            gate.arrive()
        run.seconds = trio.current_time() - started


async def concurrent_games(
    server: ServerProcess, count: int, seed: int
) -> tuple[list[GameRun], Gate, float, float]:
    """The runs, the gate, the seconds to open every socket and the wall time."""
    runs = [
        GameRun(i, GAMES[i % len(GAMES)], "p1" if (i // len(GAMES)) % 2 == 0 else "p2")
        for i in range(count)
    ]
    gate = Gate(count)
    started = trio.current_time()
    opened = 0.0
    with trio.move_on_after(CONCURRENT_DEADLINE):
        async with trio.open_nursery() as nursery:
            for run in runs:
                nursery.start_soon(
                    one_game, server, run, gate, random.Random(f"{seed}-{run.index}")
                )
            await gate.all_in.wait()
            opened = trio.current_time() - started
    for run in runs:
        if not run.finished and not run.error:
            run.error = f"not over at the part's deadline ({CONCURRENT_DEADLINE:.0f} s)"
    return runs, gate, opened, trio.current_time() - started


def measure_concurrent(server: ServerProcess, report: Report, count: int, seed: int) -> None:
    report.say(f"concurrent: {count} refereed games at once over /ws against bot:random")
    runs, gate, opened, wall = trio.run(concurrent_games, server, count, seed)
    finished = sum(run.finished for run in runs)
    errors = [run for run in runs if run.error]
    decisions = sum(run.person + run.bot for run in runs)
    for game in GAMES:
        mine = [run for run in runs if run.game == game]
        if not mine:
            continue
        made = [run.person + run.bot for run in mine]
        reasons = Counter(
            next((w[7:] for w in run.outcome.split() if w.startswith("reason=")), "?")
            for run in mine
            if run.finished
        )
        shown = ", ".join(f"{r} {k}" for r, k in sorted(reasons.items()))
        report.say(
            f"  {game:8} {sum(r.finished for r in mine)}/{len(mine)} finished, decisions "
            f"{sum(made):,} (longest {max(made):,}); endings: {shown or 'none'}"
        )
    for run in errors[:8]:
        report.say(f"  error, game {run.index} ({run.game} {run.side}): {run.error}")
    rate = decisions / wall if wall > 0 else 0.0
    report.say(
        f"  all {count} sockets open after {opened:.2f} s (at most {gate.peak} open at once); "
        f"{decisions:,} decisions in {wall:.1f} s ({rate:,.0f}/s)"
    )
    report.figures["concurrent"] = {
        "games": count,
        "finished": finished,
        "errors": len(errors),
        "decisions": decisions,
        "person_decisions": sum(run.person for run in runs),
        "bot_decisions": sum(run.bot for run in runs),
        "wall_s": wall,
        "open_s": opened,
        "peak_open": gate.peak,
        "runs": [asdict(run) for run in runs],
    }
    report.check(
        f"{count} concurrent games",
        f"{len(errors)} errors, {finished}/{count} finished, {decisions:,} decisions, {wall:.1f} s",
        "0 errors, all finished",
        not errors and finished == count,
    )


# -- main ----------------------------------------------------------------------------------


def run_part(report: Report, server: ServerProcess, name: str, part: Callable[[], None]) -> None:
    """Run one part; one that breaks is a FAIL (and marks the run broken), never a crash."""
    started = time.perf_counter()
    try:
        server.check_alive()
        part()
    except Exception as exc:  # a part that breaks is reported, and the next part runs
        report.broke = True
        if SIGNALLED:
            report.say(f"interrupted by signal {SIGNALLED[0]}")
            raise SystemExit(128 + SIGNALLED[0]) from exc
        report.say(traceback.format_exc().rstrip())
        report.check(name, f"broke: {exc}".splitlines()[0][:200], "no error", False)
    finally:
        report.say(f"  ({name}: {time.perf_counter() - started:.1f} s)")


def run_parts(report: Report, server: ServerProcess, parts: list[str], args: Any) -> None:
    rng = random.Random(args.seed)
    if any(part in BROWSER_PARTS for part in parts):
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            chosen: dict[str, Callable[[], None]] = {
                "transfer": lambda: measure_transfer(browser, server, report),
                "firstboard": lambda: measure_first_board(browser, server, report, args.loads),
                "reply": lambda: measure_replies(browser, server, report, args.replies, rng),
            }
            try:
                for part in parts:
                    if part in chosen:
                        run_part(report, server, part, chosen[part])
            finally:
                browser.close()
    if "concurrent" in parts:
        run_part(
            report, server, "concurrent",
            lambda: measure_concurrent(server, report, args.games, args.seed),
        )  # fmt: skip


def parse_args() -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="The top of benchmarks/web.py says how each part measures.",
    )
    parser.add_argument(
        "--only", choices=PARTS, action="append", metavar="PART",
        help=f"run this part only (repeatable): {', '.join(PARTS)}; default: all four",
    )  # fmt: skip
    parser.add_argument(
        "--loads",
        type=int,
        default=5,
        metavar="N",
        help="firstboard: fresh page loads per game (5)",
    )
    parser.add_argument(
        "--replies", type=int, default=60, metavar="N",
        help="reply: bot replies to measure, in whole games (60)",
    )  # fmt: skip
    parser.add_argument(
        "--games", type=int, default=50, metavar="N",
        help=f"concurrent: games at once over /ws (50; at most {WS_PEER_CAP}, the server's "
        "WebSocket cap per address)",
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=int, default=1, metavar="N", help="seed of the random moves (1)"
    )
    parser.add_argument(
        "--json", action="store_true",
        help="print the figures as JSON on stdout (the progress lines go to stderr)",
    )  # fmt: skip
    args = parser.parse_args()
    if not 1 <= args.games <= WS_PEER_CAP:
        parser.error(f"--games {args.games}: 1 to {WS_PEER_CAP}")
    if args.loads < 1 or args.replies < 1:
        parser.error("--loads and --replies: at least 1")
    return args


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGINT, _terminated)
    parts = [part for part in PARTS if part in (args.only or PARTS)]
    report = Report(args.json)
    report.figures["command"] = ["python", *sys.argv]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        server: ServerProcess | None = None
        try:
            server = start_server(log)
            report.say(f"server: listening {server.listening}, web {server.url}, {WORKERS} workers")
            report.figures["server"] = {"listening": server.listening, "web": server.url}
            run_parts(report, server, parts, args)
        except BenchmarkError as exc:  # the server did not start
            report.broke = True
            report.say(f"stopped: {exc}")
        except BaseException:  # interrupted, or the browser could not start: no summary
            report.broke = True
            raise
        finally:
            if server is not None:
                status = stop_server(server, broke=report.broke)
                report.figures["server_exit"] = status
                report.say(
                    "the server's process group was killed"
                    if report.broke
                    else f"server exit status after SIGTERM: {status}"
                )
            if report.broke or (server is not None and report.figures["server_exit"] != 0):
                report.say(f"the server's log, last {LOG_TAIL} lines:")
                report.say(server.log_tail() if server is not None else _read(log))
    passed = bool(report.targets) and all(t.passed for t in report.targets) and not report.broke
    elapsed = time.perf_counter() - started
    report.say()
    report.say(f"summary ({elapsed:.0f} s)")
    for t in report.targets:
        report.say(f"  {'PASS' if t.passed else 'FAIL'} {t.name}: {t.figure} (target {t.target})")
    report.say("PASS: every target met" if passed else "FAIL: a target was missed")
    if args.json:
        report.figures["targets"] = [asdict(t) for t in report.targets]
        report.figures["pass"] = passed
        report.figures["seconds"] = elapsed
        print(json.dumps(report.figures, indent=2))
    return 0 if passed else 1


def _read(log: IO[bytes]) -> str:
    log.seek(0)
    return "\n".join(log.read().decode("utf-8", "replace").splitlines()[-LOG_TAIL:])


if __name__ == "__main__":
    sys.exit(main())
