"""The ladder attacked (docs/ladder.md, docs/protocol.md §11, docs/security.md), over real TCP
to a ladder served in this process (or, where a terminal is what is attacked, the command run
as a program). The adversaries:

1. a stranger on the network, without a token, from one address or many (127.0.0.x);
2. a player holding a valid token whose bot is hostile (it lies, floods, drops and comes back
   at odd moments, never reads, answers with what the protocol does not allow);
3. the engine ``ladder-client`` runs (a hostile child process);
4. someone who could write the ladder's folder between two runs.

Each test names its adversary and the promise it tries. Those that fail today mark a weakness
(the docstring says what should happen instead); the others are attacks the ladder withstands.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sqlite3
import ssl
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgpack
import pytest
import structlog
import trio
import trustme

from enginesrv.cli import main
from enginesrv.event.play.players import Deadlines
from enginesrv.event.play.records import parse_record
from enginesrv.ladder.accounts import players
from enginesrv.ladder.client import ClientSettings, run_client
from enginesrv.ladder.server import open_ladder
from enginesrv.ladder.settings import LadderError, LadderSettings
from enginesrv.ladder.state import Ladder
from protocol.login import encode_login
from tests.ladder.support import (
    FakeBot,
    Lines,
    answer_to,
    ladder_run,
    on_games,
    read_to_end,
    serving,
    trio_test,
)
from tests.processes import ended, line_within, stopping

REPO = Path(__file__).resolve().parents[2]
WRONG = "W" * 43
"""A token of the right form that is nobody's."""
NOT_ACCEPTED = b"error 306 login-refused the name or the token is not accepted\n"


# -- helpers ------------------------------------------------------------------------------------


async def until(condition: Callable[[], bool], within: float = 10.0) -> None:
    """Wait until ``condition`` holds (fail after ``within`` seconds)."""
    with trio.fail_after(within):
        while not condition():
            await trio.sleep(0.005)


async def silent(source: str, port: int) -> trio.socket.SocketType:
    """A connection to the ladder from ``source`` (an address of 127.0.0.0/8) that sends
    nothing."""
    sock = trio.socket.socket()
    await sock.bind((source, 0))
    await sock.connect(("127.0.0.1", port))
    return sock


async def ending(stream: trio.abc.ReceiveStream) -> tuple[bytes, str]:
    """Everything ``stream`` sends, and how it ended: ``eof`` or ``reset``."""
    data = b""
    try:
        while chunk := await stream.receive_some(65536):
            data += chunk
    except trio.BrokenResourceError:
        return data, "reset"
    return data, "eof"


async def greeted(port: int, name: str, token: str) -> str | None:
    """The first line the ladder sends a login of ``name`` (None: it closed without one)."""
    bot = FakeBot(name, token)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bot.run, port)
        with trio.move_on_after(5):
            await bot.first_seen.wait()
        nursery.cancel_scope.cancel()
    return bot.first_line


async def serves_a_newcomer(ladder: Ladder, folder: Path) -> bool:
    """Whether the ladder still greets a fresh player's good login (``ugi``)."""
    name = f"fresh{len(players(folder).accounts())}"
    token = players(folder).add(name)
    return await greeted(ladder.address[1], name, token) == "ugi"


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextlib.contextmanager
def descriptor_limit(soft: int) -> Iterator[None]:
    """This process's soft limit of descriptors set to ``soft`` for the block."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


class Scripted(FakeBot):
    """A ``FakeBot`` whose answer to a command may be replaced: ``script`` maps a command's
    first word to what is sent instead (None: the bot leaves)."""

    def __init__(self, name: str, token: str, script: dict[str, str | None]) -> None:
        super().__init__(name, token)
        self.script = script

    def answer(self, line: str) -> str | None:
        words = line.split()
        if words and words[0] in self.script:
            if words[0] == "go":
                self.gos += 1
            return self.script[words[0]]
        return super().answer(line)


def two_players(folder: Path) -> tuple[str, str]:
    """The tokens of bob and mallory (bob is p1 of their first game: names in order)."""
    accounts = players(folder)
    return accounts.add("bob"), accounts.add("mallory")


# -- a hostile player's bot: the ladder never stops ----------------------------------------------


@trio_test
async def test_a_carriage_return_in_a_bots_error_does_not_stop_the_ladder(tmp_path: Path) -> None:
    """Adversary 2 (a player's bot). Promise: the ladder never stops for a player's
    behaviour, and every game is stored.

    Mallory's bot answers its first ``go`` with ``error 101 bad-arguments no\\rway``: a CR
    inside a line, which the text framing keeps. The arbiter forfeits her (``crash``) and
    quotes the error in the record's comment; the record writer refuses a comment holding a
    CR (``RecordError``), which nothing catches: the game is not stored and the whole ladder
    stops with a traceback. It should store the game (the CR escaped or cut from the
    comment) and go on serving."""
    bob, mallory = two_players(tmp_path)
    hostile = Scripted("mallory", mallory, {"go": "error 101 bad-arguments no\rway\n"})
    async with serving(ladder_run(tmp_path)) as ladder:
        ended, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            nursery.start_soon(hostile.run, ladder.address[1])
            with trio.fail_after(10):
                await done.wait()
            assert await serves_a_newcomer(ladder, tmp_path)
            nursery.cancel_scope.cancel()
    row = ended[0].row
    assert (row.p2, row.winner, row.reason) == ("mallory", "p1", "crash")
    assert row.record is not None
    parse_record((tmp_path / "yoxii" / "season-1" / row.record).read_text(encoding="utf-8"))


@trio_test
async def test_a_returning_link_that_refuses_the_game_does_not_stop_the_ladder(
    tmp_path: Path,
) -> None:
    """Adversary 2. Promise: the ladder never stops for a player's behaviour.

    Mallory drops at her second ``go`` and comes back within the grace with an engine that
    has a ``Game`` option and refuses ``setoption name Game value yoxii``. The seat readies
    the returning link for the game (``LinkedPlayer.start``), which raises
    ``PlayerSpecError``; ``LadderSeat._back`` lets through only ``ForfeitError``, and
    neither the arbiter's ``go`` nor the referee catches it: the whole ladder stops. (The
    same happens when the returning engine names only games other than the one played.) It
    should forfeit mallory's game (as a crash) and go on."""
    bob, mallory = two_players(tmp_path)
    picky = Scripted(
        "mallory",
        mallory,
        {
            "ugi": "id name picky\noption name Game type string default none\nugiok\n",
            "setoption": "error 101 bad-arguments not that game\n",
        },
    )
    async with serving(ladder_run(tmp_path, grace=5.0)) as ladder:
        ended, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            nursery.start_soon(FakeBot("mallory", mallory, drop_at=2).run, ladder.address[1])
            await until(lambda: "mallory" in ladder.lobby._wanted)
            nursery.start_soon(picky.run, ladder.address[1])
            with trio.fail_after(10):
                await done.wait()
            assert await serves_a_newcomer(ladder, tmp_path)
            nursery.cancel_scope.cancel()
    row = ended[0].row
    assert (row.p2, row.winner) == ("mallory", "p1")


@trio_test
async def test_dropping_again_and_again_at_a_games_start_cannot_hold_it_for_ever(
    tmp_path: Path,
) -> None:
    """Adversary 2. Promise: the reconnection grace cannot be abused to stall a game beyond
    its clock.

    Mallory's bot leaves as soon as the ladder readies it for a game (its ``isready``), and
    a new connection of hers logs in again at once, again and again. At a game's start the
    seat waits for her with no clock (``_again(..., None)``) and, each time she comes back
    and drops again, waits a whole new grace: the game never ends and bob is held in it for
    as long as she likes (here 6 s, twelve graces of 0.5 s, three clocks of 2 s). The
    waits of one game should be bounded in all (by the grace, or by her clock): the game
    should end by mallory's forfeit within her clock and one grace."""
    bob, mallory = two_players(tmp_path)
    async with serving(ladder_run(tmp_path, grace=0.3)) as ladder:
        ended, done = on_games(ladder, 1)

        async def again_and_again() -> None:
            while True:
                await Scripted("mallory", mallory, {"isready": None}).run(ladder.address[1])
                await trio.sleep(0.02)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            nursery.start_soon(again_and_again)
            await until(lambda: "mallory" in ladder.lobby._wanted)
            began = trio.current_time()
            with trio.move_on_after(4.5):
                await done.wait()
            waited = trio.current_time() - began
            nursery.cancel_scope.cancel()
    assert ended, f"the game still waited for mallory after {waited:.1f} s"
    row = ended[0].row
    assert (row.p2, row.winner) == ("mallory", "p1")
    assert waited <= 2.05 + 0.3 + 1.0


def go_clock(line: str, seat: str) -> int:
    """The time a ``go`` line gives ``seat`` (``p1``/``p2``), in ms."""
    words = line.split()
    return int(words[words.index(f"{seat}time") + 1])


@trio_test
async def test_a_player_that_comes_back_is_told_the_time_its_clock_has_left(
    tmp_path: Path,
) -> None:
    """Adversary: the network (alice's connection drops; she is no attacker). Promise
    (docs/ladder.md, "Disconnections"): her clock runs while she is away, and she is asked
    for her decision again on her new connection.

    Alice drops at her third decision and is back 0.6 s later. The seat asks her new
    connection with the ``go`` of the original request (``LadderSeat.go`` retries it as it
    was): it tells her the time she had before she left, while the arbiter forfeits her at
    the time she really has, 0.6 s less. An engine that spends what it is told loses on time
    for a drop it came back from. The ``go`` should give her clock as it is when it is
    sent."""
    accounts = players(tmp_path)
    alice, bob = accounts.add("alice"), accounts.add("bob")
    dropping, back = FakeBot("alice", alice, drop_at=3), FakeBot("alice", alice)
    async with serving(ladder_run(tmp_path, grace=10.0)) as ladder:
        _, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            nursery.start_soon(dropping.run, ladder.address[1])
            await until(lambda: "alice" in ladder.lobby._wanted)
            await trio.sleep(0.6)
            nursery.start_soon(back.run, ladder.address[1])
            with trio.fail_after(10):
                await done.wait()
            nursery.cancel_scope.cancel()
    left = go_clock([line for line in dropping.commands if line.startswith("go")][-1], "p1")
    told = go_clock(next(line for line in back.commands if line.startswith("go")), "p1")
    assert told <= left - 500, f"told {told} ms after 0.6 s away with {left} ms"


@trio_test
async def test_a_player_that_comes_back_cannot_hold_its_game_past_its_clock(
    tmp_path: Path,
) -> None:
    """Adversary 2. Promise: the reconnection grace cannot be abused to stall a game beyond
    its clock ("the wait never passes the time its clock leaves it").

    At 0.5+0.05 mallory drops at her first decision and comes back at once; her new
    connection answers the ``isready`` that readies it for the game only 2 s later. The wait
    for her to come back is bounded by her clock, but readying the link that came back is
    bounded only by the ready timeout (5 s, then ``uginewgame``'s 5 s, then the
    ``position``'s 5 s): bob and the game are held 2 s past her clock here, up to 15 s. Her
    clock should bound the readying too: the game should end within her clock (0.55 s) and
    half a second of her drop."""
    bob, mallory = two_players(tmp_path)
    run = ladder_run(tmp_path, grace=10.0)
    run.settings = LadderSettings.make(["yoxii"], "0.5+0.05")

    async def back_slowly(port: int) -> None:
        bot = FakeBot("mallory", mallory)
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(encode_login("mallory", mallory, "text"))
            lines, slowed = Lines(stream), False
            while (line := await lines.line()) is not None:
                if line == "isready" and not slowed:
                    slowed = True
                    await trio.sleep(2.0)
                answer = bot.answer(line)
                if answer is None:
                    return
                with contextlib.suppress(trio.BrokenResourceError):
                    await stream.send_all(answer.encode())

    async with serving(run) as ladder:
        ended, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            nursery.start_soon(FakeBot("mallory", mallory, drop_at=1).run, ladder.address[1])
            await until(lambda: "mallory" in ladder.lobby._wanted)
            dropped = trio.current_time()
            nursery.start_soon(back_slowly, ladder.address[1])
            with trio.fail_after(20):
                await done.wait()
            held = trio.current_time() - dropped
            nursery.cancel_scope.cancel()
    row = ended[0].row
    assert (row.p2, row.winner) == ("mallory", "p1")
    assert held <= 0.55 + 0.5, f"the game ended {held:.2f} s after mallory dropped"


FLOODER = textwrap.dedent(
    """
    import socket, sys
    sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    sock.sendall(b"login mallory " + sys.argv[2].encode() + b"\\n")
    got = b""
    while b"\\n" not in got:
        chunk = sock.recv(4096)
        if not chunk:
            sys.exit(1)
        got += chunk
    sock.sendall(b"id name flood\\nugiok\\n")
    junk = b"x\\n" * 32768
    while True:
        sock.sendall(junk)
    """
)


@trio_test
async def test_idle_links_flooding_lines_do_not_hold_the_event_loop(tmp_path: Path) -> None:
    """Adversary 2. Promise: the other games' clocks are not slowed by a hostile connection
    (the event loop kept busy).

    Mallory's bot (two links, of the eight a player may hold, from another process) logs in
    and then, idle, sends ``x`` lines as fast as it can. Each link's reader decodes and
    drops a whole 64 KiB read (32,768 lines, some 50-100 ms of Python) in one turn of the
    loop: every other task of the ladder, the clocks of every game included, waits that
    long for each link at each turn (measured: some 120 ms a link, 240 ms with these two,
    470 ms with four; a game's margin for the network is 50 ms). A connection's turn should
    hold the loop a few milliseconds: no step of a task should take 20 ms of the loop's
    thread's CPU meanwhile (CPU time, which other processes on the machine do not change)."""
    mallory = players(tmp_path).add("mallory")
    floods: list[trio.Process] = []
    steps = LongestStep(trio.lowlevel.current_task())
    async with serving(ladder_run(tmp_path)) as ladder:
        trio.lowlevel.add_instrument(steps)
        try:
            for _ in range(2):
                argv = [sys.executable, "-c", FLOODER, str(ladder.address[1]), mallory]
                floods.append(await trio.lowlevel.open_process(argv))
            # each flood goes on until the ladder closes its link (its budget of the loop
            # spent), and its process then ends
            with trio.move_on_after(10):
                for flood in floods:
                    await flood.wait()
        finally:
            trio.lowlevel.remove_instrument(steps)
            for flood in floods:
                flood.kill()
                await flood.wait()
    assert [flood.returncode for flood in floods] == [1, 1]  # closed on them, not killed
    assert steps.longest < 0.020, f"a step of {steps.name} took {steps.longest * 1000:.0f} ms"


class LongestStep(trio.abc.Instrument):
    """The longest step of any task but the test's own (``test``: it starts processes), in
    CPU time of the event loop's thread."""

    def __init__(self, test: trio.lowlevel.Task) -> None:
        self.test = test
        self.longest = 0.0
        self.name = ""
        self.steps = 0
        self._began = 0.0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._began = time.thread_time()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.test:
            return
        self.steps += 1
        spent = time.thread_time() - self._began
        if spent > self.longest:
            self.longest, self.name = spent, task.name


@trio_test
async def test_an_escape_sequence_in_a_bots_error_never_reaches_the_ladders_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Adversary 2. Promise: what a player's bot sends never reaches the operator's terminal
    raw (docs/security.md: every line printed goes through ``wording.printable``).

    Mallory's bot answers ``go`` with an error whose message is escape sequences (retitle the
    window, clear the screen). She forfeits; the line ``ladder run`` prints on its standard
    error for the game (``game N GAME: ...``) quotes her error as it came, ESC and BEL
    included. It should show them escaped (``\\x1b``)."""
    bob, mallory = two_players(tmp_path)
    hostile = Scripted(
        "mallory", mallory, {"go": "error 101 bad-arguments \x1b]0;owned\x07\x1b[2J\x1b[H\n"}
    )
    async with serving(ladder_run(tmp_path)) as ladder:
        _, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            nursery.start_soon(hostile.run, ladder.address[1])
            with trio.fail_after(10):
                await done.wait()
            nursery.cancel_scope.cancel()
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if line.startswith("game 1 yoxii: ")]
    assert "mallory" in line
    assert not any(ord(char) < 0x20 or ord(char) == 0x7F for char in line), repr(line)


@trio_test
async def test_a_revoked_players_connections_get_no_more_games(tmp_path: Path) -> None:
    """Adversary 2 (a player whose token was stolen, or who was put out). Promise:
    ``ladder revoke alice`` refuses her token from now on; a token is the player's alone.

    Alice's bot is connected and idle; the operator revokes her. Her connection is not
    looked at again: when bob arrives it is paired and plays a rated game that is stored
    under alice's name (and so would every later one, for as long as the thief keeps the
    connection open: a link has no idle timeout). A revoked player's links should be given
    no more games (or be closed)."""
    accounts = players(tmp_path)
    alice, bob = accounts.add("alice"), accounts.add("bob")
    revoked = FakeBot("alice", alice)
    async with serving(ladder_run(tmp_path)) as ladder:
        ended, _ = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(revoked.run, ladder.address[1])
            await until(lambda: ladder.lobby.counts() == {"alice": 1})
            accounts.revoke("alice")
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            await until(lambda: "bob" in ladder.lobby.counts())
            await trio.sleep(1.3)  # the pairer has looked (each second, and at each arrival)
            nursery.cancel_scope.cancel()
    assert [game.row.id for game in ended] == []
    assert "uginewgame" not in revoked.commands


# -- a stranger: the door ----------------------------------------------------------------------


@trio_test
async def test_one_silent_stranger_cannot_shut_a_ladder_under_a_1024_descriptor_limit(
    tmp_path: Path,
) -> None:
    """Adversary 1 (a stranger, no token). Promise: idle connections and half-open logins
    are bounded; a stranger cannot stop the ladder serving its players.

    Under the soft limit of descriptors most systems give a process (1,024), the ladder's
    admission keeps room for 128 games of 16 descriptors (2,048) and a reserve before any
    connection: its cap comes out at 1 (``descriptor_budget``: at least one). A stranger's
    one connection that sends nothing then holds the whole ladder for 10 s at a time (and
    can be made again), and alice's good login is closed with nothing sent; even two
    players could never be connected at once. (``enginesrv serve`` raises its soft limit to
    the hard one first; the ladder does not.) Alice should be greeted."""
    alice = players(tmp_path).add("alice")
    with descriptor_limit(1024):
        async with serving(ladder_run(tmp_path)) as ladder:
            stranger = await silent("127.0.0.2", ladder.address[1])
            with stranger:
                await trio.sleep(0.1)
                assert await greeted(ladder.address[1], "alice", alice) == "ugi"


@trio_test
async def test_a_stranger_filling_the_ladder_is_evicted_for_a_player(tmp_path: Path) -> None:
    """Adversary 1, from three addresses. Promise: the ladder's connections are admitted as
    the server's are (docs/protocol.md §11 and §2, "Sharing among peers"): on a full server
    a peer holding fewer than two connections is admitted, the newest connection of the
    peer holding most closed for it.

    On a ladder of 8 connections a stranger opens 6 silent ones from 127.0.0.2 and one each
    from 127.0.0.3 and 127.0.0.4: full. Alice (127.0.0.1, holding none) logs in with her
    token and is closed with nothing sent: the door gives its tickets no ``on_evict``, so
    nothing can ever be evicted for a newcomer, and a few addresses that keep their
    half-open logins coming lock every player out (70 addresses for the default 256). A
    connection of 127.0.0.2 should be closed for her and she should be greeted."""
    alice = players(tmp_path).add("alice")
    async with serving(ladder_run(tmp_path, connections=8)) as ladder:
        port = ladder.address[1]
        hoard = [await silent("127.0.0.2", port) for _ in range(6)]
        hoard += [await silent("127.0.0.3", port), await silent("127.0.0.4", port)]
        try:
            assert ladder.door is not None
            await until(lambda: ladder.door is not None and ladder.door.admission.held == 8)
            assert await greeted(port, "alice", alice) == "ugi"
        finally:
            for sock in hoard:
                sock.close()


@trio_test
async def test_a_refused_login_followed_by_more_bytes_ends_with_an_end_not_a_reset(
    tmp_path: Path,
) -> None:
    """Adversary 1. Promise: a refused login is answered with exactly one ``error 306
    login-refused`` line, then the end of the connection (EOF).

    A stranger sends a wrong login and, in the same breath, 64 KiB more (a client that
    pipelines). The door reads the login (512 bytes at most), sends the refusal and closes
    the socket with the rest unread: the kernel then answers with a reset, not an end, and
    a client may lose the refusal with it (on some systems a reset discards what was not
    read yet). The door should read (or discard) what is pending for a moment, or shut its
    side for writing first, so that the refusal is followed by an end."""
    players(tmp_path).add("alice")
    async with serving(ladder_run(tmp_path)) as ladder:
        stream = await trio.open_tcp_stream("127.0.0.1", ladder.address[1])
        async with stream:
            await stream.send_all(encode_login("alice", WRONG, "text") + b"x" * 65536)
            await trio.sleep(0.2)  # the refusal has been sent and the socket closed
            data, end = await ending(stream)
    assert data == NOT_ACCEPTED
    assert end == "eof"


# -- TLS: the handshake comes before the door ----------------------------------------------------


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def tls_server(authority: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    return context


HOARD = textwrap.dedent(
    """
    import resource, socket, sys, time
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    socks = []
    for _ in range(int(sys.argv[2])):
        sock = socket.socket()
        sock.bind(("127.0.0.2", 0))
        try:
            sock.connect(("127.0.0.1", int(sys.argv[1])))
        except OSError:
            break
        socks.append(sock)
    time.sleep(1.0)
    """
)


async def hoard(port: int, count: int) -> None:
    """``count`` silent connections from 127.0.0.2, held a second, from another process."""
    await trio.run_process([sys.executable, "-c", HOARD, str(port), str(count)])


@trio_test
async def test_silent_connections_cannot_exhaust_a_tls_ladders_descriptors(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """Adversary 1, one address. Promise: the ladder never stops for a stranger's behaviour;
    a connection over a cap is closed before its first byte is read (docs/protocol.md §11).

    On a TLS ladder (here under a soft limit of 2,300 descriptors) a stranger opens 2,400
    connections from one address and sends nothing. The TLS handshake runs before the door
    (``TLSListener`` wraps the listener; the admission is asked only once the handshake is
    done), so none of them is counted against any cap, and each is kept for the 10 s the
    handshake may take: the process runs out of descriptors, ``accept`` fails (EMFILE) and
    the error ends the accepting task, and with it the whole ladder. The connections should
    be admitted before their handshake (over its caps, closed at once), and the ladder
    should go on: alice logs in over TLS afterwards."""
    alice = players(tmp_path).add("alice")
    with descriptor_limit(2300):
        async with serving(ladder_run(tmp_path, tls=tls_server(authority))) as ladder:
            await hoard(ladder.address[1], 2400)
            await tls_login_works(ladder, alice, authority)


@trio_test
async def test_silent_connections_cannot_exhaust_a_plain_ladders_descriptors(
    tmp_path: Path,
) -> None:
    """Adversary 1, one address (withstood). The same hoard of 2,400 silent connections
    against a ladder without TLS, under the same limit: each over the caps is closed before
    a byte is read; the ladder goes on and alice is greeted."""
    alice = players(tmp_path).add("alice")
    with descriptor_limit(2300):
        async with serving(ladder_run(tmp_path)) as ladder:
            await hoard(ladder.address[1], 2400)
            assert await greeted(ladder.address[1], "alice", alice) == "ugi"


async def tls_login_works(ladder: Ladder, token: str, authority: trustme.CA) -> None:
    client = ssl.create_default_context()
    authority.configure_trust(client)
    with trio.fail_after(10):
        tcp = await trio.open_tcp_stream("127.0.0.1", ladder.address[1])
        stream = trio.SSLStream(tcp, client, server_hostname="127.0.0.1")
        async with stream:
            await stream.send_all(encode_login("alice", token, "text"))
            assert await Lines(stream).line() == "ugi"


def test_a_plaintext_stranger_puts_no_traceback_on_a_tls_ladders_terminal(
    tmp_path: Path, authority: trustme.CA
) -> None:
    """Adversary 1. Promise: no Python traceback reaches a user's terminal.

    ``enginesrv ladder run --tls-cert ... --tls-key ...`` as a program; a stranger connects
    and sends a login in the clear. The failed handshake is logged by anyio's
    ``TLSListener.handle_handshake_error`` through the standard library's ``logging``, which
    nothing configures: Python's last-resort handler prints ``Error during TLS handshake``
    and a whole traceback on the ladder's standard error, for every such connection, with
    no ration. It should be at most one bounded log line (or nothing)."""
    issued = authority.issue_cert("127.0.0.1")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
    key.write_bytes(issued.private_key_pem.bytes())
    argv = [sys.executable, "-m", "enginesrv.cli", "ladder", "run", "--game", "yoxii",
            "--tc", "2+0.05", "--out", str(tmp_path / "ladder"), "--port", "0",
            "--tls-cert", str(cert), "--tls-key", str(key)]  # fmt: skip
    with stopping(
        subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ) as ladder:
        try:
            listening = line_within(ladder)
            port = int(listening.strip().rsplit(":", 1)[1])
            for _ in range(3):
                got = trio.run(answer_to_tls_ladder, port)
                assert b"ugi" not in got
        finally:
            ladder.send_signal(signal.SIGTERM)
            _, err = ladder.communicate(timeout=20)
    assert "Traceback" not in err, err


async def answer_to_tls_ladder(port: int) -> bytes:
    with trio.fail_after(15):
        return await answer_to(port, encode_login("alice", WRONG, "text"))


# -- a hostile engine under ladder-client --------------------------------------------------------

UNREAPER = textwrap.dedent(
    """
    import ctypes, os, signal, sys, time
    ctypes.CDLL(None, use_errno=True).prctl(1, 0, 0, 0, 0)  # no parent-death signal
    os.setsid()
    with open(sys.argv[1], "w") as pidfile:
        pidfile.write(str(os.getpid()))
    os.kill(os.getppid(), signal.SIGKILL)  # its reaper
    time.sleep(30)
    """
)


@trio_test
async def test_an_engine_that_kills_its_reaper_ends_with_the_ladder_client(tmp_path: Path) -> None:
    """Adversary 3 (the engine ladder-client runs). Promise: ladder-client's engine and all
    its children end when the client ends or its connection drops.

    The engine clears its parent-death signal, leaves its session and kills its reaper (an
    engine of the same user can: docs/security.md, "Processes"). When the ladder closes the
    connection (its greeting timed out), the client ends the engine: its reaper is gone, so
    what ends the engine is the client itself, a subreaper that adopts what its children
    leave (``orphans.adopt``, as ``match`` and ``tournament`` are). ``enginesrv ladder-client``
    is run as the program it is."""
    token = players(tmp_path).add("alice")
    (tmp_path / "alice.token").write_text(token + "\n")
    script, pidfile = tmp_path / "engine.py", tmp_path / "pid"
    script.write_text(UNREAPER)
    run = ladder_run(tmp_path, deadlines=Deadlines(startup=1.0))
    async with serving(run) as ladder:
        command = [
            sys.executable, "-m", "enginesrv.cli", "ladder-client",
            "--server", f"127.0.0.1:{ladder.address[1]}", "--name", "alice",
            "--token-file", str(tmp_path / "alice.token"), "--no-contain",
            "--", sys.executable, str(script), str(pidfile),
        ]  # fmt: skip
        err = tmp_path / "client.err"
        with err.open("wb") as sink:
            client = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink)
        try:
            await until(lambda: "connecting again" in err.read_text(), within=20.0)
            pid = int(pidfile.read_text())
            await until(lambda: not alive(pid), within=3.0)
        finally:
            await trio.to_thread.run_sync(ended, client)
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


FLOODING_ENGINE = textwrap.dedent(
    """
    import os, signal, sys, time
    child = os.fork()
    if child == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(60)
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[1], "w") as pidfile:
        pidfile.write(f"{os.getpid()} {child}")
    junk = b"x\\n" * 4096
    while True:  # never reads its standard input
        os.write(1, junk)
    """
)


@trio_test
async def test_an_engine_that_floods_and_never_reads_ends_with_its_children(
    tmp_path: Path,
) -> None:
    """Adversary 3 (withstood). The engine starts a child in a new session, both ignoring
    SIGTERM, never reads its input and floods its output with lines that are no answer: the
    ladder's greeting times out and closes the connection; the client ends the engine
    through its reaper, and neither process is left."""
    token = players(tmp_path).add("alice")
    script, pidfile = tmp_path / "engine.py", tmp_path / "pids"
    script.write_text(FLOODING_ENGINE)
    said: list[str] = []
    stop = trio.Event()

    def say(text: str) -> None:
        said.append(text)
        if "connecting again" in text:
            stop.set()

    run = ladder_run(tmp_path, deadlines=Deadlines(startup=1.0))
    command = (sys.executable, str(script), str(pidfile))
    pids: list[int] = []
    try:
        async with serving(run) as ladder:
            settings = ClientSettings("127.0.0.1", ladder.address[1], "alice", token, command,
                                      say=say)  # fmt: skip
            with trio.fail_after(15):
                await run_client(settings, stop)
        pids = [int(pid) for pid in pidfile.read_text().split()]
        assert "; connecting again in " in said[1]
        await until(lambda: not any(alive(pid) for pid in pids), within=3.0)
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# -- the ladder's folder, written between runs ---------------------------------------------------


@pytest.mark.parametrize("command", ["results", "ladder run"])
def test_a_deeply_nested_ladder_json_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Adversary 4 (the folder written between runs). Promise: no Python traceback reaches a
    user's terminal; a damaged ``ladder.json`` is refused in one line and kept as it is.

    ``ladder.json`` is at most 4,096 bytes, parsed by ``json.loads``: 2,000 nested lists fit,
    and the parser ends in a ``RecursionError`` that ``settings._parse`` does not catch (it
    catches ``ValueError``, ``KeyError``, ``TypeError``): both ``enginesrv results DIR`` and
    ``enginesrv ladder run --out DIR`` end in a traceback. Both should refuse the file in
    one line, exit status 2."""
    text = '{"games": ' + "[" * 2000 + "]" * 2000 + ', "tc": "2+0.05"}'
    (tmp_path / "ladder.json").write_text(text)
    argv = ["results", str(tmp_path)]
    if command == "ladder run":
        argv = ["ladder", "run", "--out", str(tmp_path), "--game", "yoxii", "--tc", "2+0.05",
                "--port", "0"]  # fmt: skip
    before = signal.getsignal(signal.SIGTERM)
    try:
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    finally:
        signal.signal(signal.SIGTERM, before)
    _, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1, err
    assert "ladder.json" in err
    assert (tmp_path / "ladder.json").read_text() == text


@pytest.mark.parametrize("kind", ["fifo", "link", "huge"])
def test_a_ladder_json_that_is_no_file_or_past_its_cap_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """Adversary 4 (withstood): ``ladder.json`` planted as a FIFO (no writer: a reader that
    opened it would wait for ever), as a link to a file elsewhere, or past its 4,096 bytes:
    ``enginesrv results DIR`` refuses it in one line, exit status 2, without waiting."""
    path = tmp_path / "ladder.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        target = tmp_path / "elsewhere.json"
        target.write_text('{"games": ["yoxii"], "tc": "2+0.05", "anchor": null}')
        path.symlink_to(target)
    else:
        path.write_text('{"games": ["yoxii"], "tc": "2+0.05", "anchor": "' + "a" * 5000 + '"}')
    code = main(["results", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1, err
    assert "ladder.json" in err


async def refused_at_start(folder: Path) -> bool:
    """Whether the ladder of ``folder`` refuses to open (its store damaged, in one line)."""
    try:
        async with open_ladder(ladder_run(folder)):
            return False
    except LadderError:
        return True


async def play_one_game(folder: Path, tokens: tuple[str, str]) -> None:
    """Bob and mallory play one game on a ladder of ``folder`` (stored), then it stops."""
    async with serving(ladder_run(folder)) as ladder:
        _, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", tokens[0]).run, ladder.address[1])
            nursery.start_soon(FakeBot("mallory", tokens[1]).run, ladder.address[1])
            with trio.fail_after(10):
                await done.wait()
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("planted", ["season-1/games", "season-1"])
@trio_test
async def test_a_folder_of_a_season_planted_as_a_link_is_refused_at_the_start(
    tmp_path: Path, planted: str
) -> None:
    """Adversary 4. Promise: a damaged store is refused, named, and kept as it is; the ladder
    writes nothing outside its folder (docs/security.md: a run that holds a folder, such as
    ``--resume`` of a match or a tournament, refuses a ``games/`` that is a link before its
    first game) and stores every game it plays.

    After a first run, ``yoxii/season-1/games`` (or ``yoxii/season-1`` itself) is moved
    elsewhere and replaced by a link to it. ``games/`` a link: the next run opens the
    season without looking at it and writes its next record through the link, outside the
    ladder's folder (``_write_atomic`` refuses a link only at the file's last step).
    ``season-1`` a link: the season is silently left out (its games vanish from the
    standings), the run serves, and its first game ends it: the new season it makes goes
    through the link onto the store already there, ``LadderError`` stops the ladder and the
    game is lost. Either link should make the run refuse to start (one line), as a damaged
    store."""
    folder, outside = tmp_path / "ladder", tmp_path / "outside"
    folder.mkdir()
    tokens = two_players(folder)
    await play_one_game(folder, tokens)
    link = folder / "yoxii" / planted
    link.rename(outside)
    link.symlink_to(outside)
    before = sorted(path.relative_to(outside) for path in outside.rglob("*"))
    if await refused_at_start(folder):
        return
    await play_one_game(folder, tokens)  # it serves: the game is stored, inside
    assert sorted(path.relative_to(outside) for path in outside.rglob("*")) == before


@trio_test
async def test_a_stored_game_number_at_sqlites_limit_does_not_stop_the_ladder(
    tmp_path: Path,
) -> None:
    """Adversary 4. Promise: a damaged store is refused, named, before the ladder serves;
    the ladder never stops with a traceback once it serves.

    A season's one row is given the id 2**63 - 1 (every value of the row is of its type and
    range: ``row_problem`` asks an id only to be at least 1). The ladder opens the store and
    serves; its next game is number 2**63, which SQLite cannot hold: ``db.add`` raises
    ``OverflowError``, which ``Section.keep`` does not catch, and the first game played
    stops the whole ladder. It should refuse the store at its start (an id past any a
    ladder makes), or store the game."""
    tokens = two_players(tmp_path)
    await play_one_game(tmp_path, tokens)
    store = tmp_path / "yoxii" / "season-1" / "results.sqlite"
    biggest = (1 << 63) - 1
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE games SET id = ?, pair = ?", (biggest, biggest))
    if await refused_at_start(tmp_path):
        return
    await play_one_game(tmp_path, tokens)  # it serves: the game is stored, the ladder goes on
    with contextlib.closing(sqlite3.connect(store)) as db:
        (count,) = db.execute("SELECT count(*) FROM games").fetchone()
    assert count == 2


# -- attacks withstood --------------------------------------------------------------------------


@trio_test
async def test_a_connection_over_its_peers_cap_is_closed_with_nothing_sent(
    tmp_path: Path,
) -> None:
    """Adversary 1 (withstood): on a ladder of 2 connections, a stranger's third connection
    is closed before a byte is read, with nothing sent; the door counts it refused."""
    async with serving(ladder_run(tmp_path, connections=2)) as ladder:
        port = ladder.address[1]
        held = [await silent("127.0.0.2", port) for _ in range(2)]
        try:
            assert ladder.door is not None
            await until(lambda: ladder.door is not None and ladder.door.admission.held == 2)
            third = await silent("127.0.0.2", port)
            with third, trio.fail_after(2):
                assert await third.recv(100) == b""
            assert ladder.door.refused == 1
        finally:
            for sock in held:
                sock.close()


@trio_test
async def test_failed_logins_through_a_dual_stack_socket_count_for_the_ipv4_address(
    tmp_path: Path,
) -> None:
    """Adversary 1 (withstood): on a dual-stack listener, a stranger's IPv4 logins come as
    ``::ffff:127.0.0.1``; they count against 127.0.0.1 (``peer_of``), so the sixth failure
    is refused before its token is looked at, and the refusal names the IPv4 address."""
    players(tmp_path).add("alice")
    run = ladder_run(tmp_path)
    run.host = None  # type: ignore[assignment]  # every address, IPv4 as mapped IPv6
    async with serving(run) as ladder:
        port = ladder.address[1]
        for _ in range(5):
            assert await answer_to(port, encode_login("alice", WRONG, "text")) == NOT_ACCEPTED
        sixth = await answer_to(port, encode_login("alice", WRONG, "text"))
    assert sixth.startswith(b"error 306 login-refused too many failed logins from 127.0.0.1: ")


@pytest.mark.parametrize(
    "frame",
    [
        [2, "login", [{"name": "alice", "token": 12345}]],
        [2, "login", [{"name": b"alice", "token": "SECRETxyz"}]],
        [2, "login", [{"name": "alice", "token": "SECRET/xyz"}]],
        [2, "login", [{"name": "alice", "token": "SECRETxyz", "extra": 1}]],
        [0, 1, "login", [{"name": "alice", "token": "SECRETxyz"}]],
        {"name": "alice", "token": "SECRETxyz"},
    ],
)
@trio_test
async def test_a_malformed_msgpack_login_gets_one_frame_quoting_no_token(
    tmp_path: Path, frame: object
) -> None:
    """Adversary 1 (withstood): a msgpack login of the wrong shape or types is answered with
    one error frame, then the end; the frame quotes nothing of the token, nobody joins."""
    players(tmp_path).add("alice")
    async with serving(ladder_run(tmp_path)) as ladder:
        got = await answer_to(ladder.address[1], msgpack.packb(frame))
        assert ladder.lobby.counts() == {}
    if isinstance(frame, dict):  # no array: its first byte picks no framing, told in text
        assert got.startswith(b"error 103 bad-frame ")
        assert got.count(b"\n") == 1
    else:
        unpacker = msgpack.Unpacker(raw=False)
        unpacker.feed(got)
        (error,) = list(unpacker)
        assert error[:2] == [2, "error"]
        assert error[2][0]["code"] in (101, 103)
    assert b"SECRET" not in got


@trio_test
async def test_no_token_reaches_the_logs_or_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Adversaries 1 and 2 (withstood): a wrong token, a right one, one of the wrong form, a
    msgpack login and a login sent twice over: no log event and nothing printed holds any
    of the tokens."""
    alice = players(tmp_path).add("alice")
    sent = [
        encode_login("alice", WRONG, "text"),
        encode_login("alice", WRONG, "msgpack"),
        b"login alice Tok/en" + WRONG.encode() + b"\n",
        encode_login("alice", alice, "text") + encode_login("alice", alice, "text"),
    ]
    run = ladder_run(tmp_path, deadlines=Deadlines(startup=0.5))
    with structlog.testing.capture_logs() as logs:
        async with serving(run) as ladder:
            for data in sent:
                with trio.fail_after(15):
                    await answer_to(ladder.address[1], data)
            assert await greeted(ladder.address[1], "alice", alice) == "ugi"
    out, err = capsys.readouterr()
    shown = repr(logs) + out + err
    for token in (alice, WRONG):
        assert token not in shown


@trio_test
async def test_two_links_of_one_player_never_meet(tmp_path: Path) -> None:
    """Adversary 2 (withstood): alice's two links wait together through the pairer's looks
    (it looks each second): neither is given a game."""
    alice = players(tmp_path).add("alice")
    bots = [FakeBot("alice", alice) for _ in range(2)]
    async with serving(ladder_run(tmp_path)) as ladder, trio.open_nursery() as nursery:
        for bot in bots:
            nursery.start_soon(bot.run, ladder.address[1])
        await until(lambda: ladder.lobby.counts() == {"alice": 2})
        await trio.sleep(1.3)
        assert ladder.referee is not None
        assert ladder.referee.playing == 0
        nursery.cancel_scope.cancel()
    assert [bot.commands for bot in bots] == [["ugi"], ["ugi"]]


@trio_test
async def test_another_player_cannot_take_a_game_waiting_for_its_player(tmp_path: Path) -> None:
    """Adversary 2 (withstood): while the game waits for alice (she dropped at her third
    decision), carol logs in; she is not given alice's game (it is given to a link of
    alice's only), and alice loses by ``disconnect`` once the grace is over."""
    accounts = players(tmp_path)
    alice, bob, carol = accounts.add("alice"), accounts.add("bob"), accounts.add("carol")
    intruder = FakeBot("carol", carol)
    async with serving(ladder_run(tmp_path, grace=0.5)) as ladder:
        ended, done = on_games(ladder, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            nursery.start_soon(FakeBot("alice", alice, drop_at=3).run, ladder.address[1])
            await until(lambda: "alice" in ladder.lobby._wanted)
            nursery.start_soon(intruder.run, ladder.address[1])
            with trio.fail_after(10):
                await done.wait()
            nursery.cancel_scope.cancel()
    row = ended[0].row
    assert (row.p1, row.winner, row.reason) == ("alice", "p2", "disconnect")
    assert "uginewgame" not in intruder.commands


@trio_test
async def test_a_bot_breaking_the_framing_after_login_ends_only_its_own_link(
    tmp_path: Path,
) -> None:
    """Adversary 2 (withstood): mallory logs in with msgpack and answers the ladder's
    ``ugi`` with bytes no msgpack frame begins with; another link of hers sends a line of
    more than 1 MiB. Each of her links is closed; nobody of hers stays in the lobby, and
    the ladder greets a newcomer."""
    mallory = players(tmp_path).add("mallory")
    async with serving(ladder_run(tmp_path)) as ladder:
        port = ladder.address[1]
        framed = await trio.open_tcp_stream("127.0.0.1", port)
        async with framed:
            await framed.send_all(encode_login("mallory", mallory, "msgpack"))
            with trio.fail_after(5):
                assert await framed.receive_some(65536)  # the ugi request
                await framed.send_all(b"\xc1" * 64)
                await read_to_end(framed)
        texted = await trio.open_tcp_stream("127.0.0.1", port)
        async with texted:
            await texted.send_all(encode_login("mallory", mallory, "text"))
            lines = Lines(texted)
            with trio.fail_after(5):
                assert await lines.line() == "ugi"
                with contextlib.suppress(trio.BrokenResourceError):
                    await texted.send_all(b"y" * ((1 << 20) + 4096))
                await read_to_end(texted)
        await until(lambda: ladder.lobby.counts() == {})
        assert await serves_a_newcomer(ladder, tmp_path)


@trio_test
async def test_a_bot_that_goes_silent_loses_and_its_game_is_stored_once(tmp_path: Path) -> None:
    """Adversary 2 (withstood): mallory's bot answers the greeting, then never reads nor
    answers again. Readied for her game, she stalls and loses (``stall``); the game is
    stored once, bob's link is given back and plays on."""
    bob, mallory = two_players(tmp_path)
    run = ladder_run(tmp_path, deadlines=Deadlines(ready=0.5))
    async with serving(run) as ladder:
        ended, done = on_games(ladder, 1)
        stream = await trio.open_tcp_stream("127.0.0.1", ladder.address[1])
        async with stream, trio.open_nursery() as nursery:
            await stream.send_all(encode_login("mallory", mallory, "text"))
            assert await Lines(stream).line() == "ugi"
            await stream.send_all(b"id name mute\nugiok\n")
            nursery.start_soon(FakeBot("bob", bob).run, ladder.address[1])
            with trio.fail_after(10):
                await done.wait()
            await until(lambda: any(not link.busy for link in ladder.lobby.links["bob"]))
            nursery.cancel_scope.cancel()
        assert [row.id for row in ladder.sections["yoxii"].rows] == [1]
    row = ended[0].row
    assert (row.p2, row.winner, row.reason) == ("mallory", "p1", "stall")
