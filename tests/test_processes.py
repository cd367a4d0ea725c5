"""The bounded waits of tests/processes.py: a line, the rest, and a child ended, each failing
the test rather than waiting for ever."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.processes import ended, line_within, rest_within, stopping


def child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_lines_one_at_a_time_and_the_rest_are_all_read() -> None:
    with stopping(child("print('one'); print('two', flush=True); print('three')")) as proc:
        assert line_within(proc, 10) == "one\n"
        assert line_within(proc, 10) == "two\n"
        assert rest_within(proc, 10) == "three\n"
        assert proc.wait(10) == 0


def test_a_line_that_never_comes_fails_naming_the_pipe_and_what_came() -> None:
    code = "import sys, time; sys.stdout.write('half'); sys.stdout.flush(); time.sleep(60)"
    with stopping(child(code)) as proc, pytest.raises(AssertionError) as failed:
        line_within(proc, 0.5)
    assert "no line on the stdout of `" in str(failed.value)
    assert str(failed.value).endswith("within 0.5 s; read so far: b'half'")


def test_a_pipe_that_ends_before_a_line_fails_with_the_childs_status() -> None:
    proc = child("import sys; sys.stderr.write('no newline'); sys.exit(3)")
    with stopping(proc):
        proc.wait(10)
        with pytest.raises(AssertionError) as failed:
            line_within(proc, 10, pipe="stderr")
    assert "ended before a whole line (the child exited with 3)" in str(failed.value)
    assert str(failed.value).endswith("read so far: b'no newline'")


def test_a_child_that_ignores_sigterm_is_killed() -> None:
    code = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    with stopping(child(code)) as proc:
        assert line_within(proc, 10) == "ready\n"
        assert ended(proc, 0.5) == -9
