"""alphabeta's evaluation weights as session options (docs/protocol.md §4.1, §5.1, §7): left
out of the handshake and of ``options``, listed by ``options all`` for the session's game,
always accepted by ``setoption``, sent with each search job, and searched with by a worker's
kept bot job by job, whatever session searched before on that worker."""

from __future__ import annotations

import io
from typing import Any

import msgpack
import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.engine import Limits
from bots.eval.tuning import TUNABLES
from enginesrv.search.jobs import result_to_map
from enginesrv.search.worker import _Worker
from enginesrv.serve.settings import Options, RequestError, SessionConfig
from protocol import messages as m
from tests.enginesrv.peer import MsgpackPeer, TextPeer, running_server
from tests.enginesrv.test_pool import job
from tests.trio_run import trio_test

GALLEON_WEIGHT = next(t for t in TUNABLES["yohoho"] if t.name == "EvalYohohoGalleon")
MARKER_WEIGHT = next(t for t in TUNABLES["yinsh"] if t.name == "EvalYinshMarker")
GALLEON = f"option name EvalYohohoGalleon type spin default {{}} min 0 max {GALLEON_WEIGHT.high}"
YOHOHO_ARNO = "3g1gc2/8/5r3/A4c2/4c4/3G4/3a1R3/1C1G4/2C4C1 b 1 0"


def evals(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("option name Eval")]


@trio_test
async def test_the_weights_are_listed_only_when_all_are_asked_for() -> None:
    async with running_server(game="yohoho", bot="alphabeta") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("ugi")
        assert not evals(await peer.until("ugiok"))
        await peer.send("options")
        plain = await peer.until("optionsok")
        assert not evals(plain)
        await peer.send("options all")
        every = await peer.until("optionsok")
        assert set(plain) <= set(every)
        assert GALLEON.format(GALLEON_WEIGHT.default) in every
        assert "option name EvalYohohoProg type spin default 100 min 0 max 400" in every
        assert all(line.startswith("option name EvalYohoho") for line in evals(every))
        assert len(evals(every)) == 21


@trio_test
async def test_setoption_takes_any_weight_and_options_all_shows_the_games_own() -> None:
    async with running_server(game="yohoho", bot="alphabeta") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            "setoption name EvalYohohoGalleon value 300",
            "setoption name evalyinshmarker value 80",  # another game's: kept, not shown
            f"setoption name EvalYohohoGalleon value {GALLEON_WEIGHT.high + 1}",
            "setoption name EvalYohohoGalleon value many",
            "options all",
        )
        refused = await peer.line()
        assert refused.startswith("error 101 bad-arguments setoption: "), refused
        assert "EvalYohohoGalleon" in refused
        assert f"0..{GALLEON_WEIGHT.high}" in refused
        assert "not a whole number" in await peer.line()
        every = await peer.until("optionsok")
        assert GALLEON.format(300) in every
        assert not [line for line in every if "EvalYinsh" in line]
        await peer.send("setoption name Game value yinsh", "options all", "options")
        every = await peer.until("optionsok")
        marker = MARKER_WEIGHT
        assert f"option name EvalYinshMarker type spin default 80 min 0 max {marker.high}" in every
        assert not [line for line in every if "EvalYohoho" in line or "EvalYoxii" in line]
        assert not evals(await peer.until("optionsok"))


@trio_test
async def test_msgpack_options_takes_all() -> None:
    async with running_server(game="yoxii", bot="alphabeta") as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(1, "options", {"all": True})
        await peer.request(2, "options", {})
        await peer.request(3, "options", {"all": "yes"})
        every: Any = (await peer.response(1))[3]["options"]
        plain: Any = (await peer.response(2))[3]["options"]
        names = [option["name"] for option in every]
        assert "EvalYoxiiStock4" in names
        assert not [name for name in names if name.startswith(("EvalYinsh", "EvalYohoho"))]
        assert not [o for o in plain if o["name"].startswith("Eval")]
        stock = next(option for option in every if option["name"] == "EvalYoxiiStock4")
        assert (stock["default"], stock["min"], stock["max"]) == ("20", -80, 80)
        refused = (await peer.response(3))[2]
        assert refused[:2] == [101, "bad-arguments"]
        assert "'all'" in refused[2]


def test_a_job_carries_the_weights_the_session_set_and_no_other() -> None:
    options = Options(SessionConfig(default_bot="alphabeta"))
    assert not [name for name, _ in options.job_options() if name.startswith("Eval")]
    options.set("evalyohohogalleon", " 300", None)
    options.set("EvalYohohoTempo2", "-20", None)  # its default, but set: sent
    sent = dict(options.job_options())
    assert {name: v for name, v in sent.items() if name.startswith("Eval")} == {
        "EvalYohohoGalleon": "300",
        "EvalYohohoTempo2": "-20",
    }
    with pytest.raises(RequestError) as caught:
        options.set("EvalYohohoGalleons", "300", None)
    reply = caught.value.reply
    assert isinstance(reply, m.ErrorReply)
    assert reply.message.startswith("setoption: unknown option 'EvalYohohoGalleons' (options: ")
    assert reply.message.endswith("; `options all` lists the hidden ones too)")


def figures(answer: dict[str, Any]) -> dict[str, Any]:
    """A search's answer but its time."""
    return {key: value for key, value in answer.items() if key != "time"}


def test_a_worker_searches_each_job_with_its_own_weights() -> None:
    """Two sessions by turns on one worker, each now with the default weights, now with
    others: each search equals a fresh bot's with that job's options, so no weight is left
    over from the job before, of the same session or another."""
    worker = _Worker(io.BytesIO())
    tuned = (("EvalYohohoRowStep", "140"), ("EvalYohohoTempo1", "-35"), ("EvalYohohoProg", "250"))
    weights = {"plain": (("Hash", "1"),), "tuned": (("Hash", "1"), *tuned)}
    expected: dict[str, dict[str, Any]] = {}
    state = games.load("yohoho").state_from_string(YOHOHO_ARNO)
    for name, options in weights.items():
        fresh = AlphaBeta()
        for option, value in options:
            fresh.set_option(option, value)
        fresh.new_game(state.game)
        expected[name] = figures(result_to_map(fresh.search(state.copy(), Limits(depth=3))))
    assert expected["plain"]["score"] != expected["tuned"]["score"]
    turns = [("a", "plain"), ("b", "tuned"), ("a", "tuned"), ("a", "plain"), ("b", "plain")]
    for msgid, (session, name) in enumerate([*turns, ("b", "tuned")], 1):
        search = job(
            session=session,
            game="yohoho",
            position=YOHOHO_ARNO,
            bot="alphabeta",
            options=weights[name],
            depth=3,
            new_game=True,
        )
        worker.search(msgid, search)
        sent = worker.out.getvalue()  # type: ignore[attr-defined]
        answer = list(msgpack.Unpacker(io.BytesIO(sent), raw=False))[-1]
        assert answer[:3] == [1, msgid, None]
        assert figures(answer[3]) == expected[name], (session, name)
    assert [key[0] for key in worker.bots] == ["a", "b"]
