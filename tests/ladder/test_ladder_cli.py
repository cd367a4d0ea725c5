"""The ladder's commands refuse what they cannot run (``enginesrv ladder run``,
``enginesrv ladder-client``): status 2 and one line on stderr saying why, no traceback,
nothing on stdout, and nothing made in the ladder's folder."""

from __future__ import annotations

import errno
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from enginesrv.cli import main
from enginesrv.ladder.settings import SETTINGS

TC_FORMS = (
    "write [MOVES/]TIME[+INCREMENT], TIME in seconds, M:SS or H:MM:SS and INCREMENT in "
    "seconds (e.g. 40/60+0.6, 2+0.05, 1:30+1, 1:00:00), or inf"
)


@pytest.fixture(autouse=True)
def sigterm_kept() -> Iterator[None]:
    """``ladder run`` makes SIGTERM exit at once until it watches its signals: the handler
    this process had is put back after each test."""
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


def refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``enginesrv ARGV...`` run in this process, checked to end with status 2, nothing on
    stdout and one line on stderr, no traceback: that line."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    assert err.endswith("\n")
    assert "Traceback" not in err
    return err.removesuffix("\n")


def run_args(folder: Path, *more: str) -> list[str]:
    return ["ladder", "run", "--out", str(folder), "--port", "0", *more]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--game", "yoxii", "--tc", "fast"), f"--tc: time control 'fast': {TC_FORMS}"),
        (("--game", "yoxii", "--tc", "inf"), "--tc inf: a ladder's games are played on a clock"),
        (
            ("--game", "chess", "--tc", "2+0.05"),
            "--game 'chess' is not a game; the games: yinsh, yinsh+blitz, yinyang, yohoho, yoxii",
        ),
        (("--game", "yoxii", "--game", "yoxii", "--tc", "2+0.05"), "--game: each game once"),
        (
            ("--game", "yoxii", "--tc", "2+0.05", "--house", "cmd:./engine"),
            "--house 'cmd:./engine': a house bot is bot:NAME[:OPTIONS]",
        ),
        (
            ("--game", "yoxii", "--tc", "2+0.05", "--house", "tcp:localhost:7777"),
            "--house 'tcp:localhost:7777': a house bot is bot:NAME[:OPTIONS]",
        ),
        (
            ("--game", "yoxii", "--tc", "2+0.05", "--house", "bot:random", "--house", "bot:random"),
            "--house: two house bots share a name; give each one with name=NAME:",
        ),
        (
            ("--game", "yoxii", "--tc", "2+0.05", "--tls-cert", "/nonexistent/cert.pem"),
            "--tls-cert and --tls-key go together",
        ),
        (
            ("--game", "yoxii", "--tc", "2+0.05", "--tls-key", "/nonexistent/key.pem"),
            "--tls-cert and --tls-key go together",
        ),
        (
            ("--game", "yoxii", "--tc", "2+0.05", "--games-per-player", "0"),
            "--min-games is 0 or more, --games-per-player 1 or more",
        ),
    ],
)
def test_ladder_run_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str
) -> None:
    """A bad control, an unknown or repeated game, a house bot that is no bot, half of TLS,
    no link a player: refused before anything is made."""
    folder = tmp_path / "ladder"
    assert refusal(capsys, *run_args(folder, *args)) == f"enginesrv ladder: error: {said}"
    assert not folder.exists()


def test_ladder_run_refuses_a_folder_of_another_ladder_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder whose ladder plays another control, and one whose settings are damaged: one
    line each (from inside the running server's start), the settings file kept as it is."""
    path = tmp_path / SETTINGS
    path.write_text('{"games": ["yoxii"], "tc": "60+1", "anchor": null}\n')
    said = refusal(capsys, *run_args(tmp_path, "--game", "yoxii", "--tc", "2+0.05"))
    assert said == (
        f"enginesrv ladder: error: {tmp_path} is a ladder of yoxii at --tc 60+1, not yoxii at "
        "--tc 2+0.05: give those, or another --out"
    )
    path.write_text("{")
    said = refusal(capsys, *run_args(tmp_path, "--game", "yoxii", "--tc", "2+0.05"))
    assert said.startswith(f"enginesrv ladder: error: {path} is damaged (")
    assert said.endswith("); it is kept as it is")
    assert path.read_text() == "{"


CLIENT_ERROR = "enginesrv ladder-client: error:"


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("abc_DEF-123" * 3 + "\n")
    return path


def client_args(token: Path, *more: str, server: str = "127.0.0.1:7780") -> list[str]:
    return ["ladder-client", "--server", server, "--name", "alice", "--token-file", str(token),
            *more]  # fmt: skip


@pytest.mark.parametrize("server", ["nohost", "127.0.0.1", "127.0.0.1:0", "h:65536", ":7780",
                                    "h:77a0", "h:"])  # fmt: skip
def test_ladder_client_refuses_a_bad_server_in_one_line(
    capsys: pytest.CaptureFixture[str], token_file: Path, server: str
) -> None:
    """An address with no port, a port out of range or not a number, no host."""
    said = refusal(capsys, *client_args(token_file, "bot:random", server=server))
    assert said == (
        f"enginesrv ladder-client: error: --server {server!r}: write HOST:PORT with a port 1-65535"
    )


def test_ladder_client_refuses_a_missing_or_junk_token_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No such file; a file that holds something else than a token (two words, a character
    no token has, nothing, a line past the cap); a directory: one line each, quoting none of
    what the file holds."""
    missing = tmp_path / "missing"
    said = refusal(capsys, *client_args(missing, "bot:random"))
    assert said == f"{CLIENT_ERROR} --token-file {missing}: No such file or directory"
    for junk in ("Secret1 Secret2\n", "Secret/1\n", "", "\n\n", "Secret" * 300):
        path = tmp_path / "junk"
        path.write_text(junk)
        said = refusal(capsys, *client_args(path, "bot:random"))
        if len(junk) > 1024:
            assert said == f"{CLIENT_ERROR} --token-file: is larger than 1,024 bytes"
        else:
            assert said == f"{CLIENT_ERROR} --token-file {path}: it holds no token"
        assert "Secret" not in said
    said = refusal(capsys, *client_args(tmp_path, "bot:random"))
    assert said == f"{CLIENT_ERROR} --token-file: is a directory, not a regular file"


def test_ladder_client_refuses_no_engine_and_a_bad_name_in_one_line(
    capsys: pytest.CaptureFixture[str], token_file: Path
) -> None:
    """No engine given (nothing, or ``--`` alone), a bot spec that does not parse, a name that
    is no player's name."""
    for engine in ((), ("--",)):
        said = refusal(capsys, *client_args(token_file, *engine))
        assert said == "enginesrv ladder-client: error: give the engine: -- COMMAND..., or bot:NAME"
    said = refusal(capsys, *client_args(token_file, "bot:random:Depth"))
    assert said.startswith("enginesrv ladder-client: error: player 'bot:random:Depth': ")
    argv = client_args(token_file, "bot:random")
    argv[argv.index("alice")] = "9lives"
    assert refusal(capsys, *argv) == (
        "enginesrv ladder-client: error: --name '9lives': a letter, then up to 31 of "
        "A-Z a-z 0-9 _ . -"
    )


def test_a_failure_after_the_ladder_listens_is_not_called_a_listening_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error of the system once the ladder serves (a full disk, say) stops it with one
    line that says so, not "cannot listen"."""

    async def serve_then_fail(ladder: object, *, on_ready: Any, on_page: Any) -> None:
        on_ready("127.0.0.1", 7000)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("enginesrv.cli.ladder_run.serve_ladder", serve_then_fail)
    try:
        code = main(
            ["ladder", "run", "--game", "yoxii", "--tc", "2+0.05", "--out", str(tmp_path / "l")]
        )
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert (code, out) == (2, "listening 127.0.0.1:7000\n")
    assert err.splitlines()[-1] == (
        "enginesrv ladder: error: stopped on 127.0.0.1:7000: No space left on device"
    )
