"""The ``expectation`` lines of the handshake: what a bot's scores mean in each game, in both
framings, as the server announces them and a client reads them."""

from __future__ import annotations

import math

import msgpack
import pytest

from bots.engine import Score
from bots.eval import evaluator_for
from enginesrv.analyse.judge import expected
from enginesrv.client._args import bots_from_lines
from enginesrv.serve.catalog import bot_infos
from protocol import messages as m
from protocol import mpack, text


def test_an_expectation_line_reads_back_and_refuses_what_is_not_one() -> None:
    line = m.ExpectationLine("alphabeta", "yoxii", 400)
    written = text.encode_reply_line(line).decode().strip()
    assert written == "expectation alphabeta game yoxii scale 400"
    assert text.parse_reply_line(written) == line
    for bad in ("expectation alphabeta game yoxii", "expectation a game g scale x"):
        with pytest.raises(Exception, match="expectation"):
            text.parse_reply_line(bad)


def test_the_server_announces_the_scale_its_analysis_judges_by_in_both_framings() -> None:
    """Each game alphabeta and greedy play has the scale of its evaluation (the one
    ``enginesrv analyse`` turns scores into expected scores with); random, which scores
    nothing, has none. A client reads them from the lines and from the msgpack map."""
    infos = {bot.name: bot for bot in bot_infos()}
    for name in ("alphabeta", "greedy"):
        scales = {x.game: x.scale for x in infos[name].expectations}
        assert scales == {g: round(evaluator_for(g).expectation_scale) for g in infos[name].games}
    assert infos["random"].expectations == ()
    # what a GUI computes from a line is what the analysis judges by
    yinyang = next(x for x in infos["alphabeta"].expectations if x.game == "yinyang")
    judged = expected(Score("cp", 120), evaluator_for("yinyang").expectation_scale)
    assert judged == pytest.approx(1 / (1 + math.exp(-120 / yinyang.scale)), abs=1e-3)
    bots = m.BotList(tuple(infos.values()))
    lines = [text.parse_reply_line(x) for x in text.encode_reply(bots).decode().splitlines()]
    assert bots_from_lines([x for x in lines if x is not None]) == bots.bots
    frame = msgpack.unpackb(mpack.encode_reply(1, bots), raw=False)
    assert mpack.parse_result("bots", frame[3]) == bots
