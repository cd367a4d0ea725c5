"""What a new user meets first in the protocol programs: the warning of an engine started
without a game, option values in any case, a refused ``go`` that still ends with its
``bestmove``, ``enginesrv check`` on an engine that never answers, and log lines that stay
off stdout (also on Ctrl-C during a match)."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

import pytest
import structlog

import enginesrv.cli
from bots.engine import Engine as Bot
from bots.engine import Option, SearchResult
from enginesrv.cli import check, main
from enginesrv.serve.settings import Options, RequestError, SessionConfig
from protocol import messages as m
from tests.enginesrv.peer import MsgpackPeer, TextPeer, running_server
from tests.processes import ended, line_within
from tests.trio_run import trio_test

CLI = (sys.executable, "-m", "enginesrv.cli")
LOG_LINE = re.compile(r"\[\s*(debug|info|warning|error|critical)\s*\]|worker_restart")
"""A structlog line as the console renderer writes it."""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# -- enginesrv engine without --game -----------------------------------------------------------


def test_engine_without_a_game_warns_on_stderr_at_once() -> None:
    proc = subprocess.Popen(
        [*CLI, "engine", "--workers", "1", "--bot", "random"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        first = line_within(proc, 60, pipe="stderr")  # stdin is open and empty: nothing was asked
        assert first.startswith("enginesrv engine: warning: no --game:")
        assert "error 200" in first
        assert "cutegames" in first
        assert "enginesrv engine --game GAME" in first
        out, err = proc.communicate(b"quit\n", timeout=60)
    finally:
        ended(proc)
    assert proc.returncode == 0, err.decode()
    assert out == b""  # stdout is the protocol channel: no warning, no log line
    assert b"connection_open" in err  # the logs went to stderr
    # with a game there is nothing to warn about
    quiet = subprocess.run(
        [*CLI, "engine", "--workers", "1", "--bot", "random", "--game", "yoxii"],
        input=b"isready\nquit\n", capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert quiet.returncode == 0
    assert quiet.stdout == b"readyok\n"
    assert b"warning" not in quiet.stderr


# -- option values in any case -----------------------------------------------------------------


@trio_test
async def test_combo_and_check_values_ignore_case_and_are_kept_canonical() -> None:
    async with running_server(game=None, bot="alphabeta") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send(
            "setoption name Game value YOXII",
            "setoption name bot value ALPHABETA",
            "setoption name quiescence value FALSE",
            "setoption name Depth value  07",
            "options",
        )
        options = await peer.until("optionsok")
        assert options[0].startswith("option name Game type combo default yoxii var ")
        assert options[1].startswith("option name Bot type combo default alphabeta var ")
        assert "option name Quiescence type check default false" in options
        assert "option name Depth type spin default 7 min 0 max 128" in options
        await peer.send("uginewgame YINSH", "query position")
        assert await peer.line() == "response 4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51"


class _OrderingBot(Bot):
    """A bot with a combo option of its own, and a Hash like alphabeta's."""

    name: ClassVar[str] = "ordering"
    options: ClassVar[tuple[Option, ...]] = (
        Option("Hash", "spin", 64, 1, 4096),
        Option("Ordering", "combo", "History", vars=("History", "Killers", "None")),
    )

    def search(self, *args: object, **kwargs: object) -> SearchResult:
        raise NotImplementedError


class _Options(Options):
    """The options part of a session, with ``_OrderingBot`` as its bot."""

    def bot_class(self) -> type[Bot]:
        return _OrderingBot


def test_a_bots_combo_option_is_set_in_any_case_and_reported_as_its_var() -> None:
    settings = _Options(SessionConfig())
    settings.set("ORDERING", "killers", None)
    assert settings.bot_options == {"Ordering": "Killers"}
    specs = {spec.name: spec for spec in settings.specs(None)}
    assert specs["Ordering"].default == "Killers"
    assert dict(settings.job_options())["Ordering"] == "Killers"  # what the search gets
    # an unknown option's error lists each option once (the bot's Hash is the session's)
    with pytest.raises(RequestError) as caught:
        settings.set("Colour", "red", None)
    reply = caught.value.reply
    assert isinstance(reply, m.ErrorReply)
    assert reply.code == 101
    listed = reply.message.split("(options: ", 1)[1].rstrip(")").split(", ")
    assert listed == ["Game", "Bot", "Hash", "MoveOverhead", "MultiPV", "Compat", "Ordering"]


# -- a refused go ends with bestmove none -------------------------------------------------------


@trio_test
async def test_a_go_refused_for_its_arguments_ends_with_bestmove_none() -> None:
    async with running_server(game="yoxii") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("go depth 0")
        assert await peer.line() == "error 101 bad-arguments go: depth must be at least 1, not 0"
        assert await peer.line() == "bestmove none"
        await peer.send("go wtime 100")
        assert (await peer.line()).startswith("error 101 bad-arguments go: unknown limit 'wtime'")
        assert await peer.line() == "bestmove none"
        await peer.send("go depth 1", "isready")  # the session searches as before
        lines = await peer.until("readyok")
        if not any(line.startswith("bestmove ") for line in lines):
            lines += await peer.until("bestmove ")
        best = [line for line in lines if line.startswith("bestmove ")]
        assert len(best) == 1
        assert best[0] != "bestmove none"


@trio_test
async def test_in_compat_mode_a_refused_go_ends_with_bestmove_none_too() -> None:
    async with running_server(game="yoxii") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("setoption name Compat value true", "go depth 0", "go depth x")
        assert await peer.line() == (
            "info string error 101 bad-arguments go: depth must be at least 1, not 0"
        )
        assert await peer.line() == "bestmove none"
        assert (await peer.line()).startswith("info string error 101 bad-arguments go: depth 'x'")
        assert await peer.line() == "bestmove none"


@trio_test
async def test_a_go_before_a_game_ends_with_bestmove_none() -> None:
    async with running_server(game=None) as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("go depth 1", "setoption name Compat value true", "go depth 1")
        assert (await peer.line()).startswith("error 200 no-game go:")
        assert await peer.line() == "bestmove none"
        assert (await peer.line()).startswith("info string error 200 no-game go:")
        assert await peer.line() == "bestmove none"


@trio_test
async def test_a_go_refused_during_a_search_leaves_the_one_bestmove_to_that_search() -> None:
    async with running_server(game="yoxii") as (_, port):
        peer = await TextPeer.connect(port)
        await peer.send("go infinite", "go depth 0", "go depth 2")
        assert (await peer.until("error "))[-1].startswith("error 101 bad-arguments go: depth must")
        assert (await peer.until("error "))[-1].startswith("error 204 search-in-progress go:")
        await peer.send("stop", "go depth x", "isready")
        # after the stop, the refused go is answered after the stopped search's bestmove
        lines = await peer.until("readyok")
        shown = [line for line in lines if not line.startswith("info ")]
        assert len(shown) == 4, lines
        assert shown[0].startswith("bestmove ")
        assert shown[0] != "bestmove none"
        assert shown[1].startswith("error 101 bad-arguments go: depth 'x'")
        assert shown[2:] == ["bestmove none", "readyok"]


@trio_test
async def test_msgpack_go_depth_0_is_one_error_response() -> None:
    async with running_server(game="yoxii") as (_, port):
        peer = await MsgpackPeer.connect(port)
        await peer.request(3, "go", {"depth": 0})
        _, msgid, error, result = await peer.response(3)
        assert (msgid, error[0], error[1], result) == (3, 101, "bad-arguments", None)
        assert "'depth' must be at least 1" in error[2]
        await peer.request(4, "isready")
        assert await peer.response(4) == [1, 4, None, {}]
        assert not any(frame[0] == 1 and frame[1] == 3 for frame in peer.seen)


# -- enginesrv check ---------------------------------------------------------------------------


def test_check_names_itself_in_its_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "check", "--connect", "127.0.0.1:1", "--bogus")
    assert code == 2
    assert out == ""
    assert err.startswith("enginesrv check: error: unrecognized arguments: --bogus")


SILENT = "import sys, time; print('engine', 'log', 'line', file=sys.stderr); time.sleep(60)"


def test_check_gives_up_on_an_engine_that_never_answers_the_handshake() -> None:
    proc = subprocess.run(
        [*CLI, "check", "--handshake-timeout", "1", "--", sys.executable, "-c", SILENT],
        capture_output=True, text=True, timeout=40, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    report = proc.stdout.splitlines()
    assert report[0].startswith("FAIL text: handshake ugi ... ugiok: ")
    assert report[0].endswith("no answer to ugi within 1 s")
    assert report[1:] == [
        "enginesrv check: gave up: no handshake, and no other check can run without one"
    ]
    # the engine's own line is not in the report; it is shown on stderr, the run having failed
    assert "engine log line" not in proc.stdout
    assert "  engine log line" in proc.stderr.splitlines()


def test_check_shows_a_bounded_tail_of_a_flood_of_engine_log() -> None:
    # an engine that wrote megabytes on its standard error, the last of it one long line
    err = io.StringIO()
    with tempfile.TemporaryFile() as log:
        log.write(b"early line\n" * 100_000 + b"x" * 5_000_000 + b"\nlast line\n")
        check._show_log(log, err)
    shown = err.getvalue().splitlines()
    assert shown[-1] == "  last line"
    assert len(shown) <= check.LOG_TAIL + 1
    assert len(err.getvalue()) < 10_000


# -- log lines never on stdout -----------------------------------------------------------------


def test_log_lines_of_any_command_go_to_stderr(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def moves(args: object, out: object, err: object) -> None:
        del args, err
        structlog.get_logger("enginesrv.test").warning("worker_restart", reason="a test")
        assert hasattr(out, "write")
        out.write("f6\n")

    monkeypatch.setattr(enginesrv.cli, "cmd_moves", moves)
    code, out, err = _run(capsys, "moves", "yinsh")
    assert code == 0
    assert out == "f6\n"
    assert "worker_restart" in err


def _interruptible_match(tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "match", "yoxii", "bot:alphabeta", "bot:greedy", "--games", "100", "--st", "0.05",
         "--out", str(tmp_path / "event")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # a group of its own, as a terminal's Ctrl-C reaches
    )  # fmt: skip


def test_ctrl_c_during_a_match_keeps_stdout_to_result_lines(tmp_path: Path) -> None:
    # a child starts as a terminal's job does: a test run started in the background (``cmd &``
    # in a script) ignores SIGINT, and a child would inherit that (a handler it would not)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = _interruptible_match(tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        first = line_within(proc, 60)
        assert first.startswith("game 1/100: ")
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        ended(proc, group=True)
    assert proc.returncode == 130  # the interrupt status of `enginesrv --help`
    for line in [first, *out.splitlines()]:
        assert line.startswith("game "), line
        assert not LOG_LINE.search(line), line
    assert err.splitlines()[-1] == "enginesrv match: interrupted"
    assert "Traceback" not in err
