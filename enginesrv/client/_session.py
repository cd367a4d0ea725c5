"""The calls of ``AsyncEngine`` that ask an ``enginesrv serve`` session about its position
(``query``, ``legal_moves``, ``scores``) or change it (``play``, ``undo``)."""

from __future__ import annotations

from enginesrv.client import _asking
from enginesrv.client._args import (
    TIMEOUT,
    QueryValue,
    check_int,
    check_token,
    move_scores,
    query_value,
)
from enginesrv.client._conn import Connection
from enginesrv.client.types import LegalMoves, MoveScore
from protocol import messages as m


class SessionCalls:
    """The session's calls (module docstring), over the engine's connection."""

    _conn: Connection

    async def query(self, what: str, timeout: float = TIMEOUT) -> QueryValue:
        """``query WHAT``, typed: a bool for ``gameover``/``p1turn``, ``LegalMoves`` for
        ``moves``, a mapping or None for ``outcome``, ``MoveScore``s for ``scores``, else
        the text."""
        if what not in m.QUERY_WHATS:
            raise ValueError(f"query: {what!r} is not one of {', '.join(m.QUERY_WHATS)}")
        value = await _asking.ask_value(self._conn, m.Query(what), timeout)
        return query_value(self._conn.framing, what, value)

    async def legal_moves(self, timeout: float = TIMEOUT) -> LegalMoves:
        """The legal moves of the side to act (``query moves``): a list too long for one reply
        gathered page by page (``query moves start K``, each page within ``timeout``), up to
        ``_asking.MOST_GATHERED`` moves; ``complete`` is false when a decision is described rather
        than listed, or when the server's pages stop going on from where the list stood."""
        moves = await self.query("moves", timeout)
        assert isinstance(moves, LegalMoves)
        return await _asking.gather_moves(self._conn, moves, timeout)

    async def scores(self, timeout: float = TIMEOUT) -> tuple[MoveScore, ...]:
        """What the last search of this position learnt of each first decision it searched
        (``query scores``): deepest first, then best first; empty before a search."""
        value = await _asking.ask_value(self._conn, m.Query("scores"), timeout)
        return move_scores(value)

    async def play(self, move: str, timeout: float = TIMEOUT) -> str:
        """``play MOVE`` on the session position; the new position string."""
        check_token("move", move)
        await _asking.quiet(self._conn, timeout)
        return str(await _asking.ask_value(self._conn, m.Play(move), timeout))

    async def undo(self, n: int = 1, timeout: float = TIMEOUT) -> str:
        """``undo [N]``; the new position string."""
        check_int("undo", n, 1)
        await _asking.quiet(self._conn, timeout)
        return str(await _asking.ask_value(self._conn, m.Undo(n), timeout))
