"""The client library (``enginesrv.client``) against the real engine: ``enginesrv engine`` over
stdio in both framings (one process per framing for the module, reset before each test), and
``enginesrv serve`` over TCP. The blocking ``Engine`` is used throughout, ``AsyncEngine`` on
trio and asyncio in a few tests here and throughout test_client_hostile.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from enginesrv.client import (
    AsyncEngine,
    ClientError,
    Clock,
    Engine,
    EngineError,
    EngineInfo,
    EngineTerminatedError,
    LegalMoves,
    SearchResult,
)
from enginesrv.client.types import Framing
from protocol import messages as m
from tests.enginesrv.test_pool import children
from tests.processes import ended, line_within

FRAMINGS: tuple[Framing, ...] = ("text", "msgpack")
BACKENDS = ("trio", "asyncio")
"""The event loops ``AsyncEngine`` is tested on."""
START = "3/5/7/3T3/7/5/3 w t w:5553 b:5553"
START_MOVES = ("c3", "c4", "c5", "d3", "d5", "e3", "e4", "e5")
DATA = Path(__file__).parents[1] / "data"


def engine_argv(framing: Framing) -> list[str]:
    return [sys.executable, "-m", "enginesrv.cli", "engine", "--game", "yoxii",
            "--framing", framing]  # fmt: skip


def terminal_position() -> str:
    """A finished Yoxii position from the rules' test vectors (White's totem is blocked)."""
    for line in (DATA / "yoxii" / "yoxii-moves.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["id"] == "stuck-white-draw":
            return str(case["pos"])
    raise AssertionError("the terminal position is missing from the test data")


FINISHED = terminal_position()


def framing_of(engine: Engine) -> Framing:
    """The framing a module engine was started with (its command line ends with it)."""
    return "msgpack" if engine.where.endswith("msgpack") else "text"


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def engines() -> Iterator[dict[Framing, Engine]]:
    """One real engine per framing for the whole module; at the end both are quit and their
    processes must be gone."""
    before = children()
    opened: dict[Framing, Engine] = {}
    try:
        for framing in FRAMINGS:
            opened[framing] = Engine.popen(
                engine_argv(framing), framing=framing, stderr=subprocess.DEVNULL
            )
        started = children() - before
        assert len(started) == len(FRAMINGS)
        yield opened
    finally:
        for engine in opened.values():
            engine.quit()
    assert all(gone(pid) for pid in started)


@pytest.fixture(params=FRAMINGS)
def engine(request: pytest.FixtureRequest, engines: dict[Framing, Engine]) -> Engine:
    """The engine of one framing, with no search running, a new yoxii game at its start and
    the options it started with."""
    chosen = engines[request.param]
    assert chosen.alive, "an earlier test ended the shared engine"
    chosen.stop()
    chosen.set_option("Compat", False)
    chosen.set_option("Hash", 64)
    chosen.new_game("yoxii")
    chosen.position()
    return chosen


@pytest.fixture(scope="module")
def server_port() -> Iterator[int]:
    """``enginesrv serve`` on a free port, as test_check.py starts it."""
    server = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
         "--game", "yoxii"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = line_within(server)
        assert line.startswith("listening "), line
        yield int(line.rsplit(":", 1)[1])
    finally:
        assert ended(server, 30) == 0  # SIGTERM: a clean stop
        if server.stdout is not None:
            server.stdout.close()


# ---------------------------------------------------------------------------------------------
# The handshake


def test_handshake_tells_name_games_options_and_limits(engine: Engine) -> None:
    """info: the engine's name and protocol, the games with colours and start positions, the
    bots, the options with their types and defaults, and the limits as integers."""
    info = engine.info
    assert info.name == "enginesrv"
    assert info.protocol == 1
    assert info.version
    assert {"yinsh", "yinsh+blitz", "yohoho", "yoxii", "yinyang"} <= {g.name for g in info.games}
    yoxii = info.game("yoxii")
    assert yoxii is not None
    assert yoxii.colours == ("White", "Black")
    assert yoxii.start == START
    assert info.game("chess") is None
    assert {"alphabeta", "greedy", "random"} <= {b.name for b in info.bots}
    game = info.option("game")
    assert game is not None
    assert (game.type, game.default) == ("combo", "yoxii")
    assert "yinsh" in game.vars
    hash_option = info.option("HASH")
    assert hash_option is not None
    assert (hash_option.type, hash_option.default, hash_option.min) == ("spin", "64", 1)
    assert isinstance(hash_option.max, int)
    compat = info.option("Compat")
    assert compat is not None
    assert (compat.type, compat.default) == ("check", "false")
    bot = info.option("Bot")
    assert bot is not None
    assert bot.type == "combo"
    assert info.option("NoSuchOption") is None
    assert info.limits["line"] == 65536
    assert info.limits["frame"] == 1048576
    assert all(isinstance(v, int) for v in info.limits.values())
    assert {"inflight", "idle", "output", "hash"} <= set(info.limits)


def test_handshake_is_the_same_in_both_framings(engines: dict[Framing, Engine]) -> None:
    """The text handshake (lines) and the msgpack one (a map) tell the same things."""
    text, packed = engines["text"].info, engines["msgpack"].info
    assert isinstance(text, EngineInfo)
    for field in ("name", "author", "version", "protocol", "games", "bots", "options"):
        assert getattr(text, field) == getattr(packed, field), field
    assert dict(text.limits) == dict(packed.limits)


# ---------------------------------------------------------------------------------------------
# Positions, moves, queries


def test_position_start_and_with_moves(engine: Engine) -> None:
    """position(): the start; with moves, the moves played from it; from a position string,
    that position."""
    assert engine.query("position") == START
    engine.position(None, ["c3"])
    assert engine.query("phase") == "p"
    after = engine.query("position")
    assert isinstance(after, str)
    assert after != START
    engine.position(START, ["c3"])
    assert engine.query("position") == after
    engine.position(FINISHED)
    assert engine.query("position") == FINISHED


def test_a_bad_position_string_is_error_202(engine: Engine) -> None:
    """A position string the game cannot read: EngineError 202 invalid-position, the position
    kept, the session usable."""
    engine.position(None, ["c3"])
    before = engine.query("position")
    for bad in ("bogus", "3/5/7 w t", START.replace("T", "Q")):
        with pytest.raises(EngineError) as caught:
            engine.position(bad)
        assert (caught.value.code, caught.value.name) == (202, "invalid-position")
        assert engine.query("position") == before
    engine.isready()


@pytest.mark.parametrize(
    ("moves", "bad"),
    [
        (["zz9"], "zz9"),
        (["a1"], "a1"),
        (["c3", "c3"], "c3"),
        (["c3", "4@c4", "d5"], "d5"),
        (["c3", "9@c4"], "9@c4"),
    ],
)
def test_an_illegal_move_in_position_is_error_201(
    engine: Engine, moves: list[str], bad: str
) -> None:
    """A malformed or illegal move in position: EngineError 201 with data move and reason,
    the previous position kept."""
    engine.position(None, ["c4"])
    before = engine.query("position")
    with pytest.raises(EngineError) as caught:
        engine.position(None, moves)
    error = caught.value
    assert (error.code, error.name) == (201, "illegal-move")
    assert error.data is not None
    assert error.data["move"] == bad
    assert isinstance(error.data["reason"], str)
    assert error.data["reason"]
    assert engine.query("position") == before


def test_an_illegal_play_is_error_201(engine: Engine) -> None:
    """play of a move that is not legal: EngineError 201 with the move and reason; the
    position is as before and a legal play then works."""
    with pytest.raises(EngineError) as caught:
        engine.play("a1")
    assert caught.value.code == 201
    assert caught.value.data is not None
    assert caught.value.data["move"] == "a1"
    assert engine.query("position") == START
    assert engine.play("c3") != START


def test_legal_moves(engine: Engine) -> None:
    """legal_moves: the sorted move tokens, complete; none on a finished game."""
    moves = engine.legal_moves()
    assert isinstance(moves, LegalMoves)
    assert moves.complete
    assert moves.total == len(START_MOVES)
    assert moves.note == ""
    assert moves == START_MOVES
    engine.position(None, ["c3"])
    after = engine.legal_moves()
    assert list(after) == sorted(after)
    assert all("@" in move for move in after)
    engine.position(FINISHED)
    assert engine.legal_moves() == ()
    assert engine.legal_moves().complete


def test_play_and_undo_return_the_position(engine: Engine) -> None:
    """play and undo answer with the new position string, the same that query position
    tells."""
    first = engine.play("c3")
    assert first == engine.query("position")
    second = engine.play(engine.legal_moves()[0])
    assert second == engine.query("position")
    assert engine.undo() == first
    engine.play(engine.legal_moves()[0])
    assert engine.undo(2) == START
    assert engine.query("position") == START


def test_undo_beyond_the_moves_played_is_error_101(engine: Engine) -> None:
    """undo of more moves than were played: EngineError 101, the position kept."""
    engine.play("c3")
    with pytest.raises(EngineError) as caught:
        engine.undo(2)
    assert caught.value.code == 101
    assert engine.undo() == START


def test_queries_are_typed(engine: Engine) -> None:
    """query: bools for gameover and p1turn, None or a mapping for outcome, text for the
    rest; at the start and on a finished game."""
    assert engine.query("gameover") is False
    assert engine.query("p1turn") is True
    assert engine.query("turn") == "p1"
    assert engine.query("result") == "none"
    assert engine.query("outcome") is None
    assert engine.query("phase") == "t"
    assert engine.query("moves") == START_MOVES
    engine.position(FINISHED)
    assert engine.query("gameover") is True
    assert engine.query("p1turn") is False
    assert engine.query("turn") == "none"
    assert engine.query("result") == "draw"
    outcome = engine.query("outcome")
    assert isinstance(outcome, dict)
    assert outcome["winner"] == "draw"
    assert outcome["reason"] == "totem-blocked"
    assert {"score_p1", "score_p2", "margin"} <= set(outcome)


def positions_to_compare() -> list[tuple[str | None, list[str]]]:
    return [(None, []), (None, ["c3"]), (None, ["c3", "4@c4", "d3"]), (FINISHED, [])]


ON_A_BOARD = tuple(what for what in m.QUERY_WHATS if what != "table")
"""What a plain session answers ``query`` of."""


def test_queries_are_the_same_in_both_framings(engines: dict[Framing, Engine]) -> None:
    """Every query, in a few positions, gives equal Python values (and types) in the text and
    the msgpack framing (outcome's figures aside: see the next test)."""
    for engine in engines.values():
        engine.stop()
        engine.new_game("yoxii")
    for start, moves in positions_to_compare():
        got: dict[str, dict[str, object]] = {}
        for framing, engine in engines.items():
            engine.position(start, moves)
            # a game between two pages alone has a table (tests/web/test_tables.py asks it)
            got[framing] = {what: engine.query(what) for what in ON_A_BOARD}
            with pytest.raises(EngineError, match="query table: only a game between two pages"):
                engine.query("table")
        text, packed = got["text"], got["msgpack"]
        for what in ON_A_BOARD:
            as_text, as_packed = text[what], packed[what]
            if what == "outcome" and isinstance(as_text, dict):
                assert isinstance(as_packed, dict)
                assert set(as_text) == set(as_packed)
                continue
            assert as_text == as_packed, (start, moves, what)
            assert type(as_text) is type(as_packed), (start, moves, what)


def test_outcome_figures_are_the_same_in_both_framings(engines: dict[Framing, Engine]) -> None:
    """The outcome of a finished game, mapping and values, is equal in both framings."""
    outcomes = {}
    for framing, engine in engines.items():
        engine.stop()
        engine.position(FINISHED)
        outcomes[framing] = engine.query("outcome")
    assert outcomes["text"] == outcomes["msgpack"]


def test_yinyang_setup_moves_cannot_be_listed(engine: Engine) -> None:
    """Yin Yang's setup has too many moves to list: legal_moves gives none, their total, and
    the note saying how one is written."""
    engine.new_game("yinyang")
    moves = engine.legal_moves()
    assert moves.total == 26904200625
    assert not moves.complete
    assert moves.note.startswith("laws:")
    assert moves == ()


# ---------------------------------------------------------------------------------------------
# Options and games


def test_set_option_and_its_errors(engine: Engine) -> None:
    """set_option takes strings, ints and bools; an unknown option, a bad value and a value
    out of range are EngineError 101; the session stays usable."""
    engine.set_option("Hash", 16)
    engine.set_option("hash", "32")
    engine.set_option("Quiescence", True)
    engine.set_option("Quiescence", False)
    engine.set_option("Bot", "random")
    engine.set_option("Bot", "alphabeta")
    for name, value in (
        ("NoSuchOption", 1),
        ("Hash", "abc"),
        ("Hash", 10**7),
        ("Hash", 0),
        ("Quiescence", "maybe"),
        ("Game", "chess"),
        ("Bot", "nobody"),
    ):
        with pytest.raises(EngineError) as caught:
            engine.set_option(name, value)
        assert (caught.value.code, caught.value.name) == (101, "bad-arguments"), name
    engine.isready()
    assert engine.query("position") == START


def test_new_game(engine: Engine) -> None:
    """new_game of a game: its start position; of an unknown game: EngineError 101, the game
    kept."""
    engine.new_game("yinsh")
    yinsh = engine.info.game("yinsh")
    assert yinsh is not None
    assert engine.query("position") == yinsh.start
    with pytest.raises(EngineError) as caught:
        engine.new_game("chess")
    assert caught.value.code == 101
    assert engine.query("position") == yinsh.start
    engine.new_game("yoxii")
    assert engine.query("position") == START


# ---------------------------------------------------------------------------------------------
# Searches


@pytest.mark.parametrize(
    "limits",
    # 200 ms: on a busy machine 50 ms may end before the first iteration does (a legal
    # answer with nothing to report, which is not what this test is about)
    [{"depth": 1}, {"depth": 3}, {"movetime": 200}, {"nodes": 500}],
    ids=["depth1", "depth3", "movetime200", "nodes500"],
)
def test_go_with_a_limit(engine: Engine, limits: dict[str, int]) -> None:
    """go with depth, movetime or nodes: a SearchResult with a legal move, its depth and
    nodes, and on_info called with the progress."""
    notes: list[m.Info] = []
    result = engine.go(**limits, on_info=notes.append)  # type: ignore[arg-type]
    assert isinstance(result, SearchResult)
    assert result.move in START_MOVES
    assert result.depth is not None
    assert result.depth >= 1
    assert result.nodes is not None
    assert result.nodes > 0
    assert result.score is not None
    if "depth" in limits:
        assert result.depth <= limits["depth"]
    assert notes
    assert all(isinstance(note, m.Info) for note in notes)
    if framing_of(engine) == "text":
        assert result.stopped is None  # a text bestmove does not say
    elif "depth" in limits:
        assert result.stopped is False
    else:
        assert isinstance(result.stopped, bool)  # a deadline may count as a stop
    assert engine.query("position") == START


def test_go_with_a_clock(engine: Engine) -> None:
    """go with both clocks (and a negative one, as a manager may send): a legal move."""
    result = engine.go(clock=Clock(p1time=300, p2time=300, p1inc=10, p2inc=10, movestogo=5))
    assert result.move in START_MOVES
    result = engine.go(clock=Clock(p1time=-20, p2time=1000))
    assert result.move in START_MOVES


def test_infinite_search_answers_ping_then_stops(engine: Engine) -> None:
    """start_search(infinite=True): the engine answers ping, isready and queries while it
    runs; stop ends it with a legal best move (msgpack: marked stopped)."""
    notes: list[m.Info] = []
    handle = engine.start_search(infinite=True, on_info=notes.append)
    engine.ping(7)
    engine.isready()
    assert engine.query("turn") == "p1"
    assert engine.query("position") == START
    done_before_stop = handle.done  # a name, so that mypy does not keep handle.done narrowed
    assert not done_before_stop
    handle.stop()
    result = handle.result(5)
    assert handle.done
    assert result.move in START_MOVES
    assert result.stopped is (True if framing_of(engine) == "msgpack" else None)
    assert handle.last_info.depth is not None
    engine.position(None, [str(result.move)])
    assert engine.query("position") != START


def test_go_infinite_with_a_timeout_returns_the_stopped_search(engine: Engine) -> None:
    """go(infinite=True, timeout=T): when T runs out the search is stopped and its best move
    returned."""
    result = engine.go(infinite=True, timeout=0.1)
    assert result.move in START_MOVES


def test_calls_from_several_threads(engine: Engine) -> None:
    """Four threads asking the same engine at once each get the answers to their own
    questions."""
    errors: list[BaseException] = []
    engine.position(None, ["c3"])
    expected = engine.query("position")

    def work() -> None:
        try:
            for _ in range(10):
                assert engine.query("position") == expected
                assert engine.query("phase") == "p"
                engine.ping(1)
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []


def test_commands_wait_for_a_stopped_search(engine: Engine) -> None:
    """During a search that was not stopped, position is refused by the client (ClientError,
    nothing sent); after stop it waits for the best move and runs."""
    handle = engine.start_search(infinite=True)
    with pytest.raises(ClientError, match="a search is running"):
        engine.position(None, ["c3"])
    with pytest.raises(ClientError, match="a search is running"):
        engine.go(depth=1)
    engine.stop()
    engine.position(None, ["c3"])
    assert handle.done
    assert handle.result(0).move in START_MOVES
    assert engine.query("phase") == "p"
    assert engine.go(depth=2).move is not None


def test_go_on_a_finished_game_is_error_203(engine: Engine) -> None:
    """go on a finished game: EngineError 203 game-over, from go and from a started search's
    result; play too; the session stays usable."""
    engine.position(FINISHED)
    with pytest.raises(EngineError) as caught:
        engine.go(depth=1)
    assert (caught.value.code, caught.value.name) == (203, "game-over")
    handle = engine.start_search(depth=1)
    with pytest.raises(EngineError, match="203"):
        handle.result(5)
    with pytest.raises(EngineError) as caught:
        engine.play("c3")
    assert caught.value.code == 203
    engine.position()
    assert engine.go(depth=1).move in START_MOVES


def test_a_game_played_to_its_end(engine: Engine) -> None:
    """Play the first legal move until the game is over: each play answers the position that
    query tells, the game ends with an outcome, then go raises 203 and undo reopens it."""
    for _ in range(200):
        if engine.query("gameover"):
            break
        moves = engine.legal_moves()
        assert moves
        assert engine.play(moves[0]) == engine.query("position")
    else:
        raise AssertionError("the game did not end in 200 plies")
    assert engine.legal_moves() == ()
    assert engine.query("turn") == "none"
    outcome = engine.query("outcome")
    assert isinstance(outcome, dict)
    assert outcome["winner"] in ("p1", "p2", "draw")
    assert engine.query("result") in ("p1win", "p2win", "draw")
    with pytest.raises(EngineError, match="203"):
        engine.go(depth=1)
    engine.undo()
    assert engine.query("gameover") is False
    assert engine.go(depth=1).move in engine.legal_moves()


@pytest.mark.parametrize("framing", ["text", "msgpack"])
def test_compat_on_is_refused(engines: dict[Framing, Engine], framing: Framing) -> None:
    """The Compat option (UCI-style silence: errors as ``info string`` lines) would hide the
    engine's errors from the client, so turning it on is refused before anything is sent;
    turning it off is allowed, and the session still reports a bad position as 202."""
    engine = engines[framing]
    engine.stop()
    for on in (True, "true", "TRUE"):
        with pytest.raises(ValueError, match="Compat"):
            engine.set_option("Compat", on)
    engine.set_option("Compat", False)
    with pytest.raises(EngineError, match="202"):
        engine.position("bogus")


# ---------------------------------------------------------------------------------------------
# Argument checks


BAD_CALLS: dict[str, tuple[Callable[[Engine], object], str]] = {
    "move-with-space": (lambda e: e.position(None, ["c3 4@c4"]), "'c3 4@c4'"),
    "move-with-newline": (lambda e: e.position(None, ["c3\ngo infinite"]), "go infinite"),
    "play-with-newline": (lambda e: e.play("c3\nquit"), "quit"),
    "play-empty": (lambda e: e.play(""), "''"),
    "position-with-newline": (lambda e: e.position(START + "\nquit"), "quit"),
    "option-value-newline": (lambda e: e.set_option("Hash", "16\nsetoption"), "setoption"),
    "option-name-newline": (lambda e: e.set_option("Hash\nquit", 16), "quit"),
    "game-with-space": (lambda e: e.new_game("yo xii"), "'yo xii'"),
    "negative-depth": (lambda e: e.go(depth=-1), "depth -1"),
    "undo-zero": (lambda e: e.undo(0), "undo 0"),
    "unknown-query": (lambda e: e.query("colour"), "colour"),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_arguments_raise_value_error(engine: Engine, case: str) -> None:
    """A move with a space or line break, text with a line break, a negative depth: ValueError
    naming the input; the engine did not see it (position and session as before)."""
    call, quoted = BAD_CALLS[case]
    engine.position(None, ["c3"])
    before = engine.query("position")
    with pytest.raises(ValueError, match=quoted):
        call(engine)
    assert engine.alive
    assert engine.query("position") == before
    engine.isready()


# ---------------------------------------------------------------------------------------------
# Processes: every one started is ended


def leave_by_an_error(engine: Engine) -> None:
    """A with block over ``engine`` that starts a search and raises (quit stops the search
    on the way out)."""
    with engine:
        engine.start_search(infinite=True)
        raise KeyError("leave")


@pytest.mark.parametrize("framing", FRAMINGS)
def test_quit_ends_the_engine_process(framing: Framing) -> None:
    """After quit (text) or leaving the with block by an exception (msgpack) the engine's
    process is gone and reaped; the engine then refuses calls."""
    before = children()
    if framing == "text":
        engine = Engine.popen(engine_argv(framing), framing=framing, stderr=subprocess.DEVNULL)
        started = children() - before
        assert engine.go(depth=1).move in START_MOVES
        engine.quit()
    else:
        engine = Engine.popen(engine_argv(framing), framing=framing, stderr=subprocess.DEVNULL)
        started = children() - before
        with pytest.raises(KeyError, match="leave"):
            leave_by_an_error(engine)
    assert len(started) == 1
    assert all(gone(pid) for pid in started)
    assert children() == before
    assert not engine.alive
    with pytest.raises(EngineTerminatedError):
        engine.isready()


@pytest.mark.parametrize("backend", BACKENDS)
def test_async_engine_process_is_ended_with_its_block(backend: str) -> None:
    """AsyncEngine.popen of the real engine, on each event loop: its process property, a
    search, quit during an infinite search (which still answers it), and a returncode once
    the block is left."""

    async def main() -> int | None:
        argv = engine_argv("msgpack")
        async with AsyncEngine.popen(argv, framing="msgpack", stderr=subprocess.DEVNULL) as e:
            process = e.process
            assert process is not None
            assert process.returncode is None
            result = await e.go(depth=2)
            assert result.move in START_MOVES
            handle = await e.start_search(infinite=True)
            await e.quit()
            assert (await handle.result(0)).move in START_MOVES
            assert not e.alive
        return process.returncode

    assert anyio.run(main, backend=backend) is not None


@pytest.mark.parametrize("framing", FRAMINGS)
def test_sync_search_result_after_quit(framing: Framing) -> None:
    """quit during an infinite search stops it and its best move is answered: the handle's
    result gives it, after the engine is gone."""
    engine = Engine.popen(engine_argv(framing), framing=framing, stderr=subprocess.DEVNULL)
    handle = engine.start_search(infinite=True)
    engine.quit()
    assert handle.done
    assert handle.result(0).move in START_MOVES


# ---------------------------------------------------------------------------------------------
# A server over TCP


@pytest.mark.parametrize("framing", FRAMINGS)
def test_connect_to_a_server(server_port: int, framing: Framing) -> None:
    """Engine.connect to ``enginesrv serve``: the handshake with the server's limits, a
    position, a search, an infinite search with a ping while it runs, an error, quit."""
    with Engine.connect("127.0.0.1", server_port, framing=framing) as engine:
        assert engine.info.name == "enginesrv"
        assert engine.info.protocol == 1
        assert engine.info.limits["firstcommand"] > 0
        assert engine.where == f"127.0.0.1:{server_port}"
        engine.new_game("yoxii")
        engine.position(None, ["c3"])
        assert engine.query("phase") == "p"
        result = engine.go(depth=2)
        assert result.move in engine.legal_moves()
        handle = engine.start_search(infinite=True)
        engine.ping(11)
        assert engine.query("turn") == "p1"
        handle.stop()
        assert handle.result(5).move in engine.legal_moves()
        with pytest.raises(EngineError) as caught:
            engine.position("bogus")
        assert caught.value.code == 202
        engine.isready()
    assert not engine.alive


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("framing", FRAMINGS)
def test_async_connect_to_a_server(server_port: int, framing: Framing, backend: str) -> None:
    """AsyncEngine.connect to ``enginesrv serve`` on each event loop: a search, an infinite
    search with a query while it runs, an error, and two calls raced by the caller's own task
    group, each answered with its own answer."""

    async def main() -> None:
        async with AsyncEngine.connect("127.0.0.1", server_port, framing=framing) as engine:
            assert engine.info.name == "enginesrv"
            await engine.new_game("yoxii")
            await engine.position(None, ["c3"])
            result = await engine.go(depth=2)
            assert result.move in await engine.legal_moves()
            handle = await engine.start_search(infinite=True)
            assert await engine.query("turn") == "p1"
            await handle.stop()
            assert (await handle.result(5)).move in await engine.legal_moves()
            with pytest.raises(EngineError) as caught:
                await engine.position("bogus")
            assert caught.value.code == 202
            answers: dict[str, object] = {}

            async def ask(what: str) -> None:
                answers[what] = await engine.query(what)

            async with anyio.create_task_group() as group:
                for what in ("turn", "phase", "gameover"):
                    group.start_soon(ask, what)
            assert answers == {"turn": "p1", "phase": "p", "gameover": False}
        assert not engine.alive

    anyio.run(main, backend=backend)


def test_connect_to_nothing() -> None:
    """A port nobody listens on: EngineTerminatedError from connect."""
    with pytest.raises(EngineTerminatedError, match="cannot connect"):
        Engine.connect("127.0.0.1", 1, timeout=2)
