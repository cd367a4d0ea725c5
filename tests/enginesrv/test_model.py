"""A model-based test of the server: random interleavings of searches, stops, positions,
options, disconnections and reconnections over several connections in both framings, against
one real server with two real worker processes.

The model checks the contract of docs/protocol.md §3 as the server now keeps it:

* every ``go`` on a connection that stays open gets exactly one answer (a ``bestmove`` line,
  or in text an error 204 alone; in msgpack one response, an error response included), with
  a legal move, also when two gos and a stop come in one write;
* a command sent after a ``stop`` (and no ``go`` since) is never refused with error 204, and
  none is refused with 204 when no search can be running;
* once every connection has closed, every worker is idle again within 2 s.

The state machine is synchronous, so the server runs in a thread of its own (its own
``trio.run``) for the whole test, and the clients are blocking sockets with timeouts.
"""

from __future__ import annotations

import collections
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import msgpack
import trio
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

import games
from enginesrv.search.pool import WorkerPool
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import Server, open_listeners, serve
from enginesrv.serve.settings import SessionConfig
from tests.enginesrv.test_pool import children

TIMEOUT = 10.0
"""Seconds any read of a client may block before the test fails."""
IDLE_WITHIN = 2.0
"""Seconds the pool gets to be all idle once every connection has closed."""
SLOTS = 4
ADDRESSES = ("127.0.0.1", "127.0.0.2")
LINES = (("c5",), ("c5", "4@c6"), ())
"""The move lists the sessions are set to (from the start position)."""
BOTS = ("alphabeta", "random", "greedy")
YOXII = games.load("yoxii")

T = TypeVar("T")


def legal(moves: tuple[str, ...], token: str) -> bool:
    """Whether ``token`` is legal after ``moves`` from Yoxii's start."""
    state = YOXII.new_state()
    for move in moves:
        state.push(state.parse_move(move))
    try:
        state.parse_move(token)
    except games.GameError:
        return False
    return True


# -- the server, in a thread -------------------------------------------------------------------


class ServerThread:
    """A server on 127.0.0.1:<free port> with a pool of 2 real workers (1 per address, as
    ``enginesrv serve --workers 2`` has it), run by ``trio.run`` in a thread."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.port = 0
        self.token: trio.lowlevel.TrioToken | None = None
        self.server: Server | None = None
        self.pool: WorkerPool | None = None
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="model-server", daemon=True)

    def start(self) -> None:
        self.thread.start()
        assert self.started.wait(60), "the server did not start"
        if self.failure is not None:
            raise self.failure
        assert self.port

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            self.failure = exc
        finally:
            self.started.set()

    async def _main(self) -> None:
        limits = Limits()
        config = SessionConfig(
            default_game="yoxii", default_bot="alphabeta", limits=limits.announced()
        )
        async with trio.open_nursery() as nursery:
            pool = WorkerPool(nursery, 2, per_peer=1)
            try:
                await pool.start()
                server = Server(config, pool, limits)
                listeners = await open_listeners("127.0.0.1", 0)
                self.server, self.pool = server, pool
                self.token = trio.lowlevel.current_trio_token()

                def on_ready(host: str, port: int) -> None:
                    del host
                    self.port = port
                    self.started.set()

                await serve(server, listeners, on_ready=on_ready)
            finally:
                with trio.CancelScope(shield=True):
                    await pool.aclose()

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the server's event loop and return what it returns."""
        assert self.token is not None
        return trio.from_thread.run_sync(fn, trio_token=self.token)

    def all_idle(self) -> bool:
        assert self.pool is not None
        return self.call(self.pool.all_idle)

    def close(self) -> None:
        """Stop the server (its pool closes with it) and wait for the thread."""
        if self.server is not None and self.thread.is_alive():
            self.call(self.server.stop.set)
        self.thread.join(30)
        assert not self.thread.is_alive(), "the server did not stop"
        if self.failure is not None:
            raise self.failure


# -- clients -------------------------------------------------------------------------------------


@dataclass
class Sent:
    """A command as the model saw it when it was sent."""

    method: str
    after_stop: bool
    """A stop was sent since the last go: the command must not be refused with 204."""
    maybe_searching: bool
    """A search may be running: 204 is possible (unless ``after_stop``)."""
    moves: tuple[str, ...] = ()
    """``position``: the moves it sets."""
    option: str = ""
    value: str = ""


@dataclass(frozen=True)
class Command:
    method: str
    moves: tuple[str, ...] = ()
    option: str = ""
    value: str = ""
    limit: tuple[str, int] = ("infinite", 0)

    def text(self) -> str:
        match self.method:
            case "go":
                kind, amount = self.limit
                return "go infinite" if kind == "infinite" else f"go {kind} {amount}"
            case "position":
                moves = " moves " + " ".join(self.moves) if self.moves else ""
                return "position startpos" + moves
            case "setoption":
                return f"setoption name {self.option} value {self.value}"
            case _:
                return self.method

    def params(self) -> dict[str, Any]:
        match self.method:
            case "go":
                kind, amount = self.limit
                return {"infinite": True} if kind == "infinite" else {kind: amount}
            case "position":
                return {"moves": list(self.moves)}
            case "setoption":
                return {"name": self.option, "value": self.value}
            case _:
                return {}


class Client:
    """One connection and what the model knows of its session."""

    framing: ClassVar[str]

    def __init__(self, port: int, local: str) -> None:
        self.sock = socket.create_connection(
            ("127.0.0.1", port), timeout=TIMEOUT, source_address=(local, 0)
        )
        self.after_stop = False
        self.other_bot = False
        """A bot without a ``Depth`` option may have been chosen (it has for text)."""

    def close(self) -> None:
        self.sock.close()

    def judge_error(self, sent: Sent, code: int, text: str) -> bool:
        """Whether an error answering ``sent`` is allowed (True: the command was refused)."""
        if code == 204:
            assert not sent.after_stop, f"204 for a {sent.method} sent after a stop: {text}"
            assert sent.maybe_searching, f"204 for a {sent.method} when no search ran: {text}"
            return True
        if code == 101 and sent.method == "setoption" and sent.option == "Depth":
            assert self.other_bot, f"Depth refused for alphabeta: {text}"
            return True
        raise AssertionError(f"unexpected error for {sent.method}: {text}")

    def sent_list(self, commands: list[Command], searching: bool) -> list[Sent]:
        """The model's view of each command of one write, in order."""
        out = []
        for command in commands:
            out.append(
                Sent(
                    command.method, self.after_stop, searching, command.moves, command.option,
                    command.value,
                )
            )  # fmt: skip
            if command.method == "stop":
                self.after_stop = True
            elif command.method == "go":
                self.after_stop = False
                searching = True
        return out

    def run(self, commands: list[Command]) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Stop, then a barrier after the search's answer; every go must be answered."""
        raise NotImplementedError


class TextClient(Client):
    """A text connection. Each step is its commands and an ``isready`` in one write, read up
    to the ``readyok`` (errors come in order, so each is matched to its command)."""

    framing = "text"

    def __init__(self, port: int, local: str) -> None:
        super().__init__(port, local)
        self.buffer = b""
        self.bot = "alphabeta"
        self.waiting: collections.deque[tuple[str, ...]] = collections.deque()
        """The positions of the accepted gos not answered yet, oldest first."""
        self.moves: tuple[str, ...] = ()

    def line(self) -> str:
        while b"\n" not in self.buffer:
            data = self.sock.recv(65536)
            assert data, f"the server closed the connection; unread: {self.buffer!r}"
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def run(self, commands: list[Command]) -> None:
        """Send the commands in one write, each followed by a ``ping`` with its index: the
        session answers in order, so an error line belongs to the command after the last
        ``pong`` (two gos in one write are told apart)."""
        sent = self.sent_list(commands, bool(self.waiting))
        wire = "".join(f"{c.text()}\nping {i}\n" for i, c in enumerate(commands))
        self.sock.sendall((wire + "isready\n").encode())
        lines = []
        errors: list[list[str]] = [[] for _ in commands]
        current = 0
        barriers = 1 + sum(c.method == "isready" for c in commands)
        while barriers:
            line = self.line()
            if line == "readyok":
                barriers -= 1
            elif line.startswith("pong "):
                assert line == f"pong {current}", f"{line!r} after command {current}"
                current += 1
            elif line.startswith("error "):
                assert current < len(commands), f"an error after the last command: {line!r}"
                errors[current].append(line)
            else:
                lines.append(line)
        assert current == len(commands), f"{len(commands) - current} pongs missing"
        for item, found in zip(sent, errors, strict=True):
            assert len(found) <= 1, found
            if found:
                assert found[0].split()[3] == f"{item.method}:", (item.method, found)
            refused = bool(found) and self.judge_error(item, int(found[0].split()[1]), found[0])
            if refused:
                continue
            if item.method == "go":
                self.waiting.append(self.moves)
            elif item.method == "position":
                self.moves = item.moves
            elif item.method == "setoption" and item.option == "Bot":
                self.bot = item.value
                self.other_bot = item.value != "alphabeta"
        for line in lines:
            assert line.startswith(("bestmove", "info")), f"unexpected line: {line!r}"
            if line.startswith("bestmove"):
                assert self.waiting, f"a bestmove for no go: {line!r}"
                moves = self.waiting.popleft()
                token = line.split()[1]
                assert legal(moves, token), f"{line!r} after {moves}"

    def finish(self) -> None:
        self.run([Command("stop"), Command("position")])
        assert not self.waiting, f"{len(self.waiting)} go(s) without a bestmove"


class MsgpackClient(Client):
    """A msgpack-RPC connection: requests are matched to responses by id; what arrived is
    read without blocking after every step."""

    framing = "msgpack"

    def __init__(self, port: int, local: str) -> None:
        super().__init__(port, local)
        self.unpacker = msgpack.Unpacker(raw=False)
        self.next_id = 1
        self.pending: dict[int, Sent] = {}
        self.history: list[tuple[int, Sent]] = []
        self.accepted: dict[int, bool] = {}

    def run(self, commands: list[Command], *, stop_request: bool = False) -> None:
        self.drain()
        searching = any(s.method == "go" for s in self.pending.values())
        wire = b""
        for command, sent in zip(commands, self.sent_list(commands, searching), strict=True):
            if command.method == "stop" and not stop_request:
                wire += msgpack.packb([2, "stop", [{}]])
                continue
            msgid = self.next_id
            self.next_id += 1
            self.pending[msgid] = sent
            self.history.append((msgid, sent))
            wire += msgpack.packb([0, msgid, command.method, [command.params()]])
        self.sock.sendall(wire)
        self.drain()

    def drain(self, until: int | None = None) -> None:
        """Handle what has arrived; with ``until``, read until that request is answered."""
        while True:
            if until is not None:
                if until not in self.pending:
                    return
            elif not select.select([self.sock], [], [], 0)[0]:
                return
            data = self.sock.recv(65536)
            assert data, "the server closed the connection"
            self.unpacker.feed(data)
            for frame in self.unpacker:
                self.handle(frame)

    def handle(self, frame: Any) -> None:
        if frame[0] == 2:
            assert frame[1] == "info", f"unexpected notification {frame}"
            return
        _, msgid, error, result = frame
        assert msgid in self.pending, f"a second response, or one for no request: {frame}"
        sent = self.pending.pop(msgid)
        refused = False
        if error is not None:
            if sent.method == "stop" and error[0] == 205:
                return
            refused = self.judge_error(sent, error[0], str(error))
        self.accepted[msgid] = not refused
        if sent.method == "go" and not refused:
            move = result["move"]
            assert isinstance(move, str), frame
            moves = self.moves_before(msgid)
            if moves is not None:
                assert legal(moves, move), f"{move} after {moves}"

    def moves_before(self, msgid: int) -> tuple[str, ...] | None:
        """The moves of the position a go was sent on (None if not known yet)."""
        for earlier, sent in reversed(self.history):
            if earlier >= msgid or sent.method != "position":
                continue
            if earlier not in self.accepted:
                return None
            if self.accepted[earlier]:
                return sent.moves
        return ()

    def run_setoption(self, command: Command) -> None:
        if command.option == "Bot" and command.value != "alphabeta":
            self.other_bot = True
        self.run([command])

    def finish(self) -> None:
        self.run([Command("stop"), Command("position")])
        self.drain(until=self.next_id - 1)
        assert not self.pending, f"unanswered: {self.pending}"


# -- the state machine ---------------------------------------------------------------------------

GO_LIMITS = st.one_of(
    st.tuples(st.just("depth"), st.integers(1, 3)),
    st.tuples(st.just("movetime"), st.integers(10, 80)),
    st.just(("infinite", 0)),
)
OPTIONS = st.one_of(
    st.tuples(st.just("Depth"), st.integers(0, 3).map(str)),
    st.tuples(st.just("SecretSeed"), st.integers(0, 5).map(str)),
    st.tuples(st.just("Bot"), st.sampled_from(BOTS)),
)
FRAMINGS = st.sampled_from(["text", "msgpack"])


class ServerModel(RuleBasedStateMachine):
    server: ClassVar[ServerThread]

    def __init__(self) -> None:
        super().__init__()
        self.clients: list[Client | None] = [None] * SLOTS

    def _open(self, slot: int, framing: str, local: str) -> None:
        kind = TextClient if framing == "text" else MsgpackClient
        self.clients[slot] = kind(self.server.port, local)

    def _open_slots(self) -> list[int]:
        return [i for i, c in enumerate(self.clients) if c is not None]

    def _client(self, data: st.DataObject) -> Client:
        slot = data.draw(st.sampled_from(self._open_slots()), label="slot")
        client = self.clients[slot]
        assert client is not None
        return client

    @initialize(
        framings=st.lists(FRAMINGS, min_size=3, max_size=3),
        locals_=st.lists(st.sampled_from(ADDRESSES), min_size=3, max_size=3),
    )
    def connect_three(self, framings: list[str], locals_: list[str]) -> None:
        for slot, (framing, local) in enumerate(zip(framings, locals_, strict=True)):
            self._open(slot, framing, local)

    def has_open(self) -> bool:
        return bool(self._open_slots())

    def has_closed(self) -> bool:
        return len(self._open_slots()) < SLOTS

    @precondition(has_open)
    @rule(data=st.data(), limit=GO_LIMITS)
    def go(self, data: st.DataObject, limit: tuple[str, int]) -> None:
        self._client(data).run([Command("go", limit=limit)])

    @precondition(has_open)
    @rule(data=st.data(), as_request=st.booleans())
    def stop(self, data: st.DataObject, as_request: bool) -> None:
        client = self._client(data)
        if isinstance(client, MsgpackClient):
            client.run([Command("stop")], stop_request=as_request)
        else:
            client.run([Command("stop")])

    @precondition(has_open)
    @rule(data=st.data(), moves=st.sampled_from(LINES))
    def position(self, data: st.DataObject, moves: tuple[str, ...]) -> None:
        self._client(data).run([Command("position", moves=moves)])

    @precondition(has_open)
    @rule(data=st.data())
    def isready(self, data: st.DataObject) -> None:
        self._client(data).run([Command("isready")])

    @precondition(has_open)
    @rule(data=st.data(), option=OPTIONS)
    def setoption(self, data: st.DataObject, option: tuple[str, str]) -> None:
        client = self._client(data)
        command = Command("setoption", option=option[0], value=option[1])
        if isinstance(client, MsgpackClient):
            client.run_setoption(command)
        else:
            client.run([command])

    @precondition(has_open)
    @rule(data=st.data(), limit=GO_LIMITS, moves=st.sampled_from(LINES))
    def go_and_stop_at_once(
        self, data: st.DataObject, limit: tuple[str, int], moves: tuple[str, ...]
    ) -> None:
        """go and stop in one write, or stop, position and go in one write."""
        client = self._client(data)
        if data.draw(st.booleans(), label="go first"):
            client.run([Command("go", limit=limit), Command("stop")])
        else:
            client.run(
                [Command("stop"), Command("position", moves=moves), Command("go", limit=limit)]
            )

    @precondition(has_open)
    @rule(data=st.data(), first=GO_LIMITS, second=GO_LIMITS)
    def go_go_stop_at_once(
        self, data: st.DataObject, first: tuple[str, int], second: tuple[str, int]
    ) -> None:
        """Two gos and a stop in one write: the second go is refused with 204 alone while the
        first searches (the first may end while that refusal is being sent), or searches once
        the first has ended; the stop ends whichever runs."""
        self._client(data).run(
            [Command("go", limit=first), Command("go", limit=second), Command("stop")]
        )

    @precondition(has_open)
    @rule(data=st.data())
    def disconnect(self, data: st.DataObject) -> None:
        slot = data.draw(st.sampled_from(self._open_slots()), label="slot")
        client = self.clients[slot]
        assert client is not None
        client.close()
        self.clients[slot] = None

    @precondition(has_closed)
    @rule(data=st.data(), framing=FRAMINGS, local=st.sampled_from(ADDRESSES))
    def reconnect(self, data: st.DataObject, framing: str, local: str) -> None:
        closed = [i for i, c in enumerate(self.clients) if c is None]
        self._open(data.draw(st.sampled_from(closed), label="slot"), framing, local)

    def teardown(self) -> None:
        try:
            for client in self.clients:
                if client is not None:
                    client.finish()
        finally:
            for client in self.clients:
                if client is not None:
                    client.close()
            self.clients = [None] * SLOTS
        deadline = time.monotonic() + IDLE_WITHIN
        while not self.server.all_idle():
            assert time.monotonic() < deadline, f"workers still busy {IDLE_WITHIN} s after close"
            time.sleep(0.01)


MODEL_SETTINGS = settings(
    max_examples=60,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_random_interleavings_answer_every_go_once_and_free_the_workers() -> None:
    before = children()
    server = ServerThread()
    server.start()
    try:
        ServerModel.server = server
        run_state_machine_as_test(ServerModel, settings=MODEL_SETTINGS)
    finally:
        server.close()
    assert children() - before == set()
