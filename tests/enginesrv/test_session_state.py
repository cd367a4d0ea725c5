"""A session's search state as the server and the client keep it (``protocol.state``), and a
refereed game plugged into a session through its public hooks (``RefereeHooks``)."""

from __future__ import annotations

from collections.abc import Callable

import trio
import trio.testing

import games
from bots.engine import SearchInfo
from enginesrv.client import AsyncEngine
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from enginesrv.serve.hooks import Decision
from enginesrv.serve.session import Session
from enginesrv.serve.settings import NoMoveError, SessionConfig, request_error
from protocol import messages as m
from protocol import state as s
from protocol.errors import BAD_ARGUMENTS, GAME_OVER
from tests.enginesrv.peer import running_server
from tests.trio_run import trio_test


class GateRunner:
    """A runner whose searches end only when ``gate`` is set (whatever their stop says)."""

    def __init__(self) -> None:
        self.gate = trio.Event()

    async def search(
        self,
        job: SearchJob,
        *,
        on_info: Callable[[SearchInfo], None],
        stop: trio.Event,
        hard_deadline: float | None,
        on_wait: Callable[[], None] | None = None,
        peer: str | None = None,
        on_hold: Callable[[bool], None] | None = None,
        grace: float | None = None,
    ) -> SearchOutcome:
        del job, on_info, stop, hard_deadline, on_wait, peer, on_hold, grace
        await self.gate.wait()
        return SearchOutcome(None)


def last(sent: list[m.Reply]) -> m.Reply:
    return sent[-1]


def state(machine: s.SearchMachine) -> s.SearchState:
    """The machine's state now (a call, so that no check narrows it across awaits)."""
    return machine.state


def session_of(runner: GateRunner, sent: list[m.Reply]) -> Session:
    """A text session of Yoxii whose replies go to ``sent``."""

    async def send(reply: m.Reply, msgid: int | None) -> None:
        del msgid
        sent.append(reply)
        await trio.lowlevel.checkpoint()

    return Session(
        SessionConfig(default_game="yoxii"),
        runner,
        framing="text",
        send=send,
        send_nowait=lambda reply, msgid: sent.append(reply),
    )


@trio_test
async def test_the_server_session_moves_its_search_state_with_go_stop_and_the_answer() -> None:
    runner = GateRunner()
    sent: list[m.Reply] = []
    session = session_of(runner, sent)
    machine = session.slot.machine
    async with trio.open_nursery() as nursery:
        assert state(machine) is s.IDLE
        await session.handle(m.Request(m.Go(depth=3)), nursery)
        assert state(machine) is s.SEARCHING
        await session.handle(m.Request(m.Position(None, ())), nursery)
        refused = last(sent)
        assert isinstance(refused, m.ErrorReply)
        assert refused.code == 204  # refused while searching
        await session.handle(m.Request(m.Stop()), nursery)
        assert state(machine) is s.STOPPING

        async def queued() -> None:
            await session.handle(m.Request(m.Position(None, ())), nursery)

        nursery.start_soon(queued)
        await trio.testing.wait_all_tasks_blocked()
        assert state(machine) is s.STOPPING  # the position waits for the best move
        runner.gate.set()
    assert state(machine) is s.IDLE
    assert not session.busy
    assert [type(reply) for reply in sent[-2:]] == [m.BestMove, m.Ack]  # then the position


@trio_test
async def test_a_search_whose_client_is_gone_closes_the_search_state() -> None:
    runner = GateRunner()
    session = session_of(runner, [])
    async with trio.open_nursery() as nursery:
        await session.handle(m.Request(m.Go(infinite=True)), nursery)
        assert state(session.slot.machine) is s.SEARCHING
        nursery.cancel_scope.cancel()  # what a connection does once its client is gone
    assert state(session.slot.machine) is s.CLOSED
    assert not session.busy


class FakeReferee:
    """A referee that keeps a game of Yoxii and answers ``go`` with the first legal move."""

    def __init__(self, *, forfeit: bool = False) -> None:
        self.game = games.load("yoxii")
        self.state = self.game.new_state()
        self.shown: list[str] = []
        self.admitted: list[str] = []
        self.forfeit = forfeit
        self.left = False
        self.changed = 0
        self.acts: list[str] = []

    def admit(self, command: m.Command) -> None:
        self.admitted.append(command.METHOD)
        if isinstance(command, m.Position):
            raise request_error(BAD_ARGUMENTS, "position: refereed")

    def view(self) -> tuple[games.Game, games.State, list[str]]:
        return self.game, self.state.copy(), list(self.shown)

    def play(self, token: str) -> None:
        self.state.push(self.state.parse_move(token))
        self.shown.append(token)

    def undo(self, n: int) -> None:
        for _ in range(n):
            self.state.pop()
            self.shown.pop()

    def query(self, what: str) -> m.ResponseValue | None:
        return "p1=1 p2=2" if what == "clock" else None

    def go(self, *, notification: bool) -> None:
        del notification
        if self.state.is_terminal():
            raise NoMoveError(GAME_OVER, "go: the game is over")

    async def decide(self, stop: trio.Event) -> Decision:
        del stop
        await trio.lowlevel.checkpoint()
        if self.forfeit:
            return Decision(None, "p1 wins: the bot forfeited")
        token = self.state.move_to_str(self.state.legal_moves()[0])
        self.play(token)
        return Decision(token)

    def leave(self) -> None:
        self.left = True

    def changes(self) -> int:
        return self.changed

    def act(self, command: m.Resign | m.Offer | m.Decline) -> m.ResponseValue:
        self.acts.append(command.METHOD)
        return "resigned" if isinstance(command, m.Resign) else "offered"


@trio_test
async def test_a_refereed_game_plugs_into_a_session_through_its_hooks() -> None:
    sent: list[m.Reply] = []
    session = session_of(GateRunner(), sent)
    referee = FakeReferee()
    session.attach(referee)
    async with trio.open_nursery() as nursery:
        await session.handle(m.Request(m.Play("c5")), nursery)
        assert last(sent) == m.Response(referee.state.to_string())
        await session.handle(m.Request(m.Query("played")), nursery)
        assert last(sent) == m.Response(("c5",))  # the session answers from the view
        await session.handle(m.Request(m.Query("clock")), nursery)
        assert last(sent) == m.Response("p1=1 p2=2")  # the referee answers its own
        await session.handle(m.Request(m.Position(None, ())), nursery)
        assert isinstance(last(sent), m.ErrorReply)
        await session.handle(m.Request(m.Go()), nursery)
        assert state(session.slot.machine) is s.SEARCHING
    best = last(sent)
    assert isinstance(best, m.BestMove)
    assert best.move == referee.shown[-1]
    assert state(session.slot.machine) is s.IDLE
    assert session.board.played == referee.shown  # the view taken again after the decision
    assert referee.admitted == ["play", "query", "query", "position", "go"]
    await session.stop_search()
    assert referee.left


@trio_test
async def test_a_session_takes_its_view_again_when_the_other_side_changed_the_game() -> None:
    sent: list[m.Reply] = []
    session = session_of(GateRunner(), sent)
    referee = FakeReferee()
    session.attach(referee)
    async with trio.open_nursery() as nursery:
        referee.play("c5")  # the other page's decision: the session is not told directly
        await session.handle(m.Request(m.Query("played")), nursery)
        assert last(sent) == m.Response(())  # the referee says nothing changed: the old view
        referee.changed += 1
        await session.handle(m.Request(m.Query("played")), nursery)
        assert last(sent) == m.Response(("c5",))
        await session.handle(m.Request(m.Query("position")), nursery)
        assert last(sent) == m.Response(referee.state.to_string())
        await session.handle(m.Request(m.Offer("draw")), nursery)
        assert last(sent) == m.Response("offered")
        await session.handle(m.Request(m.Resign()), nursery)
        assert last(sent) == m.Response("resigned")
    assert referee.acts == ["offer", "resign"]


@trio_test
async def test_resign_and_offers_are_refused_outside_a_refereed_game() -> None:
    sent: list[m.Reply] = []
    session = session_of(GateRunner(), sent)
    async with trio.open_nursery() as nursery:
        expected: dict[m.Command, str] = {
            m.Resign(): "resign: only in a game the server referees",
            m.Offer("draw"): "offer: only in a game the server referees",
            m.Decline("takeback"): "decline: only in a game the server referees",
            m.Query("table"): "query table: only a game between two pages has one",
        }
        for command, message in expected.items():
            await session.handle(m.Request(command), nursery)
            assert last(sent) == m.ErrorReply(BAD_ARGUMENTS.code, BAD_ARGUMENTS.name, message)


@trio_test
async def test_a_refereed_decision_without_a_move_says_why_then_bestmove_none() -> None:
    sent: list[m.Reply] = []
    session = session_of(GateRunner(), sent)
    session.attach(FakeReferee(forfeit=True))
    async with trio.open_nursery() as nursery:
        await session.handle(m.Request(m.Go()), nursery)
    assert sent[-2:] == [m.Info(string="p1 wins: the bot forfeited"), m.BestMove(None)]


@trio_test
async def test_the_client_keeps_the_same_search_state() -> None:
    async with (
        running_server(game="yoxii") as (_, port),
        AsyncEngine.connect("127.0.0.1", port) as engine,
    ):
        machine = engine._conn.machine  # the connection's own, which the engine keeps
        assert state(machine) is s.IDLE
        handle = await engine.start_search(infinite=True)
        assert state(machine) is s.SEARCHING
        await handle.stop()
        assert state(machine) is s.STOPPING
        result = await handle.result(10)
        assert result.move is not None
        assert state(machine) is s.IDLE
        await engine.aclose()
        assert state(machine) is s.CLOSED
