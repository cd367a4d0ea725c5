"""Abuse scenarios against a real ``enginesrv serve`` process on loopback.

Usage: python benchmarks/server_abuse.py [--game yinsh] [--bot alphabeta] [--workers 2]
           [--scenario NAME ...] [--interleavings 1000] [--server-arg=--max-connections=1000]

The server runs as ``python -m enginesrv.cli serve --port 0`` (with ``--workers``, ``--game``,
``--bot`` and every ``--server-arg``); its log (stderr) goes to a temporary file whose tail is
printed when something fails. A scenario may need a server of its own kind: with the web front
(``--web 0``: the server then prints ``listening HOST:PORT`` and ``web http://HOST:PORT/``),
under a descriptor limit (started through ``prlimit --nofile=N:N``), with a short HTTP
keep-alive timeout (``--http-idle-timeout``, only when ``enginesrv serve --help`` lists it).
The server is started before the first scenario, again before a scenario that needs another
kind (the line says so), and again if a scenario killed it. Each start reads the server's
limits from a ``ugi`` handshake (``limit NAME VALUE``); after the first one, the probe's search
(below) is timed once on the idle server.

Each scenario prints one line: its name, PASS or FAIL, then

- probe: a well-behaved client connected from 127.0.0.2 (text framing) sends ``isready``
  every 20 ms from the start of the abuse until at least 1 s after its end, and, once at the
  start of the abuse (or when the scenario says, once its hogs run), the Yinsh position of
  docs/protocol.md §10.1 (``setoption name Game value yinsh``, ``position startpos moves h6 g6
  g8 c6 e10 f8 g11 e9 h11 d7``) and ``go depth 3``: the p99 and max of isready -> readyok, and
  whether the go was answered searched (an ``info depth 3`` line before its ``bestmove``)
  within its budget, max(5 s, 3 times what the same go took on the idle server), and how fast;
- rss: the resident memory of the server and all its descendants (VmRSS summed over /proc)
  just before the scenario, its peak sampled every 100 ms during it, and after the
  connections are closed (waiting up to 5 s for it to come back within 8 MB of before);
- fds: the server process's open descriptors (/proc/PID/fd) before, at the peak, and after
  (waiting up to 5 s for them to come back down);
- idle: the time from the end of the abuse until every worker (the server's child processes)
  used at most 2 clock ticks of CPU over one 300 ms window, or NOT IDLE after 5 s;
- fresh: a fresh peer, from a loopback address nothing used before it in the run, connects
  while the abusive connections are still open (at the end of the abuse, unless the scenario
  sends its own earlier) and sends ``isready``: how fast its readyok came;
- what the scenario itself counted.

Targets, for every scenario: probe p99 <= 50 ms; the probe's go answered searched within its
budget; rss peak and rss after each <= 100 MB above before; workers idle within 1 s; the fresh
peer admitted (its readyok within 5 s); plus the scenario's own target, given below. Exit
status 1 if any scenario fails. Before each scenario the benchmark waits (up to 10 s) until the
server and its workers are idle; a server still busy then (or dead) is restarted, so that one
scenario's aftermath does not land in the next one's figures (the line says so).

Scenarios (each ends by closing all its connections). Those up to interleavings connect from
127.0.0.1; the hogs of two-address-hog from 127.0.0.3 and 127.0.0.4; the others from addresses
of their own, 127.0.1.1 on, none used twice in a run (Linux routes all of 127.0.0.0/8 to
loopback, so each address is a peer of its own to the server):

go-stop-same-write
    One connection, 40 times one write ``position startpos``, ``go infinite``, ``stop``: exactly
    one bestmove each within 5 s (lost and extra ones are counted; 30 s budget).
go-and-close
    20 connections each send ``go infinite`` (every other one after ``position startpos``) and
    close at once: the server must stop those searches and give the workers back.
pipelined-flood-close
    One write of the Yin Yang view (``setoption name Game value yinyang`` and a ``position fen``
    of a view) and 1500 ``query moves`` (about 60 KB of reply each), then close without
    reading: how long the server stays busy afterwards (its main process idle, up to 10 s).
pipelined-flood-close-ugi
    The same with 3000 ``ugi``.
never-reads
    4 connections each send the Yin Yang view and 2000 ``query moves`` in chunks, never
    reading, for up to 10 s: the server should disconnect them at its output byte cap (seen
    from the client's TCP state); target: all 4 disconnected.
idle-300
    300 connections that send nothing, held for 5 s; target: a fresh peer gets its readyok
    within 1 s.
slowloris-500
    500 connections each sending one byte a second (``isready`` and its line end, one byte at
    a time) for 8 s; target: a fresh peer served within 1 s.
search-hog
    One peer opens (workers + 2) connections with a ``go infinite`` each; the probe's go must
    still be answered searched while they run; then the hog sends ``stop`` on each and must get
    one answer per go (a bestmove, or an error refusing the go).
pipelined-burst
    A well-behaved client sends 10 times 100 commands in one write (``isready``, ``ping N``,
    ``query turn``, ``position startpos``) and reads everything; target: every command
    answered, no error line (``error 301`` included).
interleavings
    N random go/stop interleavings over 4 connections (2 text, 2 msgpack-RPC): go infinite,
    depth 1-3 or movetime; stop (text, msgpack notification or request, with or without the
    search id) after 0-30 ms or in the same write; sometimes ``position startpos`` right after
    the stop; sometimes a disconnect mid-search (then a new connection); one in five pipelines
    two gos and a stop (in one write, or the second go and the stop up to 20 ms after the
    first: the second go is refused with 204 alone, or searched once the first has ended).
    Counts the gos sent on connections that stayed open and their answers (bestmove, go
    response, or an error refusing the go); target: none lost, none extra (a budget of 60 s
    per 1000 interleavings, at least 60 s).
two-address-hog
    Two addresses, 127.0.0.3 and 127.0.0.4, each open (workers + 2) connections and send
    ``position startpos`` and ``go infinite`` on each, reading what comes; the probe sends its
    go once they run; they hold until its answer (or its budget) and at least 3 s, while the
    fresh peer comes; then each sends ``stop`` and ``isready``; target: every go answered
    exactly once (a bestmove, or an error refusing the go; none lost, none extra).
two-address-hog-movetime
    The same, but each hog connection sends ``go movetime T`` again as soon as the previous one
    is answered (T the server's announced ``limit movetime``, or 60000 if it announces none).
loop-starvation-4, loop-starvation-32
    4 (resp. 32) connections spread over 4 addresses each send the Yin Yang view, then ``query
    moves`` (about 60 KB of reply) again and again, reading each answer before the next, for
    8 s: counts the answers, their latency, errors and connections the server closed.
http-hoard
    Server: ``--web 0`` under a limit of 1024 descriptors. 1,100 HTTP/1.1 connections spread
    over 11 addresses (100 each, 64 connecting at a time) each GET ``/static/app.js`` with
    keep-alive, read the whole response (parsed by h11) and hold the connection; once every
    one is answered or has waited 20 s, a fresh peer's TCP session (isready -> readyok), a
    fresh WebSocket on ``/ws`` (isready -> readyok) and a fresh HTTP GET ``/`` (each from an
    address of its own); then the connections are held until the server's HTTP keep-alive
    timeout has passed (``--http-idle-timeout 5`` when the server has that flag, held 10 s;
    else held 35 s, hypercorn's 30 s timeout and 5 s more). Counts the connections answered
    (at once or late), refused (closed unanswered), failed or left unanswered, and those the
    server closed after their answer and when; target: the three fresh requests each
    answered within 1 s.
slots-spread
    8 addresses x 32 TCP sessions (each sends ``isready``, reads its readyok, then holds) and,
    with the web front (the server is started with ``--web 0``; without it if that fails),
    4 addresses x 64 WebSockets on ``/ws`` (the same), held 3 s; counts those admitted
    (readyok), refused (TCP: closed before anything was sent; WebSocket: closed with code
    1013) and otherwise lost; target: a fresh peer (another address) gets its TCP readyok and
    its WebSocket readyok within 1 s each, while they hold.
long-session
    One text session (its own address) on Yohoho (``setoption name Game value yohoho``,
    ``uginewgame``) plays as many plies as it can for 10 s: ``query moves``, then ``play`` of a
    random move not tried yet in that position (and the next ``query moves`` in the same
    write); when a move ends the game (no legal move after it), ``undo`` and try another, going
    back further when every move of a position has been tried. Counts the plies played, the
    game's length, the games ended and undone, and whether the server refused a ply with an
    error (its name, e.g. ``error 305 ply-limit``, and the announced ``limit plies``); target:
    the common ones only (rss).
never-reads-128
    128 connections over 8 addresses (16 each) do what never-reads does (the view, then 2000
    ``query moves`` in chunks, never reading, for up to 10 s): counts those the server
    disconnected and when; target: the common ones only (rss peak and after).

Measurement notes: the probe runs in this process, beside the abusive clients, so its latency
includes this process's own scheduling; a probe isready left unanswered for 5 s ends the
probe (counted as a 5 s sample). With fewer than 100 samples the p99 is the maximum. Every
loop is bounded in count and time. The benchmark raises its own soft descriptor limit (up to
the hard one) to hold the http-hoard's connections.

How it talks: whatever it reads from the server is decoded by the protocol package (the
client-side ``TextDecoder`` and ``MsgpackDecoder``), never by hand; HTTP responses are parsed
by h11 and WebSockets spoken by trio-websocket (whose text messages go through the same
decoder). The search-hog's sessions are well-formed and go through ``enginesrv.client``. The
probes and every connection from a chosen address (the client library cannot connect from
one), and pipelined-burst, which puts a hundred commands in one write as the library never
does, write their own bytes (well-formed commands with the protocol's encoders) and read the
answers with the decoders.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import math
import os
import random
import resource
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import termios
import time
import traceback
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias
from urllib.parse import urlsplit

import h11
import trio
from trio_websocket import (
    ConnectionClosed,
    ConnectionRejected,
    HandshakeError,
    WebSocketConnection,
    wrap_client_stream,
)

from enginesrv.client import AsyncEngine, ClientError, EngineError, SearchHandle
from protocol import messages as m
from protocol import mpack, text
from protocol.errors import BY_CODE, ProtocolError

REPO = Path(__file__).resolve().parent.parent
SERVER = "127.0.0.1"
ABUSER = "127.0.0.1"
PROBER = "127.0.0.2"
MB = 1024 * 1024
RECEIVE = 65536
MAX_LINES = 1_000_000
"""Bound on lines (or frames) read by one wait; time bounds come first in practice."""
MAX_LINE = 1 << 20
"""The longest reply line read (the server's own are at most 64 KiB)."""
MAX_FRAME = 16 * MB
"""The largest msgpack frame read."""

PROBE_EVERY = 0.020
PROBE_READY_TIMEOUT = 5.0
PROBE_GAME = "yinsh"
PROBE_MOVES = ("h6", "g6", "g8", "c6", "e10", "f8", "g11", "e9", "h11", "d7")
"""The Yinsh position of docs/protocol.md §10.1, searched by the probe."""
PROBE_DEPTH = 3
PROBE_GO_FLOOR = 5.0
PROBE_GO_FACTOR = 3.0
"""The probe's go is given max(PROBE_GO_FLOOR, PROBE_GO_FACTOR x its time on the idle server)."""
CALIBRATE_TIMEOUT = 30.0
HANDSHAKE_TIMEOUT = 10.0
PROBE_AFTER = 1.0
"""The probe goes on for at least this long after the end of the abuse."""
SAMPLE_EVERY = 0.100
IDLE_EVERY = 0.050
IDLE_WINDOW = 0.300
IDLE_TICKS = 2
IDLE_GIVE_UP = 5.0
SETTLE_LIMIT = 10.0
FDS_SETTLE = 5.0
RSS_SETTLE = 5.0
RSS_BACK = 8 * MB
"""After a scenario, RSS counts as come back within this much of its value before."""
CONNECT_TIMEOUT = 5.0
SEND_TIMEOUT = 5.0
FRESH_TIMEOUT = 5.0
STARTUP_TIMEOUT = 60.0
TERM_GRACE = 5.0
LEFTOVER_GRACE = 2.0

TARGET_P99 = 0.050
TARGET_RSS = 100 * MB
TARGET_IDLE = 1.0
TARGET_FRESH = 1.0
TARGET_ADMITTED = 5.0
"""The fresh peer of every scenario must get its readyok within this (admitted at all)."""

TCP_ESTABLISHED = 1
NOFILE_WANTED = 8192
"""This process's soft descriptor limit is raised to this (at most the hard limit)."""
HOG_ADDRESSES = ("127.0.0.3", "127.0.0.4")
VIEW = (
    "setoption name Game value yinyang\n"
    "position fen bwww/bwww/bbbw/bbbw b start -bbbb>*,-..w.>bbw.,-wwww>w.ww,-.ww.>bwwb "
    "?,?,?,? 8 10 1\n"
)

# fields of /proc/PID/stat counted from the state (field 3) as index 0
PPID, UTIME, STIME, STARTTIME = 1, 11, 12, 19


# -- /proc -------------------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
    except OSError:
        return None
    end = data.rfind(b")")
    fields = data[end + 2 :].decode("ascii", "replace").split()
    return fields if end >= 0 and len(fields) > STARTTIME else None


def _rss(pid: int) -> int:
    """VmRSS of a process in bytes (0 if it is gone or a zombie)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as file:
            for line in file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _fd_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _ticks(fields: list[str]) -> int:
    return int(fields[UTIME]) + int(fields[STIME])


@dataclass(frozen=True)
class Snapshot:
    """The server process tree at one moment."""

    at: float
    """time.monotonic()"""
    rss: int
    """bytes, the server and all its descendants"""
    fds: int
    """the server's open descriptors"""
    server_ticks: int
    workers: dict[int, int]
    """the server's children: pid -> utime + stime (clock ticks)"""
    tree: dict[int, str]
    """every descendant: pid -> start time (to recognise it later, against pid reuse)"""


def snapshot(root: int) -> Snapshot:
    """Read the server's process tree from /proc (ppid links of every /proc/*/stat)."""
    stats: dict[int, list[str]] = {}
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat(int(name))
        if fields is not None:
            stats[int(name)] = fields
            children.setdefault(int(fields[PPID]), []).append(int(name))
    tree: dict[int, str] = {}
    stack = list(children.get(root, []))
    while stack:  # each pid is pushed once per parent and taken once: bounded by /proc
        pid = stack.pop()
        if pid in tree or pid == root:
            continue
        tree[pid] = stats[pid][STARTTIME]
        stack.extend(children.get(pid, []))
    root_stat = stats.get(root)
    return Snapshot(
        at=time.monotonic(),
        rss=sum(_rss(pid) for pid in (root, *tree)),
        fds=_fd_count(root),
        server_ticks=_ticks(root_stat) if root_stat else 0,
        workers={pid: _ticks(stats[pid]) for pid in children.get(root, [])},
        tree=tree,
    )


def idle_between(first: Snapshot, last: Snapshot, *, server_too: bool) -> bool:
    """Whether every worker of ``last`` was there at ``first`` and used at most IDLE_TICKS of
    CPU since (and the server process too, with ``server_too``)."""
    if server_too and last.server_ticks - first.server_ticks > IDLE_TICKS:
        return False
    return all(
        pid in first.workers and ticks - first.workers[pid] <= IDLE_TICKS
        for pid, ticks in last.workers.items()
    )


# -- the server process ------------------------------------------------------------------------


class StartupError(Exception):
    """The server did not come up."""


@dataclass(frozen=True)
class ServerSpec:
    """The kind of server a scenario needs."""

    web: bool = False
    """With the web front (``--web 0``)."""
    web_required: bool = True
    """Without it, the scenario fails (else it runs on a server without it, saying so)."""
    nofile: int | None = None
    """A limit of descriptors (soft and hard), through ``prlimit``."""
    short_http_idle: bool = False
    """A short HTTP keep-alive timeout, when the server has a flag for it."""

    def describe(self) -> str:
        parts = (["--web 0"] if self.web else []) + (
            [f"a limit of {self.nofile} descriptors"] if self.nofile else []
        )
        if self.short_http_idle:
            parts.append("a short HTTP keep-alive timeout if it has the flag")
        return ", ".join(parts) or "plain"


PLAIN = ServerSpec()
HTTP_IDLE_FLAG = "--http-idle-timeout"
SHORT_HTTP_IDLE = 5.0
"""Seconds of HTTP keep-alive asked for with HTTP_IDLE_FLAG."""


def http_idle_args(help_text: str) -> list[str]:
    """``--http-idle-timeout`` with SHORT_HTTP_IDLE, in the unit its metavar names, when
    ``enginesrv serve --help`` lists it; else nothing."""
    words = help_text.replace(",", " ").replace("=", " ").split()
    if HTTP_IDLE_FLAG not in words:
        return []
    after = words.index(HTTP_IDLE_FLAG) + 1
    unit = words[after] if after < len(words) else "S"
    value = SHORT_HTTP_IDLE * 1000 if unit.upper() == "MS" else SHORT_HTTP_IDLE
    return [HTTP_IDLE_FLAG, f"{value:g}"]


class ServerProcess:
    """``enginesrv serve`` as a child process, its stderr in ``log_path``."""

    def __init__(self, base: list[str], log_path: Path, http_idle: list[str]) -> None:
        self.base = base
        self.log_path = log_path
        self.http_idle = http_idle
        """The arguments that shorten the HTTP keep-alive timeout (none if it has no flag)."""
        self.process: subprocess.Popen[bytes] | None = None
        self.spec = PLAIN
        """What was asked for at the last start."""
        self.web = False
        """Whether the running server has its web front."""
        self.command: list[str] = []
        self.port = 0
        self.web_port: int | None = None
        self.pid = 0
        self.limits: dict[str, int] = {}
        """The handshake's ``limit NAME VALUE`` lines (read after each start)."""
        self.seen: dict[int, str] = {}
        """Every descendant ever sampled (pid -> start time), to kill leftovers at the end."""

    def command_for(self, spec: ServerSpec, *, web: bool) -> list[str]:
        command = [*self.base, *(["--web", "0"] if web else [])]
        if spec.short_http_idle and web:
            command += self.http_idle
        if spec.nofile is not None:
            prlimit = shutil.which("prlimit")
            if prlimit is None:
                raise StartupError("no prlimit program to start it under a descriptor limit")
            command = [prlimit, f"--nofile={spec.nofile}:{spec.nofile}", "--", *command]
        return command

    def start(self, spec: ServerSpec) -> None:
        """Start the server (with its web front if ``spec`` asks for it, falling back to none
        if it may) and wait for its ``listening HOST:PORT`` (and ``web URL``) line."""
        self.spec = spec
        try:
            self._start(spec, web=spec.web)
        except StartupError:
            if not spec.web or spec.web_required:
                raise
            self._start(spec, web=False)

    def _start(self, spec: ServerSpec, *, web: bool) -> None:
        self.command = self.command_for(spec, web=web)
        self.limits = {}
        self.web = web
        self.web_port = None
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                cwd=REPO,
            )  # fmt: skip
        self.pid = self.process.pid
        try:
            lines = self._read_lines(2 if web else 1)
            first = lines[0]
            if not first.startswith("listening "):
                raise StartupError(f"unexpected first line {first!r}")
            self.port = int(first.rsplit(":", 1)[1])
            if web:
                if not lines[1].startswith("web "):
                    raise StartupError(f"unexpected second line {lines[1]!r}")
                self.web_port = urlsplit(lines[1].split()[1]).port
                if self.web_port is None:
                    raise StartupError(f"no port in {lines[1]!r}")
        except (StartupError, ValueError, IndexError) as exc:
            how = self.stop()
            if isinstance(exc, StartupError):
                raise StartupError(f"{exc} ({how})") from None
            raise StartupError(f"unreadable first lines ({exc!r}; {how})") from None

    def _read_lines(self, count: int) -> list[str]:
        """The first ``count`` lines the server prints on stdout."""
        assert self.process is not None
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        data = b""
        while data.count(b"\n") < count:  # bounded by the deadline
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StartupError(f"not {count} line(s) on stdout within {STARTUP_TIMEOUT:g} s")
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise StartupError(f"closed its stdout (status {self.process.poll()})")
                data += chunk
            elif self.process.poll() is not None:
                raise StartupError(f"exited with status {self.process.returncode}")
        return [line.strip() for line in data.decode(errors="replace").splitlines()[:count]]

    def alive(self) -> bool:
        """Whether the server process is running."""
        return self.process is not None and self.process.poll() is None

    def stop(self) -> str:
        """SIGTERM, SIGKILL after TERM_GRACE; then kill any worker left behind. Says how."""
        process = self.process
        if process is None:
            return "not started"
        if process.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                self.seen.update(snapshot(process.pid).tree)
            process.terminate()
            try:
                how = f"exit status {process.wait(TERM_GRACE)} after SIGTERM"
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(TERM_GRACE)
                how = f"still running {TERM_GRACE:g} s after SIGTERM: killed"
        else:
            how = f"had exited with status {process.returncode}"
        if process.stdout is not None:
            process.stdout.close()
        self.process = None
        leftovers = self._kill_leftovers()
        if leftovers:
            how += f"; killed {leftovers} leftover descendant process(es)"
        return how

    def _alive_seen(self) -> list[int]:
        alive = []
        for pid, started in self.seen.items():
            fields = _stat(pid)
            if fields is not None and fields[STARTTIME] == started and fields[0] != "Z":
                alive.append(pid)
        return alive

    def _kill_leftovers(self) -> int:
        deadline = time.monotonic() + LEFTOVER_GRACE
        alive = self._alive_seen()
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = self._alive_seen()
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return len(alive)

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the server's log."""
        try:
            with open(self.log_path, "rb") as file:
                file.seek(0, os.SEEK_END)
                file.seek(max(0, file.tell() - 16384))
                text = file.read().decode(errors="replace")
        except OSError as exc:
            return f"(cannot read {self.log_path}: {exc})"
        return "\n".join(text.splitlines()[-lines:]) or "(empty)"


async def take(server: ServerProcess) -> Snapshot:
    """A snapshot of the server's tree, read in a thread (the event loop keeps running)."""
    snap = await trio.to_thread.run_sync(snapshot, server.pid)
    server.seen.update(snap.tree)
    return snap


async def wait_idle(
    server: ServerProcess, since: float, limit: float, *, server_too: bool
) -> float | None:
    """Seconds from ``since`` (time.monotonic()) to the start of the first IDLE_WINDOW in
    which every worker (and the server, with ``server_too``) was idle; None if none started
    within ``limit``."""
    history: list[Snapshot] = []
    for _ in range(math.ceil((limit + IDLE_WINDOW) / IDLE_EVERY) + 2):
        snap = await take(server)
        history.append(snap)
        first = next((s for s in reversed(history) if snap.at - s.at >= IDLE_WINDOW), None)
        if first is not None and idle_between(first, snap, server_too=server_too):
            start = max(0.0, first.at - since)
            return start if start <= limit else None
        if snap.at - since > limit + IDLE_WINDOW:
            return None
        await trio.sleep(IDLE_EVERY)
    return None


class Sampler:
    """Peak RSS and descriptors of the server, sampled every SAMPLE_EVERY."""

    def __init__(self, server: ServerProcess, first: Snapshot) -> None:
        self.server = server
        self.peak_rss = first.rss
        self.peak_fds = first.fds

    async def run(self) -> None:
        """Sample until cancelled (at most an hour)."""
        for _ in range(round(3600 / SAMPLE_EVERY)):
            snap = await take(self.server)
            self.peak_rss = max(self.peak_rss, snap.rss)
            self.peak_fds = max(self.peak_fds, snap.fds)
            await trio.sleep(SAMPLE_EVERY)


# -- clients -----------------------------------------------------------------------------------


async def connect(port: int, local: str) -> trio.SocketStream:
    """A TCP connection to the server from the loopback address ``local``."""
    with trio.fail_after(CONNECT_TIMEOUT):
        return await trio.open_tcp_stream(SERVER, port, local_address=local)


def close(stream: trio.SocketStream) -> None:
    """Close at once, without a checkpoint (safe in cancelled code)."""
    stream.socket.close()


def tcp_state(stream: trio.SocketStream) -> int:
    """The kernel's TCP state of a connection (1 established; 7 closed; 8 close-wait)."""
    try:
        info = stream.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
    except OSError:
        return -1
    return info[0]


def unread_bytes(stream: trio.SocketStream) -> int:
    """Bytes received by the kernel and not read yet."""
    try:
        data = fcntl.ioctl(stream.socket.fileno(), termios.FIONREAD, bytes(4))
    except OSError:
        return 0
    return int.from_bytes(data, sys.byteorder)


async def send_bytes(stream: trio.SocketStream, data: bytes) -> bool:
    """Send; False if the peer is gone or the send did not finish within SEND_TIMEOUT."""
    with trio.move_on_after(SEND_TIMEOUT):
        try:
            await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
            return False
        return True
    return False


Line: TypeAlias = m.ReplyLine | ProtocolError
"""A reply line as the protocol's client decoder read it, or the error it raised for a line
it could not read (a well-behaved server sends none)."""

NO_MOVE_ERRORS = (203, 206)
"""The errors a ``go`` gets before its ``bestmove none`` (docs/protocol.md §3)."""


def wire(*commands: m.Command) -> bytes:
    """Text commands as one write (written by the protocol's encoder)."""
    return b"".join(text.encode_command(command) for command in commands)


def is_bestmove(line: Line) -> bool:
    return isinstance(line, m.BestMove)


def is_readyok(line: Line) -> bool:
    return isinstance(line, m.ReadyOk)


def refuses_go(line: Line) -> bool:
    """An error that answers a ``go`` in place of its bestmove: one that leaves the connection
    open, other than the two that a ``bestmove none`` follows. Replies keep the order of the
    requests, and in the writes of these scenarios nothing before the ``go`` is refused, so the
    first such error after it is the go's."""
    if not isinstance(line, m.ErrorReply):
        return False
    known = BY_CODE.get(line.code)
    return known is not None and not known.fatal and line.code not in NO_MOVE_ERRORS


def answers_go(line: Line) -> bool:
    return is_bestmove(line) or refuses_go(line)


def error_key(line: Line) -> str | None:
    """``error CODE NAME`` of an error line, ``invalidmove`` of a rejected move, what the
    decoder said of a line it could not read; else None."""
    if isinstance(line, m.ErrorReply):
        return f"error {line.code} {line.name}"
    if isinstance(line, m.InvalidMove):
        return "invalidmove"
    if isinstance(line, ProtocolError):
        return f"unreadable line ({line.code} {line.error.name})"
    return None


def client_error_key(exc: ClientError) -> str:
    """``error CODE NAME`` of an error the server answered, else the kind of failure."""
    if isinstance(exc, EngineError):
        return f"error {exc.code} {exc.name}"
    return type(exc).__name__


def count_errors(lines: list[Line], errors: Counter[str]) -> None:
    for line in lines:
        key = error_key(line)
        if key is not None:
            errors[key] += 1


def shown(line: Line) -> str:
    """A line as the server wrote it (or the decoder's complaint about it)."""
    if isinstance(line, ProtocolError):
        return str(line)
    return text.encode_reply_line(line).decode().rstrip("\n")


def show_counter(counter: Counter[str]) -> str:
    return ", ".join(f"{key} x{count}" for key, count in counter.most_common()) or "none"


class LineClient:
    """A text-framing connection without the client library: the bytes it sends are the
    caller's (abusive, or pipelined beyond what the client does), and what it reads is
    decoded by the protocol's client-side decoder."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = text.TextDecoder("client", max_line=MAX_LINE)
        self.eof = False
        """The server closed the connection, or broke the framing (nothing more is read)."""
        self.broken = False

    async def send(self, data: bytes) -> bool:
        return await send_bytes(self.stream, data)

    async def line(self, deadline: float) -> Line | None:
        """The next line; None at the end of input (``eof`` set) or at ``deadline``. A line
        that breaks the framing comes back as its error once, and ends the input."""
        with trio.move_on_at(deadline):
            for _ in range(MAX_LINES):
                if self.broken:
                    return None
                try:
                    message = self.decoder.next_message()
                except ProtocolError as exc:
                    if exc.fatal:  # the decoder cannot go on, nor can this connection
                        self.broken = self.eof = True
                    return exc
                if message is not None:
                    assert not isinstance(message, m.Request)  # a client decoder: replies only
                    return message
                if self.eof:
                    return None
                try:
                    data = await self.stream.receive_some(RECEIVE)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if data:
                    self.decoder.feed(data)
                else:
                    self.eof = True
        return None

    async def until(self, done: Callable[[Line], bool], deadline: float) -> tuple[list[Line], bool]:
        """Lines up to the first that is ``done`` (included); whether it came by ``deadline``."""
        lines: list[Line] = []
        for _ in range(MAX_LINES):
            line = await self.line(deadline)
            if line is None:
                return lines, False
            lines.append(line)
            if done(line):
                return lines, True
        return lines, False

    def close(self) -> None:
        close(self.stream)


class RpcClient:
    """A msgpack-RPC connection without the client library (as ``LineClient``): frames
    written by the protocol's encoder, responses read by its client decoder and kept by
    msgid, error notifications counted."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = mpack.MsgpackDecoder("client", max_frame=MAX_FRAME)
        self.responses: dict[int, m.RpcResult] = {}
        self.answered: set[int] = set()
        self.duplicates = 0
        self.notified_errors: Counter[str] = Counter()
        self.eof = False

    async def send(self, *frames: bytes) -> bool:
        return await send_bytes(self.stream, b"".join(frames))

    def _take(self, data: bytes) -> None:
        """Decode ``data`` and route what it completes; a broken framing ends the input."""
        try:
            self.decoder.feed(data)
            for _ in range(MAX_LINES):
                try:
                    message = self.decoder.next_message()
                except ProtocolError as exc:
                    if exc.fatal:
                        raise
                    self.notified_errors[f"a frame from the server refused ({exc.code})"] += 1
                    continue
                if message is None:
                    return
                if isinstance(message, m.RpcResult):
                    if message.msgid in self.answered:
                        self.duplicates += 1
                    self.answered.add(message.msgid)
                    self.responses[message.msgid] = message
                elif isinstance(message, m.ErrorReply):
                    self.notified_errors[f"error {message.code} {message.name}"] += 1
        except ProtocolError as exc:
            self.notified_errors[f"undecodable bytes from the server ({exc.code})"] += 1
            self.eof = True

    async def response(self, msgid: int, deadline: float) -> m.RpcResult | None:
        """The response to ``msgid``; None at the end of input (``eof``) or at ``deadline``."""
        with trio.move_on_at(deadline):
            for _ in range(MAX_LINES):
                if msgid in self.responses:
                    return self.responses.pop(msgid)
                if self.eof:
                    return None
                try:
                    data = await self.stream.receive_some(RECEIVE)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    self.eof = True
                    continue
                self._take(data)
        return None

    def close(self) -> None:
        close(self.stream)


async def fresh_probe(port: int, local: str) -> tuple[float | None, str]:
    """Connect from ``local`` and send isready: seconds to readyok, or None and what came."""
    started = trio.current_time()
    try:
        stream = await connect(port, local)
    except (OSError, trio.TooSlowError) as exc:
        return None, f"cannot connect ({exc!r})"
    client = LineClient(stream)
    try:
        await client.send(wire(m.IsReady()))
        lines, found = await client.until(is_readyok, started + FRESH_TIMEOUT)
        elapsed = trio.current_time() - started
    finally:
        client.close()
    if found:
        return elapsed, "readyok"
    if lines:
        return None, shown(lines[-1])[:80]
    return None, "closed with nothing sent" if client.eof else f"no answer in {FRESH_TIMEOUT:g} s"


def check_fresh(
    ctx: Context,
    result: tuple[float | None, str],
    what: str = "fresh peer",
    target: float = TARGET_FRESH,
) -> None:
    """Record a fresh peer's answer against ``target`` (seconds)."""
    elapsed, how = result
    if elapsed is None:
        ctx.check(False, f"{what} not served: {how}")
    else:
        ctx.check(elapsed <= target, f"{what} {how} in {elapsed * 1000:.1f} ms")
    ctx.fresh_checked = True


async def ws_ready(
    nursery: trio.Nursery, stream: trio.SocketStream, deadline: float
) -> tuple[WebSocketConnection | None, float | None, str]:
    """Open a WebSocket on ``/ws`` over ``stream`` (its reader task in ``nursery``) and send
    ``isready`` in one text message: the socket (None if it did not open), the seconds to its
    readyok (None without one), and what came (``readyok``, ``closed 1013 REASON``, ...).
    Its replies are read by the protocol's client decoder."""
    started = trio.current_time()
    ws: WebSocketConnection | None = None
    decoder = text.TextDecoder("client", max_line=MAX_LINE)
    try:
        with trio.move_on_at(deadline):
            ws = await wrap_client_stream(nursery, stream, SERVER, "/ws")
            await ws.send_message(wire(m.IsReady()).decode())
            for _ in range(MAX_LINES):
                message = await ws.get_message()
                data = message.encode() if isinstance(message, str) else message
                decoder.feed(data if data.endswith(b"\n") else data + b"\n")
                for _ in range(MAX_LINES):
                    line = decoder.next_message()
                    if line is None:
                        break
                    if isinstance(line, m.ReadyOk):
                        return ws, trio.current_time() - started, "readyok"
        return ws, None, f"no readyok in {deadline - started:.1f} s"
    except ConnectionClosed as exc:
        reason = exc.reason
        why = "" if reason is None else f" {reason.code} {reason.reason or ''}".rstrip()
        return ws, None, f"closed{why}"
    except ConnectionRejected as exc:
        return None, None, f"rejected with HTTP status {exc.status_code}"
    except HandshakeError as exc:
        return None, None, f"no handshake ({type(exc).__name__})"
    except ProtocolError as exc:
        return ws, None, f"a line the decoder refused ({exc})"
    except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
        return ws, None, f"broken ({exc!r})"


def is_ws_refusal(what: str) -> bool:
    """Whether ``ws_ready``'s outcome is the server's refusal of a socket over a cap."""
    return what.startswith("closed 1013")


async def fresh_ws(port: int | None, local: str) -> tuple[float | None, str]:
    """A fresh WebSocket on ``/ws`` from ``local``: seconds to its readyok, or None and what
    came instead."""
    if port is None:
        return None, "no web front"
    started = trio.current_time()
    try:
        stream = await connect(port, local)
    except (OSError, trio.TooSlowError) as exc:
        return None, f"cannot connect ({exc!r})"
    try:
        async with trio.open_nursery() as nursery:
            _, elapsed, what = await ws_ready(nursery, stream, started + FRESH_TIMEOUT)
            nursery.cancel_scope.cancel()
    except Exception as exc:  # the socket's reader task broke: a failure, never a crash
        return None, f"broken ({exc!r})"
    finally:
        close(stream)
    if elapsed is None:
        return None, what
    return trio.current_time() - started, what


@dataclass
class HttpExchange:
    """One HTTP/1.1 request on a connection and its response, as h11 parsed it."""

    status: int | None = None
    body: int = 0
    """bytes of the body read"""
    answered: float | None = None
    """trio.current_time() when the whole response had come"""
    closed: float | None = None
    """when the server closed the connection (end of input, or a reset)"""
    problem: str | None = None


def http_request(path: str) -> tuple[h11.Connection, bytes]:
    """An h11 client connection and the bytes of a keep-alive GET of ``path``."""
    conn = h11.Connection(our_role=h11.CLIENT)
    headers = [("Host", SERVER), ("Connection", "keep-alive"), ("User-Agent", "server_abuse")]
    data = conn.send(h11.Request(method="GET", target=path, headers=headers))
    data += conn.send(h11.EndOfMessage())
    return conn, data


HTTP_SLICE = 0.5
"""A held HTTP connection's reads wait at most this long, to see that the hold is over."""


async def http_exchange(
    stream: trio.SocketStream,
    path: str,
    exchange: HttpExchange,
    until: Callable[[], float],
    *,
    hold: bool,
) -> None:
    """GET ``path`` and read the response into ``exchange``, until ``until()`` at the latest;
    with ``hold``, keep the connection after the response until then, noting when the server
    closes it (``until`` is asked again every HTTP_SLICE)."""
    conn, data = http_request(path)
    if not await send_bytes(stream, data):
        exchange.problem = "could not send"
        return
    for _ in range(MAX_LINES):
        now = trio.current_time()
        if now >= until():
            return
        chunk: bytes | None = None
        with trio.move_on_at(min(until(), now + HTTP_SLICE)):
            try:
                chunk = await stream.receive_some(RECEIVE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                chunk = b""
        if chunk is None:
            continue
        if not chunk:
            exchange.closed = trio.current_time()
            return
        if exchange.answered is not None:
            continue  # nothing more was asked: bytes after the response are ignored
        try:
            conn.receive_data(chunk)
            for _ in range(MAX_LINES):
                event = conn.next_event()
                if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                    break
                if isinstance(event, h11.Response):
                    exchange.status = event.status_code
                elif isinstance(event, h11.Data):
                    exchange.body += len(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    exchange.answered = trio.current_time()
                    break
        except h11.RemoteProtocolError as exc:
            exchange.problem = f"an unreadable response ({exc})"
            return
        if exchange.answered is not None and not hold:
            return


async def fresh_http(port: int | None, local: str) -> tuple[float | None, str]:
    """A fresh HTTP GET / from ``local``: seconds to its whole 200 response, or None and what
    came instead."""
    if port is None:
        return None, "no web front"
    started = trio.current_time()
    try:
        stream = await connect(port, local)
    except (OSError, trio.TooSlowError) as exc:
        return None, f"cannot connect ({exc!r})"
    exchange = HttpExchange()
    try:
        deadline = started + FRESH_TIMEOUT
        await http_exchange(stream, "/", exchange, lambda: deadline, hold=False)
    finally:
        close(stream)
    if exchange.answered is not None and exchange.status == 200:
        return exchange.answered - started, f"HTTP 200 ({exchange.body} bytes)"
    if exchange.problem is not None:
        return None, exchange.problem
    if exchange.answered is not None:
        return None, f"HTTP {exchange.status}"
    if exchange.closed is not None:
        return None, "closed unanswered"
    return None, f"no answer in {FRESH_TIMEOUT:g} s"


def probe_search() -> bytes:
    """The probe's search: the Yinsh position of docs/protocol.md §10.1 and ``go depth 3``."""
    return wire(
        m.SetOption("Game", PROBE_GAME), m.Position(moves=PROBE_MOVES), m.Go(depth=PROBE_DEPTH)
    )


class Probe:
    """The well-behaved client of every scenario: text framing, from 127.0.0.2.

    It is a ``LineClient``, not an ``enginesrv.client`` engine, because the client library
    cannot connect from a chosen local address; its commands are written and its answers read
    by the protocol package all the same.
    """

    def __init__(self, port: int, go_budget: float) -> None:
        self.port = port
        self.go_budget = go_budget
        """Seconds the go may take to be answered searched."""
        self.client: LineClient | None = None
        self.lock = trio.Lock()
        self.samples: list[float] = []
        self.sent: deque[float] = deque()
        self.answered = trio.Event()
        self.unanswered = 0
        self.stopping = False
        self.ended = False
        self.go_sent: float | None = None
        self.go_latency: float | None = None
        self.go_searched = False
        """An ``info depth PROBE_DEPTH`` line came before the go's bestmove."""
        self.go_done = trio.Event()
        self.extra_bestmoves = 0
        self.errors: Counter[str] = Counter()
        self.problem: str | None = None
        self.finished = trio.Event()

    async def open(self) -> bool:
        """Connect and check that the server answers an isready (within 5 s)."""
        try:
            stream = await connect(self.port, PROBER)
        except (OSError, trio.TooSlowError) as exc:
            self.problem = f"probe cannot connect ({exc!r})"
            return False
        client = LineClient(stream)
        await client.send(wire(m.IsReady()))
        lines, found = await client.until(is_readyok, trio.current_time() + FRESH_TIMEOUT)
        if not found:
            self.problem = "probe not served: " + (shown(lines[-1])[:80] if lines else "no readyok")
            client.close()
            return False
        self.client = client
        return True

    async def _send(self, data: bytes) -> bool:
        if self.client is None:
            return False
        async with self.lock:
            return await self.client.send(data)

    async def run(self) -> None:
        """Probe until ``finish``, then wait for the go's answer (bounded) and close."""
        assert self.client is not None
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._read)
                await self._isready_loop()
                if self.go_sent is not None:
                    with trio.move_on_at(self.go_sent + self.go_budget):
                        await self.go_done.wait()
                nursery.cancel_scope.cancel()
        finally:
            self.client.close()
            self.finished.set()

    async def _read(self) -> None:
        assert self.client is not None
        for _ in range(MAX_LINES):
            line = await self.client.line(math.inf)
            if line is None:
                self.problem = self.problem or "the server closed the probe's connection"
                self.ended = True
                self.answered.set()
                self.go_done.set()
                return
            now = trio.current_time()
            if is_readyok(line):
                if self.sent:
                    self.samples.append(now - self.sent.popleft())
                self.answered.set()
            elif isinstance(line, m.Info):
                searching = self.go_sent is not None and self.go_latency is None
                if searching and line.depth is not None and line.depth >= PROBE_DEPTH:
                    self.go_searched = True
            elif is_bestmove(line):
                if self.go_sent is not None and self.go_latency is None:
                    self.go_latency = now - self.go_sent
                    self.go_done.set()
                else:
                    self.extra_bestmoves += 1
            else:
                key = error_key(line)
                if key is not None:
                    self.errors[key] += 1

    async def _isready_loop(self) -> None:
        for _ in range(round(3600 / PROBE_EVERY)):
            if self.stopping or self.ended:
                return
            started = trio.current_time()
            self.answered = trio.Event()
            self.sent.append(started)
            if not await self._send(wire(m.IsReady())):
                self.problem = self.problem or "probe could not send"
                return
            with trio.move_on_after(PROBE_READY_TIMEOUT):
                await self.answered.wait()
            if not self.answered.is_set():
                self.unanswered += 1
                self.samples.append(PROBE_READY_TIMEOUT)
                self.problem = f"probe isready unanswered for {PROBE_READY_TIMEOUT:g} s"
                return
            await trio.sleep_until(started + PROBE_EVERY)

    async def go(self) -> None:
        """Send the Yinsh position of docs/protocol.md §10.1 and ``go depth 3`` (once)."""
        if self.go_sent is not None or self.client is None:
            return
        self.go_sent = trio.current_time()
        if not await self._send(probe_search()):
            self.go_done.set()

    async def finish(self) -> None:
        """Stop probing and wait (bounded) until the probe has closed."""
        self.stopping = True
        with trio.move_on_after(PROBE_READY_TIMEOUT + self.go_budget + 1):
            await self.finished.wait()


# -- scenarios ---------------------------------------------------------------------------------


@dataclass
class Report:
    """What one scenario measured."""

    name: str
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    probe: str = ""
    rss: str = ""
    fds: str = ""
    idle: str = ""

    def line(self) -> str:
        verdict = "FAIL" if self.failures else "PASS"
        parts = [f"{self.name:<26} {verdict}", self.probe, self.rss, self.fds, self.idle]
        if self.notes:
            parts.append("; ".join(self.notes))
        if self.failures:
            parts.append("failed: " + "; ".join(self.failures))
        return " | ".join(p for p in parts if p)


class Addresses:
    """Loopback addresses of their own: 127.0.1.1, 127.0.1.2, ... (.0 and .255 skipped), each
    handed out once in a run."""

    def __init__(self) -> None:
        self.taken = 0

    def take(self, count: int) -> list[str]:
        first, self.taken = self.taken, self.taken + count
        return [f"127.{i // 64770}.{1 + i // 254 % 255}.{1 + i % 254}" for i in
                range(first, first + count)]  # fmt: skip


@dataclass
class Bench:
    """What holds from one scenario to the next."""

    args: argparse.Namespace
    addresses: Addresses = field(default_factory=Addresses)
    go_budget: float = PROBE_GO_FLOOR
    """Seconds the probe's go may take (see ``calibrate``)."""
    calibrated: bool = False


@dataclass
class Context:
    """What a scenario gets: the server, the probe, and where to record what it measured."""

    server: ServerProcess
    workers: int
    interleavings: int
    rng: random.Random
    probe: Probe
    report: Report
    bench: Bench
    go_now: trio.Event = field(default_factory=trio.Event)
    """Set by a scenario that chooses when the probe sends its go."""
    fresh_checked: bool = False
    """A fresh peer has come (else the runner sends one before closing the connections)."""
    streams: list[trio.SocketStream] = field(default_factory=list)
    engines: list[AsyncEngine] = field(default_factory=list)

    @property
    def port(self) -> int:
        return self.server.port

    def addresses(self, count: int) -> list[str]:
        """``count`` loopback addresses used by nothing before in this run."""
        return self.bench.addresses.take(count)

    async def fresh_peer(self, target: float = TARGET_ADMITTED) -> None:
        """A fresh peer (an address of its own) sends isready; its readyok is due within
        ``target``."""
        (local,) = self.addresses(1)
        check_fresh(self, await fresh_probe(self.port, local), f"fresh peer {local}", target)

    def note(self, text: str) -> None:
        self.report.notes.append(text)

    def check(self, ok: bool, text: str) -> None:
        """Record a measurement against the scenario's own target."""
        self.report.notes.append(text)
        if not ok:
            self.report.failures.append(text)

    async def connect(self, local: str = ABUSER, port: int | None = None) -> trio.SocketStream:
        """An abusive connection (to the protocol port, or ``port``), closed by the runner at
        the latest."""
        stream = await connect(self.port if port is None else port, local)
        self.streams.append(stream)
        return stream

    async def engine(self) -> AsyncEngine:
        """A well-formed session from 127.0.0.1 through ``enginesrv.client`` (text framing),
        closed by the runner at the latest.

        It skips the ``ugi`` handshake, as the scenarios always did: a server's first ``ugi``
        builds its game and bot listing, which holds up every connection for about 100 ms,
        and that would land in the probe's figures. The client's barrier is then ``isready``.
        """
        engine = await AsyncEngine.connect_in(
            None, SERVER, self.port, timeout=CONNECT_TIMEOUT, handshake=False
        )
        self.engines.append(engine)
        return engine

    async def open_many(self, count: int) -> tuple[list[trio.SocketStream], int]:
        """``count`` connections (64 connecting at a time): the open ones, and how many failed."""
        streams: list[trio.SocketStream] = []
        failed = 0
        limiter = trio.CapacityLimiter(64)

        async def one() -> None:
            nonlocal failed
            async with limiter:
                try:
                    streams.append(await self.connect())
                except (OSError, trio.TooSlowError):
                    failed += 1

        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(one)
        return streams, failed

    async def close_all(self) -> None:
        for stream in self.streams:
            close(stream)
        self.streams.clear()
        async with trio.open_nursery() as nursery:
            for engine in self.engines:
                nursery.start_soon(engine.aclose)  # shielded, and never raises
        self.engines.clear()

    async def reconnect_text(self, client: LineClient) -> LineClient:
        client.close()
        return LineClient(await self.connect())

    async def recover_text(self, client: LineClient) -> LineClient:
        """After a go left unanswered: stop again and wait 2 s, else start a new connection."""
        if not client.eof:
            await client.send(wire(m.Stop()))
            _, found = await client.until(answers_go, trio.current_time() + 2.0)
            if found:
                return client
        return await self.reconnect_text(client)


async def go_stop_same_write(ctx: Context) -> None:
    client = LineClient(await ctx.connect())
    budget = trio.current_time() + 30.0
    lost = extra = tries = 0
    errors: Counter[str] = Counter()
    for _ in range(40):
        if trio.current_time() > budget:
            ctx.note(f"30 s budget spent after {tries} tries")
            break
        tries += 1
        await client.send(wire(m.Position(), m.Go(infinite=True), m.Stop()))
        lines, found = await client.until(answers_go, trio.current_time() + 5.0)
        count_errors(lines, errors)
        if not found:
            lost += 1
            client = await ctx.recover_text(client)
            continue
        await client.send(wire(m.IsReady()))
        lines, found = await client.until(is_readyok, trio.current_time() + 5.0)
        extra += sum(map(is_bestmove, lines))
        count_errors(lines, errors)
        if not found:
            client = await ctx.reconnect_text(client)
    ctx.check(lost == 0 and extra == 0, f"bestmoves lost {lost}/{tries}, extra {extra}")
    ctx.note(f"errors: {show_counter(errors)}")


async def go_and_close(ctx: Context) -> None:
    sent = failed = 0

    async def one(i: int) -> None:
        nonlocal sent, failed
        try:
            stream = await ctx.connect()
        except (OSError, trio.TooSlowError):
            failed += 1
            return
        data = ("position startpos\n" if i % 2 else "") + "go infinite\n"
        if await send_bytes(stream, data.encode()):
            sent += 1
        else:
            failed += 1
        close(stream)

    async with trio.open_nursery() as nursery:
        for i in range(20):
            nursery.start_soon(one, i)
    ctx.note(f"{sent} connections sent go infinite and closed ({failed} failed)")


async def flood_and_close(ctx: Context, payload: str, what: str) -> None:
    stream = await ctx.connect()
    sent = await send_bytes(stream, payload.encode())
    close(stream)
    closed = time.monotonic()
    ctx.note(f"{what} in one write ({len(payload) // 1024} KB) {'sent' if sent else 'NOT sent'}")
    busy = await wait_idle(ctx.server, closed, 10.0, server_too=True)
    ctx.note(
        "server busy >10 s after the close"
        if busy is None
        else f"server busy {busy:.2f} s after the close"
    )


async def pipelined_flood_close(ctx: Context) -> None:
    await flood_and_close(ctx, VIEW + "query moves\n" * 1500, "view + 1500 query moves")


async def pipelined_flood_close_ugi(ctx: Context) -> None:
    await flood_and_close(ctx, "ugi\n" * 3000, "3000 ugi")


@dataclass
class NeverReads:
    """What the connections of a never-reads scenario saw."""

    gone: list[float] = field(default_factory=list)
    """seconds from the start to each disconnection by the server"""
    blocked: int = 0
    failed: int = 0
    unread: int = 0
    """the most bytes left unread at the client on one connection"""

    def when(self) -> str:
        gone = self.gone
        return f" after {min(gone):.1f}-{max(gone):.1f} s" if gone else " within 10 s"

    def counts(self) -> str:
        return (
            f"sends blocked {self.blocked}, connect failures {self.failed}, unread at the "
            f"client up to {self.unread / MB:.1f} MB per connection"
        )


async def never_read(ctx: Context, locals_: list[str]) -> NeverReads:
    """One connection from each of ``locals_``: the Yin Yang view and 2000 ``query moves``
    in chunks of 100 every 200 ms, never reading, for up to 10 s (no more is sent once a send
    blocks for 500 ms); when the server disconnects each, from the client's TCP state."""
    started = trio.current_time()
    end = started + 10.0
    seen = NeverReads()

    async def one(local: str) -> None:
        try:
            stream = await ctx.connect(local)
        except (OSError, trio.TooSlowError):
            seen.failed += 1
            return
        chunks = [VIEW] + ["query moves\n" * 100] * 20
        next_send = trio.current_time()
        for _ in range(round(10.0 / 0.05) + 10):
            now = trio.current_time()
            if now >= end:
                return
            seen.unread = max(seen.unread, unread_bytes(stream))
            if tcp_state(stream) != TCP_ESTABLISHED:
                seen.gone.append(now - started)
                return
            if chunks and now >= next_send:
                with trio.move_on_after(0.5) as scope:
                    try:
                        await stream.send_all(chunks.pop(0).encode())
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        seen.gone.append(now - started)
                        return
                if scope.cancelled_caught:  # the server stopped reading: send no more
                    seen.blocked += 1
                    chunks.clear()
                next_send = now + 0.2
            await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        for local in locals_:
            nursery.start_soon(one, local)
    return seen


async def never_reads(ctx: Context) -> None:
    seen = await never_read(ctx, [ABUSER] * 4)
    ctx.check(len(seen.gone) == 4, f"disconnected by the server: {len(seen.gone)}/4{seen.when()}")
    ctx.note(seen.counts())


async def never_reads_128(ctx: Context) -> None:
    addresses = ctx.addresses(8)
    seen = await never_read(ctx, [addresses[i % 8] for i in range(128)])
    ctx.note(
        f"128 connections over 8 addresses: disconnected by the server {len(seen.gone)}"
        f"{seen.when() if seen.gone else ''}; {seen.counts()}"
    )


async def idle_300(ctx: Context) -> None:
    streams, failed = await ctx.open_many(300)
    opened = trio.current_time()
    await trio.sleep_until(opened + 1.0)
    await ctx.fresh_peer(TARGET_FRESH)
    await trio.sleep_until(opened + 5.0)
    dropped = sum(tcp_state(s) != TCP_ESTABLISHED for s in streams)
    ctx.note(
        f"{len(streams)} idle connections held 5 s ({failed} failed to connect, "
        f"{dropped} closed by the server)"
    )


async def slowloris_500(ctx: Context) -> None:
    streams, failed = await ctx.open_many(500)
    start = trio.current_time()
    end = start + 8.0
    dropped = readyoks = 0
    errors: Counter[str] = Counter()
    message = b"isready\n"

    async def drip(stream: trio.SocketStream, phase: float) -> None:
        nonlocal dropped, readyoks
        client = LineClient(stream)
        await trio.sleep_until(start + phase)
        for i in range(10):
            if trio.current_time() >= end:
                return
            if not await send_bytes(stream, message[i % len(message) :][:1]):
                dropped += 1
                return
            until = min(end, start + phase + i + 1)
            for _ in range(100):
                line = await client.line(until)
                if line is None:
                    break
                readyoks += is_readyok(line)
                count_errors([line], errors)
            if client.eof:
                dropped += 1
                return

    async def fresh() -> None:
        await trio.sleep_until(start + 2.0)
        await ctx.fresh_peer(TARGET_FRESH)

    async with trio.open_nursery() as nursery:
        for stream in streams:
            nursery.start_soon(drip, stream, ctx.rng.random())
        nursery.start_soon(fresh)
    ctx.note(
        f"{len(streams)} connections dripping 1 byte/s for 8 s ({failed} failed to connect, "
        f"{dropped} closed by the server, {readyoks} readyok, errors: {show_counter(errors)})"
    )


async def search_hog(ctx: Context) -> None:
    # well-formed sessions, only too many of them: through the client library
    count = ctx.workers + 2
    engines = [await ctx.engine() for _ in range(count)]
    searches: list[SearchHandle | None] = [None] * count
    answered = [False] * count
    errors: Counter[str] = Counter()

    async def start(i: int, deadline: float) -> None:
        engine = engines[i]
        try:
            await engine.position(timeout=max(0.0, deadline - trio.current_time()))
        except ClientError as exc:
            errors[client_error_key(exc)] += 1
        try:
            left = max(0.0, deadline - trio.current_time())
            searches[i] = await engine.start_search(infinite=True, timeout=left)
        except EngineError as exc:  # the go refused: that is its one answer
            answered[i] = True
            errors[client_error_key(exc)] += 1
        except ClientError as exc:
            errors[client_error_key(exc)] += 1

    deadline = trio.current_time() + 5.0
    async with trio.open_nursery() as nursery:
        for i in range(count):
            nursery.start_soon(start, i, deadline)
    ctx.go_now.set()  # the probe's go, while the hog's searches run
    with trio.move_on_after(ctx.probe.go_budget + 0.5):
        await ctx.probe.go_done.wait()
    for search in searches:
        if search is not None:
            try:
                await search.stop()
            except ClientError as exc:
                errors[client_error_key(exc)] += 1
    deadline = trio.current_time() + 10.0
    for i, search in enumerate(searches):
        if search is None or answered[i]:
            continue
        try:
            await search.result(max(0.0, deadline - trio.current_time()))
            answered[i] = True
        except EngineError as exc:  # an error in place of the best move answers it too
            answered[i] = True
            errors[client_error_key(exc)] += 1
        except ClientError as exc:
            errors[client_error_key(exc)] += 1
    ctx.check(
        all(answered),
        f"hog: {count} go infinite, {sum(answered)} answered after stop "
        f"(errors: {show_counter(errors)})",
    )


async def pipelined_burst(ctx: Context) -> None:
    # well-formed, but a hundred commands in one write, which the client library never does
    client = LineClient(await ctx.connect())
    expected_total = answered = 0
    errors: Counter[str] = Counter()
    pongs_missing = 0
    tokens = itertools.count(1)
    for _ in range(10):
        commands: list[m.Command] = []
        pings: set[int] = set()
        expected = 0
        for _ in range(100):
            kind = ctx.rng.choice(("isready", "ping", "query", "position"))
            if kind == "isready":
                commands.append(m.IsReady())
            elif kind == "ping":
                token = next(tokens)
                pings.add(token)
                commands.append(m.Ping(token))
            elif kind == "query":
                commands.append(m.Query("turn"))
            else:
                commands.append(m.Position())
            expected += kind != "position"
        expected_total += expected
        await client.send(wire(*commands))
        deadline = trio.current_time() + 5.0
        got = 0
        for _ in range(expected + 1000):
            if got >= expected:
                break
            line = await client.line(deadline)
            if line is None:
                break
            key = error_key(line)
            if key is not None:
                errors[key] += 1
                got += 1
            elif isinstance(line, m.ReadyOk | m.Pong | m.Response):
                got += 1
                answered += 1
                if isinstance(line, m.Pong):
                    pings.discard(line.token)
        pongs_missing += len(pings)
        if client.eof:
            break
    ctx.check(
        answered == expected_total and not errors,
        f"answered {answered}/{expected_total}, pongs missing {pongs_missing}, "
        f"errors: {show_counter(errors)}",
    )


@dataclass
class Tally:
    """Counts of the interleavings scenario."""

    episodes: int = 0
    gos: int = 0
    answered: int = 0
    refused: int = 0
    lost: int = 0
    extra: int = 0
    abandoned: int = 0
    errors: Counter[str] = field(default_factory=Counter)


def choose_go(rng: random.Random) -> tuple[m.Go, bool]:
    """One go, and whether it needs a stop."""
    kind = rng.random()
    if kind < 0.5:
        return m.Go(infinite=True), True
    if kind < 0.8:
        return m.Go(depth=rng.randint(1, 3)), False
    return m.Go(movetime=rng.randint(5, 50)), False


DOUBLE_GO = 0.2
"""The share of interleavings that pipeline two gos and a stop in one write."""


async def pause(rng: random.Random, first: m.Go) -> None:
    """Between the two gos of a pair: none (one write) half the time, else about as long as
    the first go's movetime (up to 20 ms without one), so that the first search often ends
    just as the second go is refused."""
    if rng.random() < 0.5:
        ms = first.movetime if first.movetime is not None else rng.uniform(0, 20)
        await trio.sleep(max(0.0, ms + rng.uniform(-2, 2)) / 1000)


def tally_double_go(tally: Tally, answers: int, refused: int) -> None:
    """Count a pipelined pair of gos that got ``answers`` answers, ``refused`` of them an
    error refusing a go (204 while the first one searches)."""
    tally.gos += 2
    tally.answered += min(answers, 2)
    tally.refused += refused
    tally.lost += max(0, 2 - answers)
    tally.extra += max(0, answers - 2)


async def text_double_go(
    ctx: Context, client: LineClient, rng: random.Random, tally: Tally
) -> LineClient:
    """``go``, ``go``, ``stop``, ``position startpos``, ``isready`` (``pause`` after the first
    go). The second go is refused with 204 (its only answer) while the first searches, or
    searches once the first has ended; the stop ends whichever runs, the position waits for
    its bestmove, so every answer comes before the readyok: exactly two, bestmoves and 204s
    together."""
    first, _ = choose_go(rng)
    second, _ = choose_go(rng)
    ok = await client.send(wire(first))
    await pause(rng, first)
    ok = ok and await client.send(wire(second, m.Stop(), m.Position(), m.IsReady()))
    lines, found = await client.until(is_readyok, trio.current_time() + 5.0)
    count_errors(lines, tally.errors)
    bestmoves = sum(map(is_bestmove, lines))
    refused = sum(isinstance(line, m.ErrorReply) and refuses_go(line) for line in lines)
    tally_double_go(tally, bestmoves + refused, refused)
    if not ok or not found:
        return await ctx.recover_text(client)
    return client


async def rpc_double_go(
    client: RpcClient, ids: Iterator[int], rng: random.Random, tally: Tally
) -> bool:
    """Two ``go`` requests and a ``stop`` notification (``pause`` after the first go): each
    go gets exactly one response (the second a result, or error 204 while the first
    searches). False when the connection is no use any more."""
    first, second = next(ids), next(ids)
    go = choose_go(rng)[0]
    ok = await client.send(mpack.encode_request(first, go))
    await pause(rng, go)
    ok = ok and await client.send(
        mpack.encode_request(second, choose_go(rng)[0]), mpack.encode_notify(m.Stop())
    )
    deadline = trio.current_time() + 5.0
    answers = [await client.response(first, deadline), await client.response(second, deadline)]
    got = [answer for answer in answers if answer is not None]
    tally_double_go(tally, len(got), sum(answer.error is not None for answer in got))
    for answer in got:
        if answer.error is not None:
            tally.errors[f"error {answer.error.code} {answer.error.name}"] += 1
    return ok and len(got) == 2


async def text_episodes(
    ctx: Context, count: int, rng: random.Random, tally: Tally, budget: float
) -> None:
    client = LineClient(await ctx.connect())
    for _ in range(count):
        if trio.current_time() > budget:
            return
        if client.eof:
            client = await ctx.reconnect_text(client)
        tally.episodes += 1
        if rng.random() < DOUBLE_GO:
            client = await text_double_go(ctx, client, rng, tally)
            continue
        go, must_stop = choose_go(rng)
        tail = b""
        if must_stop or rng.random() < 0.5:
            tail = wire(m.Stop(), *([m.Position()] if rng.random() < 0.3 else []))
        if rng.random() < 0.1:
            ok = await client.send(wire(go) + tail)
        else:
            ok = await client.send(wire(go))
            await trio.sleep(rng.uniform(0, 0.03))
            if rng.random() < 0.05:
                tally.abandoned += 1
                client = await ctx.reconnect_text(client)
                continue
            if tail:
                ok = ok and await client.send(tail)
        tally.gos += 1
        lines, found = await client.until(answers_go, trio.current_time() + 5.0)
        count_errors(lines, tally.errors)
        if not ok or not found:
            tally.lost += 1
            client = await ctx.recover_text(client)
            continue
        tally.answered += 1
        tally.refused += refuses_go(lines[-1])
        await client.send(wire(m.IsReady()))
        lines, found = await client.until(is_readyok, trio.current_time() + 5.0)
        tally.extra += sum(map(is_bestmove, lines))
        count_errors(lines, tally.errors)
        if not found:
            client = await ctx.reconnect_text(client)


class RpcEpisodes:
    """The go/stop interleavings of one msgpack-RPC client, on a new connection whenever the
    one it has is of no more use; every connection it opened is kept, to count what they got
    twice or were told in error notifications."""

    def __init__(self, ctx: Context, rng: random.Random, tally: Tally) -> None:
        self.ctx = ctx
        self.rng = rng
        self.tally = tally
        self.ids = itertools.count(1)
        self.clients: list[RpcClient] = []

    @property
    def client(self) -> RpcClient:
        return self.clients[-1]

    async def connect(self) -> None:
        self.clients.append(RpcClient(await self.ctx.connect()))

    async def reconnect(self) -> None:
        self.client.close()
        await self.connect()

    def count_connections(self) -> None:
        for one in self.clients:
            self.tally.extra += one.duplicates
            self.tally.errors.update(one.notified_errors)

    async def episode(self) -> None:
        """One interleaving: a double go, or a go with what follows it, and its response."""
        if self.client.eof:
            await self.reconnect()
        self.tally.episodes += 1
        if self.rng.random() < DOUBLE_GO:
            if not await rpc_double_go(self.client, self.ids, self.rng, self.tally):
                await self.reconnect()
            return
        search, must_stop = choose_go(self.rng)
        gid = next(self.ids)
        go = mpack.encode_request(gid, search)
        tail, tail_ids = self.tail(gid, must_stop)
        ok = await self.send(go, tail)
        if ok is not None:
            await self.settle(gid, ok, tail_ids)

    def tail(self, gid: int, must_stop: bool) -> tuple[list[bytes], list[int]]:
        """What may follow a go: a stop (of this go or of any search, as a notification or a
        request), maybe then a position request; and the ids of the requests among them (a
        notification has no answer)."""
        tail: list[bytes] = []
        tail_ids: list[int] = []
        if must_stop or self.rng.random() < 0.5:
            stop = m.Stop(gid if self.rng.random() < 0.5 else None)
            if self.rng.random() < 0.5:
                tail.append(mpack.encode_notify(stop))
            else:
                tail_ids.append(next(self.ids))
                tail.append(mpack.encode_request(tail_ids[-1], stop))
            if self.rng.random() < 0.3:
                tail_ids.append(next(self.ids))
                tail.append(mpack.encode_request(tail_ids[-1], m.Position()))
        return tail, tail_ids

    async def send(self, go: bytes, tail: list[bytes]) -> bool | None:
        """Send the go and its tail, in one write or apart; whether the writes went through,
        or None when the connection was abandoned mid-search (closed between the two)."""
        if self.rng.random() < 0.1:
            return await self.client.send(go, *tail)
        ok = await self.client.send(go)
        await trio.sleep(self.rng.uniform(0, 0.03))
        if self.rng.random() < 0.05:
            self.tally.abandoned += 1
            await self.reconnect()
            return None
        if tail:
            ok = ok and await self.client.send(*tail)
        return ok

    async def settle(self, gid: int, ok: bool, tail_ids: list[int]) -> None:
        """Wait for the go's response and count it; a lost one is stopped, and its connection
        replaced if even the stop brings no answer."""
        self.tally.gos += 1
        response = await self.client.response(gid, trio.current_time() + 5.0)
        if not ok or response is None:
            self.tally.lost += 1
            await self.client.send(mpack.encode_notify(m.Stop()))
            if await self.client.response(gid, trio.current_time() + 2.0) is None:
                await self.reconnect()
            return
        self.tally.answered += 1
        if response.error is not None:
            self.tally.refused += 1
        for answer in (response, *(self.client.responses.pop(i, None) for i in tail_ids)):
            if answer is not None and answer.error is not None:
                self.tally.errors[f"error {answer.error.code} {answer.error.name}"] += 1


async def rpc_episodes(
    ctx: Context, count: int, rng: random.Random, tally: Tally, budget: float
) -> None:
    episodes = RpcEpisodes(ctx, rng, tally)
    await episodes.connect()
    try:
        for _ in range(count):
            if trio.current_time() > budget:
                return
            await episodes.episode()
    finally:
        episodes.count_connections()


def interleavings_budget(count: int) -> float:
    """Seconds the interleavings scenario may take: 60 s per 1000 interleavings, at least 60."""
    return max(60.0, 0.06 * count)


async def interleavings(ctx: Context) -> None:
    total = ctx.interleavings
    shares = [total // 4 + (i < total % 4) for i in range(4)]
    tally = Tally()
    seconds = interleavings_budget(total)
    budget = trio.current_time() + seconds
    async with trio.open_nursery() as nursery:
        for i, share in enumerate(shares):
            rng = random.Random(ctx.rng.random())
            nursery.start_soon(text_episodes if i < 2 else rpc_episodes, ctx, share, rng, tally,
                               budget)  # fmt: skip
    if tally.episodes < total:
        ctx.note(f"{seconds:g} s budget spent after {tally.episodes}/{total} interleavings")
    ctx.check(
        tally.lost == 0 and tally.extra == 0,
        f"gos kept {tally.gos}, answered {tally.answered} ({tally.refused} with an error), "
        f"lost {tally.lost}, extra {tally.extra}, abandoned mid-search {tally.abandoned}",
    )
    ctx.note(f"errors: {show_counter(tally.errors)}")


# -- scenarios from addresses of their own ------------------------------------------------------


HOG_HOLD = 3.0
"""The two-address hogs hold at least this long (and until the probe's go is answered)."""
HOG_SLICE = 0.2
"""A hog's reads wait at most this long, to see that the hold is over."""
NO_MOVETIME_LIMIT = 60000


@dataclass
class Hog:
    """One connection of the two-address hogs."""

    client: LineClient
    gos: int = 0
    answers: int = 0
    extra: int = 0
    """answers after the last go's (seen before the closing readyok)"""


async def run_hog(hog: Hog, go: m.Go, again: bool, over: trio.Event, errors: Counter[str]) -> None:
    """Read what comes (and send ``go`` again after each answer, with ``again``) until ``over``;
    then ``stop``, wait for the last go's answer (10 s) and ``isready`` (5 s)."""
    client = hog.client
    for _ in range(MAX_LINES):
        if over.is_set() or client.eof:
            break
        line = await client.line(trio.current_time() + HOG_SLICE)
        if line is None:
            continue
        count_errors([line], errors)
        if answers_go(line):
            hog.answers += 1
            if again and not over.is_set() and await client.send(wire(go)):
                hog.gos += 1
    if client.eof:
        return
    if hog.answers < hog.gos:
        await client.send(wire(m.Stop()))
    deadline = trio.current_time() + 10.0
    for _ in range(MAX_LINES):
        if hog.answers >= hog.gos:
            break
        line = await client.line(deadline)
        if line is None:
            return
        count_errors([line], errors)
        hog.answers += answers_go(line)
    await client.send(wire(m.IsReady()))
    lines, _ = await client.until(is_readyok, trio.current_time() + 5.0)
    count_errors(lines, errors)
    hog.extra += sum(map(answers_go, lines))


async def address_hog(ctx: Context, movetime: bool) -> None:
    """(workers + 2) searching connections from each of HOG_ADDRESSES (see the docstring)."""
    count = ctx.workers + 2
    announced = ctx.server.limits.get("movetime")
    go = (m.Go(movetime=announced or NO_MOVETIME_LIMIT) if movetime
          else m.Go(infinite=True))  # fmt: skip
    errors: Counter[str] = Counter()
    hogs: list[Hog] = []
    failed = 0
    for local in HOG_ADDRESSES:
        for _ in range(count):
            try:
                hogs.append(Hog(LineClient(await ctx.connect(local))))
            except (OSError, trio.TooSlowError):
                failed += 1
    for hog in hogs:
        if await hog.client.send(wire(m.Position(), go)):
            hog.gos += 1
    started = trio.current_time()
    over = trio.Event()
    async with trio.open_nursery() as nursery:
        for hog in hogs:
            nursery.start_soon(run_hog, hog, go, movetime, over, errors)
        await trio.sleep(0.5)  # the hogs' searches run or wait for a worker
        ctx.go_now.set()
        with trio.move_on_after(ctx.probe.go_budget + 0.5):
            await ctx.probe.go_done.wait()
        await trio.sleep_until(started + HOG_HOLD)
        await ctx.fresh_peer()
        over.set()
    gos = sum(hog.gos for hog in hogs)
    once = sum(hog.gos == hog.answers and not hog.extra for hog in hogs)
    lost = sum(max(0, hog.gos - hog.answers) for hog in hogs)
    extra = sum(max(0, hog.answers - hog.gos) + hog.extra for hog in hogs)
    kind = "go infinite" if not movetime else (
        f"go movetime {go.movetime} back to back ("
        + ("announced" if announced else "no limit movetime announced") + ")"
    )  # fmt: skip
    ctx.check(
        lost == 0 and extra == 0 and failed == 0,
        f"hogs: {len(hogs)} connections over {len(HOG_ADDRESSES)} addresses ({failed} failed "
        f"to connect), {kind}, held {trio.current_time() - started:.1f} s: {gos} gos, "
        f"{once}/{len(hogs)} connections answered exactly once per go, lost {lost}, "
        f"extra {extra} (errors: {show_counter(errors)})",
    )


async def two_address_hog(ctx: Context) -> None:
    await address_hog(ctx, movetime=False)


async def two_address_hog_movetime(ctx: Context) -> None:
    await address_hog(ctx, movetime=True)


STARVE_FOR = 8.0


def answers_query(line: Line) -> bool:
    """The answer of a ``query``: its response, or an error."""
    return isinstance(line, m.Response) or error_key(line) is not None


async def loop_starvation(ctx: Context, count: int) -> None:
    """``count`` connections over 4 addresses: the view, then ``query moves`` read one by one."""
    addresses = ctx.addresses(4)
    started = trio.current_time()
    end = started + STARVE_FOR
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    failed = closed = 0

    async def one(local: str) -> None:
        nonlocal failed, closed
        try:
            client = LineClient(await ctx.connect(local))
        except (OSError, trio.TooSlowError):
            failed += 1
            return
        if not await client.send(VIEW.encode()):
            closed += 1
            return
        query = wire(m.Query("moves"))
        for _ in range(round(STARVE_FOR * 10000)):
            asked = trio.current_time()
            if asked >= end:
                return
            if not await client.send(query):
                closed += 1
                return
            lines, found = await client.until(answers_query, end + 2.0)
            count_errors(lines, errors)
            if not found:
                closed += client.eof
                return
            latencies.append(trio.current_time() - asked)

    async with trio.open_nursery() as nursery:
        for i in range(count):
            nursery.start_soon(one, addresses[i % len(addresses)])
    seconds = trio.current_time() - started
    spread = (
        f"latency p50 {statistics.median(latencies) * 1000:.1f} ms, "
        f"p99 {p99(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
        if latencies else "no answer"
    )  # fmt: skip
    ctx.note(
        f"{count} connections over 4 addresses: {len(latencies)} query moves answered in "
        f"{seconds:.1f} s ({len(latencies) / seconds:.0f}/s), {spread}; {failed} failed to "
        f"connect, {closed} closed by the server; errors: {show_counter(errors)}"
    )


async def loop_starvation_4(ctx: Context) -> None:
    await loop_starvation(ctx, 4)


async def loop_starvation_32(ctx: Context) -> None:
    await loop_starvation(ctx, 32)


HOARD = 1100
HOARD_ADDRESSES = 11
HOARD_PATH = "/static/app.js"
HOARD_OPENING = 20.0
"""Each hoarding connection waits this long for its answer before the fresh requests come."""
HOARD_HOLD = 35.0
"""The hold without a flag for the keep-alive timeout: hypercorn's 30 s and 5 s more."""


@dataclass
class HoardState:
    """Shared by the hoarding connections."""

    until: float = math.inf
    """When the hold ends (set once the opening is over)."""


def hoard_settled(exchange: HttpExchange) -> bool:
    """Answered, closed, or given up."""
    return (exchange.answered is not None or exchange.closed is not None
            or exchange.problem is not None)  # fmt: skip


def spread(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f} s" if values else "-"


async def http_hoard(ctx: Context) -> None:
    web_port = ctx.server.web_port
    if web_port is None:
        ctx.check(False, "no web front")
        return
    hold = SHORT_HTTP_IDLE + 5.0 if ctx.server.http_idle else HOARD_HOLD
    addresses = ctx.addresses(HOARD_ADDRESSES)
    exchanges = [HttpExchange() for _ in range(HOARD)]
    state = HoardState()
    limiter = trio.CapacityLimiter(64)

    async def one(exchange: HttpExchange, local: str) -> None:
        async with limiter:
            try:
                stream = await ctx.connect(local, web_port)
            except (OSError, trio.TooSlowError) as exc:
                exchange.problem = f"connect failed ({type(exc).__name__})"
                return
        await http_exchange(stream, HOARD_PATH, exchange, lambda: state.until, hold=True)

    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        for i, exchange in enumerate(exchanges):
            nursery.start_soon(one, exchange, addresses[i % len(addresses)])
        for _ in range(round(HOARD_OPENING / 0.1) + 1):
            if all(map(hoard_settled, exchanges)) or trio.current_time() >= started + HOARD_OPENING:
                break
            await trio.sleep(0.1)
        opening = trio.current_time()
        answered_then = sum(e.answered is not None for e in exchanges)
        async with trio.open_nursery() as fresh:
            tcp, ws, web = ctx.addresses(3)

            async def fresh_tcp() -> None:
                check_fresh(ctx, await fresh_probe(ctx.port, tcp), f"fresh TCP peer {tcp}")

            async def fresh_socket() -> None:
                check_fresh(ctx, await fresh_ws(web_port, ws), f"fresh WebSocket {ws}")

            async def fresh_get() -> None:
                check_fresh(ctx, await fresh_http(web_port, web), f"fresh GET / {web}")

            fresh.start_soon(fresh_tcp)
            fresh.start_soon(fresh_socket)
            fresh.start_soon(fresh_get)
        state.until = trio.current_time() + hold
    failed = Counter(e.problem for e in exchanges if e.problem and e.answered is None)
    answered = [e for e in exchanges if e.answered is not None]
    statuses = Counter(str(e.status) for e in answered)
    refused = sum(e.answered is None and e.closed is not None for e in exchanges)
    unanswered = sum(not hoard_settled(e) for e in exchanges)
    closed_after = [
        e.closed - e.answered for e in answered if e.closed is not None and e.answered is not None
    ]
    closed_statuses = Counter(str(e.status) for e in answered if e.closed is not None)
    ctx.note(
        f"{HOARD} keep-alive GET {HOARD_PATH} over {len(addresses)} addresses: accepted and "
        f"answered {len(answered)} (HTTP {show_counter(statuses)}; {answered_then} within "
        f"{opening - started:.1f} s, the rest late), closed unanswered {refused}, never "
        f"answered {unanswered}, failed {show_counter(failed)}; held {hold:g} s after the "
        f"fresh requests"
        + (f" ({' '.join(ctx.server.http_idle)})" if ctx.server.http_idle else "")
        + f": the server closed {len(closed_after)} answered ones (HTTP "
        f"{show_counter(closed_statuses)}; {spread(closed_after)} after their answer), "
        f"{len(answered) - len(closed_after)} still open"
    )


SPREAD_TCP = (8, 32)
"""addresses x TCP sessions each"""
SPREAD_WS = (4, 64)
"""addresses x WebSockets each"""
SPREAD_HOLD = 3.0


def outcome(counter: Counter[str]) -> str:
    admitted, refused = counter.pop("admitted", 0), counter.pop("refused", 0)
    return f"{admitted} admitted, {refused} refused" + (
        f", {show_counter(counter)}" if counter else ""
    )


async def slots_spread(ctx: Context) -> None:
    tcp: Counter[str] = Counter()
    ws: Counter[str] = Counter()
    limiter = trio.CapacityLimiter(64)

    async def tcp_one(local: str) -> None:
        async with limiter:
            try:
                client = LineClient(await ctx.connect(local))
            except (OSError, trio.TooSlowError):
                tcp["failed to connect"] += 1
                return
            await client.send(wire(m.IsReady()))
            lines, found = await client.until(is_readyok, trio.current_time() + FRESH_TIMEOUT)
        if found:
            tcp["admitted"] += 1
        elif client.eof and not lines:
            tcp["refused"] += 1
        elif lines:
            tcp[f"answered {shown(lines[-1])[:40]}"] += 1
        else:
            tcp["no answer"] += 1

    async def ws_one(holder: trio.Nursery, port: int, local: str) -> None:
        async with limiter:
            try:
                stream = await ctx.connect(local, port)
            except (OSError, trio.TooSlowError):
                ws["failed to connect"] += 1
                return
            _, elapsed, what = await ws_ready(holder, stream, trio.current_time() + FRESH_TIMEOUT)
        ws["admitted" if elapsed is not None else "refused" if is_ws_refusal(what) else what] += 1

    tcp_addresses = ctx.addresses(SPREAD_TCP[0])
    async with trio.open_nursery() as nursery:
        for local in tcp_addresses * SPREAD_TCP[1]:
            nursery.start_soon(tcp_one, local)
    web_port = ctx.server.web_port
    try:
        async with trio.open_nursery() as holder:  # the WebSockets' reader tasks
            if web_port is not None:
                async with trio.open_nursery() as nursery:
                    for local in ctx.addresses(SPREAD_WS[0]) * SPREAD_WS[1]:
                        nursery.start_soon(ws_one, holder, web_port, local)
            (fresh,) = ctx.addresses(1)
            check_fresh(ctx, await fresh_probe(ctx.port, fresh), f"fresh peer {fresh} TCP")
            if web_port is not None:
                check_fresh(ctx, await fresh_ws(web_port, fresh), f"fresh peer {fresh} WebSocket")
            await trio.sleep(SPREAD_HOLD)
            holder.cancel_scope.cancel()
    except Exception as exc:  # a socket's reader task broke: a failure, never a crash
        ctx.check(False, f"a WebSocket's reader broke: {exc!r}")
    ctx.note(
        f"TCP {SPREAD_TCP[0]} x {SPREAD_TCP[1]}: {outcome(tcp)}; "
        + (f"WebSockets {SPREAD_WS[0]} x {SPREAD_WS[1]}: {outcome(ws)}" if web_port is not None
           else "no web front: no WebSocket tried")
    )  # fmt: skip


LONG_FOR = 10.0
LONG_GAME = "yohoho"


@dataclass
class Level:
    """A position of the long session: its legal moves (the ``query moves`` text), and those
    tried from it."""

    moves: str
    tried: set[str] = field(default_factory=set)

    def untried(self) -> list[str]:
        return [move for move in move_tokens(self.moves) if move not in self.tried]


def move_tokens(moves: str) -> list[str]:
    """The move tokens of ``query moves``'s answer (of its shortened form too)."""
    words = moves.split()
    if words[:1] == ["count"]:
        return words[3:] if words[2:3] == ["moves"] else []
    return words


def response_text(line: Line) -> str | None:
    """The text of a ``response`` line; None for any other line."""
    if isinstance(line, m.Response):
        return "" if line.value is None else text.format_value(line.value)
    return None


@dataclass
class LongWalk:
    """A random walk through the tree of one long game (``long_session``): a move not yet
    tried from the position, or an undo once every one was; and what it counted."""

    client: LineClient
    levels: list[Level] = field(default_factory=list)
    """The positions from the start to the current one."""
    errors: Counter[str] = field(default_factory=Counter)
    plies: int = 0
    undos: int = 0
    ends: int = 0
    invalid: int = 0
    refused: str | None = None
    """The error a ply was refused with (the game's length is capped)."""
    problem: str | None = None

    async def answer(self) -> Line | None:
        lines, found = await self.client.until(answers_query, trio.current_time() + 5.0)
        count_errors(lines, self.errors)
        return lines[-1] if found else None

    async def step(self, rng: random.Random) -> bool:
        """One ply played or undone; False when the walk cannot go on."""
        level = self.levels[-1]
        options = level.untried()
        if not options:
            return await self.undo()
        move = rng.choice(options)
        level.tried.add(move)
        return await self.play(move)

    async def undo(self) -> bool:
        if len(self.levels) == 1:
            self.problem = "every move of the start position tried"
            return False
        await self.client.send(wire(m.Undo()))
        line = await self.answer()
        if line is None or response_text(line) is None:
            self.problem = f"undo answered {'nothing' if line is None else shown(line)[:60]}"
            return False
        self.levels.pop()
        self.undos += 1
        return True

    async def play(self, move: str) -> bool:
        await self.client.send(wire(m.Play(move), m.Query("moves")))
        played, moves = await self.answer(), await self.answer()
        if played is None or moves is None:
            self.problem = "no answer to a play (5 s)"
            return False
        if isinstance(played, m.InvalidMove):
            self.invalid += 1
            return True
        if response_text(played) is None:
            self.refused = error_key(played) or shown(played)[:60]
            return False
        self.plies += 1
        listed = response_text(moves)
        if listed is None:
            self.problem = f"query moves answered {shown(moves)[:60]}"
            return False
        self.ends += not move_tokens(listed)
        self.levels.append(Level(listed))
        return True

    def summary(self, seconds: float, cap: int | None) -> str:
        return (
            f"{LONG_GAME} for {seconds:.1f} s: {self.plies} plies played, the game "
            f"{len(self.levels) - 1} plies long at the end, {self.ends} ends undone "
            f"({self.undos} undos), {self.invalid} invalid moves; "
            + (
                f"ply {len(self.levels)} refused with {self.refused}"
                if self.refused
                else "no ply refused"
            )
            + f" (limit plies {'not announced' if cap is None else cap})"
            + (f"; stopped: {self.problem}" if self.problem else "")
            + f"; errors: {show_counter(self.errors)}"
        )


async def long_session(ctx: Context) -> None:
    (local,) = ctx.addresses(1)
    walk = LongWalk(LineClient(await ctx.connect(local)))
    await walk.client.send(wire(m.SetOption("Game", LONG_GAME), m.NewGame(), m.Query("moves")))
    first = await walk.answer()
    start_moves = None if first is None else response_text(first)
    if start_moves is None:
        ctx.check(False, f"no moves at the start ({'none' if first is None else shown(first)})")
        return
    walk.levels.append(Level(start_moves))
    started = trio.current_time()
    for _ in range(MAX_LINES):
        if trio.current_time() >= started + LONG_FOR:
            break
        if not await walk.step(ctx.rng):
            break
    cap = ctx.server.limits.get("plies")
    ctx.note(walk.summary(trio.current_time() - started, cap))


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[Context], Awaitable[None]]
    limit: float
    """Hard cap on the abuse phase, seconds."""
    go_delay: float = 0.0
    """When the probe sends its go (unless the scenario sets ``go_now`` first)."""
    scaled: bool = False
    """The cap grows by the interleavings' budget (``--interleavings``)."""
    server: ServerSpec = PLAIN
    """The server it needs."""

    def cap(self, interleavings: int) -> float:
        return self.limit + (interleavings_budget(interleavings) if self.scaled else 0.0)


SCENARIOS = (
    Scenario("go-stop-same-write", go_stop_same_write, 60.0),
    Scenario("go-and-close", go_and_close, 30.0),
    Scenario("pipelined-flood-close", pipelined_flood_close, 30.0),
    Scenario("pipelined-flood-close-ugi", pipelined_flood_close_ugi, 30.0),
    Scenario("never-reads", never_reads, 20.0),
    Scenario("idle-300", idle_300, 30.0),
    Scenario("slowloris-500", slowloris_500, 40.0),
    Scenario("search-hog", search_hog, 30.0, go_delay=10.0),
    Scenario("pipelined-burst", pipelined_burst, 30.0),
    Scenario("interleavings", interleavings, 15.0, scaled=True),
    Scenario("two-address-hog", two_address_hog, 60.0, go_delay=10.0),
    Scenario("two-address-hog-movetime", two_address_hog_movetime, 60.0, go_delay=10.0),
    Scenario("loop-starvation-4", loop_starvation_4, 30.0),
    Scenario("loop-starvation-32", loop_starvation_32, 30.0),
    Scenario("http-hoard", http_hoard, 120.0,
             server=ServerSpec(web=True, nofile=1024, short_http_idle=True)),
    Scenario("slots-spread", slots_spread, 60.0, server=ServerSpec(web=True, web_required=False)),
    Scenario("long-session", long_session, 30.0),
    Scenario("never-reads-128", never_reads_128, 40.0),
)  # fmt: skip


# -- running a scenario ------------------------------------------------------------------------


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


async def _probe_go(ctx: Context, delay: float) -> None:
    with trio.move_on_after(delay):
        await ctx.go_now.wait()
    await ctx.probe.go()


async def settled(server: ServerProcess) -> bool:
    """Whether the server and its workers become idle within SETTLE_LIMIT."""
    return await wait_idle(server, time.monotonic(), SETTLE_LIMIT, server_too=True) is not None


async def run_scenario(
    server: ServerProcess, scenario: Scenario, bench: Bench, seed: int, report: Report
) -> None:
    """Measure the baseline, run the abuse with the probe beside it, measure after."""
    args = bench.args
    before = await take(server)
    sampler = Sampler(server, before)
    probe = Probe(server.port, bench.go_budget)
    rng = random.Random(seed)
    ctx = Context(server, args.workers, args.interleavings, rng, probe, report, bench)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sampler.run)
        if await probe.open():
            nursery.start_soon(probe.run)
        nursery.start_soon(_probe_go, ctx, scenario.go_delay)
        limit = scenario.cap(args.interleavings)
        with trio.move_on_after(limit) as cap:
            try:
                await scenario.run(ctx)
            except Exception as exc:  # a scenario that breaks is a FAIL, never a crash
                report.failures.append(f"scenario stopped by {type(exc).__name__}: {exc}")
        if cap.cancelled_caught:
            report.failures.append(f"abuse cut at its {limit:g} s cap")
        if not ctx.fresh_checked:  # while the abusive connections are still open
            try:
                await ctx.fresh_peer()
            except Exception as exc:
                report.failures.append(f"fresh peer stopped by {type(exc).__name__}: {exc}")
        await ctx.close_all()
        ended = time.monotonic()
        idle = await wait_idle(server, ended, IDLE_GIVE_UP, server_too=False)
        await trio.sleep(max(0.0, ended + PROBE_AFTER - time.monotonic()))
        await probe.go()  # if the scenario never let it go
        await probe.finish()
        nursery.cancel_scope.cancel()
    after = await take(server)
    settle = max(FDS_SETTLE, RSS_SETTLE)
    for _ in range(round(settle / IDLE_EVERY)):
        if after.fds <= before.fds and after.rss <= before.rss + RSS_BACK:
            break
        await trio.sleep(IDLE_EVERY)
        after = await take(server)
    summarize(report, probe=probe, sampler=sampler, before=before, after=after, idle=idle)


def summarize(
    report: Report,
    *,
    probe: Probe,
    sampler: Sampler,
    before: Snapshot,
    after: Snapshot,
    idle: float | None,
) -> None:
    fails = report.failures
    if probe.samples:
        worst, high = max(probe.samples), p99(probe.samples)
        report.probe = (
            f"probe isready p99 {high * 1000:.1f} ms max {worst * 1000:.1f} ms "
            f"(n {len(probe.samples)})"
        )
        if high > TARGET_P99:
            fails.append(f"probe p99 {high * 1000:.1f} ms > {TARGET_P99 * 1000:g} ms")
    else:
        report.probe = "probe isready: no answer"
        fails.append("probe got no readyok")
    go = f"go depth {PROBE_DEPTH}"
    latency = probe.go_latency
    if latency is None:
        report.probe += f", {go} NOT answered"
        fails.append(f"probe {go} not answered within {probe.go_budget:g} s")
    elif not probe.go_searched:
        report.probe += f", {go} answered NOT searched in {latency * 1000:.0f} ms"
        fails.append(f"probe {go} answered without an info depth {PROBE_DEPTH}")
    else:
        report.probe += f", {go} searched in {latency * 1000:.0f} ms"
        if latency > probe.go_budget:
            fails.append(f"probe {go} answered after its {probe.go_budget:g} s budget")
    if probe.problem is not None:
        report.probe += f" ({probe.problem})"
        if probe.problem not in fails:
            fails.append(probe.problem)
    if probe.errors or probe.extra_bestmoves:
        report.probe += f" (probe errors: {show_counter(probe.errors)}, "
        report.probe += f"extra bestmoves {probe.extra_bestmoves})"
    peak = max(sampler.peak_rss, after.rss) - before.rss
    back = after.rss - before.rss
    report.rss = f"rss {before.rss / MB:.0f} MB, peak +{peak / MB:.1f}, after {back / MB:+.1f} MB"
    if peak > TARGET_RSS:
        fails.append(f"rss peak {peak / MB:.0f} MB > {TARGET_RSS / MB:g} MB above before")
    if back > TARGET_RSS:
        fails.append(f"rss after {back / MB:.0f} MB > {TARGET_RSS / MB:g} MB above before")
    report.fds = f"fds {before.fds}/{max(sampler.peak_fds, after.fds)}/{after.fds}"
    if idle is None:
        report.idle = "workers NOT IDLE"
        fails.append(f"workers not idle {IDLE_GIVE_UP:g} s after the abuse")
    else:
        report.idle = f"workers idle after {idle:.2f} s"
        if idle > TARGET_IDLE:
            fails.append(f"workers idle only after {idle:.2f} s > {TARGET_IDLE:g} s")


# -- the server's start ------------------------------------------------------------------------


async def handshake_limits(port: int) -> tuple[dict[str, int], str | None]:
    """The ``limit NAME VALUE`` lines of a ``ugi`` handshake (from the probe's address), and
    what went wrong if it did not end with ``ugiok``."""
    try:
        stream = await connect(port, PROBER)
    except (OSError, trio.TooSlowError) as exc:
        return {}, f"cannot connect ({exc!r})"
    client = LineClient(stream)
    try:
        await client.send(wire(m.Ugi()))
        lines, found = await client.until(
            lambda line: isinstance(line, m.UgiOk), trio.current_time() + HANDSHAKE_TIMEOUT
        )
    finally:
        client.close()
    limits = {line.name: line.value for line in lines if isinstance(line, m.LimitInfo)}
    return limits, None if found else f"no ugiok within {HANDSHAKE_TIMEOUT:g} s"


async def calibrate(port: int) -> tuple[float | None, bool, str]:
    """The probe's go on the idle server (from the probe's address): seconds to its bestmove
    (None without one), whether an ``info depth 3`` came first, and what went wrong."""
    try:
        stream = await connect(port, PROBER)
    except (OSError, trio.TooSlowError) as exc:
        return None, False, f"cannot connect ({exc!r})"
    client = LineClient(stream)
    started = trio.current_time()
    try:
        await client.send(probe_search())
        lines, found = await client.until(is_bestmove, started + CALIBRATE_TIMEOUT)
        elapsed = trio.current_time() - started
    finally:
        client.close()
    searched = any(
        isinstance(line, m.Info) and line.depth is not None and line.depth >= PROBE_DEPTH
        for line in lines
    )
    if not found:
        return None, searched, f"no bestmove within {CALIBRATE_TIMEOUT:g} s"
    return elapsed, searched, ""


async def after_start(server: ServerProcess, bench: Bench) -> list[str]:
    """Read the server's limits; the first time, time the probe's go on the idle server and
    set its budget. Lines to print."""
    server.limits, problem = await handshake_limits(server.port)
    said = ", ".join(f"{name} {value}" for name, value in server.limits.items())
    lines = [f"limits: {said or 'none read'}" + (f" ({problem})" if problem else "")]
    if not bench.calibrated:
        bench.calibrated = True
        elapsed, searched, problem = await calibrate(server.port)
        go = f"the probe's go depth {PROBE_DEPTH} on the idle server"
        if elapsed is None:
            lines.append(f"{go}: {problem}; its budget {bench.go_budget:g} s")
        else:
            bench.go_budget = max(PROBE_GO_FLOOR, PROBE_GO_FACTOR * elapsed)
            lines.append(
                f"{go}: answered {'searched' if searched else 'NOT searched'} in "
                f"{elapsed * 1000:.0f} ms; its budget in the scenarios {bench.go_budget:g} s"
            )
    return lines


def ready_server(server: ServerProcess, spec: ServerSpec, report: Report, bench: Bench) -> None:
    """A running, idle server of the kind ``spec`` asks for: the one running, or a new one.

    Raises:
        StartupError: it did not start.
    """
    if server.alive() and server.spec != spec:
        how = server.stop()
        report.notes.append(f"a new server for this scenario (the last one: {how})")
    elif server.alive() and not trio.run(settled, server):
        how = server.stop()
        report.notes.append(f"restarted the server first (busy {SETTLE_LIMIT:g} s; {how})")
    elif server.process is not None and not server.alive():
        report.notes.append(f"restarted the server first (it had died; {server.stop()})")
    if server.alive():
        return
    server.start(spec)
    print(f"server ({spec.describe()}): {' '.join(server.command)}", flush=True)
    web = f", web on port {server.web_port}" if server.web_port is not None else ""
    print(f"listening on {SERVER}:{server.port}{web} (pid {server.pid})", flush=True)
    if spec.web and not server.web:
        report.notes.append("the server did not start with its web front: started without")
    for line in trio.run(after_start, server, bench):
        print(line, flush=True)


def serve_help() -> str:
    """``enginesrv serve --help`` (empty if it cannot be had)."""
    command = [sys.executable, "-m", "enginesrv.cli", "serve", "--help"]
    try:
        done = subprocess.run(command, capture_output=True, cwd=REPO, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode(errors="replace")


def raise_nofile() -> None:
    """Raise this process's soft descriptor limit to NOFILE_WANTED (at most the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = NOFILE_WANTED if hard == resource.RLIM_INFINITY else min(NOFILE_WANTED, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


# -- the program -------------------------------------------------------------------------------


def _interrupt_on_sigterm(signum: int, frame: object) -> None:
    # as SIGINT, which trio turns into KeyboardInterrupt at a safe point: the server is stopped
    signal.raise_signal(signal.SIGINT)


def _interrupt_only(exc: BaseException) -> bool:
    """A KeyboardInterrupt, maybe wrapped in trio's exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(KeyboardInterrupt)[1] is None
    return isinstance(exc, KeyboardInterrupt)


def parse_args() -> argparse.Namespace:
    names = [s.name for s in SCENARIOS]
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        epilog="scenarios: " + ", ".join(names),
    )
    parser.add_argument("--game", default="yinsh", help="the server's --game (yinsh)")
    parser.add_argument("--bot", default="alphabeta", help="the server's --bot (alphabeta)")
    parser.add_argument("--workers", type=int, default=2, help="the server's --workers (2)")
    parser.add_argument(
        "--scenario", action="append", choices=names, metavar="NAME",
        help="run only this scenario (repeatable); default: all, in order",
    )  # fmt: skip
    parser.add_argument(
        "--interleavings", type=int, default=1000, metavar="N",
        help="go/stop interleavings in the interleavings scenario (1000)",
    )  # fmt: skip
    parser.add_argument(
        "--server-arg", action="append", default=[], metavar="ARG",
        help="an extra argument for 'enginesrv serve' (repeatable; write "
        "--server-arg=--max-connections=1000 for values starting with -)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    return parser.parse_args()


def play_scenario(server: ServerProcess, scenario: Scenario, bench: Bench, seed: int) -> Report:
    """Run one scenario, on a server of the kind it needs (started if need be)."""
    report = Report(scenario.name)
    try:
        ready_server(server, scenario.server, report, bench)
    except StartupError as exc:
        report.failures.append(f"the server did not start: {exc}")
        return report
    try:
        trio.run(run_scenario, server, scenario, bench, seed, report)
    except Exception as exc:  # a fault of this benchmark: report it, go on
        traceback.print_exc()
        report.failures.append(f"benchmark error {exc!r}")
    if not server.alive():
        status = server.process.returncode if server.process else None
        report.failures.append(f"the server died (exit status {status})")
    return report


def main() -> int:
    args = parse_args()
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    command = [
        sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0",
        "--workers", str(args.workers), "--game", args.game, "--bot", args.bot,
        *args.server_arg,
    ]  # fmt: skip
    # KeyboardInterrupt on SIGINT even when started in the background (which ignores SIGINT),
    # and on SIGTERM through it: either way the server is stopped before the exit
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    raise_nofile()
    handle, log_name = tempfile.mkstemp(prefix="server_abuse-", suffix=".log")
    os.close(handle)
    server = ServerProcess(command, Path(log_name), http_idle_args(serve_help()))
    bench = Bench(args)
    reports: list[Report] = []
    crashed = False
    try:
        for index, scenario in enumerate(chosen):
            report = play_scenario(server, scenario, bench, args.seed + index)
            print(report.line(), flush=True)
            reports.append(report)
    except BaseException as exc:
        crashed = True
        if not _interrupt_only(exc):
            raise
        print("interrupted", flush=True)
    finally:
        print(f"server: {server.stop()}", flush=True)
        failed = [r.name for r in reports if r.failures]
        if crashed or failed:
            print(f"--- tail of the server log ({server.log_path}) ---\n{server.log_tail()}")
        else:
            server.log_path.unlink(missing_ok=True)
    print(f"{len(reports) - len(failed)}/{len(chosen)} scenarios passed"
          + (f"; failed: {', '.join(failed)}" if failed else ""))  # fmt: skip
    return 1 if crashed or failed else 0


if __name__ == "__main__":
    sys.exit(main())
