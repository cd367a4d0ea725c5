"""Abuse scenarios against a real ``enginesrv serve`` process on loopback.

Usage: python benchmarks/server_abuse.py [--game yinsh] [--bot alphabeta] [--workers 2]
           [--scenario NAME ...] [--interleavings 1000] [--server-arg=--max-connections=1000]

The server is started once (and again if a scenario killed it) as ``python -m enginesrv.cli
serve --port 0``; its log (stderr) goes to a temporary file whose tail is printed when
something fails. Each scenario prints one line: its name, PASS or FAIL, then

- probe: a well-behaved client connected from 127.0.0.2 (text framing) sends ``isready``
  every 20 ms from the start of the abuse until at least 1 s after its end, and, once at the
  start of the abuse, ``position startpos`` and ``go depth 2``: the p99 and max of
  isready -> readyok, and whether (within 5 s) and how fast its bestmove came;
- rss: the growth of the resident memory of the server and all its descendants (VmRSS summed
  over /proc), from just before the scenario to the peak sampled every 100 ms during it;
- fds: the server process's open descriptors (/proc/PID/fd) before, at the peak, and after
  (once they are back down, waiting up to 2 s);
- idle: the time from the end of the abuse until every worker (the server's child processes)
  used at most 2 clock ticks of CPU over one 300 ms window, or NOT IDLE after 5 s;
- what the scenario itself counted.

Targets, for every scenario: probe p99 <= 50 ms, the probe's go answered, rss growth <= 100 MB,
workers idle within 1 s; plus the scenario's own target, given below. Exit status 1 if any
scenario fails. Before each scenario the benchmark waits (up to 10 s) until the server and its
workers are idle; a server still busy then (or dead) is restarted, so that one scenario's
aftermath does not land in the next one's figures (the line says so).

Scenarios (the abusive connections come from 127.0.0.1; each scenario ends by closing them all):

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
    300 connections that send nothing, held for 5 s; target: a fresh connection from 127.0.0.2
    gets its readyok within 1 s.
slowloris-500
    500 connections each sending one byte a second (``isready`` and its line end, one byte at
    a time) for 8 s; target: a fresh connection from 127.0.0.2 served within 1 s.
search-hog
    One peer opens (workers + 2) connections with a ``go infinite`` each; the probe's
    ``go depth 2`` must still be answered while they run; then the hog sends ``stop`` on each
    and must get one answer per go (a bestmove, or an error refusing the go).
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

Measurement notes: the probe runs in this process, beside the abusive clients, so its latency
includes this process's own scheduling; a probe isready left unanswered for 5 s ends the
probe (counted as a 5 s sample). With fewer than 100 samples the p99 is the maximum. Every
loop is bounded in count and time; only 127.0.0.1 and 127.0.0.2 are used.

How it talks: whatever it reads from the server is decoded by the protocol package (the
client-side ``TextDecoder`` and ``MsgpackDecoder``), never by hand. The hog's sessions are
well-formed and go through ``enginesrv.client``. The probes connect from 127.0.0.2, which the
client library cannot connect from, and pipelined-burst puts a hundred commands in one write,
which it never does: those, like the abusive connections, write their own bytes (well-formed
commands with the protocol's encoders) and read the answers with the decoders.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import math
import os
import random
import select
import signal
import socket
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

import trio

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
PROBE_GO_TIMEOUT = 5.0
PROBE_AFTER = 1.0
"""The probe goes on for at least this long after the end of the abuse."""
SAMPLE_EVERY = 0.100
IDLE_EVERY = 0.050
IDLE_WINDOW = 0.300
IDLE_TICKS = 2
IDLE_GIVE_UP = 5.0
SETTLE_LIMIT = 10.0
FDS_SETTLE = 2.0
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

TCP_ESTABLISHED = 1
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


class ServerProcess:
    """``enginesrv serve`` as a child process, its stderr in ``log_path``."""

    def __init__(self, command: list[str], log_path: Path) -> None:
        self.command = command
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.pid = 0
        self.seen: dict[int, str] = {}
        """Every descendant ever sampled (pid -> start time), to kill leftovers at the end."""

    def start(self) -> None:
        """Start the server and wait for its ``listening HOST:PORT`` line."""
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                cwd=REPO,
            )  # fmt: skip
        self.pid = self.process.pid
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        line = b""
        while b"\n" not in line:  # bounded by the deadline
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StartupError(f"no 'listening' line within {STARTUP_TIMEOUT:g} s")
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise StartupError(f"closed its stdout (status {self.process.poll()})")
                line += chunk
            elif self.process.poll() is not None:
                raise StartupError(f"exited with status {self.process.returncode}")
        first = line.decode(errors="replace").splitlines()[0].strip()
        if not first.startswith("listening "):
            raise StartupError(f"unexpected first line {first!r}")
        self.port = int(first.rsplit(":", 1)[1])

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


async def fresh_probe(port: int) -> tuple[float | None, str]:
    """Connect from 127.0.0.2 and send isready: seconds to readyok, or None and what came."""
    started = trio.current_time()
    try:
        stream = await connect(port, PROBER)
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
    return None, "closed" if client.eof else f"no answer in {FRESH_TIMEOUT:g} s"


def check_fresh(ctx: Context, result: tuple[float | None, str]) -> None:
    elapsed, what = result
    if elapsed is None:
        ctx.check(False, f"fresh probe not served: {what}")
    else:
        ctx.check(elapsed <= TARGET_FRESH, f"fresh probe readyok in {elapsed * 1000:.1f} ms")


class Probe:
    """The well-behaved client of every scenario: text framing, from 127.0.0.2.

    It is a ``LineClient``, not an ``enginesrv.client`` engine, because the client library
    cannot connect from a chosen local address; its commands are written and its answers read
    by the protocol package all the same.
    """

    def __init__(self, port: int) -> None:
        self.port = port
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
                    with trio.move_on_at(self.go_sent + PROBE_GO_TIMEOUT):
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
        """Send ``position startpos`` and ``go depth 2`` (once)."""
        if self.go_sent is not None or self.client is None:
            return
        self.go_sent = trio.current_time()
        if not await self._send(wire(m.Position(), m.Go(depth=2))):
            self.go_done.set()

    async def finish(self) -> None:
        """Stop probing and wait (bounded) until the probe has closed."""
        self.stopping = True
        with trio.move_on_after(PROBE_READY_TIMEOUT + PROBE_GO_TIMEOUT + 1):
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


@dataclass
class Context:
    """What a scenario gets: the server, the probe, and where to record what it measured."""

    server: ServerProcess
    workers: int
    interleavings: int
    rng: random.Random
    probe: Probe
    report: Report
    go_now: trio.Event = field(default_factory=trio.Event)
    """Set by a scenario that chooses when the probe sends its go."""
    streams: list[trio.SocketStream] = field(default_factory=list)
    engines: list[AsyncEngine] = field(default_factory=list)

    @property
    def port(self) -> int:
        return self.server.port

    def note(self, text: str) -> None:
        self.report.notes.append(text)

    def check(self, ok: bool, text: str) -> None:
        """Record a measurement against the scenario's own target."""
        self.report.notes.append(text)
        if not ok:
            self.report.failures.append(text)

    async def connect(self, local: str = ABUSER) -> trio.SocketStream:
        """An abusive connection, closed by the runner at the latest."""
        stream = await connect(self.port, local)
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


async def never_reads(ctx: Context) -> None:
    started = trio.current_time()
    end = started + 10.0
    gone: list[float] = []
    blocked = failed = 0
    unread = 0

    async def one() -> None:
        nonlocal blocked, failed, unread
        try:
            stream = await ctx.connect()
        except (OSError, trio.TooSlowError):
            failed += 1
            return
        chunks = [VIEW] + ["query moves\n" * 100] * 20
        next_send = trio.current_time()
        for _ in range(round(10.0 / 0.05) + 10):
            now = trio.current_time()
            if now >= end:
                return
            unread = max(unread, unread_bytes(stream))
            if tcp_state(stream) != TCP_ESTABLISHED:
                gone.append(now - started)
                return
            if chunks and now >= next_send:
                with trio.move_on_after(0.5) as scope:
                    try:
                        await stream.send_all(chunks.pop(0).encode())
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        gone.append(now - started)
                        return
                if scope.cancelled_caught:  # the server stopped reading: send no more
                    blocked += 1
                    chunks.clear()
                next_send = now + 0.2
            await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        for _ in range(4):
            nursery.start_soon(one)
    when = f" after {min(gone):.1f}-{max(gone):.1f} s" if gone else " within 10 s"
    ctx.check(len(gone) == 4, f"disconnected by the server: {len(gone)}/4{when}")
    ctx.note(
        f"sends blocked {blocked}, connect failures {failed}, unread at the client up to "
        f"{unread / MB:.1f} MB per connection"
    )


async def idle_300(ctx: Context) -> None:
    streams, failed = await ctx.open_many(300)
    opened = trio.current_time()
    await trio.sleep_until(opened + 1.0)
    check_fresh(ctx, await fresh_probe(ctx.port))
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
        check_fresh(ctx, await fresh_probe(ctx.port))

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
    with trio.move_on_after(PROBE_GO_TIMEOUT + 0.5):
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


async def rpc_episodes(
    ctx: Context, count: int, rng: random.Random, tally: Tally, budget: float
) -> None:
    ids = itertools.count(1)
    client = RpcClient(await ctx.connect())
    clients = [client]
    try:
        for _ in range(count):
            if trio.current_time() > budget:
                return
            if client.eof:
                client.close()
                client = RpcClient(await ctx.connect())
                clients.append(client)
            tally.episodes += 1
            if rng.random() < DOUBLE_GO:
                if not await rpc_double_go(client, ids, rng, tally):
                    client.close()
                    client = RpcClient(await ctx.connect())
                    clients.append(client)
                continue
            search, must_stop = choose_go(rng)
            gid = next(ids)
            go = mpack.encode_request(gid, search)
            tail: list[bytes] = []
            tail_ids: list[int] = []  # the requests among them (a notification has no answer)
            if must_stop or rng.random() < 0.5:
                stop = m.Stop(gid if rng.random() < 0.5 else None)
                if rng.random() < 0.5:
                    tail.append(mpack.encode_notify(stop))
                else:
                    tail_ids.append(next(ids))
                    tail.append(mpack.encode_request(tail_ids[-1], stop))
                if rng.random() < 0.3:
                    tail_ids.append(next(ids))
                    tail.append(mpack.encode_request(tail_ids[-1], m.Position()))
            if rng.random() < 0.1:
                ok = await client.send(go, *tail)
            else:
                ok = await client.send(go)
                await trio.sleep(rng.uniform(0, 0.03))
                if rng.random() < 0.05:
                    tally.abandoned += 1
                    client.close()
                    client = RpcClient(await ctx.connect())
                    clients.append(client)
                    continue
                if tail:
                    ok = ok and await client.send(*tail)
            tally.gos += 1
            response = await client.response(gid, trio.current_time() + 5.0)
            if not ok or response is None:
                tally.lost += 1
                await client.send(mpack.encode_notify(m.Stop()))
                if await client.response(gid, trio.current_time() + 2.0) is None:
                    client.close()
                    client = RpcClient(await ctx.connect())
                    clients.append(client)
                continue
            tally.answered += 1
            if response.error is not None:
                tally.refused += 1
            for answer in (response, *(client.responses.pop(i, None) for i in tail_ids)):
                if answer is not None and answer.error is not None:
                    tally.errors[f"error {answer.error.code} {answer.error.name}"] += 1
    finally:
        for one in clients:
            tally.extra += one.duplicates
            tally.errors.update(one.notified_errors)


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
)


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


async def run_scenario(server: ServerProcess, scenario: Scenario, args: argparse.Namespace,
                       seed: int, report: Report) -> None:  # fmt: skip
    """Measure the baseline, run the abuse with the probe beside it, measure after."""
    before = await take(server)
    sampler = Sampler(server, before)
    probe = Probe(server.port)
    ctx = Context(server, args.workers, args.interleavings, random.Random(seed), probe, report)
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
        await ctx.close_all()
        ended = time.monotonic()
        idle = await wait_idle(server, ended, IDLE_GIVE_UP, server_too=False)
        await trio.sleep(max(0.0, ended + PROBE_AFTER - time.monotonic()))
        await probe.go()  # if the scenario never let it go
        await probe.finish()
        nursery.cancel_scope.cancel()
    after = await take(server)
    for _ in range(round(FDS_SETTLE / IDLE_EVERY)):
        if after.fds <= before.fds:
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
    if probe.go_latency is not None and probe.go_latency <= PROBE_GO_TIMEOUT:
        report.probe += f", go depth 2 answered in {probe.go_latency * 1000:.0f} ms"
    else:
        report.probe += ", go depth 2 NOT answered"
        fails.append(f"probe go depth 2 not answered within {PROBE_GO_TIMEOUT:g} s")
    if probe.problem is not None:
        report.probe += f" ({probe.problem})"
        if probe.problem not in fails:
            fails.append(probe.problem)
    if probe.errors or probe.extra_bestmoves:
        report.probe += f" (probe errors: {show_counter(probe.errors)}, "
        report.probe += f"extra bestmoves {probe.extra_bestmoves})"
    growth = sampler.peak_rss - before.rss
    report.rss = f"rss +{growth / MB:.1f} MB (from {before.rss / MB:.0f} MB)"
    if growth > TARGET_RSS:
        fails.append(f"rss growth {growth / MB:.0f} MB > {TARGET_RSS / MB:g} MB")
    report.fds = f"fds {before.fds}/{max(sampler.peak_fds, after.fds)}/{after.fds}"
    if idle is None:
        report.idle = "workers NOT IDLE"
        fails.append(f"workers not idle {IDLE_GIVE_UP:g} s after the abuse")
    else:
        report.idle = f"workers idle after {idle:.2f} s"
        if idle > TARGET_IDLE:
            fails.append(f"workers idle only after {idle:.2f} s > {TARGET_IDLE:g} s")


# -- the program -------------------------------------------------------------------------------


def _interrupt_on_sigterm(signum: int, frame: object) -> None:
    # as SIGINT, which trio turns into KeyboardInterrupt at a safe point: the server is stopped
    signal.raise_signal(signal.SIGINT)


def _interrupt_only(exc: BaseException) -> bool:
    """A KeyboardInterrupt, maybe wrapped in trio's exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(KeyboardInterrupt)[1] is None
    return isinstance(exc, KeyboardInterrupt)


def main() -> int:
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
    args = parser.parse_args()
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
    handle, log_name = tempfile.mkstemp(prefix="server_abuse-", suffix=".log")
    os.close(handle)
    server = ServerProcess(command, Path(log_name))
    reports: list[Report] = []
    crashed = False
    print(f"server: {' '.join(command)}", flush=True)
    try:
        for index, scenario in enumerate(chosen):
            report = Report(scenario.name)
            if server.alive() and not trio.run(settled, server):
                how = server.stop()
                report.notes.append(f"restarted the server first (busy {SETTLE_LIMIT:g} s; {how})")
            elif server.process is not None and not server.alive():
                report.notes.append(f"restarted the server first (it had died; {server.stop()})")
            if not server.alive():
                server.start()
                print(f"listening on {SERVER}:{server.port} (pid {server.pid})", flush=True)
            try:
                trio.run(run_scenario, server, scenario, args, args.seed + index, report)
            except Exception as exc:  # a fault of this benchmark: report it, go on
                traceback.print_exc()
                report.failures.append(f"benchmark error {exc!r}")
            if not server.alive():
                status = server.process.returncode if server.process else None
                report.failures.append(f"the server died (exit status {status})")
            print(report.line(), flush=True)
            reports.append(report)
    except StartupError as exc:
        print(f"the server did not start: {exc}", flush=True)
        crashed = True
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
