"""``Engine``: the blocking client, ``AsyncEngine``'s methods run on a trio loop in a thread of
its own (the way python-chess's ``SimpleEngine`` wraps its asyncio engine)."""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import signal
import ssl
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import IO, TypeVar

import trio

from enginesrv.client._args import TIMEOUT, QueryValue
from enginesrv.client.aio import AsyncEngine, InfoCallback
from enginesrv.client.handle import SearchHandle
from enginesrv.client.types import (
    Clock,
    EngineInfo,
    EngineTerminatedError,
    Framing,
    LegalMoves,
    MoveScore,
    SearchResult,
    TraceCallback,
)
from protocol import messages as m

T = TypeVar("T")
Opener = Callable[[trio.Nursery], Awaitable[AsyncEngine]]


class SyncSearchHandle:
    """A running search (``Engine.start_search``): ``stop`` it, or wait for its ``result``."""

    def __init__(self, engine: Engine, handle: SearchHandle) -> None:
        self._engine = engine
        self._handle = handle

    @property
    def done(self) -> bool:
        return self._handle.done

    @property
    def last_info(self) -> m.Info:
        return self._handle.last_info

    def stop(self) -> None:
        """Ask the engine to end the search now; ``result`` then returns its best move."""
        self._engine._call(self._handle.stop)

    def result(self, timeout: float | None = None) -> SearchResult:
        """Wait at most ``timeout`` seconds (None: as long as it takes) for the result."""
        if self._handle.done:  # also once the engine is closed
            return self._handle.outcome()
        return self._engine._call(self._handle.result, timeout)


class Engine:
    """One engine, with blocking calls: ``with Engine.popen(argv) as engine: ...``.

    The methods and their errors are ``AsyncEngine``'s. An ``on_info`` callback runs in the
    client's own thread and must not call the engine back. Calls from several threads are
    answered in turn.
    """

    def __init__(self, opener: Opener) -> None:
        self._outcome: queue.Queue[BaseException | None] = queue.Queue(maxsize=1)
        self._token: trio.lowlevel.TrioToken | None = None
        self._engine: AsyncEngine | None = None
        self._closing: trio.Event | None = None
        self._thread = threading.Thread(
            target=trio.run, args=(self._main, opener), name="enginesrv-client", daemon=True
        )
        self._thread.start()
        failure = self._outcome.get()
        if failure is not None:
            self._thread.join()
            raise failure
        process = self._async.process
        # an engine this program forgot to quit is still ended when the program exits (or the
        # object is collected); detached once quit has ended the process
        self._reaper = weakref.finalize(
            self, _kill_group, process.pid if process is not None else None
        )

    async def _main(self, opener: Opener) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._closing = trio.Event()
        async with trio.open_nursery() as nursery:
            try:
                engine = await opener(nursery)
            except BaseException as exc:  # handed to the thread that opened the engine
                self._outcome.put(exc)
                return
            self._engine = engine
            self._outcome.put(None)
            await self._closing.wait()
            await engine.aclose()

    @classmethod
    def popen(
        cls,
        argv: Sequence[str],
        *,
        framing: Framing = "text",
        stderr: int | IO[bytes] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT,
        trace: TraceCallback | None = None,
    ) -> Engine:
        """Start ``argv`` as an engine over stdio and greet it (``AsyncEngine.popen``; a
        ``trace`` runs in the client's own thread)."""
        start = functools.partial(
            AsyncEngine.popen_in,
            framing=framing,
            stderr=stderr,
            cwd=cwd,
            env=env,
            timeout=timeout,
            trace=trace,
        )
        return cls(lambda nursery: start(nursery, argv))

    @classmethod
    def connect(  # noqa: PLR0913  (the keywords of AsyncEngine.connect)
        cls,
        host: str,
        port: int,
        *,
        framing: Framing = "text",
        timeout: float = TIMEOUT,
        trace: TraceCallback | None = None,
        tls: bool | ssl.SSLContext = False,
        cafile: str | None = None,
        server_hostname: str | None = None,
        token: str | None = None,
    ) -> Engine:
        """Connect to a server on ``host:port`` and greet it (``AsyncEngine.connect``: with
        ``tls=True`` or ``cafile``, over TLS, the server's certificate verified; ``token``
        presented to a server that asks for one)."""

        def start(nursery: trio.Nursery) -> Awaitable[AsyncEngine]:
            # a closure, not a ``functools.partial``: a partial's ``repr`` would show the token
            return AsyncEngine.connect_in(
                nursery,
                host,
                port,
                framing=framing,
                timeout=timeout,
                trace=trace,
                tls=tls,
                cafile=cafile,
                server_hostname=server_hostname,
                token=token,
            )

        return cls(start)

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.quit()

    def _call(self, fn: Callable[..., Awaitable[T]], *args: object, **kwargs: object) -> T:
        if self._token is None or not self._thread.is_alive():
            raise EngineTerminatedError("the engine is closed")
        try:
            call = functools.partial(fn, *args, **kwargs)
            return trio.from_thread.run(call, trio_token=self._token)
        except trio.RunFinishedError:
            raise EngineTerminatedError("the engine is closed") from None

    @property
    def _async(self) -> AsyncEngine:
        assert self._engine is not None
        return self._engine

    @property
    def info(self) -> EngineInfo:
        """What the handshake told."""
        return self._async.info

    @property
    def where(self) -> str:
        return self._async.where

    @property
    def pid(self) -> int | None:
        """The engine's process id, when it was started by ``popen``."""
        process = self._async.process
        return None if process is None else process.pid

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._async.alive

    def quit(self, timeout: float = TIMEOUT) -> None:
        """End the session and the engine (``AsyncEngine.quit``), and the client's thread."""
        if self._thread.is_alive() and self._token is not None:
            try:
                self._call(self._async.quit, timeout)
            finally:
                closing = self._closing
                if closing is not None:
                    with contextlib.suppress(trio.RunFinishedError):
                        trio.from_thread.run_sync(closing.set, trio_token=self._token)
                self._thread.join(timeout + 5)
        if not self._thread.is_alive():
            self._reaper.detach()  # the process is reaped: its id may be someone else's now

    close = quit

    def isready(self, timeout: float = TIMEOUT) -> None:
        self._call(self._async.isready, timeout)

    def ping(self, token: int = 0, timeout: float = TIMEOUT) -> None:
        self._call(self._async.ping, token, timeout)

    def set_option(
        self, name: str, value: str | int | bool | None = None, timeout: float = TIMEOUT
    ) -> None:
        self._call(self._async.set_option, name, value, timeout)

    def new_game(self, game: str | None = None, timeout: float = TIMEOUT) -> None:
        self._call(self._async.new_game, game, timeout)

    def position(
        self, start: str | None = None, moves: Sequence[str] = (), timeout: float = TIMEOUT
    ) -> None:
        self._call(self._async.position, start, moves, timeout)

    def start_search(  # noqa: PLR0913 (keyword-only: the limits of go)
        self,
        *,
        depth: int | None = None,
        movetime: int | None = None,
        nodes: int | None = None,
        clock: Clock | None = None,
        infinite: bool = False,
        searchmoves: Sequence[str] = (),
        avoidmoves: Sequence[str] = (),
        on_info: InfoCallback | None = None,
        timeout: float = TIMEOUT,
    ) -> SyncSearchHandle:
        handle = self._call(
            self._async.start_search,
            depth=depth,
            movetime=movetime,
            nodes=nodes,
            clock=clock,
            infinite=infinite,
            searchmoves=searchmoves,
            avoidmoves=avoidmoves,
            on_info=on_info,
            timeout=timeout,
        )
        return SyncSearchHandle(self, handle)

    def go(  # noqa: PLR0913 (keyword-only: the limits of go)
        self,
        *,
        depth: int | None = None,
        movetime: int | None = None,
        nodes: int | None = None,
        clock: Clock | None = None,
        infinite: bool = False,
        searchmoves: Sequence[str] = (),
        avoidmoves: Sequence[str] = (),
        on_info: InfoCallback | None = None,
        timeout: float | None = None,
    ) -> SearchResult:
        return self._call(
            self._async.go,
            depth=depth,
            movetime=movetime,
            nodes=nodes,
            clock=clock,
            infinite=infinite,
            searchmoves=searchmoves,
            avoidmoves=avoidmoves,
            on_info=on_info,
            timeout=timeout,
        )

    def analyse(
        self,
        positions: Sequence[m.AnalysisItem],
        *,
        priority: int = 0,
        on_result: Callable[[m.Analysis], None] | None = None,
        timeout: float | None = None,
    ) -> dict[str, m.Analysis]:
        return self._call(
            self._async.analyse,
            positions,
            priority=priority,
            on_result=on_result,
            timeout=timeout,
        )

    def cancel(self, ids: Sequence[str] = (), timeout: float = TIMEOUT) -> None:
        self._call(self._async.cancel, ids, timeout)

    def stop(self) -> None:
        self._call(self._async.stop)

    def query(self, what: str, timeout: float = TIMEOUT) -> QueryValue:
        return self._call(self._async.query, what, timeout)

    def legal_moves(self, timeout: float = TIMEOUT) -> LegalMoves:
        return self._call(self._async.legal_moves, timeout)

    def scores(self, timeout: float = TIMEOUT) -> tuple[MoveScore, ...]:
        return self._call(self._async.scores, timeout)

    def play(self, move: str, timeout: float = TIMEOUT) -> str:
        return self._call(self._async.play, move, timeout)

    def undo(self, n: int = 1, timeout: float = TIMEOUT) -> str:
        return self._call(self._async.undo, n, timeout)


def _kill_group(pid: int | None) -> None:
    """Kill what is left of an engine's process group (nothing left: nothing to do)."""
    if pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
