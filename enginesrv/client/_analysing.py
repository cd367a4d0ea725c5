"""How ``AsyncEngine.analyse`` waits for the positions of an ``analyse`` request: each position
has an ``AnalysisWait`` that the reader fills in (its lines, then its answer), whatever request
runs meanwhile, since no other request is answered with them. In the text framing the request
itself is an exchange (its refusal comes before the barrier's answer); in msgpack its response
comes after the answer of its last position, or at once as a refusal."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import anyio

from enginesrv.client import _asking
from enginesrv.client._args import TIMEOUT
from enginesrv.client._conn import Connection, engine_error
from enginesrv.client.handle import AnalysisWait, Pending
from enginesrv.client.types import ClientError, EngineTimeoutError
from protocol import messages as m

ResultCallback = Callable[[m.Analysis], None]


def analyse_command(positions: Sequence[m.AnalysisItem], priority: int) -> m.Analyse:
    """The ``analyse`` of ``positions``, checked before it is sent.

    Raises:
        ValueError: no position, a priority out of range, an id that is not one.
    """
    if not positions:
        raise ValueError("analyse: no position given")
    if isinstance(priority, bool) or not isinstance(priority, int) or abs(priority) >= 2**31:
        raise ValueError(f"analyse: priority {priority!r}: not a whole number within ±2^31")
    for item in positions:
        problem = m.id_problem(item.id)
        if problem is not None:
            raise ValueError(f"analyse: id {item.id!r}: {problem}")
    return m.Analyse(tuple(positions), priority)


def cancel_command(ids: Sequence[str]) -> m.Cancel:
    """The ``cancel`` of ``ids``, checked before it is sent (ValueError: not an id)."""
    for ident in ids:
        problem = m.id_problem(ident)
        if problem is not None:
            raise ValueError(f"cancel: id {ident!r}: {problem}")
    return m.Cancel(tuple(ids))


async def analyse(
    conn: Connection,
    command: m.Analyse,
    on_result: ResultCallback | None,
    timeout: float | None,
) -> dict[str, m.Analysis]:
    """Send ``command`` and return each position's answer, by id in the order given. Past
    ``timeout`` seconds the positions not yet answered are cancelled (those searched answer
    with their best move so far, the others as cancelled), and their answers are waited for
    ``TIMEOUT`` more seconds.

    Raises:
        ClientError: an id is given twice, or is being analysed already on this connection.
        EngineError: the engine refused the request (nothing of it runs).
        EngineTimeoutError: not every position answered, even after the cancel (the
            connection is ended).
        EngineTerminatedError: the engine went away first.
    """
    ids = [item.id for item in command.positions]
    taken = [i for i in ids if i in conn.analyses]
    if taken or len(set(ids)) != len(ids):
        which = taken[0] if taken else next(i for i in ids if ids.count(i) > 1)
        raise ClientError(f"analyse: id {which} is given twice, or is being analysed already")
    waits = {i: AnalysisWait(on_result) for i in ids}
    conn.analyses.update(waits)
    pending = None
    try:
        pending = await _send(conn, command)
        with anyio.move_on_after(float("inf") if timeout is None else timeout):
            await _all_answered(waits, pending)
        if not _answered(waits, pending):
            await _cancel_rest(conn, waits, pending, timeout)
    finally:
        for i in ids:
            if conn.analyses.get(i) is waits[i]:
                del conn.analyses[i]
    return _results(conn, waits, pending)


async def _send(conn: Connection, command: m.Analyse) -> Pending | None:
    """Send the request; in msgpack, its pending response (its refusal, or its end)."""
    if conn.framing == "text":
        await _asking.ask(conn, command, TIMEOUT)  # a refusal raises here
        return None
    msgid = conn.new_id()
    pending = Pending(command.METHOD)
    conn.pending[msgid] = pending
    with anyio.move_on_after(TIMEOUT) as scope:
        await conn.send(command, msgid)
    if scope.cancelled_caught:
        conn.pending.pop(msgid, None)
        late = EngineTimeoutError(f"{conn.where}: analyse could not be sent in {TIMEOUT:g} s")
        conn.end(late)
        raise late
    return pending


def _answered(waits: dict[str, AnalysisWait], pending: Pending | None) -> bool:
    if pending is not None:
        return pending.done.is_set()
    return all(w.done.is_set() for w in waits.values())


async def _all_answered(waits: dict[str, AnalysisWait], pending: Pending | None) -> None:
    """Wait until every position is answered: in msgpack until the request's response,
    which follows the last answer (or is its refusal)."""
    if pending is not None:
        await pending.done.wait()
        return
    for wait in waits.values():
        await wait.done.wait()


async def _cancel_rest(
    conn: Connection,
    waits: dict[str, AnalysisWait],
    pending: Pending | None,
    timeout: float | None,
) -> None:
    rest = tuple(i for i, w in waits.items() if not w.done.is_set())
    with anyio.move_on_after(TIMEOUT):
        if rest:
            await conn.send(m.Cancel(rest))
        await _all_answered(waits, pending)
    if not _answered(waits, pending):
        error = EngineTimeoutError(
            f"{conn.where}: analyse: {len(rest)} positions unanswered after {timeout:g} s "
            "and a cancel"
        )
        conn.end(error)
        raise error


def _results(
    conn: Connection, waits: dict[str, AnalysisWait], pending: Pending | None
) -> dict[str, m.Analysis]:
    """Each position's answer, or the request's refusal raised."""
    if pending is not None and pending.reply is not None and pending.reply.error is not None:
        raise engine_error(pending.reply.error)
    out: dict[str, m.Analysis] = {}
    for ident, wait in waits.items():
        if wait.error is not None:
            raise wait.error
        if wait.result is None:
            conn.check_open()
            raise conn.gone(f"no answer for analyse id {ident}")
        out[ident] = wait.result
    return out
