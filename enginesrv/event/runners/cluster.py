"""The games of an event played on a Dask cluster (``--cluster tcp://HOST:PORT``).

The coordinator (the ``match`` or ``tournament`` command) keeps everything that makes the
event: the schedule, the database and records, the live display, SPRT and resume. Only the
playing of one game moves: each game is one Dask task, ``play_task``, which a worker runs with
the arbiter's own code: ``play.plan.play_planned`` with its bots' searches in worker
processes of that machine and its ``cmd:`` engines started there. What comes back is the
game's result and record, stored by the coordinator as a local game would be.

On a worker, the games of one process share a ``_Host``: an event loop of its own in a thread,
holding the pool of search processes that the bot players use (one per thread of the worker,
and a spare), so that a game starts no process but its external engines.

A finished game goes straight back: the worker connects to the coordinator, which listens for
the results of its event while it runs (``ResultListener``), and sends it the result, proven
by the event's token, before the task ends. Through Dask alone a result takes four trips (the
worker tells the scheduler, the scheduler tells the client, the client asks the worker for it,
the worker answers), each waiting on a message batch or a busy process; measured on two cores,
that was 10 to 14 ms of a game's 17 to 22 ms from its end to its row in the store. The task
then returns a marker only. A worker that cannot reach the coordinator (a firewall, a cluster
behind NAT, ``--cluster-listen off``) returns the result as a task's value, as Dask would.

The dask and distributed packages are the ``distributed`` extra; this module imports them
only inside its functions, so that the rest of the event code never needs them.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hmac
import os
import pickle
import secrets
import socket
import struct
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import outcome
import structlog
import trio

import games
from enginesrv import reaper
from enginesrv.admission import Admission, Ticket, descriptor_budget
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.arbiter import GameResult, MoveObserver
from enginesrv.event.play.contain import Containment, wrapper_for
from enginesrv.event.play.plan import GamePlan, Played, play_planned
from enginesrv.event.play.players import ForfeitError, PlayerSpecError
from enginesrv.event.play.slots import Slot, make_player
from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.runners.base import open_background
from enginesrv.event.runners.cluster_workers import WorkerRoster
from enginesrv.search.pool import WorkerPool

CONNECT_TIMEOUT = 10.0
"""Seconds to reach the scheduler before the event gives up."""
PREFLIGHT_TIMEOUT = 60.0
"""Seconds a worker's check (each player started once there: the preflight) may take; a worker
whose check has not answered by then runs no player of the event."""
REJOIN_WAIT = 10.0
"""Seconds an event that lacks workers for a game waits, after a worker was lost, for another to
join and pass its check (a nanny restarts its worker within seconds) before it stops."""
WATCH_INTERVAL = 1.0
"""Seconds between the coordinator's looks at the cluster's workers: a worker that joined is
checked, one that left is dropped."""
LOOK_TIMEOUT = 10.0
"""Seconds the scheduler is given to list its workers, or to cancel a task."""
CHECKS_LOST = 2
"""Workers lost during their checks, while an event waits for a worker for a game, after which
it stops waiting: the check is then most likely what kills them (an engine that takes all the
memory as it starts: each worker that a nanny starts again dies in its check)."""
SENT_AGAIN = 3
"""Times a game is sent again because every worker it was sent to left the cluster before it
ended (Dask would keep it waiting for them)."""
QUEUED_PER_THREAD = 2
"""Games in flight per worker thread (``ClusterRunner.in_flight``)."""
RELEASE_TIMEOUT = 10.0
"""Seconds the end of an event waits for the workers to end its engines."""
STOP_POLL = 1.0
"""Seconds between a running game's looks at the event's stop flag."""
RETRIES = 2
"""Times a game whose task failed (an error on the worker, not a player's fault: those are
forfeits inside the game) is run again before the event stops. A worker lost mid-game is
Dask's to reschedule (``distributed.scheduler.allowed-failures``, 3 by default)."""
EXTRA = "pip install 'enginesrv[distributed]'"
PUSH_TIMEOUT = 5.0
"""Seconds a worker gives the coordinator to take a result sent straight to it; past them, or
when it cannot connect, the result goes back through Dask (and later ones of the event too)."""
PUSH_READ_TIMEOUT = 10.0
"""Seconds the coordinator gives a connection to send its whole result."""
ACK_WAIT = 2.0
"""Seconds the coordinator may hold a worker's result unanswered while it stores it (the
worker's next game waits on the answer, and the Dask messages of this one's end do not come
while it is being stored)."""
PUSH_MAX_BYTES = 64 << 20
"""The largest result the coordinator takes straight from a worker (a record of 256 MiB, the
records' cap, would go back through Dask)."""
PUSH_CONNECTIONS = 128
"""Connections the coordinator's result listener holds at once (each until its result is
stored); it closes any beyond, and their workers send those results through Dask."""
_MAGIC = b"ESR1"
_HEADER = struct.Struct(">4s16sQI")
"""magic, the event's token, the game's number, the length of the pickled ``TaskResult``."""
_ACK = b"\x01"

log = structlog.get_logger("enginesrv.cluster")


def _distributed() -> Any:
    """The ``distributed`` package, or an ``EventError`` that says what to install."""
    try:
        import distributed  # noqa: PLC0415 (the distributed extra may be missing)
    except ImportError as exc:
        raise EventError(
            f"--cluster needs the distributed extra ({exc.name} is missing): {EXTRA}"
        ) from None
    return distributed


@dataclass(frozen=True, slots=True)
class ReplyTo:
    """Where a worker sends a finished game's result: the coordinator's result listener."""

    host: str
    port: int
    token: bytes
    """The event's secret (16 random bytes): a result sent without it is not taken."""

    def __repr__(self) -> str:  # the token stays out of Dask's logs and dashboards
        return f"ReplyTo({self.host!r}, {self.port})"


@dataclass(frozen=True, slots=True)
class GameTask:
    """What a worker needs to play one game of the schedule."""

    config: str
    """The event's configuration (``EventConfig.to_json``)."""
    plan: GamePlan
    stop: str = ""
    """The name of the Dask ``Event`` that the coordinator sets when the event stops (an SPRT
    decision, Ctrl-C, an error): a game still running then is abandoned within a second."""
    reply: ReplyTo | None = None
    """The coordinator's result listener; None: the result goes back as the task's value."""


@dataclass(frozen=True, slots=True)
class TaskResult:
    """A game played on a worker: its result, the bots' secret seeds, and where it ran."""

    result: GameResult | None
    """None: the game was abandoned because the event stopped."""
    secret_seeds: tuple[int, int]
    worker: str
    finished_at: float = 0.0
    """The worker's clock (``time.time()``) when the game ended."""
    delivered: bool = False
    """The result went straight to the coordinator (``GameTask.reply``), which took it: this
    answer, the task's value, carries no result."""


# -- on a worker -------------------------------------------------------------------------------


class _Host:
    """The event loop of one worker process's games (module docstring)."""

    _lock = threading.Lock()
    _instance: _Host | None = None

    KEPT_EVENTS = 4
    """The events whose idle slots a host keeps (their players started), newest first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pool: WorkerPool | None = None
        self.nursery: trio.Nursery | None = None
        self.watched: dict[str, set[trio.CancelScope]] = {}
        """Per stop flag (an event's), the games running here that it stops."""
        self.idle: OrderedDict[str, list[Slot]] = OrderedDict()
        """Per event (its configuration), the slots of its players that no game uses now: the
        next game of that event on this worker takes one, and its engines are running."""
        self.token: trio.lowlevel.TrioToken | None = None
        self.contained: dict[str, Containment] = {}
        """Per event (its configuration), how its ``cmd:`` engines run here."""
        self.events: OrderedDict[str, PreparedEvent] = OrderedDict()
        """Per event (its configuration), the configuration parsed (``prepared``), once."""
        self.unreachable: set[tuple[str, int, bytes]] = set()
        """The result listeners this worker could not reach, or that did not answer in time:
        the rest of their event's results go back through Dask."""
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="enginesrv-games", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            raise self._failed

    def event(self, key: str) -> PreparedEvent:
        """The event whose configuration is ``key`` (``EventConfig.to_json``), parsed once."""
        found = self.events.get(key)
        if found is None:
            found = self.events[key] = PreparedEvent.of(
                EventConfig.from_json(key), check_bots=False
            )
            while len(self.events) > self.KEPT_EVENTS:
                self.events.popitem(last=False)
        return found

    async def containment(self, key: str) -> Containment:
        """How this worker runs the ``cmd:`` engines of the event ``key`` (its configuration):
        contained in a game with hidden information, as on one machine
        (``contain.wrapper_for``), found once per event."""
        found = self.contained.get(key)
        if found is None:
            event = self.event(key)
            found = await trio.to_thread.run_sync(wrapper_for, event.config, event.game, None)
            self.contained[key] = found
            while len(self.contained) > self.KEPT_EVENTS:
                self.contained.pop(next(iter(self.contained)))
        return found

    @classmethod
    def get(cls, size: int) -> _Host:
        with cls._lock:
            if cls._instance is None:
                # the games' secrets (both players' Yin Yang laws) are in this process
                reaper.set_dumpable(False)
                _restore_environment()
                cls._instance = _Host(size)
                atexit.register(cls._instance.kill_all)
            return cls._instance

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # the host could not start: the task says why
            self._failed = exc
            self._ready.set()

    async def _main(self) -> None:
        async with trio.open_nursery() as nursery:
            pool = WorkerPool(nursery, self.size, spare=1, restart_spawner=False)
            await pool.start()
            self.pool = pool
            self.nursery = nursery
            self.token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await trio.sleep_forever()

    def watch(self, flag: Any, name: str, scope: trio.CancelScope) -> None:
        """Cancel ``scope`` when the stop flag ``flag`` (a Dask ``Event`` named ``name``) is
        set; one look a second per flag, however many of its games run here."""
        scopes = self.watched.get(name)
        if scopes is None:
            scopes = self.watched[name] = set()
            assert self.nursery is not None
            self.nursery.start_soon(self._poll, flag, name)
        scopes.add(scope)

    def unwatch(self, name: str, scope: trio.CancelScope) -> None:
        self.watched.get(name, set()).discard(scope)

    async def _poll(self, flag: Any, name: str) -> None:
        while self.watched.get(name):
            try:
                stopped = await trio.to_thread.run_sync(flag.is_set, abandon_on_cancel=True)
            except Exception:  # the scheduler is unreachable: look again
                stopped = False
            if stopped:
                for scope in self.watched.pop(name, set()):
                    scope.cancel()
                return
            await trio.sleep(STOP_POLL)
        self.watched.pop(name, None)

    def take(self, key: str, make: Callable[[], Slot]) -> Slot:
        """An idle slot of the event ``key``, or a new one."""
        slots = self.idle.get(key)
        if slots:
            self.idle.move_to_end(key, last=False)
            return slots.pop()
        return make()

    async def give_back(self, key: str, slot: Slot) -> None:
        """Keep ``slot`` for the next game of its event; forget the oldest events' slots."""
        self.idle.setdefault(key, []).append(slot)
        self.idle.move_to_end(key, last=False)
        while len(self.idle) > self.KEPT_EVENTS:
            _, old = self.idle.popitem()
            for each in old:
                await each.close()

    async def release(self, key: str) -> None:
        """The event ``key`` has ended: end the players of its idle slots."""
        for slot in self.idle.pop(key, []):
            await slot.close()

    async def push(self, reply: ReplyTo, game_id: int, answer: TaskResult) -> bool:
        """Send a finished game's result straight to the coordinator; whether it took it."""
        where = (reply.host, reply.port, reply.token)
        if where in self.unreachable:
            return False
        payload = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        if len(payload) > PUSH_MAX_BYTES:
            return False
        header = _HEADER.pack(_MAGIC, reply.token, game_id, len(payload))
        connected = False
        answer_byte: bytes | None = None  # None: no answer in time
        try:
            with trio.move_on_after(PUSH_TIMEOUT):
                stream = await trio.open_tcp_stream(reply.host, reply.port)
                connected = True
                async with stream:
                    await stream.send_all(header + payload)
                    answer_byte = await stream.receive_some(1)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            answer_byte = b"" if connected else None  # closed on us, or no connection
        if answer_byte == _ACK:
            return True
        if answer_byte != b"":
            # unreachable, too slow or not the coordinator: the rest go through Dask. A
            # connection closed without an answer (the listener full, a frame it could not
            # read) sends this result through Dask and tries the next one again
            self.unreachable.add(where)
        return False

    def kill_all(self) -> None:
        """At the worker's exit: kill every external engine still started here (a worker
        that ends must leave no engine behind, even one that ignores the end of its input)."""
        for slots in self.idle.values():
            for slot in slots:
                for player in slot.players.values():
                    process = getattr(player, "process", None)
                    if process is not None and process.returncode is None:
                        with contextlib.suppress(OSError):
                            process.terminate()  # its reaper ends it and all it started

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` (async) on the host's loop and return its result."""
        assert self.token is not None
        return trio.from_thread.run(fn, *args, trio_token=self.token)


def _restore_environment() -> None:
    """Take out of this process's environment what a Dask nanny puts into its worker's
    (``distributed.nanny.pre-spawn-environ``: ``MALLOC_TRIM_THRESHOLD_``, ``OMP_NUM_THREADS``
    and others), so that the search processes and external engines this host starts run as
    they would when started by hand. Measured: glibc's malloc with
    ``MALLOC_TRIM_THRESHOLD_=65536`` made a Yoxii game between depth-3 bots 1.8 times slower
    (122 ms instead of 68 ms)."""
    try:
        import dask  # noqa: PLC0415 (the distributed extra)

        spawned = dask.config.get("distributed.nanny.pre-spawn-environ", default={})
    except (ImportError, KeyError):
        return
    if not isinstance(spawned, dict):
        return
    for key, value in spawned.items():
        if os.environ.get(str(key)) == str(value):
            del os.environ[str(key)]


def _worker_threads() -> tuple[str, int]:
    distributed = _distributed()
    worker = distributed.get_worker()
    return str(worker.address), int(worker.state.nthreads)


def play_task(task: GameTask) -> TaskResult:
    """Play one game on this worker (a Dask task)."""
    address, threads = _worker_threads()
    host = _Host.get(threads)
    stop = _distributed().Event(task.stop) if task.stop else None

    async def play() -> TaskResult:
        with trio.CancelScope() as scope:
            if stop is not None:
                host.watch(stop, task.stop, scope)
            try:
                return await play_one()
            finally:
                host.unwatch(task.stop, scope)
        assert scope.cancelled_caught
        return TaskResult(None, (0, 0), address, time.time())

    async def play_one() -> TaskResult:
        key = task.config
        event = host.event(key)
        wrap = (await host.containment(key)).wrap
        cap = event.config.log_cap << 20
        slot = host.take(
            key,
            lambda: Slot(list(event.specs), host.pool, event.deadlines, None, wrap, log_cap=cap),
        )
        finished = False
        try:
            played = await play_planned(event.game, slot, task.plan)
            finished = True
            answer = TaskResult(played.result, played.secret_seeds, address, time.time())
            game_id = task.plan.game_id
            if task.reply is not None and await host.push(task.reply, game_id, answer):
                return TaskResult(None, (0, 0), address, answer.finished_at, delivered=True)
            return answer
        finally:
            if finished:
                await host.give_back(key, slot)
            else:  # stopped mid-game: its players are in no state for another
                await slot.close()

    result: TaskResult = host.call(play)
    return result


def release_task(config_json: str) -> None:
    """The event of ``config_json`` has ended: its engines kept started on this worker for
    its next game are ended (a Dask task, sent to every worker)."""
    _, threads = _worker_threads()
    host = _Host.get(threads)
    host.call(host.release, config_json)


def preflight_task(config_json: str) -> dict[str, str]:
    """Start each player of the event once on this worker (a Dask task): the players that
    cannot start here, by name, with the reason."""
    _, threads = _worker_threads()
    host = _Host.get(threads)

    async def check() -> dict[str, str]:
        event = host.event(config_json)
        game, deadlines = event.game, event.deadlines
        problems: dict[str, str] = {}
        containment = await host.containment(config_json)
        for spec in event.specs:
            name = spec.name
            if spec.kind == "cmd" and containment.notice is not None:
                problems[name] = f"cannot contain its engine here: {containment.notice}"
                continue
            wrapper = (
                containment.wrap(spec.command) if containment.wrap and spec.kind == "cmd" else ()
            )
            player = make_player(spec, host.pool, deadlines, wrapper=wrapper)
            try:
                await player.start(game)
            except ForfeitError as exc:
                problems[name] = f"{exc.reason}: {exc.detail}"
            except (PlayerSpecError, games.GameError, OSError) as exc:
                problems[name] = str(exc)
            finally:
                await player.close()
        return problems

    problems: dict[str, str] = host.call(check)
    return problems


# -- on the coordinator ------------------------------------------------------------------------


def parse_listen(text: str) -> tuple[str, int] | None:
    """``--cluster-listen``: ``off`` (None), ``HOST``, ``HOST:PORT``, ``:PORT`` or ``[V6]:PORT``
    (``HOST`` empty: the address of this machine on the way to the scheduler; port 0: any free).

    Raises:
        ValueError: not one of these, or a port out of range.
    """
    text = text.strip()
    if text == "off":
        return None
    host, port = text, "0"
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: expected [ADDRESS]:PORT")
        port = rest[1:] if rest else "0"
    elif text.count(":") == 1:
        host, port = text.split(":")
    elif text.count(":") > 1:
        raise ValueError(f"{text!r}: write an IPv6 address in brackets, [ADDRESS]:PORT")
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: the port must be a number from 0 to 65535")
    if any(c.isspace() for c in host):
        raise ValueError(f"{text!r}: the host has a space")
    return host, int(port)


def route_address(scheduler: str) -> str | None:
    """The address of this machine that packets to the scheduler at ``scheduler`` leave from
    (the workers reach it, as the scheduler reaches them); None for a scheduler not on plain
    TCP (a ``tls://`` cluster's results stay in its encrypted channel, Dask's)."""
    parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    if parts.scheme != "tcp" or not parts.hostname:
        return None
    try:
        port = parts.port or 8786
        family, _, _, _, where = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_DGRAM)[0]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(where)  # a datagram socket sends nothing when connected
            return str(probe.getsockname()[0])
    except (OSError, ValueError, IndexError):
        return None


class ResultListener:
    """The coordinator's end of the results sent straight from the workers (module docstring):
    a TCP listener that takes, for each game the event waits for, one result sent with the
    event's token. A connection that sends anything else, too slowly or too much, is closed;
    the worker then returns the result through Dask."""

    def __init__(self, admission: Admission | None = None) -> None:
        """``admission``: the process's, shared with its other doors (None: one of its own,
        within the descriptors the process has left)."""
        self.admission = admission or Admission(
            connections=PUSH_CONNECTIONS,
            trusted=PUSH_CONNECTIONS,
            descriptors=descriptor_budget(0),
        )
        self.token = secrets.token_bytes(16)
        self.reply: ReplyTo | None = None
        self.waiting: dict[int, trio.Event] = {}
        self.results: dict[int, tuple[TaskResult, float]] = {}
        """Per game waited for, the result taken and when (``time.time()``)."""
        self.settled: dict[int, trio.Event] = {}
        """Per game waited for, set when its result is stored (``settle``): then the worker
        is answered."""
        self.open = 0
        self.refused = 0
        """Connections closed without taking a result (a wrong token, a bad frame, too slow)."""

    async def serve(self, nursery: trio.Nursery, host: str, port: int, advertise: str) -> None:
        """Listen on ``host:port`` (``host`` empty: every address) until ``nursery`` ends; the
        workers are told to connect to ``advertise``.

        Raises:
            OSError: the address cannot be listened on.
        """
        listeners = await trio.open_tcp_listeners(port, host=host or None)
        # a name of both an IPv4 and an IPv6 address gets one listener each, on different
        # ports when any is free: the workers are given one port, so one listener is kept
        for extra in listeners[1:]:
            await extra.aclose()
        await nursery.start(trio.serve_listeners, self._take, listeners[:1])
        bound = listeners[0].socket.getsockname()[1]
        self.reply = ReplyTo(advertise, int(bound), self.token)

    def expect(self, game_id: int) -> trio.Event:
        """The event set when the game's result has come; ``settle`` it once stored."""
        waiter = self.waiting[game_id] = trio.Event()
        self.settled[game_id] = trio.Event()
        return waiter

    def settle(self, game_id: int) -> None:
        """The game's result is stored (or dropped): answer its worker, forget the game."""
        self.waiting.pop(game_id, None)
        self.results.pop(game_id, None)
        settled = self.settled.pop(game_id, None)
        if settled is not None:
            settled.set()

    async def _take(self, stream: trio.SocketStream) -> None:
        try:
            host = str(stream.socket.getpeername()[0])
        except OSError:
            host = "?"
        ticket = self.admission.admit(host, "results")
        if isinstance(ticket, str):
            self.refused += 1
            await trio.aclose_forcefully(stream)
            return
        self.open += 1
        try:
            async with stream:
                taken = False
                with trio.move_on_after(PUSH_READ_TIMEOUT):
                    taken = await self._read(stream, ticket)
                if not taken:
                    self.refused += 1
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self.refused += 1
        finally:
            self.open -= 1
            ticket.release()

    async def _read(self, stream: trio.SocketStream, ticket: Ticket) -> bool:
        header = await _receive_exactly(stream, _HEADER.size)
        if header is None:
            return False
        magic, token, game_id, length = _HEADER.unpack(header)
        if magic != _MAGIC or not hmac.compare_digest(token, self.token):
            return False
        if self.admission.may_trust():
            # one of the event's own workers: it no longer counts against its address, so
            # that a host of many workers is not refused
            ticket.trust()
        if length > PUSH_MAX_BYTES:
            log.warning("cluster_result_too_large", game=game_id, bytes=length)
            return False
        payload = await _receive_exactly(stream, length)
        if payload is None:
            return False
        try:
            answer = pickle.loads(payload)  # the token proved the sender one of our workers
        except Exception as exc:  # a worker of another version: its result comes through Dask
            log.warning("cluster_result_unreadable", game=game_id, error=type(exc).__name__)
            return False
        if not isinstance(answer, TaskResult) or not isinstance(answer.result, GameResult):
            log.warning("cluster_result_unreadable", game=game_id, error="not a game result")
            return False
        waiter = self.waiting.get(game_id)
        settled = self.settled.get(game_id)
        if waiter is not None and settled is not None and game_id not in self.results:
            self.results[game_id] = (answer, time.time())
            waiter.set()
            # answered once stored: the worker's task ends then, and the Dask messages of
            # its end (Python work in this process's Dask thread) come after the store's
            # writes, not in the middle of them
            with trio.move_on_after(ACK_WAIT):
                await settled.wait()
        # a result of a game no longer waited for (played again after its worker was lost,
        # and already stored) is taken and dropped: the worker need not send it again
        await stream.send_all(_ACK)
        return True


async def _receive_exactly(stream: trio.SocketStream, size: int) -> bytes | None:
    """``size`` bytes from ``stream``, or None if it ends first."""
    chunks = bytearray()
    while len(chunks) < size:
        chunk = await stream.receive_some(min(size - len(chunks), 1 << 20))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


class _StrandedError(Exception):
    """Every worker a game was sent to left the cluster before it ended (``ClusterRunner``)."""


def _game_error(exc: BaseException, game_id: int) -> BaseException | None:
    """The one-line ``EventError`` for what a game's task raised; None: raise ``exc`` as it
    is (an ``EventError`` already, or not an error: a cancellation)."""
    if isinstance(exc, _distributed().KilledWorker):
        return EventError(
            f"--cluster: game {game_id} lost its worker too many times ({_one_line(str(exc))}); "
            "the finished games are kept: --resume to go on"
        )
    if isinstance(exc, EventError) or not isinstance(exc, Exception):
        return None
    return EventError(
        f"--cluster: game {game_id} could not be played on the cluster: "
        f"{_one_line(f'{type(exc).__name__}: {exc}')}; the finished games are kept: --resume "
        "to go on"
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class ClusterRunner:
    """The coordinator's end: a Dask client of the scheduler at ``address`` that plays games
    of the event as tasks (``play``), on the workers whose check passed for both of its
    players (``WorkerRoster``); a ``runners.base.GameRunner``, made by
    ``open_cluster_runner``."""

    clocks_here = False
    live = False

    def __init__(
        self,
        address: str,
        config: EventConfig,
        listen: tuple[str, int] | None = ("", 0),
        *,
        admission: Admission | None = None,
        names: Sequence[str] = (),
    ) -> None:
        self.address = address
        self.names = list(names)
        """The players' display names (``check`` makes sure each can play)."""
        self.admission = admission
        """Admits the result listener's connections (None: an admission of its own)."""
        self.listen = listen
        """Where the results sent straight from the workers are taken (``parse_listen``);
        None: through Dask only."""
        self.listener: ResultListener | None = None
        self.config = config
        self.config_json = config.to_json()
        self.client: Any = None
        self.roster: WorkerRoster | None = None
        """The workers that may play the event's games (from ``preflight`` on)."""
        self._nursery: trio.Nursery | None = None
        """Where the workers are watched and checked while the event runs (``serve``'s)."""
        self._changed = trio.Event()
        """Set, and replaced, whenever the roster changes (``_note_change``)."""
        self._checks = 0
        self._preflown = False
        self._run = uuid.uuid4().hex[:8]
        self.stop_name = f"enginesrv-stop-{self._run}"
        self.overheads: list[float] = []
        """Per game stored, seconds from its end on the worker to its row in the store."""
        self.transfers: list[float] = []
        """Per game stored, seconds from its end on the worker to its result here."""
        self.received: dict[int, float] = {}
        self.stores: list[float] = []
        """Per game stored, seconds from its result here to its row in the store (this
        machine's own work, one game at a time)."""
        self.delivered = 0
        """Games whose result came straight from the worker (not through Dask)."""
        self._answers: dict[int, TaskResult] = {}
        """The answers of the games played and not yet settled."""

    async def __aenter__(self) -> ClusterRunner:
        distributed = _distributed()

        def connect() -> Any:
            return distributed.Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)

        try:
            self.client = await trio.to_thread.run_sync(connect)
        except (OSError, TimeoutError, ValueError) as exc:
            raise EventError(
                f"--cluster {self.address}: cannot reach the scheduler: {exc}"
            ) from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        distributed = _distributed()

        def finish() -> None:
            # the games still running on workers end within STOP_POLL, and the engines kept
            # for the event's next game are ended (a scheduler that is gone has nothing left
            # to stop)
            releases: list[Any] = []
            with contextlib.suppress(Exception):
                distributed.Event(self.stop_name, client=client).set()
                deadline = time.monotonic() + RELEASE_TIMEOUT
                for i, worker in enumerate(client.nthreads()):
                    key = f"enginesrv-release-{self._run}-{i}"
                    releases.append(
                        client.submit(
                            release_task,
                            self.config_json,
                            key=key,
                            workers=[worker],
                            allow_other_workers=False,
                            pure=False,
                        )
                    )
                for future in releases:
                    future.result(timeout=max(0.0, deadline - time.monotonic()))
            client.close()

        with trio.CancelScope(shield=True), trio.move_on_after(CONNECT_TIMEOUT + RELEASE_TIMEOUT):
            await trio.to_thread.run_sync(finish, abandon_on_cancel=True)

    async def serve(self, nursery: trio.Nursery) -> None:
        """Take the results sent straight from the workers, in ``nursery``, until it ends.
        With a scheduler not on plain TCP (its TLS keeps the results), or
        ``--cluster-listen off``, every result comes through Dask. The cluster's workers are
        watched and checked in ``nursery`` too, from ``preflight`` on.

        Raises:
            EventError: ``--cluster-listen`` names an address this machine cannot listen on.
        """
        self._nursery = nursery
        if self.listen is None:
            return
        host, port = self.listen
        advertise = route_address(self.address)  # None: not a plain-TCP cluster
        if advertise is not None and host not in ("", "0.0.0.0", "::"):
            advertise = host
        if host in ("0.0.0.0", "::") and advertise is not None:
            # every address of the family the workers are given (an IPv6 listener of trio's
            # takes no IPv4 connection, and the other way round)
            host = "::" if ":" in advertise else "0.0.0.0"
        if advertise is None:
            log.info("cluster_results_through_dask", scheduler=self.address)
            return
        listener = ResultListener(self.admission)
        try:
            await listener.serve(nursery, host or advertise, port, advertise)
        except OSError as exc:
            raise EventError(
                f"--cluster-listen {host}:{port}: cannot listen: {exc.strerror or exc}"
            ) from None
        self.listener = listener

    def settle(self, game_id: int, *, stored: bool = False) -> None:
        """The result of the game ``game_id`` (from ``play``) is stored, or dropped, or will
        not be: its worker, if it sent it straight, is answered; a game ``stored`` is counted
        in what storing costs."""
        if self.listener is not None:
            self.listener.settle(game_id)
        answer = self._answers.pop(game_id, None)
        if stored and answer is not None:
            self._stored(game_id, answer)

    def _stored(self, game_id: int, answer: TaskResult) -> None:
        """Note that the game ``game_id`` of ``answer`` is stored (what it cost)."""
        received = self.received.pop(game_id, None)
        if answer.finished_at and received is not None:
            now = time.time()
            self.overheads.append(max(0.0, now - answer.finished_at))
            self.transfers.append(max(0.0, received - answer.finished_at))
            self.stores.append(max(0.0, now - received))

    def log_costs(self) -> None:
        """Log what storing the event's games cost, if it stored any."""
        if not self.overheads:
            return
        ordered = sorted(self.overheads)
        transfers = sorted(self.transfers)
        stores = sorted(self.stores)
        log.info(
            "cluster_games_stored",
            games=len(ordered),
            overhead_ms_median=round(1000 * ordered[len(ordered) // 2], 2),
            overhead_ms_max=round(1000 * ordered[-1], 2),
            transfer_ms_median=round(1000 * transfers[len(transfers) // 2], 2),
            store_ms_median=round(1000 * stores[len(stores) // 2], 2),
            sent_straight=self.delivered,
        )

    def threads(self) -> int:
        """The worker threads of the cluster now."""
        return max(1, sum(int(n) for n in self.client.nthreads().values()))

    def lanes(self) -> int:
        return self.in_flight()

    async def check(self) -> None:
        """Check every worker (``preflight``); a worker that cannot run a player, or was
        lost, is logged."""
        for warning in await self.preflight(self.names):
            log.warning("cluster_worker_cannot_run", detail=warning)

    def in_flight(self) -> int:
        """Games sent to the cluster at once: two per worker thread, so that a thread that
        ends a game starts the next one queued at the scheduler at once, while this machine
        takes in and stores the game that ended (one at a time per thread would leave every
        thread idle for that trip)."""
        return QUEUED_PER_THREAD * self.threads()

    async def preflight(self, names: list[str]) -> list[str]:
        """Check every worker of the cluster: each player started once there and stopped
        (``preflight_task``). A worker lost during its check is dropped; the workers that join
        later are checked as they come, for as long as the event runs (in the nursery given
        to ``serve``, which must have been called), and get no game before theirs has
        passed. Returns a warning per worker that cannot run a player or was lost.

        Raises:
            EventError: no worker, or a player that no worker left can run (named, with each
                worker's reason).
        """
        nursery = self._nursery
        if nursery is None:
            raise RuntimeError("ClusterRunner.preflight before serve")
        roster = self.roster = WorkerRoster(tuple(names), REJOIN_WAIT)
        present = await self._members()
        if present is None:
            raise EventError(f"--cluster {self.address}: the scheduler did not list its workers")
        if not present:
            raise EventError(f"--cluster {self.address}: the cluster has no worker")
        first = self._saw(present)
        nursery.start_soon(self._watch)
        while roster.checking & set(first):  # each check ends within PREFLIGHT_TIMEOUT
            await self._changed.wait()
        await self._wait_for(lambda: all(roster.able(name) for name in names))
        lacking = [name for name in names if not roster.able(name)]
        if lacking:
            raise EventError(
                f"--cluster: no worker can run the player{'s' if len(lacking) > 1 else ''} "
                f"{_and(lacking)}: {roster.reasons(*lacking)}"
            )
        self._preflown = True
        warnings = [f"worker {worker} {how}: dropped" for worker, how in roster.lost.items()]
        for worker, problems in sorted(roster.cannot.items()):
            warnings.extend(f"worker {worker} cannot run {name}: {why}" for name, why in
                            sorted(problems.items()))  # fmt: skip
        return warnings

    def _saw(self, present: set[str]) -> list[str]:
        """The cluster's workers now: those that joined are checked (in the background),
        those that left are dropped. Returns those that joined."""
        roster = self._roster()
        joined, left = roster.see(present, trio.current_time())
        for worker in left:
            if self._preflown:  # those lost before are in the preflight's warnings
                log.warning("cluster_worker_lost", worker=worker, how=roster.lost[worker])
        nursery = self._nursery
        assert nursery is not None
        for worker in joined:
            nursery.start_soon(self._check, worker)
        if joined or left:
            self._note_change()
        return joined

    async def _watch(self) -> None:
        """Look at the cluster's workers every ``WATCH_INTERVAL``, for as long as the event
        runs (``_saw``)."""
        while True:
            await trio.sleep(WATCH_INTERVAL)
            present = await self._members()
            if present is not None:  # the scheduler did not answer: the games will say so
                self._saw(present)

    async def _members(self) -> set[str] | None:
        """The workers in the cluster, as the scheduler lists them; None if it does not
        within ``LOOK_TIMEOUT``."""
        client = self.client

        def ask() -> set[str]:
            return set(client.nthreads(callback_timeout=LOOK_TIMEOUT))

        with trio.move_on_after(LOOK_TIMEOUT + 1):
            try:
                return await trio.to_thread.run_sync(ask, abandon_on_cancel=True)
            except Exception:  # unreachable, closed, or timed out (what Dask raises varies)
                return None
        return None

    async def _check(self, worker: str) -> None:
        """Run the preflight on ``worker`` (its task pinned there) and tell the roster what it
        said; a check that does not answer within ``PREFLIGHT_TIMEOUT`` fails. A worker that
        leaves first is dropped by ``_saw``, and its check, which would never run, cancelled."""
        roster = self._roster()
        self._checks += 1
        try:
            future = self.client.submit(
                preflight_task, self.config_json,
                key=f"enginesrv-preflight-{self._run}-{self._checks}", workers=[worker],
                allow_other_workers=False, pure=False,
            )  # fmt: skip
        except Exception as exc:  # a client closing under the event: what Dask raises varies
            roster.failed(worker, _one_line(f"the check could not be sent: {exc}"))
            self._note_change()
            return
        ended = self._ended(future)
        got: list[outcome.Outcome[dict[str, str]]] = []

        async def fetch() -> None:
            await ended.wait()
            got.append(
                await trio.to_thread.run_sync(
                    outcome.capture, future.result, abandon_on_cancel=True
                )
            )

        async def gone() -> None:
            while worker in roster.checking:
                await self._changed.wait()

        with trio.move_on_after(PREFLIGHT_TIMEOUT):
            await self._first(fetch, gone)
        if got:
            try:
                counted = roster.checked(worker, got[0].unwrap())
            except Exception as exc:  # the check itself failed on that worker
                counted = roster.failed(worker, _one_line(f"the check failed: {exc}"))
        else:
            counted = roster.failed(
                worker, f"did not start the players within {PREFLIGHT_TIMEOUT:g} s"
            )
            await self._cancel(future)
        if counted and self._preflown:  # those of the first workers are the preflight's
            for name, why in sorted(roster.cannot[worker].items()):
                log.warning("cluster_worker_cannot_run", detail=f"worker {worker} cannot run "
                            f"{name}: {why}")  # fmt: skip
        self._note_change()

    async def _wait_for(self, done: Callable[[], bool]) -> None:
        """Wait until ``done()``, or until no worker that could make it so is coming: none is
        being checked, and none was lost within ``REJOIN_WAIT`` (its nanny may restart it);
        at most ``PREFLIGHT_TIMEOUT + REJOIN_WAIT`` in all, or until ``CHECKS_LOST`` workers
        were lost during their checks."""
        roster = self._roster()
        give_up = trio.current_time() + PREFLIGHT_TIMEOUT + roster.rejoin_wait
        checks_lost = roster.checks_lost
        while not done():
            now = trio.current_time()
            until = roster.wait_until(now)
            if until is None or now >= give_up or roster.checks_lost - checks_lost >= CHECKS_LOST:
                return
            with trio.move_on_at(min(until, give_up)):
                await self._changed.wait()

    def _note_change(self) -> None:
        """Wake whatever waits on the roster."""
        self._changed.set()
        self._changed = trio.Event()

    def _roster(self) -> WorkerRoster:
        if self.roster is None:
            raise RuntimeError("ClusterRunner: no preflight")
        return self.roster

    async def _cancel(self, future: Any) -> None:
        """Cancel a task (at most ``LOOK_TIMEOUT``: an unreachable scheduler has nothing to
        cancel)."""
        with trio.move_on_after(LOOK_TIMEOUT):
            with contextlib.suppress(Exception):  # what Dask raises then varies
                await trio.to_thread.run_sync(future.cancel, abandon_on_cancel=True)

    async def play(self, plan: GamePlan, on_move: MoveObserver | None = None) -> Played:
        """Play one game on a worker whose check passed for both players; ``settle`` it once
        its result is stored (or dropped). A game whose workers were all lost before it ended
        is sent again, to those of the moment. Its moves are not sent back while it runs
        (``on_move`` is not told them).

        Raises:
            EventError: the game could not be played (no worker left can run both players,
                its workers died too often, the scheduler went away, the task failed); the
                event stops and may resume.
        """
        game_id = plan.game_id
        listener = self.listener
        reply = None if listener is None else listener.reply
        came = None if listener is None else listener.expect(game_id)
        task = GameTask(self.config_json, plan, self.stop_name, reply)
        answer: TaskResult | None = None
        try:
            answer = await self._play(task, plan.setup.names, came)
        finally:
            if answer is None or answer.result is None:
                self.settle(game_id)
        result = answer.result
        if result is None:
            raise EventError(f"--cluster: game {game_id} was abandoned on its worker")
        self._answers[game_id] = answer
        where = f"played on the worker {answer.worker}"
        record = dataclasses.replace(result.record, comments=[*result.record.comments, where])
        return Played(dataclasses.replace(result, record=record), answer.secret_seeds)

    async def _play(
        self, task: GameTask, names: tuple[str, str], came: trio.Event | None
    ) -> TaskResult:
        game_id = task.plan.game_id
        roster = self._roster()
        for sent in range(SENT_AGAIN + 1):
            await self._wait_for(lambda: bool(roster.able(*names)))
            allowed = roster.able(*names)
            if not allowed:
                raise EventError(
                    f"--cluster: no worker left can run both {names[0]} and {names[1]} (game "
                    f"{game_id}): {roster.reasons(*names)}; the finished games are kept: "
                    "--resume to go on"
                )
            # never to a worker not checked (one that joined, unchecked, would be free to
            # take it), and so, when all of these are lost, never run: sent again
            future = self.client.submit(
                play_task, task, key=f"enginesrv-game-{self._run}-{game_id}" +
                (f"-{sent}" if sent else ""), workers=allowed, allow_other_workers=False,
                pure=False, retries=RETRIES,
            )  # fmt: skip
            try:
                return await self._answer(future, game_id, came, allowed)
            except _StrandedError:
                await self._cancel(future)
            except BaseException as exc:
                future.cancel()
                error = _game_error(exc, game_id)
                if error is None:
                    raise
                raise error from None
        raise EventError(
            f"--cluster: game {game_id} lost all the workers it was sent to {SENT_AGAIN + 1} "
            "times; the finished games are kept: --resume to go on"
        )

    async def _answer(
        self, future: Any, game_id: int, came: trio.Event | None, sent_to: list[str]
    ) -> TaskResult:
        """The game's result: sent straight by its worker (``came``) or the task's value,
        whichever comes first. Raises what the task raised, if that comes first, and
        ``_StrandedError`` if every worker of ``sent_to`` leaves the cluster first."""
        roster = self._roster()

        async def stranded() -> None:
            while any(worker in roster.present for worker in sent_to):
                await self._changed.wait()

        # told by Dask that the task ended, not given its value: a result that came straight
        # leaves the task's value (a marker) unfetched, and no thread waits for a game that
        # is still being played (trio lends 40 at most)
        ended = self._ended(future)
        first = await self._first(None if came is None else came.wait, ended.wait, stranded)
        if (pushed := self._pushed(game_id)) is not None:
            return pushed
        if first == 2:
            raise _StrandedError
        # the task ended (or failed): its value, still listening for a result sent straight
        # (the value may be a marker of a run of the game on another worker, after the one
        # that ended here was lost before its value was fetched)
        value: list[outcome.Outcome[TaskResult]] = []

        async def fetch() -> None:
            value.append(
                await trio.to_thread.run_sync(
                    outcome.capture, future.result, abandon_on_cancel=True
                )
            )

        first = await self._first(None if came is None else came.wait, fetch, stranded)
        if (pushed := self._pushed(game_id)) is not None:
            return pushed
        if first == 2:
            raise _StrandedError
        answer = value[0].unwrap()
        if answer.delivered:
            # sent straight and taken, so ``came`` is set before this answer: cannot be
            raise EventError(f"--cluster: game {game_id}'s result was sent but not taken")
        self.received[game_id] = time.time()
        return answer

    @staticmethod
    def _ended(future: Any) -> trio.Event:
        """An event set when the Dask ``future`` is done (finished, failed or cancelled)."""
        token = trio.lowlevel.current_trio_token()
        ended = trio.Event()

        def on_done(_: Any) -> None:  # in a thread of the Dask client
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(ended.set, trio_token=token)

        future.add_done_callback(on_done)
        return ended

    @staticmethod
    async def _first(*waits: Callable[[], Awaitable[object]] | None) -> int:
        """Wait until the first of ``waits`` (those not None) returns; its index."""
        first: list[int] = []
        async with trio.open_nursery() as nursery:

            async def run(index: int, wait: Callable[[], Awaitable[object]]) -> None:
                await wait()
                first.append(index)
                nursery.cancel_scope.cancel()

            for index, wait in enumerate(waits):
                if wait is not None:
                    nursery.start_soon(run, index, wait)
        return first[0]

    def _pushed(self, game_id: int) -> TaskResult | None:
        """The game's result if its worker sent it straight and it was taken."""
        listener = self.listener
        if listener is None or game_id not in listener.results:
            return None
        answer, self.received[game_id] = listener.results[game_id]
        self.delivered += 1
        return answer


@contextlib.asynccontextmanager
async def open_cluster_runner(
    event: PreparedEvent,
    address: str,
    listen: tuple[str, int] | None = ("", 0),
    *,
    admission: Admission | None = None,
) -> AsyncIterator[ClusterRunner]:
    """A ``ClusterRunner`` of the event on the cluster whose scheduler is at ``address``,
    taking the results the workers send straight back on ``listen`` (admitted by
    ``admission``); at its end, what storing its games cost is logged.

    Raises:
        EventError: ``--debug`` with external engines or ``--isolate`` (both are for games
            on this machine), a scheduler that cannot be reached, or a ``listen`` address
            this machine cannot listen on.
    """
    if event.config.debug and not event.all_bots:
        raise EventError("--debug traces the engines of local games only: leave out --cluster")
    if event.config.isolate:
        raise EventError("--isolate runs on this machine only: leave out --cluster")
    runner = ClusterRunner(address, event.config, listen, admission=admission, names=event.names)
    async with runner:
        try:
            async with open_background() as nursery:
                await runner.serve(nursery)
                yield runner
        finally:
            runner.log_costs()
