"""The web front's targets, measured against a real ``enginesrv serve --web`` process on loopback.

Usage: python benchmarks/web.py [--only PART] [--loads 5] [--replies 60] [--games 50]
           [--invites 50] [--reconnects 20] [--seed 1] [--json]

The benchmark starts its own server, ``python -m enginesrv.cli serve --port 0 --web 0 --workers
2 --max-websockets-per-peer 64 --max-connections-per-peer 80 --max-plies 4000`` (the server's
defaults are 24 WebSockets and 32 connections per address, too few for part 4; 4000 plies is its
default), in a process group of its own. The ``listening`` and ``web`` lines on the server's
stdout give its addresses, and its log (stderr) goes to a temporary file whose tail is printed
when something fails. At the end the server gets SIGTERM and its group is killed; if anything
breaks, the group is killed at once. Parts 1 to 3 drive Debian's chromium (/usr/bin/chromium,
headless) with Playwright, and parts 4 to 6 talk to ``/ws`` with trio-websocket. Each part
prints its figures with their targets and PASS or FAIL, and a summary comes at the end. The exit
status is 1 when a target is missed or a part breaks (a part that breaks is a FAIL; the other
parts still run).

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
   The server is given a per-address WebSocket cap of 64, so at most 64 games can come from
   127.0.0.1.
5. invites: ``--invites`` games between two pages at once (docs/web.md, "Playing a person at
   another page"), two sockets each, across the four games in turn (the inviter is p1 in the
   first four, p2 in the next four, and so on). Each inviter opens
   ``/ws?game=GAME&opponent=invite&side=SIDE&tc=300+5`` and reads ``query table``; its guest
   then opens ``/ws?table=INVITE`` (the ``invite`` token) and checks with ``query table`` that
   both players are ``here``. No game starts before every socket is open. Then both players play
   random legal decisions to the end: ``query table``, ``query turn`` and ``query moves`` in one
   message, then ``play MOVE`` on the player's turn, else a wait for a ``table`` notification
   that tells of more plies than that ``query table`` (or of the end). The notes are kept aside
   wherever they come among the answers; the plies are asked first because the other player may
   decide between two answers of one message. The clock (300 s, 5 s more a decision) never runs
   out at random play's pace; a game that reaches the server's ply limit (4000) ends as a draw.
   A game is finished when both players' ``query result``, ``query outcome``, ``query played``
   and ``query table``'s plies agree with each other and with the decisions made (a Yin Yang law
   one player may not see is shown to it as ``?``, which matches the law). An error is any
   ``error`` or ``invalidmove`` line, a line the decoder refuses, a dropped socket, no answer
   (or awaited note) within 30 s, a disagreement, or a game not over at the part's deadline of
   600 s: a random Yohoho game runs to some 2,000 plies (two decisions a turn), and each change
   of turn waits for a note, which the server sends a page at most every 50 ms, so that such a
   game takes some 100 s (260 s among 96 games on 2 loaded cores). Target: 0 errors, every game
   finished with both sides agreeing; the mean wait for the other's decision is printed. An
   address may have made at most 8 tables that still exist
   (``enginesrv.web.tables.TABLES_PER_PEER``; a table lives on 10 minutes after its game), so
   the inviters of games 8k to 8k+7 come from 127.0.1.(k+1) and their guests from 127.0.2.(k+1)
   (on Linux all of 127.0.0.0/8 is loopback, and each address is a peer of its own): the
   benchmark opens each TCP connection from its address and wraps it with trio-websocket. Each
   address then holds 8 sockets, well within the caps; ``--invites`` is at most 96 because past
   192 connections the server keeps its last quarter for addresses holding fewer than 2.
6. reconnect: ``--reconnects`` times, one after the other, a fresh table of Yinsh, Yohoho or
   Yoxii in turn (random Yin Yang laws mostly end the game at its first decisions), its
   inviter from 127.0.3.x and its guest from 127.0.4.x, plays 4 to 12 random decisions (by
   whichever player is to act). Then one player (the inviter and the guest in turn) reads its
   ``query played``, closes its socket (the close handshake done) and opens a new one from the
   same address by its own token, ``/ws?table=TOKEN``, sending ``query played`` and ``query
   table`` in one message. Measured: from the start of the new connection (before its TCP
   connect) to those answers, which must tell the same decisions as before and show the
   player ``here`` with its token. Then 4 decisions more are played, the new socket's
   included. Errors as in part 5 (the part's deadline is 120 s). Target: the max under 1 s,
   0 errors; the median and the p90 are printed too.

The pages of parts 1 to 3 are watched for page errors and console errors: a part whose page
logged one fails. The whole run took 5 minutes on 2 cores that other work kept busy, most of it
parts 4 and 5.

How it talks: the commands of parts 4 to 6 are written by ``protocol.text.encode_command``, and
the replies (``table`` notifications included) are read by the protocol's client-side
``TextDecoder``, never by hand. A Yin Yang setup decision (``query moves`` answers a count) is
four random laws of ``games.yinyang.LAW_TEXTS``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
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
    wrap_client_stream,
)

from enginesrv.web.tables import TABLES_PER_PEER
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
PARTS = ("transfer", "firstboard", "reply", "concurrent", "invites", "reconnect")
BROWSER_PARTS = ("transfer", "firstboard", "reply")
WORKERS = 2
REPLY_GAME = "yoxii"
REPLY_BOT = "bot:alphabeta:Depth=1"
WS_PEER_CAP = 64
"""WebSockets one address may hold on the server (``--max-websockets-per-peer``; the server's
default, 24, would refuse part 4's sockets from the 25th on)."""
CONN_PEER_CAP = 80
"""Connections one address may hold on the server (``--max-connections-per-peer``): more than
its WebSockets, so that the browser parts' page loads are never refused beside them."""
MAX_PLIES = 4000
"""The server's ply limit (``--max-plies``, its default): a refereed game or a game between
two pages that reaches it ends as a draw (``max-plies``)."""

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
         "--workers", str(WORKERS), "--max-websockets-per-peer", str(WS_PEER_CAP),
         "--max-connections-per-peer", str(CONN_PEER_CAP), "--max-plies", str(MAX_PLIES)],
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


SOCKET_ERRORS = (
    RefusedError,
    ConnectionClosed,
    HandshakeError,
    DisconnectionTimeout,
    trio.TooSlowError,
    trio.BrokenResourceError,
    OSError,
)
"""What a socket's work may end with that counts as an error (``failure`` words it)."""


def failure(exc: BaseException) -> str:
    """One of SOCKET_ERRORS in words."""
    if isinstance(exc, ConnectionClosed):
        why = "" if exc.reason is None else f"{exc.reason.code} {exc.reason.reason or ''}"
        return f"the socket dropped: {why}".rstrip(" :")
    if isinstance(exc, HandshakeError):
        return f"the socket did not open: {exc!r}"
    if isinstance(exc, DisconnectionTimeout):
        return "the socket did not close in time"
    if isinstance(exc, trio.TooSlowError):
        return f"no answer within {REPLY_TIMEOUT:.0f} s"
    if isinstance(exc, OSError | trio.BrokenResourceError):
        return f"the socket broke: {exc!r}"
    return str(exc)


def decisions_held(played: str) -> int:
    """The decisions ``query played``'s answer holds (a long list is cut: ``count N moves``)."""
    words = played.split()
    return int(words[1]) if words[:1] == ["count"] else len(words)


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

    def arrive(self, sockets: int = 1) -> None:
        self.arrived += sockets
        if self.arrived >= self.count:
            self.all_in.set()

    def opened(self) -> None:
        self.open_now += 1
        self.peak = max(self.peak, self.open_now)

    def closed(self, sockets: int = 1) -> None:
        self.open_now -= sockets


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
    held = decisions_held(played)
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
            gate.opened()
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
                gate.closed()
    except SOCKET_ERRORS as exc:
        run.error = failure(exc)
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


def endings(outcomes: list[str]) -> str:
    """How the finished games ended (the reasons of their ``query outcome``), counted."""
    reasons = Counter(
        next((w[7:] for w in outcome.split() if w.startswith("reason=")), "?")
        for outcome in outcomes
    )
    return ", ".join(f"{r} {k}" for r, k in sorted(reasons.items())) or "none"


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
        ended = endings([run.outcome for run in mine if run.finished])
        report.say(
            f"  {game:8} {sum(r.finished for r in mine)}/{len(mine)} finished, decisions "
            f"{sum(made):,} (longest {max(made):,}); endings: {ended}"
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


# -- games between two pages (tables) ------------------------------------------------------

TABLE_TC = "300+5"
"""The clock of the games between two pages: random players never run it out (each decision
adds 5 s), so that each game ends by its rules or at the server's ply limit."""
INVITES_DEADLINE = 600.0
"""Seconds the invites part may take: a random Yohoho game runs to some 2,000 plies (a turn is
two decisions), and each change of turn waits for the other page's ``table`` notification,
which comes at most every 50 ms (on 2 loaded cores, 50 games took 100 to 135 s, 96 took 260 s)."""
REJOIN_GAMES = ("yinsh", "yohoho", "yoxii")
"""The games of the reconnect part: random Yin Yang laws mostly end the game at its first
decisions, so it has no middle to come back to."""
REJOIN_AFTER = (4, 12)
"""The decisions (at random in this range) played before a player's socket is closed."""
REJOIN_ON = 4
"""Decisions played after the player came back, the new socket taking part."""
REJOIN_DEADLINE = 120.0
TARGET_REJOIN_MS = 1000.0
MAX_INVITES = 96
"""Games of the invites part at most: the server holds 256 connections, the last quarter of
which it keeps for addresses holding fewer than 2 (``enginesrv.admission``), and each address
of the part holds 8 sockets."""
INVITER, GUEST = 0, 1
ROLE = ("inviter", "guest")
INVITES_BLOCKS = (1, 2)
"""The loopback blocks of the invites part's inviters and guests (``loopback``)."""
REJOIN_BLOCKS = (3, 4)
"""The reconnect part's: tables live on for 10 minutes after their game, and count against
the address that made them all that time."""


def loopback(block: int, game: int) -> str:
    """The address that the inviter (or the guest) of the ``game``-th table of a part comes
    from: ``127.0.BLOCK.(game // 8 + 1)``. On Linux all of 127.0.0.0/8 is loopback, and each
    address is a peer of its own to the server, which lets a peer have made at most
    ``TABLES_PER_PEER`` (8) tables that still exist."""
    return f"127.0.{block}.{game // TABLES_PER_PEER + 1}"


async def dial(
    nursery: trio.Nursery, server: ServerProcess, local: str, query: str
) -> WebSocketConnection:
    """A WebSocket on ``/ws?QUERY`` from the loopback address ``local`` (the TCP connection is
    opened here, bound to it, and wrapped by trio-websocket, whose reader runs in ``nursery``).

    Raises:
        RefusedError: not open within CONNECT_TIMEOUT.
        HandshakeError, OSError: it could not open.
    """
    where = urlsplit(server.url)
    assert where.hostname is not None
    assert where.port is not None
    with trio.move_on_after(CONNECT_TIMEOUT):
        stream = await trio.open_tcp_stream(where.hostname, where.port, local_address=local)
        try:
            return await wrap_client_stream(nursery, stream, where.netloc, f"/ws?{query}")
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
    raise RefusedError(f"the socket did not open within {CONNECT_TIMEOUT:.0f} s")


async def hang_up(sockets: list[WebSocketConnection]) -> bool:
    """Close the sockets (a close frame, then the server's); whether they all closed within
    CONNECT_TIMEOUT."""
    with trio.move_on_after(CONNECT_TIMEOUT) as scope:
        for ws in sockets:
            await ws.aclose()
    return not scope.cancelled_caught


def first_error(group: BaseExceptionGroup[Exception]) -> Exception:
    """The first error of a group of a task and its socket readers (``except*``)."""
    error: Exception | BaseExceptionGroup[Exception] = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def table_values(value: str) -> dict[str, str]:
    """``query table``'s answer, ``key=value ...``, as a dictionary."""
    return dict(word.split("=", 1) for word in value.split() if "=" in word)


def hides(masked: str, full: str) -> bool:
    """Whether ``masked`` is ``full`` as the other player is shown it: its hidden parts
    (Yin Yang's laws, between ``:`` and ``,``) written ``?``."""
    if "?" not in masked:
        return False
    pattern = "[^,:]+".join(re.escape(part) for part in masked.split("?"))
    return re.fullmatch(pattern, full) is not None


def same_decisions(mine: str, theirs: str) -> bool:
    """Whether two players' ``query played`` answers tell the same decisions: the same tokens,
    but where one was shown the other's hidden part as ``?``."""
    a, b = mine.split(), theirs.split()
    return len(a) == len(b) and all(
        x == y or hides(x, y) or hides(y, x) for x, y in zip(a, b, strict=True)
    )


class SeatSocket(GameSocket):
    """A player's socket at a table: the ``table`` notifications are kept aside wherever they
    come among the answers (the latest in ``note``), and ``moved`` waits for one."""

    def __init__(self, ws: WebSocketConnection) -> None:
        super().__init__(ws)
        self.note: dict[str, str] = {}
        self.notes = 0

    def _keep(self, note: m.TableNote) -> None:
        self.note = {key: str(value) for key, value in note.values.items()}
        self.notes += 1

    async def _line(self) -> m.ReplyLine:
        line = await super()._line()
        while isinstance(line, m.TableNote):
            self._keep(line)
            line = await super()._line()
        return line

    async def table(self) -> dict[str, str]:
        (value,) = await self.value(m.Query("table"))
        return table_values(value)

    async def moved(self, plies: int) -> None:
        """Wait for a note that tells of more than ``plies`` decisions, or of the game's end
        (the latest note may have told it already). Anything else meanwhile is an error: no
        command waits for its answer."""
        while int(self.note.get("plies", -1)) <= plies and self.note.get("result") in (
            None,
            "none",
        ):
            line = await GameSocket._line(self)
            if not isinstance(line, m.TableNote):
                shown = encode_reply_line(line).decode().rstrip("\n")
                raise RefusedError(f"{shown!r}, which no command asked for")
            self._keep(line)


@dataclass
class SeatEnd:
    """What one player's socket says of the game once it is over."""

    played: str
    result: str
    outcome: str
    plies: int


@dataclass
class TableRun:
    """One game between two pages of the invites part."""

    index: int
    game: str
    side: str
    """The inviter's seat."""
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    """The inviter's and the guest's."""
    waits: list[int] = field(default_factory=lambda: [0, 0])
    """The notifications each waited for (the other player's turns)."""
    waited: float = 0.0
    """Seconds both spent waiting for them, together."""
    notes: list[int] = field(default_factory=lambda: [0, 0])
    plies: int = 0
    outcome: str = ""
    finished: bool = False
    error: str = ""
    seconds: float = 0.0

    def fail(self, error: str) -> None:
        if not self.error:  # the first error: what followed came of it
            self.error = error


async def play_seat(
    peer: SeatSocket, seat: str, run: TableRun, player: int, rng: random.Random
) -> SeatEnd:
    """One player's random legal decisions to the end of the game (``query table``, ``query
    turn`` and ``query moves`` in one message, then ``play MOVE`` on its turn, else a wait for
    the note of the other's decision); what its socket then says of the game.

    The answers of one message are no snapshot: the other player may decide between two of
    them. The plies come first, so that a turn of the other's is theirs after those plies, and
    a note of more plies tells of a decision made since."""
    for _ in range(2 * MAX_PLIES + 2):
        table, turn, moves = await peer.value(m.Query("table"), m.Query("turn"), m.Query("moves"))
        plies = int(table_values(table)["plies"])
        if plies > MAX_PLIES:
            raise RefusedError(f"the game went on past the server's {MAX_PLIES} plies")
        if turn == "none":
            break
        if turn == seat:
            await peer.ask(m.Play(random_move(moves, rng)))
            run.decisions[player] += 1
        else:
            run.waits[player] += 1
            since = trio.current_time()
            await peer.moved(plies)
            run.waited += trio.current_time() - since
    else:
        raise RefusedError(f"no end after {2 * MAX_PLIES + 2} turns")
    played, result, outcome, table = await peer.value(
        m.Query("played"), m.Query("result"), m.Query("outcome"), m.Query("table")
    )
    run.notes[player] = peer.notes
    return SeatEnd(played, result, outcome, int(table_values(table)["plies"]))


def settle(run: TableRun, ends: list[SeatEnd]) -> None:
    """The game is finished when both players' sockets tell the same end: the result, the
    outcome, the plies (every decision made) and the decisions played."""
    host, guest = ends
    made = sum(run.decisions)
    if host.result != guest.result or host.result == "none":
        run.fail(f"query result: the inviter's {host.result}, the guest's {guest.result}")
    elif host.outcome != guest.outcome:
        run.fail(f"query outcome: the inviter's {host.outcome!r}, the guest's {guest.outcome!r}")
    elif not host.plies == guest.plies == made:
        run.fail(f"plies: {host.plies} and {guest.plies} told, {made} decisions made")
    elif not decisions_held(host.played) == decisions_held(guest.played) == made:
        run.fail(f"query played holds {decisions_held(host.played)} and "
                 f"{decisions_held(guest.played)} decisions, {made} were made")  # fmt: skip
    elif not same_decisions(host.played, guest.played):
        run.fail("query played: the two players were told different decisions")
    else:
        run.plies, run.outcome, run.finished = made, host.outcome, True


async def one_table(
    server: ServerProcess, run: TableRun, gate: Gate, rngs: tuple[random.Random, random.Random]
) -> None:
    """The inviter's socket, its ``query table``, the guest's socket by the invite's token;
    once every socket of the part is open, both players to the end of the game."""
    started = trio.current_time()
    arrived = 0
    places = [loopback(block, run.index) for block in INVITES_BLOCKS]
    try:
        async with trio.open_nursery() as readers:
            sockets: list[WebSocketConnection] = []
            try:
                spec = f"game={run.game}&opponent=invite&side={run.side}&tc={TABLE_TC}"
                sockets.append(await dial(readers, server, places[INVITER], spec))
                gate.opened()
                host = SeatSocket(sockets[-1])
                mine = await host.table()
                if mine.get("seat") != run.side or "invite" not in mine:
                    raise RefusedError(f"the inviter's query table: {mine}")
                sockets.append(
                    await dial(readers, server, places[GUEST], f"table={mine['invite']}")
                )
                gate.opened()
                guest = SeatSocket(sockets[-1])
                theirs = await guest.table()
                seats = (mine["seat"], theirs.get("seat", "?"))
                if set(seats) != {"p1", "p2"} or theirs.get("p1") != "here" != theirs.get("p2"):
                    raise RefusedError(f"the guest's query table: {theirs}")
                arrived = 2
                gate.arrive(2)
                await gate.all_in.wait()
                ends: list[SeatEnd | None] = [None, None]
                async with trio.open_nursery() as players:

                    async def seat_play(player: int, peer: SeatSocket) -> None:
                        try:
                            ends[player] = await play_seat(
                                peer, seats[player], run, player, rngs[player]
                            )
                        except SOCKET_ERRORS as exc:
                            run.fail(f"{ROLE[player]}: {failure(exc)}")
                            players.cancel_scope.cancel()  # the other would wait for nothing

                    players.start_soon(seat_play, INVITER, host)
                    players.start_soon(seat_play, GUEST, guest)
                if ends[0] is not None and ends[1] is not None:
                    settle(run, [ends[0], ends[1]])
            finally:
                if not await hang_up(sockets):
                    run.fail("a socket did not close in time")
                gate.closed(len(sockets))
                readers.cancel_scope.cancel()
    except* SOCKET_ERRORS as group:
        run.fail(failure(first_error(group)))
    finally:
        if arrived < 2:
            gate.arrive(2 - arrived)
        run.seconds = trio.current_time() - started


async def invite_games(
    server: ServerProcess, count: int, seed: int
) -> tuple[list[TableRun], Gate, float, float]:
    """The runs, the gate, the seconds to open every socket and the wall time."""
    runs = [
        TableRun(i, GAMES[i % len(GAMES)], "p1" if (i // len(GAMES)) % 2 == 0 else "p2")
        for i in range(count)
    ]
    gate = Gate(2 * count)
    started = trio.current_time()
    opened = 0.0
    with trio.move_on_after(INVITES_DEADLINE):
        async with trio.open_nursery() as nursery:
            for run in runs:
                rngs = (
                    random.Random(f"{seed}-{run.index}-0"),
                    random.Random(f"{seed}-{run.index}-1"),
                )
                nursery.start_soon(one_table, server, run, gate, rngs)
            await gate.all_in.wait()
            opened = trio.current_time() - started
    for run in runs:
        if not run.finished and not run.error:
            run.error = f"not over at the part's deadline ({INVITES_DEADLINE:.0f} s)"
    return runs, gate, opened, trio.current_time() - started


def measure_invites(server: ServerProcess, report: Report, count: int, seed: int) -> None:
    report.say(
        f"invites: {count} games between two pages at once over /ws ({2 * count} sockets), "
        f"tc={TABLE_TC}"
    )
    runs, gate, opened, wall = trio.run(invite_games, server, count, seed)
    finished = sum(run.finished for run in runs)
    errors = [run for run in runs if run.error]
    decisions = sum(sum(run.decisions) for run in runs)
    for game in GAMES:
        mine = [run for run in runs if run.game == game]
        if not mine:
            continue
        made = [sum(run.decisions) for run in mine]
        ended = endings([run.outcome for run in mine if run.finished])
        report.say(
            f"  {game:8} {sum(r.finished for r in mine)}/{len(mine)} finished, decisions "
            f"{sum(made):,} (longest {max(made):,}, {max(r.seconds for r in mine):.1f} s); "
            f"endings: {ended}"
        )
    for run in errors[:8]:
        report.say(f"  error, game {run.index} ({run.game}, inviter {run.side}): {run.error}")
    waits = sum(sum(run.waits) for run in runs)
    waited_ms = 1000 * sum(run.waited for run in runs) / waits if waits else 0.0
    report.say(
        f"  all {2 * count} sockets open after {opened:.2f} s (at most {gate.peak} open at "
        f"once); {decisions:,} decisions in {wall:.1f} s; {waits:,} waits for the other's "
        f"decision (its note), {waited_ms:.0f} ms on average"
    )
    report.figures["invites"] = {
        "games": count,
        "finished": finished,
        "errors": len(errors),
        "decisions": decisions,
        "waits": waits,
        "mean_wait_ms": waited_ms,
        "wall_s": wall,
        "open_s": opened,
        "peak_open": gate.peak,
        "runs": [asdict(run) for run in runs],
    }
    report.check(
        f"{count} games between two pages",
        f"{len(errors)} errors, {finished}/{count} finished, {decisions:,} decisions, {wall:.1f} s",
        "0 errors, all finished, both sides agreeing",
        not errors and finished == count,
    )


@dataclass
class Rejoin:
    """One reconnection of the reconnect part."""

    index: int
    game: str
    who: str
    """The player who leaves and comes back (``inviter`` or ``guest``)."""
    after: int
    """The decisions played when the socket is closed."""
    ms: float | None = None
    """From the new connection's start to its ``query played`` answered (None: not measured)."""
    error: str = ""


async def play_to(
    players: list[SeatSocket], seats: tuple[str, str], plies: int, rng: random.Random
) -> int:
    """Random legal decisions by whichever player is to act, until the game holds ``plies``
    decisions or is over; the plies then. The other player's notes are read as they come."""
    while True:
        table, turn = await players[0].value(m.Query("table"), m.Query("turn"))
        held = int(table_values(table)["plies"])
        if turn == "none" or held >= plies:
            return held
        mover = players[seats.index(turn)]
        (moves,) = await mover.value(m.Query("moves"))
        await mover.ask(m.Play(random_move(moves, rng)))


async def rejoin_once(server: ServerProcess, sample: Rejoin, rng: random.Random) -> None:
    """A table, ``sample.after`` decisions, one player's socket closed and a new one opened by
    its token (timed), then REJOIN_ON decisions more with the new socket."""
    leaver = ROLE.index(sample.who)
    side = "p1" if sample.index % 4 < 2 else "p2"
    places = [loopback(block, sample.index) for block in REJOIN_BLOCKS]
    try:
        async with trio.open_nursery() as readers:
            sockets: list[WebSocketConnection] = []
            try:
                spec = f"game={sample.game}&opponent=invite&side={side}&tc={TABLE_TC}"
                sockets.append(await dial(readers, server, places[INVITER], spec))
                host = SeatSocket(sockets[-1])
                mine = await host.table()
                invite = f"table={mine['invite']}"
                sockets.append(await dial(readers, server, places[GUEST], invite))
                guest = SeatSocket(sockets[-1])
                theirs = await guest.table()
                players = [host, guest]
                seats = (mine["seat"], theirs["seat"])
                tokens = (mine["token"], theirs["token"])
                if await play_to(players, seats, sample.after, rng) < sample.after:
                    raise RefusedError(f"the game ended before {sample.after} decisions")
                (before,) = await players[leaver].value(m.Query("played"))
                if not await hang_up([players[leaver].ws]):
                    raise DisconnectionTimeout
                started = trio.current_time()
                own = f"table={tokens[leaver]}"
                sockets.append(await dial(readers, server, places[leaver], own))
                back = SeatSocket(sockets[-1])
                played, table = await back.value(m.Query("played"), m.Query("table"))
                elapsed = trio.current_time() - started
                values = table_values(table)
                if played != before:
                    raise RefusedError(
                        f"query played: {played!r} after the return, {before!r} before"
                    )
                if values.get(seats[leaver]) != "here" or values.get("token") != tokens[leaver]:
                    raise RefusedError(f"query table after the return: {table}")
                sample.ms = elapsed * 1000
                players[leaver] = back
                await play_to(players, seats, sample.after + REJOIN_ON, rng)
            finally:
                if not await hang_up(sockets) and not sample.error:
                    sample.error = "a socket did not close in time"
                readers.cancel_scope.cancel()
    except* SOCKET_ERRORS as group:
        sample.error = failure(first_error(group))


async def rejoins(server: ServerProcess, count: int, seed: int) -> list[Rejoin]:
    """The reconnections, one after the other (the server does nothing else meanwhile)."""
    rng = random.Random(f"{seed}-rejoin")
    samples = [
        Rejoin(i, REJOIN_GAMES[i % len(REJOIN_GAMES)], ROLE[i % 2], rng.randint(*REJOIN_AFTER))
        for i in range(count)
    ]
    with trio.move_on_after(REJOIN_DEADLINE):
        for sample in samples:
            await rejoin_once(server, sample, rng)
    for sample in samples:
        if sample.ms is None and not sample.error:
            sample.error = f"not done at the part's deadline ({REJOIN_DEADLINE:.0f} s)"
    return samples


def measure_reconnect(server: ServerProcess, report: Report, count: int, seed: int) -> None:
    report.say(
        f"reconnect: {count} times, a player's socket closed mid-game and a new one opened "
        "by its token"
    )
    samples = trio.run(rejoins, server, count, seed)
    errors = [s for s in samples if s.error]
    times = [s.ms for s in samples if s.ms is not None]
    for sample in errors[:8]:
        report.say(f"  error, reconnection {sample.index} ({sample.game}, the {sample.who}): "
                   f"{sample.error}")  # fmt: skip
    report.figures["reconnect"] = {
        "reconnections": count,
        "measured": len(times),
        "errors": len(errors),
        "samples": [asdict(s) for s in samples],
    }
    if not times:
        report.check("reconnection", f"none measured, {len(errors)} errors",
                     f"max < {TARGET_REJOIN_MS:.0f} ms", False)  # fmt: skip
        return
    median, p90, worst = median_p90_max(times)
    report.figures["reconnect"].update({"median_ms": median, "p90_ms": p90, "max_ms": worst})
    report.say(
        f"  {len(times)} measured after {min(s.after for s in samples)} to "
        f"{max(s.after for s in samples)} decisions: "
        + ", ".join(f"{t:.0f}" for t in times)
        + " ms"
    )
    report.check(
        "reconnection to query played",
        f"median {median:.0f} ms, p90 {p90:.0f} ms, max {worst:.0f} ms; {len(errors)} errors",
        f"max < {TARGET_REJOIN_MS:.0f} ms, 0 errors",
        worst < TARGET_REJOIN_MS and not errors and len(times) == count,
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
    if "invites" in parts:
        run_part(
            report, server, "invites",
            lambda: measure_invites(server, report, args.invites, args.seed),
        )  # fmt: skip
    if "reconnect" in parts:
        run_part(
            report, server, "reconnect",
            lambda: measure_reconnect(server, report, args.reconnects, args.seed),
        )  # fmt: skip


def parse_args() -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="The top of benchmarks/web.py says how each part measures.",
    )
    parser.add_argument(
        "--only", choices=PARTS, action="append", metavar="PART",
        help=f"run this part only (repeatable): {', '.join(PARTS)}; default: all six",
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
        "--invites", type=int, default=50, metavar="N",
        help=f"invites: games between two pages at once, two sockets each (50; at most "
        f"{MAX_INVITES})",
    )  # fmt: skip
    parser.add_argument(
        "--reconnects", type=int, default=20, metavar="N",
        help="reconnect: players' sockets closed mid-game and opened again by the token (20)",
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
    if not 1 <= args.invites <= MAX_INVITES:
        parser.error(f"--invites {args.invites}: 1 to {MAX_INVITES}")
    if args.loads < 1 or args.replies < 1 or args.reconnects < 1:
        parser.error("--loads, --replies and --reconnects: at least 1")
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
