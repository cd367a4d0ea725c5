"""``AsyncEngine``: the async client of one engine, on trio or asyncio (docs/client.md)."""

from __future__ import annotations

import contextlib
import functools
import ssl
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import IO

import anyio
from anyio.abc import ByteStream, Process

from enginesrv.client import _analysing, _asking
from enginesrv.client._args import (
    TIMEOUT,
    check_auth,
    check_int,
    check_text,
    check_token,
    go_command,
    option_value,
    search_timeout,
)
from enginesrv.client._conn import Connection
from enginesrv.client._open import open_process, open_tcp, shut, tls_context
from enginesrv.client._session import SessionCalls
from enginesrv.client._spawn import Spawner, spawn_reader
from enginesrv.client.handle import Search, SearchHandle
from enginesrv.client.types import (
    ClientError,
    Clock,
    EngineInfo,
    Framing,
    SearchResult,
    TraceCallback,
)
from protocol import messages as m

InfoCallback = Callable[[m.Info], None]


class AsyncEngine(SessionCalls):
    """One engine over stdio or TCP, in either framing: ``async with AsyncEngine.popen(argv)
    as engine``. Every call that waits takes a ``timeout`` in seconds and raises
    ``EngineTimeoutError`` when it runs out; errors the engine answers raise ``EngineError``
    with the protocol's code; a closed connection raises ``EngineTerminatedError``.

    Calls may come from several tasks at once; they are answered in turn.
    """

    def __init__(self, conn: Connection, process: Process | None = None) -> None:
        self._conn = conn
        self._process = process
        self.info = EngineInfo("", "", "", 0)
        """What the handshake told (filled in by ``handshake``)."""

    # -- opening and closing -----------------------------------------------------------------

    @classmethod
    @contextlib.asynccontextmanager
    async def popen(
        cls,
        argv: Sequence[str],
        *,
        framing: Framing = "text",
        stderr: int | IO[bytes] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT,
        trace: TraceCallback | None = None,
    ) -> AsyncIterator[AsyncEngine]:
        """Start ``argv`` as an engine speaking on its stdin and stdout, greet it, and close it
        (``quit``, then a kill) on leaving the block. ``stderr`` is where its standard error
        goes (default: this process's); ``trace`` is told every line sent and read, the
        handshake's included (``TraceCallback``)."""
        # the reader is the loop's own task, not a task group's: a group around the caller's
        # block would hand the caller's own errors back wrapped in exception groups
        engine = await cls.popen_in(
            None,
            argv,
            framing=framing,
            stderr=stderr,
            cwd=cwd,
            env=env,
            timeout=timeout,
            trace=trace,
        )
        try:
            yield engine
        finally:
            await engine.aclose()

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(  # noqa: PLR0913  (the keywords of connect_in)
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
    ) -> AsyncIterator[AsyncEngine]:
        """Connect to a server (``enginesrv serve``) or an engine listening on ``host:port``,
        greet it, and close the connection on leaving the block (``trace`` as for
        ``popen``; TLS and a token as for ``connect_in``)."""
        engine = await cls.connect_in(
            None,
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
        try:
            yield engine
        finally:
            await engine.aclose()

    @classmethod
    async def popen_in(  # noqa: PLR0913  (the public keywords: the process's, the client's)
        cls,
        nursery: Spawner | None,
        argv: Sequence[str],
        *,
        framing: Framing = "text",
        stderr: int | IO[bytes] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT,
        handshake: bool = True,
        trace: TraceCallback | None = None,
        name: str | None = None,
    ) -> AsyncEngine:
        """As ``popen``, for an engine that lives longer than one block: the caller ends it
        with ``quit`` or ``aclose``. Its reader runs in ``nursery`` (a trio nursery or an
        anyio task group), or with None as a task of the event loop's own (for an engine an
        object holds across calls, as the arbiter's players do). The
        process gets a session of its own, so that whatever it starts is ended with it.
        Messages name the engine ``name`` (default: its command line): for a command run
        under another (a sandbox), the words that mean something to a person."""
        conn, process = await open_process(argv, framing, stderr, cwd, env, name=name)
        conn.set_trace(trace)
        engine = cls(conn, process)
        return await engine._start(nursery, handshake, timeout)

    @classmethod
    async def connect_in(  # noqa: PLR0913  (keyword-only: the connection's, the client's)
        cls,
        nursery: Spawner | None,
        host: str,
        port: int,
        *,
        framing: Framing = "text",
        timeout: float = TIMEOUT,
        handshake: bool = True,
        trace: TraceCallback | None = None,
        tls: bool | ssl.SSLContext = False,
        cafile: str | None = None,
        server_hostname: str | None = None,
        token: str | None = None,
    ) -> AsyncEngine:
        """As ``connect``, for a connection that lives longer than one block (its reader in
        ``nursery``, or a system task with None, as for ``popen_in``); the caller ends it with
        ``quit`` or ``aclose``. ``tls=True`` (or a context of the caller's) speaks TLS and
        verifies the server's certificate for ``server_hostname`` (default ``host``) against
        the system's authorities, or those of ``cafile`` (which implies TLS). ``token``
        (``NAME:TOKEN``) is presented after the handshake to a server that asks for one (and
        to no other); no message, trace or ``repr`` shows it."""
        auth = None if token is None else check_auth(token)
        context = tls_context(tls, cafile, server_hostname)
        conn = await open_tcp(host, port, framing, timeout, context, server_hostname)
        conn.auth = auth
        conn.set_trace(trace)
        engine = cls(conn)
        return await engine._start(nursery, handshake, timeout)

    @classmethod
    async def over(
        cls,
        stream: ByteStream,
        where: str,
        *,
        framing: Framing = "text",
        timeout: float = TIMEOUT,
        handshake: bool = True,
        trace: TraceCallback | None = None,
    ) -> AsyncEngine:
        """An engine on a stream opened some other way (a connection the engine opened to
        a ladder, which accepted it), named ``where`` in messages; its reader is a task of
        the event loop's own, and the caller ends it with ``quit`` or ``aclose`` (which
        closes ``stream``)."""
        conn = Connection(stream, framing, where)
        conn.set_trace(trace)
        return await cls(conn)._start(None, handshake, timeout)

    async def wait_closed(self) -> None:
        """Return once the connection has ended (the engine went away, or it was closed)."""
        await self._conn.reader_done.wait()

    async def _start(self, nursery: Spawner | None, handshake: bool, timeout: float) -> AsyncEngine:
        if nursery is None:
            spawn_reader(self._conn.read_loop, name=f"read {self.where}")
        else:
            nursery.start_soon(self._conn.read_loop)
        if handshake:
            try:
                await self.handshake(timeout)
            except BaseException:
                # no engine to part with politely: it did not greet in time, or went away
                await shut(self._conn, self._process, wait=0.0)
                raise
        return self

    @property
    def where(self) -> str:
        """The engine as messages name it: its command line, or host:port."""
        return self._conn.where

    @property
    def framing(self) -> Framing:
        return self._conn.framing

    @property
    def alive(self) -> bool:
        """Whether the connection is open (no error or timeout has ended it)."""
        return self._conn.ended is None

    @property
    def process(self) -> Process | None:
        """The engine's process, when it was started by ``popen``."""
        return self._process

    async def quit(self, timeout: float = TIMEOUT) -> None:
        """End the session: ``quit`` (a running search is stopped and answered first), wait
        for the engine to go (at most ``timeout``), then close whatever is left."""
        if self._conn.ended is None:
            with contextlib.suppress(ClientError), anyio.move_on_after(timeout):
                await self._conn.send(m.Quit())
                await self._conn.reader_done.wait()
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection now and end the process (``quit``, a moment's wait, then a
        kill of its whole process group). Never raises; safe to call twice."""
        await shut(self._conn, self._process)

    # -- the handshake -------------------------------------------------------------------------

    async def handshake(self, timeout: float = TIMEOUT) -> EngineInfo:
        """``ugi``, and what it tells: also kept in ``info``; then, to a server that asks
        for one, the token the engine was opened with (``connect_in``)."""
        hello = await _asking.greet(self._conn, timeout)
        self.info = EngineInfo.from_handshake(hello)
        return self.info

    # -- asking ----------------------------------------------------------------------------------

    async def isready(self, timeout: float = TIMEOUT) -> None:
        """``isready``: wait until the engine has handled everything sent before."""
        await _asking.ask(self._conn, m.IsReady(), timeout)

    async def ping(self, token: int = 0, timeout: float = TIMEOUT) -> None:
        """``ping N``: a round trip (enginesrv servers only), answered also during a search."""
        check_int("ping", token, 0)
        await _asking.ask(self._conn, m.Ping(token), timeout)

    async def set_option(
        self, name: str, value: str | int | bool | None = None, timeout: float = TIMEOUT
    ) -> None:
        """``setoption``; a check option takes a bool, a spin an int, a button no value."""
        text = option_value(name, value)
        await _asking.quiet(self._conn, timeout)
        await _asking.ask(self._conn, m.SetOption(name, text), timeout)

    async def new_game(self, game: str | None = None, timeout: float = TIMEOUT) -> None:
        """``uginewgame [GAME]``: a new game (of ``game``, else of the ``Game`` option)."""
        if game is not None:
            check_token("game", game)
        await _asking.quiet(self._conn, timeout)
        await _asking.ask(self._conn, m.NewGame(game), timeout)

    async def position(
        self, start: str | None = None, moves: Sequence[str] = (), timeout: float = TIMEOUT
    ) -> None:
        """``position``: ``start`` (a position string; None: the game's start), then
        ``moves`` played from it."""
        if start is not None:
            check_text("position", start)
        for move in moves:
            check_token("move", move)
        await _asking.quiet(self._conn, timeout)
        await _asking.ask(self._conn, m.Position(start, tuple(moves)), timeout)

    async def start_search(  # noqa: PLR0913 (keyword-only: the limits of go)
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
        confirm: bool = True,
    ) -> SearchHandle:
        """``go``: start a search and return at once with its handle. ``movetime`` is in
        milliseconds; ``on_info`` gets every progress report (in the reader task: it must not
        block). ``timeout`` bounds the start only. In the text framing the start is
        confirmed by a barrier (``isready`` or ``ping``), so that a refused ``go`` raises
        here; ``confirm=False`` sends ``go`` alone, for a caller that judges a silent engine
        by its clock (an arbiter): a refusal then comes out of the handle's ``result``.
        ``searchmoves`` (none: all) and ``avoidmoves`` restrict the first decisions searched
        (a bot whose handshake offers ``searchmoves``, ``Handshake.bots``)."""
        go = go_command(depth, movetime, nodes, clock, infinite, searchmoves, avoidmoves)
        await _asking.quiet(self._conn, timeout)
        search = Search(on_info)
        await _asking.start_search(self._conn, go, search, timeout, confirm=confirm)
        stop = functools.partial(_asking.stop, self._conn, search)
        return SearchHandle(search, stop, self.where)

    async def go(  # noqa: PLR0913 (keyword-only: the limits of go)
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
        """Search and return the result within ``timeout`` (None: ``search_timeout``; no bound
        for an infinite search). Then the search is stopped, and a best move that comes within
        ``STOP_GRACE`` is still returned; else ``EngineTimeoutError``, and the engine is closed."""
        if timeout is None and not infinite:
            timeout = search_timeout(movetime, clock)
        start = TIMEOUT if timeout is None else min(TIMEOUT, timeout)
        began = anyio.current_time()
        handle = await self.start_search(
            depth=depth,
            movetime=movetime,
            nodes=nodes,
            clock=clock,
            infinite=infinite,
            searchmoves=searchmoves,
            avoidmoves=avoidmoves,
            on_info=on_info,
            timeout=start,
        )
        left = None if timeout is None else max(0.0, timeout - (anyio.current_time() - began))
        return await handle.result_or_stop(left, timeout, self.aclose)

    async def analyse(
        self,
        positions: Sequence[m.AnalysisItem],
        *,
        priority: int = 0,
        on_result: Callable[[m.Analysis], None] | None = None,
        timeout: float | None = None,
    ) -> dict[str, m.Analysis]:
        """``analyse``: search many positions in one request, each with its own id and limits
        (``AnalysisItem``: a depth, nodes or a movetime, and ``multipv``, ``searchmoves``,
        ``avoidmoves``), and return each id's answer in the order given; ``on_result`` is
        told each as it comes (in the reader task: it must not block). A higher ``priority``
        goes first among this connection's analyses. It may run beside a ``go``. Past
        ``timeout`` seconds (None: no bound) the positions not yet answered are cancelled and
        answer with what they found (``stopped``) or as ``cancelled``."""
        command = _analysing.analyse_command(positions, priority)
        return await _analysing.analyse(self._conn, command, on_result, timeout)

    async def cancel(self, ids: Sequence[str] = (), timeout: float = TIMEOUT) -> None:
        """``cancel``: end the analyses of ``ids`` (none: every one of this connection); their
        answers come to their ``analyse``."""
        await _asking.ask(self._conn, _analysing.cancel_command(ids), timeout)

    async def stop(self) -> None:
        """Stop the running search, if any (its handle gets the best move)."""
        search = self._conn.search
        if search is not None:
            await _asking.stop(self._conn, search, TIMEOUT)
