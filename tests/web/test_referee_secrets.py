"""A refereed game attacked by its own page: the address, `undo` and the start position must
give the page nothing the game hides and no say over the server's resources (docs/web.md,
docs/security.md "Web pages")."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

import games
from enginesrv.event.config import EventConfig
from enginesrv.event.feed import Feed
from enginesrv.event.play.bot_player import BotPlayer
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import ForfeitError, GoRequest, Reply
from enginesrv.event.prepared import prepare
from enginesrv.event.tournament import run_event
from enginesrv.search.pool import WorkerPool
from enginesrv.web.gamespec import PAGE_OPTIONS, GameSpecError, parse_game_spec
from tests.trio_run import trio_test
from tests.web.test_websocket import closed_with
from tests.web.test_websocket_hostile import ADAPTING, lines_socket, person_setup, the_referee
from tests.web.webpeer import drop, running_web, text_socket

YINYANG = games.load("yinyang")
YOXII = games.load("yoxii")


def address(**fields: str) -> str:
    return urlencode(fields)


@pytest.mark.parametrize(
    "options",
    [
        "SecretSeed=777",
        "secretseed=777",
        "Seed=5",
        "Hash=4096",
        "Depth=2,Hash=4096",
        "EvalYinshMarker=90",  # an evaluation weight, hidden from a listing: the server's too
        "Depth=2,evalyohohogalleon=300",
    ],
)
def test_the_address_may_not_set_the_bots_seeds_or_resources(options: str) -> None:
    query = address(game="yinyang", opponent=f"bot:alphabeta:{options}", side="p2")
    with pytest.raises(GameSpecError) as refused:
        parse_game_spec(query)
    named = [part.split("=")[0] for part in options.split(",") if not part.startswith("Depth")]
    assert f"option {named[0]!r} is the server's to set" in str(refused.value)
    assert ", ".join(PAGE_OPTIONS) in str(refused.value)


def test_the_address_may_set_how_strong_the_bot_plays() -> None:
    options = "Depth=2,Samples=4,Quiescence=false,Aspiration=30"
    spec = parse_game_spec(address(game="yinyang", opponent=f"bot:alphabeta:{options}"))
    assert spec is not None
    assert spec.opponent == f"bot:alphabeta:{options}"


@trio_test
async def test_a_refused_option_closes_the_socket_with_4400_naming_it() -> None:
    async with running_web() as web:
        query = address(game="yinyang", opponent="bot:alphabeta:SecretSeed=777", side="p2")
        code, reason = await closed_with(web, query)
        assert code == 4400
        assert "'SecretSeed'" in reason
        assert not web.app.referees  # no game was made
        # a reason past the 123 bytes a close frame holds is cut on a whole character
        query = address(game="yinyang", opponent=f"bot:alphabeta:{'é' * 200}=1")
        code, reason = await closed_with(web, query)
        assert code == 4400
        assert reason.startswith("opponent: option 'éé")
        assert reason.endswith("é...")
        assert len(reason.encode()) <= 123
        # a long start position is quoted short, after the reason, so that the reason fits
        query = address(game="yinyang", position="é" * 200)
        code, reason = await closed_with(web, query)
        assert code == 4400
        assert reason.startswith(f"position {'é' * 40 + '...'!r}: ")


def test_a_view_is_no_start_position() -> None:
    full = YINYANG.state_from_string(ADAPTING)
    view = full.view(0).to_string()
    assert "?" in view
    with pytest.raises(GameSpecError) as refused:
        parse_game_spec(address(game="yinyang", opponent="bot:random", position=view))
    assert "a view" in str(refused.value)
    spec = parse_game_spec(address(game="yinyang", opponent="bot:random", position=ADAPTING))
    assert spec is not None
    assert spec.start == ADAPTING


def test_only_a_view_is_a_view() -> None:
    for name in games.available():
        state = games.load(name).new_state()
        assert not state.is_view(), name
        assert not state.view(0).is_view() or games.load(name).hidden_information, name
    full = YINYANG.state_from_string(ADAPTING)
    assert not full.is_view()
    assert full.view(0).is_view()
    assert full.view(None).is_view()  # the spectator's: both players' laws hidden


@trio_test
async def test_undo_never_hides_again_a_law_the_bot_revealed() -> None:
    """The page plays on until the bot applies a law (the page is shown it), then tries to take
    that decision back, alone or with its own: refused, and the law stays shown."""
    rng = random.Random(4)
    async with running_web(seeds=random.Random(2)) as web:
        for _ in range(30):
            before = set(web.app.referees)
            query = address(game="yinyang", opponent="bot:random", side="p1")
            async with lines_socket(web.ws(query)) as page:
                referee = the_referee(web, before)
                while await page.ask("query gameover") == "false":
                    if await page.ask("query turn") == "p1":
                        moves = await page.ask("query moves")
                        if moves.startswith("count ") and " moves " not in moves:
                            token = person_setup(rng)
                        else:
                            listed = moves.split(" moves ", 1)[-1]
                            token = rng.choice(listed.split())
                        await page.ask(f"play {token}")
                        continue
                    shown_before = referee.state.revealed()
                    await page.send("go")
                    assert (await page.line()).startswith("bestmove ")
                    gained = referee.state.revealed() - shown_before
                    if not any(fact.startswith("White ") for fact in gained):
                        continue
                    view = await page.ask("query position")
                    (fact,) = (f for f in gained if f.startswith("White "))
                    law = fact.split()[-1]
                    assert f"+{law}" in view.split()[4]
                    for n in (1, 2):
                        await page.send(f"undo {n}")
                        refusal = await page.line()
                        assert refusal.startswith("error 101 bad-arguments undo: only 0 "), refusal
                        assert "revealed what was hidden" in refusal
                    assert await page.ask("query position") == view
                    return
    raise AssertionError("the bot revealed no law in 30 games: nothing was checked")


@trio_test
async def test_two_people_cannot_undo_a_revealed_law_either() -> None:
    query = address(game="yinyang", position=ADAPTING)
    async with running_web() as web, text_socket(web.ws(query)) as page:
        await page.ask("play L3@c1:keep")  # an adaptation that keeps its law: reveals L3
        await page.send("undo 1")
        refusal = await page.line()
        assert "revealed what was hidden" in refusal
        view = await page.ask("query position")
        # White, now to act, still sees Black's L3 (bwbw>*) revealed
        assert view.split()[3].split(",")[2] == "+bwbw>*"
        played = await page.ask("query moves")
        token = played.split(" moves ", 1)[-1].split()[0]
        await page.ask(f"play {token}")
        (referee,) = list(web.app.referees)
        revealing = referee.state.ply() - referee.floor
        await page.send(f"undo {revealing + 1}")
        assert "revealed what was hidden" in await page.line()
        if revealing:
            await page.ask(f"undo {revealing}")  # what revealed nothing can go back
            assert await page.ask("query position") == view


@trio_test
async def test_a_bots_forfeit_in_a_game_of_hidden_laws_does_not_quote_it() -> None:
    """A bot's error or illegal move may quote its own position (its hidden laws): the page is
    told only that it forfeited."""
    async with running_web() as web:
        query = address(game="yinyang", opponent="bot:random", side="p2")
        before = set(web.app.referees)
        async with text_socket(web.ws(query)) as page:
            referee = the_referee(web, before)
            assert referee.bot is not None

            async def failing(
                request: GoRequest,
                stop: trio.Event | None = None,
                on_hold: Callable[[bool], None] | None = None,
            ) -> Reply:
                raise ForfeitError(
                    Termination.CRASH, f"the bot failed: ValueError: {request.position}"
                )

            referee.bot.go = failing  # type: ignore[method-assign]
            await page.send("go")
            info = await page.line()
            assert info == (
                "info string p2 wins (crash): the bot's move or failure is not shown: it may "
                "tell what is hidden"
            )
            assert await page.line() == "bestmove none"
            assert await page.ask("query outcome") == "winner=p2 reason=crash"


@trio_test
async def test_a_page_cannot_reach_a_closed_game_by_its_seed() -> None:
    """Two refereed games never share their bot's secret seed, whatever their addresses."""
    async with running_web() as web:
        seeds = []
        for _ in range(3):
            before = set(web.app.referees)
            query = address(game="yinyang", opponent="bot:random", side="p2")
            async with open_websocket_url(web.ws(query)) as ws:
                await ws.send_message("isready")
                assert await ws.get_message() == "readyok\n"
                referee = the_referee(web, before)
                assert isinstance(referee.bot, BotPlayer)
                seeds.append(referee.bot.secret_seed)
                await ws.aclose()
            try:
                await ws.get_message()
            except ConnectionClosed:
                await drop(ws)
        assert len(set(seeds)) == 3
        assert all(seeds)
        # 63 bits, not 31: too many to try them all against the bot's shown decisions
        assert max(seeds) >= 2**40


def test_a_watch_page_is_fed_no_unrevealed_law(tmp_path: Path) -> None:
    """The feed of a Yin Yang event (what a watch page reads) shows every position as a
    spectator's view and every move in its shown form: while a game goes on, no law that the
    game still hides from either player is in it."""
    openings = tmp_path / "openings.txt"
    openings.write_text(f"fen {ADAPTING}\n", encoding="utf-8")  # laws to apply from the start
    event = prepare(
        EventConfig(
            "yinyang", ("bot:random", "bot:greedy"), games=4, depth=1, max_plies=200,
            openings=str(openings),
        ),
        tmp_path / "event",
        resume=False,
    )  # fmt: skip
    feed = Feed()
    live: list[dict[str, Any]] = []

    async def watch() -> None:
        with feed.subscribe() as subscription:
            async with trio.open_nursery() as nursery:

                async def play() -> None:
                    await run_event(event, tmp_path / "event", on_game=lambda d: None, feed=feed)
                    feed.publish({"type": "end"})  # as the command line does

                nursery.start_soon(play)
                async for message in subscription.messages:
                    live.append(message)
                    if message["type"] == "end":
                        break

    trio.run(watch)
    positions = [m["position"] for m in live if m["type"] in ("game", "move")]
    moves = [m["move"] for m in live if m["type"] == "move"]
    assert len(positions) >= 8
    revealed = 0
    for position in positions:
        for field in position.split()[3:5]:
            for entry in [] if field == "none" else field.split(","):
                assert entry == "?" or entry.startswith("+"), position
                revealed += entry.startswith("+")
    assert revealed, "no law was ever revealed: the check saw only hidden ones"
    rewrites = [move for move in moves if ":L" in move]
    assert all(move.endswith("=?") for move in rewrites), rewrites


@trio_test
async def test_undo_never_hides_again_a_law_that_rewrote_itself() -> None:
    """An adaptation that rewrites its own slot reveals its law for a moment (the board shows
    which law applied) and leaves a hidden one: taking it back would hide again a law whose
    text was shown."""
    query = address(game="yinyang", position=ADAPTING)
    async with running_web() as web, text_socket(web.ws(query)) as page:
        view = await page.ask("play L3@c1:L3=....>*")
        assert view.split()[3].split(",")[2] == "?"  # White's view: Black's new L3 is hidden
        await page.send("undo 1")
        assert "decision 1 revealed what was hidden" in await page.line()
        assert await page.ask("query position") == view


def test_every_law_applied_reveals_and_nothing_else_does() -> None:
    state = YINYANG.state_from_string(ADAPTING)
    kinds = {"L1@a2": True, "L3@c1:keep": True, "L3@c1:L3=....>*": True, "L3@c1:L1=....>*": True}
    for token, reveals in kinds.items():
        assert state.reveals(state.parse_move(token)) is reveals, token
    start = YINYANG.new_state()
    assert not start.reveals(start.parse_move("laws:....>*,....>*,....>*,....>*"))
    for name in games.available():
        other = games.load(name).new_state()
        if not games.load(name).hidden_information:
            assert not any(other.reveals(move) for move in other.legal_moves()), name


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("tc", "0.001+0", "at least 1 s"),
        ("tc", "0.5+5", "at least 1 s"),
        ("position", "1aA/2Cbb/2DdAAa/2D2aC/2dBdaT/1bBBc/1B1 w t w:2131 b:1240", "is over"),
    ],
)
def test_a_clock_no_bot_can_keep_or_a_finished_game_is_refused(
    field: str, value: str, why: str
) -> None:
    with pytest.raises(GameSpecError) as refused:
        parse_game_spec(address(game="yoxii", opponent="bot:random", **{field: value}))
    assert str(refused.value).startswith(f"{'time control' if field == 'tc' else field} ")
    assert why in str(refused.value)
    assert YOXII.state_from_string(
        "1aA/2Cbb/2DdAAa/2D2aC/2dBdaT/1bBBc/1B1 w t w:2131 b:1240"
    ).is_terminal()


@trio_test
async def test_a_stop_before_the_bot_has_a_worker_is_no_forfeit() -> None:
    """The page holds its address' one search (a plain socket's `go infinite`), asks the bot
    of its refereed game for a move and stops it at once, before any worker took it: the bot
    still moves (once a worker is free), it does not lose."""
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(nursery, 2, per_peer=1)
        await pool.start()
        try:
            async with running_web(runner=pool) as web, text_socket(web.ws()) as hog:
                await hog.send("uginewgame yoxii", "setoption name Bot value alphabeta")
                await hog.send("go infinite")
                query = address(game="yoxii", opponent="bot:random", side="p2")
                async with text_socket(web.ws(query)) as page:
                    await page.send("go")
                    with trio.fail_after(5):  # the bot's search waits for a worker
                        while not any(pool._share.waiting.values()):
                            await trio.sleep(0.01)
                    await page.send("stop")
                    await trio.sleep(0.3)  # time to forfeit, were a stop a forfeit
                    assert await page.ask("query gameover") == "false"
                    await hog.send("stop")
                    await hog.expect("bestmove ")
                    best = await page.expect("bestmove ")
                    assert best != "bestmove none"
                    assert await page.ask("query gameover") == "false"
                    assert len((await page.ask("query played")).split()) == 1
        finally:
            await pool.aclose()
            nursery.cancel_scope.cancel()
