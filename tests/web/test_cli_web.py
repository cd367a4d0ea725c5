"""``--web`` on the command line: the ready lines, the files served, one-line errors."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.enginesrv.test_cli import run
from tests.processes import line_within, stopping


@pytest.mark.parametrize(
    "argv",
    [("serve", "--port", "0", "--web", "0"), ("match", "yoxii", "bot:random", "bot:random",
                                               "--games", "1", "--web", "0")],
)  # fmt: skip
def test_web_without_the_extra_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]
) -> None:
    for name in list(sys.modules):
        if name.startswith(("enginesrv.web", "hypercorn", "starlette")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "hypercorn", None)  # import hypercorn fails
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert "pip install 'enginesrv[web]'" in err
    assert "hypercorn" in err
    assert "Traceback" not in err


@contextmanager
def serving(*argv: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    with stopping(process, group=True):
        yield process, [line_within(process).strip(), line_within(process).strip()]


def test_serve_web_prints_its_address_and_serves_the_page() -> None:
    with serving("--web", "0") as (process, lines):
        assert lines[0].startswith("listening 127.0.0.1:")
        assert lines[1].startswith("web http://127.0.0.1:")
        assert lines[1].endswith("/")
        url = lines[1].split()[1]
        with urllib.request.urlopen(url, timeout=10) as answer:
            page = answer.read().decode()
        assert '<script type="module" src="/static/app.js">' in page
        for path in (
            "static/app.js",
            "static/app/play.js",
            "static/proto.js",
            "static/games/yinyang.js",
            "config.json",
        ):
            with urllib.request.urlopen(url + path, timeout=10) as answer:
                assert answer.status == 200
                assert answer.read()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0


def test_a_web_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--workers", "1",
             "--web", str(port)],
            check=False, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "cannot listen" in result.stderr
    assert "Traceback" not in result.stderr
