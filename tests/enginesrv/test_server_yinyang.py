"""Yin Yang over the server: sessions given views, the setup ply's move count, moves of hidden
laws refused with their reason, and the bot answering from views (both framings)."""

from __future__ import annotations

from collections.abc import Callable

import trio

import games
from bots.engine import SearchInfo
from enginesrv.search.child import SearchOutcome
from enginesrv.search.jobs import SearchJob
from tests.enginesrv.peer import MsgpackPeer, TextPeer, running_server
from tests.trio_run import trio_test

GAME = games.load("yinyang")
REFEREE = (
    "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 1"
)
P1_VIEW = GAME.state_from_string(REFEREE).view(0).to_string()
P2_SETUP_VIEW = "bwww/bwww/bbbw/bbbw w setup ?,?,?,? none 8 10 0"


@trio_test
async def test_setup_ply_reports_a_count_and_the_token_form() -> None:
    async with running_server(game="yinyang") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("position startpos", "query moves")
        line = await peer.expect("response count 26904200625 laws:<law>,<law>,<law>,<law> ")
        assert "Black" in line
        assert "405 valid laws" in line
        await peer.send(f"position fen {P2_SETUP_VIEW}", "query moves", "query turn")
        assert "White's laws" in await peer.expect("response count 26904200625 laws:")
        assert await peer.line() == "response p2"


@trio_test
async def test_a_view_lists_the_moves_of_its_holder() -> None:
    async with running_server(game="yinyang") as (_, port):
        peer = await TextPeer.connect(port)
        assert "?,?,?,?" in P1_VIEW
        await peer.send(f"position fen {P1_VIEW}", "query position", "query moves")
        assert await peer.line() == f"response {P1_VIEW}"
        listed = (await peer.expect("response ")).split()[1:]
        referee = GAME.state_from_string(REFEREE)
        assert listed == sorted(referee.move_to_str(m) for m in referee.legal_moves())
        assert len(listed) == 3243  # rules §9.2, case-01


@trio_test
async def test_view_with_shown_moves_and_a_refused_hidden_law() -> None:
    async with running_server(game="yinyang") as (_, port):
        peer = await TextPeer.connect(port)
        # Black's own setup in full, White's in its shown form: Black's view of turn 1
        await peer.send(
            "position startpos moves laws:bwbb>b.bb,..bb>bbbb,bwbw>*,bw.w>b..w laws:?,?,?,?",
            "query position",
        )
        assert await peer.line() == f"response {P1_VIEW}"
        await peer.send("play L3@a3:keep")
        after = await peer.expect("response ")
        assert after.startswith("response bwww/bwww/bbbw/bbbw w start ")
        # White's L1 is unknown to this session: its effect cannot be computed here
        await peer.send("play L1@c2")
        refused = await peer.expect("invalidmove L1@c2 ")
        assert "unknown in this position" in refused
        assert "new view" in refused
        # a shown rewrite of an unknown law on a window blocked by Black's revealed bwbw>*
        await peer.send("play L3@a3:L2=?")
        assert "conflicts with the revealed law L3 of Black" in await peer.expect("invalidmove ")
        # elsewhere it is accepted: only the adaptation with the window's pattern (wwww on b3)
        # can have been applied, so it is learnt; the rewritten slot stays ?
        await peer.send("query position", "play L2@b3:L4=?", "query position")
        assert await peer.line() == after
        played = await peer.expect("response ")
        assert played.split()[5] == "?,+wwww>*,?,?"
        assert await peer.line() == played


@trio_test
async def test_alphabeta_answers_a_view_and_a_setup() -> None:
    async with running_server(game="yinyang", bot="alphabeta") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            "setoption name SecretSeed value 3", f"position fen {P2_SETUP_VIEW}", "go depth 1"
        )
        token = (await peer.until("bestmove "))[-1].split()[1]
        setup_state = GAME.state_from_string(P2_SETUP_VIEW)
        assert token.startswith("laws:")
        setup_state.parse_move(token)
        await peer.send(f"position fen {P1_VIEW}", "go depth 2")
        lines = await peer.until("bestmove ")
        assert any(line.startswith("info depth 2 ") and "samples" in line for line in lines)
        move = lines[-1].split()[1]
        GAME.state_from_string(REFEREE).parse_move(move)  # legal for the referee


@trio_test
async def test_msgpack_setup_count_and_a_search_on_a_view() -> None:
    async with running_server(game="yinyang", bot="alphabeta") as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "position", {"startpos": True})
        assert (await peer.response(1))[2] is None
        await peer.request(2, "query", {"what": "moves"})
        answer = (await peer.response(2))[3]["value"]
        assert isinstance(answer, str)
        assert answer.startswith("count 26904200625 laws:")
        await peer.request(3, "position", {"fen": P1_VIEW})
        assert (await peer.response(3))[2] is None
        await peer.request(4, "go", {"depth": 2})
        best = await peer.response(4)
        assert best[2] is None
        GAME.state_from_string(REFEREE).parse_move(best[3]["move"])


class _Capture:
    """A search runner that keeps the jobs it is given and answers with no result (the
    session then plays a legal move)."""

    def __init__(self) -> None:
        self.jobs: list[SearchJob] = []

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
        del on_info, stop, hard_deadline, on_wait, peer, grace
        self.jobs.append(job)
        await trio.lowlevel.checkpoint()
        return SearchOutcome(None)


@trio_test
async def test_a_full_position_is_searched_from_the_view_of_the_side_to_act() -> None:
    # a plain UGI manager sends the whole game, the opponent's secret laws included
    runner = _Capture()
    async with running_server(game="yinyang", bot="alphabeta", runner=runner) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(f"position fen {REFEREE}", "go depth 1")
        await peer.until("bestmove ")
    referee = GAME.state_from_string(REFEREE)
    seat = referee.to_move()
    [job] = runner.jobs
    assert job.position == referee.view(seat).to_string()
    assert "?" in job.position  # the other side's laws are not in what the bot is given
