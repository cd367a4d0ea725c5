"""What the ladder's tests share: running a test under trio (on the real clock, or on a
``MockClock`` that jumps), a ladder served in-process on 127.0.0.1 (``serving``), a bot that
logs in and plays as an engine would (``FakeBot``: the first legal move by token of each
position), and the game two such bots play (``first_move_game``)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import trio
import trio.testing

import games
from enginesrv.event.play.players import PlayerSpec
from enginesrv.ladder.referee import Ended
from enginesrv.ladder.server import open_ladder, serve_ladder
from enginesrv.ladder.settings import LadderSettings
from enginesrv.ladder.state import Ladder, LadderRun
from protocol.login import encode_login
from tests.trio_run import BOUND, trio_test

__all__ = ["BOUND", "trio_test"]

TC = "2+0.05"


def mock_trio_test(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on a ``MockClock`` that jumps whenever every task waits."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        trio.run(lambda: fn(*args, **kwargs), clock=trio.testing.MockClock(autojump_threshold=0))

    return run


def ladder_run(folder: Path, house: tuple[PlayerSpec, ...] = (), **changes: Any) -> LadderRun:
    """A run of a yoxii ladder at ``TC`` kept in ``folder``, on a free port of 127.0.0.1."""
    settings = LadderSettings.make(["yoxii"], TC)
    return LadderRun(folder=folder, settings=settings, house=house, port=0, **changes)


@contextlib.asynccontextmanager
async def serving(run: LadderRun) -> AsyncIterator[Ladder]:
    """The ladder of ``run``, open and serving until the block ends (then stopped)."""
    async with open_ladder(run) as ladder, trio.open_nursery() as nursery:
        await nursery.start(functools.partial(serve_ladder, ladder, on_ready=_ignore))
        try:
            yield ladder
        finally:
            ladder.stop.set()


def _ignore(host: str, port: int) -> None:
    del host, port


def on_games(ladder: Ladder, count: int) -> tuple[list[Ended], trio.Event]:
    """The games the ladder stores from now on, and an event set once ``count`` are."""
    ended: list[Ended] = []
    done = trio.Event()

    def note(game: Ended) -> None:
        ended.append(game)
        if len(ended) >= count:
            done.set()

    ladder.ended.append(note)
    return ended, done


async def read_to_end(stream: trio.abc.ReceiveStream) -> bytes:
    """Everything ``stream`` sends until its end (a reset ends it too)."""
    data = b""
    with contextlib.suppress(trio.BrokenResourceError):
        while chunk := await stream.receive_some(65536):
            data += chunk
    return data


async def answer_to(port: int, sent: bytes) -> bytes:
    """What the ladder answers a connection that sends ``sent`` (then nothing), to its end."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        if sent:
            await stream.send_all(sent)
        return await read_to_end(stream)


class Lines:
    """The lines of a stream, one at a time."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def line(self) -> str | None:
        """The next line without its end; None once the stream has ended."""
        while b"\n" not in self.buffer:
            try:
                data = await self.stream.receive_some(65536)
            except trio.BrokenResourceError:
                return None
            if not data:
                return None
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")


def first_move(state: games.State) -> str:
    """The first legal move of ``state`` by token."""
    return min(state.move_to_str(move) for move in state.legal_moves())


def first_move_game() -> tuple[list[str], str]:
    """The yoxii game two players of ``first_move`` play: its moves, and its end in words."""
    state = games.load("yoxii").new_state()
    moves: list[str] = []
    while not state.is_terminal():
        token = first_move(state)
        moves.append(token)
        state.push(state.parse_move(token))
    return moves, str(state.outcome())


class FakeBot:
    """A bot that connects to the ladder, logs in as ``name`` and plays as a plain UGI engine:
    ``id name fake`` and ``ugiok``, ``readyok``, and the first legal move by token of the
    position it is given. With ``drop_at`` it closes its
    connection instead of answering its ``drop_at``-th ``go``; with ``hold`` it awaits
    ``hold()`` after the ladder's first line, before it answers."""

    def __init__(
        self,
        name: str,
        token: str,
        *,
        drop_at: int = 0,
        hold: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.name = name
        self.token = token
        self.drop_at = drop_at
        self.hold = hold
        self.first_line: str | None = None
        """The ladder's first line (None: it closed without one)."""
        self.first_seen = trio.Event()
        self.gos = 0
        self.commands: list[str] = []
        self.state = games.load("yoxii").new_state()

    async def run(self, port: int) -> None:
        """Connect, log in and play until the ladder closes the connection (or ``drop_at``)."""
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(encode_login(self.name, self.token, "text"))
            lines = Lines(stream)
            line = self.first_line = await lines.line()
            self.first_seen.set()
            if self.hold is not None:
                await self.hold()
            if line != "ugi":
                return
            while line is not None:
                self.commands.append(line)
                answer = self.answer(line)
                if answer is None:
                    return
                if answer:
                    try:
                        await stream.send_all(answer.encode())
                    except trio.BrokenResourceError:
                        return
                line = await lines.line()

    def answer(self, line: str) -> str | None:
        """What the bot sends for ``line`` ("" nothing; None: it leaves)."""
        words = line.split()
        command = words[0] if words else ""
        if command == "ugi":
            return "id name fake\nugiok\n"
        if command == "isready":
            return "readyok\n"
        if command == "position":
            self.state = self.position(words)
        elif command == "go":
            self.gos += 1
            if self.gos == self.drop_at:
                return None
            return f"bestmove {first_move(self.state)}\n"
        elif command == "quit":
            return None
        return ""

    @staticmethod
    def position(words: list[str]) -> games.State:
        game = games.load("yoxii")
        cut = words.index("moves") if "moves" in words else len(words)
        if words[1] == "startpos":
            state = game.new_state()
        else:
            state = game.state_from_string(" ".join(words[2:cut]))
        for token in words[cut + 1 :]:
            state.push(state.parse_move(token))
        return state
