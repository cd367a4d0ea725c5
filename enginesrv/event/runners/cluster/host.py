"""What one worker process keeps between the tasks of events on a cluster (``WorkerHost``).

The games of one worker process share a host: an event loop of its own in a thread, holding
the pool of search processes that the bot players use (one per thread of the worker, and a
spare), so that a game starts no process but its external engines, and those are kept started
from one game of an event to the next. A finished game's result is sent from here straight to
the coordinator's result listener (``push``, the frame of ``wire``), proven by the event's
token.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import trio

from enginesrv import reaper
from enginesrv.event.config import EventConfig
from enginesrv.event.play.contain import Containment, wrapper_for
from enginesrv.event.play.slots import Slot
from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.runners.cluster.settings import ClusterSettings
from enginesrv.event.runners.cluster.wire import ACK, HEADER, MAGIC, ReplyTo, TaskResult
from enginesrv.search.pool import WorkerPool


class WorkerHost:
    """The event loop of one worker process's games (module docstring)."""

    _lock = threading.Lock()
    _instance: WorkerHost | None = None

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

    @classmethod
    def get(cls, size: int) -> WorkerHost:
        """This process's host, started with the first task (``size`` search processes, and
        a spare)."""
        with cls._lock:
            if cls._instance is None:
                # the games' secrets (both players' Yin Yang laws) are in this process
                reaper.set_dumpable(False)
                _restore_environment()
                cls._instance = WorkerHost(size)
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

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` (async) on the host's loop and return its result."""
        assert self.token is not None
        return trio.from_thread.run(fn, *args, trio_token=self.token)

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

    def watch(self, flag: Any, name: str, scope: trio.CancelScope, interval: float) -> None:
        """Cancel ``scope`` when the stop flag ``flag`` (a Dask ``Event`` named ``name``) is
        set; one look every ``interval`` seconds per flag, however many of its games run
        here."""
        scopes = self.watched.get(name)
        if scopes is None:
            scopes = self.watched[name] = set()
            assert self.nursery is not None
            self.nursery.start_soon(self._poll, flag, name, interval)
        scopes.add(scope)

    def unwatch(self, name: str, scope: trio.CancelScope) -> None:
        self.watched.get(name, set()).discard(scope)

    async def _poll(self, flag: Any, name: str, interval: float) -> None:
        while self.watched.get(name):
            try:
                stopped = await trio.to_thread.run_sync(flag.is_set, abandon_on_cancel=True)
            except Exception:  # the scheduler is unreachable: look again
                stopped = False
            if stopped:
                for scope in self.watched.pop(name, set()):
                    scope.cancel()
                return
            await trio.sleep(interval)
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

    async def push(
        self, reply: ReplyTo, game_id: int, answer: TaskResult, settings: ClusterSettings
    ) -> bool:
        """Send a finished game's result straight to the coordinator; whether it took it (a
        result over ``settings.push_max_bytes`` is not sent: it goes through Dask)."""
        where = (reply.host, reply.port, reply.token)
        if where in self.unreachable:
            return False
        payload = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        if len(payload) > settings.push_max_bytes:
            return False
        header = HEADER.pack(MAGIC, reply.token, game_id, len(payload))
        connected = False
        answer_byte: bytes | None = None  # None: no answer in time
        try:
            with trio.move_on_after(settings.push_timeout):
                stream = await trio.open_tcp_stream(reply.host, reply.port)
                connected = True
                async with stream:
                    await stream.send_all(header + payload)
                    answer_byte = await stream.receive_some(1)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            answer_byte = b"" if connected else None  # closed on us, or no connection
        if answer_byte == ACK:
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
