"""How ``AsyncEngine`` asks an engine and waits for the answer, over a ``Connection``: a text
exchange (commands, then a barrier), a msgpack request (matched by id), the handshake, a
``go`` (whose answer comes to its search, not to the request), a ``stop``, and the wait before
a command that cannot run while a search does (``quiet``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import anyio

from enginesrv.client._args import STOP_GRACE, handshake_from_lines, query_value
from enginesrv.client._conn import MAX_LINES, Connection, engine_error
from enginesrv.client.handle import Pending, Search
from enginesrv.client.types import ClientError, EngineError, EngineTimeoutError, LegalMoves
from protocol import messages as m
from protocol import mpack
from protocol import state as s
from protocol.errors import ProtocolError

MOST_GATHERED = 100_000
"""The most moves ``gather_moves`` gathers (a server lists no more: it describes a larger
decision instead, docs/protocol.md §4.1)."""
MOST_GATHERED_BYTES = 8 << 20
"""The most bytes of move tokens ``gather_moves`` gathers over all its pages (a list of
100,000 moves of a few characters is about a MiB): an engine that answers each page with one
huge token gets no further."""


async def exchange(
    conn: Connection,
    commands: Sequence[m.Command],
    timeout: float,
    *,
    until: Callable[[m.ReplyLine], bool] | None = None,
    ending: str | None = None,
) -> list[m.ReplyLine]:
    """Text: send ``commands``, then a barrier, and return every line that answered them
    (the barrier's answer left out); with ``until``, no barrier: the lines up to and with
    the first for which it is true (``ending`` names it in messages: ``ugiok``).

    Raises:
        EngineTimeoutError: no end within ``timeout`` seconds (the connection is ended).
        EngineTerminatedError: the engine went away first, or sent more than MAX_LINES
            lines or ``max_exchange_bytes`` bytes before the end (the connection is ended).
    """
    async with conn.turn:
        conn.check_open()
        collect, lines_in = anyio.create_memory_object_stream[m.ReplyLine](MAX_LINES)
        barrier: m.Command = m.IsReady()
        what = commands[0].METHOD if commands else "the request"
        if until is None:
            if conn.ping_barrier:
                barrier = m.Ping(next(conn.tokens))
            token = barrier.token if isinstance(barrier, m.Ping) else None
            end = _barrier_end(token)
            conn.ending = "readyok" if token is None else f"pong {token}"
        else:
            end = until
            conn.ending = ending or f"the end of its answer to {what}"
        conn.kept = 0
        lines: list[m.ReplyLine] = []
        conn.collect = collect
        answered = False
        writes = conn.writes
        try:
            with anyio.move_on_after(timeout):
                for command in commands:
                    await conn.send(command)
                if until is None:
                    await conn.send(barrier)
                async for line in lines_in:
                    if end(line):
                        if until is not None:
                            lines.append(line)
                        answered = True
                        return lines
                    lines.append(line)
                    if len(lines) > MAX_LINES:
                        flood = conn.gone(f"more than {MAX_LINES} lines answered one request")
                        conn.end(flood)
                        raise flood
                conn.check_open()
                raise conn.gone("the answer stopped")  # not reached: closed means ended
            # only the deadline leaves the block without a return or an error
            error = EngineTimeoutError(f"{conn.where}: no answer to {what} within {timeout:g} s")
            conn.end(error)
            raise error
        finally:
            conn.collect = None
            collect.close()
            lines_in.close()
            if not answered and conn.ended is None and conn.writes != writes:
                # cancelled half-way: its answer would be taken for the next request's
                cut = f"{conn.where}: a request was cancelled before its answer"
                conn.end(ClientError(f"{cut}; the answers after it cannot be trusted"))


async def request(conn: Connection, command: m.Command, timeout: float) -> m.Reply:
    """msgpack: send ``command`` as a request and return its parsed result.

    Raises:
        EngineError: the engine answered with an error.
        EngineTimeoutError: no answer within ``timeout`` seconds (a late one is dropped).
        EngineTerminatedError: the engine went away first.
    """
    msgid = conn.new_id()
    pending = Pending(command.METHOD)
    conn.pending[msgid] = pending
    try:
        with anyio.move_on_after(timeout) as scope:
            await conn.send(command, msgid)
            await pending.done.wait()
    finally:
        conn.pending.pop(msgid, None)
    if scope.cancelled_caught:
        raise EngineTimeoutError(
            f"{conn.where}: no answer to {command.METHOD} within {timeout:g} s"
        )
    if pending.reply is None:
        conn.check_open()
        raise conn.gone("no answer")
    if pending.reply.error is not None:
        raise engine_error(pending.reply.error)
    try:
        return mpack.parse_result(command.METHOD, pending.reply.result)
    except ProtocolError as exc:
        raise ClientError(f"{conn.where}: an answer to {command.METHOD}: {exc}") from None


async def greet(conn: Connection, timeout: float) -> m.Handshake:
    """``ugi`` and its answer; an enginesrv server's (protocol 1 or later) makes ``ping N``
    the connection's text barrier. A server that asks for a token is given ``conn.auth``
    (``authenticate``), once per connection."""
    if conn.framing == "msgpack":
        ugi = m.Ugi(protocol=m.PROTOCOL_VERSION, client="enginesrv.client")
        reply = await request(conn, ugi, timeout)
        assert isinstance(reply, m.Handshake)
        hello = reply
    else:
        lines = await exchange(
            conn, [m.Ugi()], timeout, until=lambda x: isinstance(x, m.UgiOk), ending="ugiok"
        )
        hello = handshake_from_lines(lines)
    conn.ping_barrier = hello.protocol >= 1
    if hello.auth is not None and not conn.authenticated:
        await authenticate(conn, hello.auth, timeout)
    return hello


async def authenticate(conn: Connection, kind: str, timeout: float) -> None:
    """Present ``conn.auth`` to a server whose handshake asks for ``kind`` (``token``): in
    text ``auth`` and then ``isready`` (a token accepted is answered by nothing), in msgpack
    the ``auth`` request. A server that asks nothing is sent no token.

    Raises:
        ClientError: the server asks for a token and none was given, or for something else.
        EngineError: the server refused the token (307 auth-refused, with its reason; the
            server then closes the connection).
    """
    if kind != "token":
        raise ClientError(f"{conn.where} requires auth {kind}, which this client cannot give")
    if conn.auth is None:
        raise ClientError(f"{conn.where} requires a token: pass token=NAME:TOKEN")
    if conn.framing == "msgpack":
        await request(conn, conn.auth, timeout)
    else:
        lines = await exchange(
            conn,
            [conn.auth, m.IsReady()],
            timeout,
            until=answers(m.IsReady()),
            ending="readyok",
        )
        error = first_error(lines)
        if error is not None:
            raise error
    conn.authenticated = True


async def ask(conn: Connection, command: m.Command, timeout: float) -> list[m.ReplyLine] | m.Reply:
    """One request: its answer lines (text, errors raised) or its reply (msgpack)."""
    if conn.framing == "msgpack":
        return await request(conn, command, timeout)
    if isinstance(command, m.IsReady | m.Ping):  # its own barrier
        ending = f"pong {command.token}" if isinstance(command, m.Ping) else "readyok"
        lines = await exchange(conn, [command], timeout, until=answers(command), ending=ending)
    else:
        lines = await exchange(conn, [command], timeout)
    error = first_error(lines)
    if error is not None:
        raise error
    return lines


async def ask_value(conn: Connection, command: m.Command, timeout: float) -> m.ResponseValue:
    """A request answered by ``response VALUE``: the value (raw text in the text framing)."""
    answer = await ask(conn, command, timeout)
    if isinstance(answer, m.Response):
        return answer.value
    for line in answer if isinstance(answer, list) else ():
        if isinstance(line, m.Response):
            return line.value
    raise ClientError(f"{conn.where}: no answer to {command.METHOD}")


async def start_search(
    conn: Connection, go: m.Go, search: Search, timeout: float, *, confirm: bool
) -> None:
    """Send ``go`` for ``search``, which becomes the connection's search. Text with
    ``confirm``: with a barrier, so that a refusal raises here (``AsyncEngine.start_search``).
    A ``go`` that raises here leaves no search behind: the engine is idle again, or the
    connection is ended."""
    conn.check_open()
    conn.begin(search)
    writes = conn.writes
    try:
        await _send_go(conn, go, search, timeout, confirm=confirm)
    except BaseException as exc:
        if conn.search is search:  # not started: no search may stay behind
            conn.let_go(s.ABANDON)
            if isinstance(exc, EngineError) or conn.writes == writes:
                pass  # refused, or never sent: the engine is idle
            elif conn.framing == "msgpack" and search.msgid is not None:
                # it may have gone out: stop it, so that the engine is idle again
                with (
                    anyio.CancelScope(shield=True),
                    anyio.move_on_after(0.2),
                    contextlib.suppress(ClientError),
                ):
                    await conn.send(m.Stop(search.msgid))
            elif conn.ended is None:
                conn.end(ClientError(f"{conn.where}: a go was cut off half-sent"))
        raise


async def _send_go(
    conn: Connection, go: m.Go, search: Search, timeout: float, *, confirm: bool
) -> None:
    if conn.framing == "msgpack" or not confirm:
        if conn.framing == "msgpack":
            search.msgid = conn.new_id()
        with anyio.move_on_after(timeout) as scope:
            await conn.send(go, search.msgid)
        if scope.cancelled_caught:
            late = EngineTimeoutError(f"{conn.where}: go could not be sent in {timeout:g} s")
            conn.end(late)
            raise late
        return
    error = first_error(await exchange(conn, [go], timeout))
    if error is not None:
        if error.code not in (203, 206):
            # refused (its ``bestmove none``, if any, came before the barrier's answer)
            raise error
        # a game over or a hidden position: the handle says why, with no move
        search.fail(error)
        search.error = error
        if conn.search is search:  # its ``bestmove none`` has not come yet
            conn.machine.process(s.REFUSE)


async def stop(conn: Connection, search: Search, timeout: float) -> None:
    """Send ``stop`` for ``search``, if it still runs, within ``timeout`` seconds (else the
    connection is ended)."""
    if search.done.is_set() or conn.ended is not None or conn.search is not search:
        return
    conn.machine.process(s.STOP)
    with anyio.move_on_after(timeout) as scope:
        await conn.send(m.Stop(search.msgid) if search.msgid else m.Stop())
    if scope.cancelled_caught:
        conn.end(EngineTimeoutError(f"{conn.where}: stop could not be sent"))


async def quiet(conn: Connection, timeout: float) -> None:
    """Before a command refused during a search: wait for a stopped search to answer; a
    search that was not stopped is an error of the caller's.

    Raises:
        ClientError: a search runs that no ``stop`` was sent for.
        EngineTimeoutError: the stopped search did not answer in time (the connection is
            ended).
    """
    if conn.machine.state is s.SEARCHING:
        raise ClientError("a search is running: stop it (or wait for its result) first")
    search = conn.search
    if search is None:
        return
    if conn.machine.state is s.STOPPING:
        with anyio.move_on_after(timeout + STOP_GRACE):
            await search.done.wait()
        if not search.done.is_set():
            error = EngineTimeoutError(f"{conn.where}: no best move after stop")
            conn.end(error)
            raise error
    if conn.machine.state is s.REFUSED and conn.search is search:
        # refused: its ``bestmove none`` is on its way; wait for it, so that it is not
        # taken for the answer of a later ``go`` (an engine that never sends it is let go)
        with anyio.move_on_after(timeout):
            await search.answered.wait()
        if conn.search is search:
            conn.let_go(s.ABANDON)


def _barrier_end(token: int | None) -> Callable[[m.ReplyLine], bool]:
    if token is None:
        return lambda line: isinstance(line, m.ReadyOk)
    return lambda line: isinstance(line, m.Pong) and line.token == token


def first_error(lines: Sequence[m.ReplyLine]) -> EngineError | None:
    """The error among an exchange's answer lines, if any."""
    for line in lines:
        if isinstance(line, m.ErrorReply | m.InvalidMove):
            return engine_error(line)
    return None


def answers(command: m.IsReady | m.Ping) -> Callable[[m.ReplyLine], bool]:
    """What ends the answer to ``isready`` or ``ping N`` (or an error line)."""
    if isinstance(command, m.Ping):
        token = command.token
        return lambda x: isinstance(x, m.ErrorReply) or (isinstance(x, m.Pong) and x.token == token)
    return lambda x: isinstance(x, m.ReadyOk | m.ErrorReply)


async def gather_moves(conn: Connection, first: LegalMoves, timeout: float) -> LegalMoves:
    """The whole of a move list the server cut to fit a reply (``first``: ``query moves``'s
    answer), asked for page by page (``query moves start K``, each within ``timeout``), up
    to ``MOST_GATHERED`` moves or ``MOST_GATHERED_BYTES`` bytes of them; it stops at a page
    that does not go on from where the list stood (its total changed, empty, or not after the
    last move gathered)."""
    gathered = list(first)
    size = sum(len(token) for token in gathered)
    while (
        not first.note
        and len(gathered) < min(first.total, MOST_GATHERED)
        and size < MOST_GATHERED_BYTES
    ):
        value = await ask_value(conn, m.Query("moves", len(gathered)), timeout)
        page = query_value(conn.framing, "moves", value)
        going_on = (
            isinstance(page, LegalMoves)
            and len(page) > 0
            and page.total == first.total
            and (not gathered or page[0] > gathered[-1])
        )
        if not going_on:
            break
        assert isinstance(page, LegalMoves)
        more = sum(len(token) for token in page)
        if size + more > MOST_GATHERED_BYTES:
            break
        gathered += page
        size += more
    return LegalMoves(tuple(gathered), first.total, first.note)
