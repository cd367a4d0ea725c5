"""Child processes in tests, waited for within a bound: a line of a child's output, the rest of
it up to its end, and a child ended (asked, then killed) whatever happens in the test.

The pipes are read from their descriptors, never through Python's buffered reader: a line is
read a byte at a time, so that nothing past it is taken from the pipe, and what follows can
still be read by these helpers or by ``communicate`` (which reads the descriptor too). A pipe
read here should not also be read with ``readline`` or ``read``: what that buffered reader
holds cannot be seen on the descriptor."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import IO, Any, Literal, TypeVar

END_GRACE = 10.0
"""Seconds a child is given to end after SIGTERM, and again after SIGKILL."""

Pipe = Literal["stdout", "stderr"]
Child = TypeVar("Child", bound=subprocess.Popen[Any])


def line_within(
    source: subprocess.Popen[Any] | IO[Any], seconds: float = 30.0, *, pipe: Pipe = "stdout"
) -> str:
    """The next line on a child's pipe, with its newline, as ``readline`` gives it (bytes are
    decoded too: as the pipe's encoding says, else UTF-8). ``source`` is the child (its
    ``pipe`` is read) or the pipe itself. Fails the test if no whole line has come within
    ``seconds``, or if the pipe ends first, saying what was read so far."""
    stream, name = _stream(source, pipe)
    got = bytearray()
    try:
        # one byte at a time: what comes after the line stays in the pipe
        for byte in _pieces(stream.fileno(), seconds, 1):
            got += byte
            if byte == b"\n":
                return _decoded(stream, bytes(got))
    except TimeoutError:
        raise AssertionError(
            f"no line on {name} within {seconds} s; read so far: {bytes(got)!r}"
        ) from None
    raise AssertionError(
        f"{name} ended before a whole line{_status(source)}; read so far: {bytes(got)!r}"
    )


def rest_within(
    source: subprocess.Popen[Any] | IO[Any], seconds: float = 30.0, *, pipe: Pipe = "stdout"
) -> str:
    """Everything left on a child's pipe up to its end, decoded as ``line_within`` does.
    Fails the test if the pipe has not ended within ``seconds`` (whoever still holds its
    other end: the child, or a process it started), saying what was read so far."""
    stream, name = _stream(source, pipe)
    got = bytearray()
    try:
        for chunk in _pieces(stream.fileno(), seconds, 65536):
            got += chunk
    except TimeoutError:
        raise AssertionError(
            f"{name} did not end within {seconds} s; read so far: {bytes(got)!r}"
        ) from None
    return _decoded(stream, bytes(got))


def _pieces(fd: int, seconds: float, size: int) -> Iterator[bytes]:
    """What descriptor ``fd`` gives, at most ``size`` bytes at a time, up to its end; raises
    ``TimeoutError`` once ``seconds`` have passed since the first was asked for."""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise TimeoutError
            piece = os.read(fd, size)
            if not piece:
                return
            yield piece


def ended(proc: subprocess.Popen[Any], seconds: float = END_GRACE, *, group: bool = False) -> int:
    """Make sure ``proc`` has ended; its exit status. A child still running is sent SIGTERM
    and given ``seconds`` to end, then sent SIGKILL and given ``END_GRACE`` more; a child
    that outlives even that fails the test (``subprocess.TimeoutExpired``). With ``group``,
    the signals go to the child's whole process group (a child started with
    ``start_new_session=True``), as a terminal's would."""
    if proc.poll() is not None:
        return proc.returncode
    _send(proc, signal.SIGTERM, group)
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        _send(proc, signal.SIGKILL, group)
        return proc.wait(timeout=END_GRACE)


@contextlib.contextmanager
def stopping(proc: Child, seconds: float = END_GRACE, *, group: bool = False) -> Iterator[Child]:
    """``proc`` for a ``with`` block, at whose end it is ended as ``ended`` ends it and its
    pipes are closed. Use it in place of ``with subprocess.Popen(...)``, whose end waits for
    the child without a bound."""
    try:
        yield proc
    finally:
        try:
            ended(proc, seconds, group=group)
        finally:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            if proc.stdin is not None:
                with contextlib.suppress(BrokenPipeError):  # what was left unwritten is lost
                    proc.stdin.close()


def _stream(source: subprocess.Popen[Any] | IO[Any], pipe: Pipe) -> tuple[IO[Any], str]:
    """The pipe to read, and how a failure names it."""
    if not isinstance(source, subprocess.Popen):
        return source, f"descriptor {source.fileno()}"
    stream = source.stdout if pipe == "stdout" else source.stderr
    assert stream is not None, f"the {pipe} of {_named(source)} is not a pipe"
    return stream, f"the {pipe} of {_named(source)}"


def _named(proc: subprocess.Popen[Any]) -> str:
    """The child's command line, cut to a readable length, and its process id."""
    args = proc.args
    if isinstance(args, str | bytes | os.PathLike):
        command = str(args)
    else:
        command = " ".join(str(arg) for arg in args)
    if len(command) > 100:
        command = command[:97] + "..."
    return f"`{command}` (pid {proc.pid})"


def _status(source: subprocess.Popen[Any] | IO[Any]) -> str:
    """How the child ended, if it has and ``source`` is the child."""
    if isinstance(source, subprocess.Popen) and source.poll() is not None:
        return f" (the child exited with {source.returncode})"
    return ""


def _decoded(stream: IO[Any], data: bytes) -> str:
    """``data`` as the stream would have given it: decoded, ``\\r\\n`` read as ``\\n`` by a text
    stream (a binary one, which has no encoding, is read as UTF-8)."""
    encoding: str | None = getattr(stream, "encoding", None)
    if encoding is None:
        return data.decode("utf-8")
    errors: str | None = getattr(stream, "errors", None)
    return data.decode(encoding, errors or "strict").replace("\r\n", "\n")


def _send(proc: subprocess.Popen[Any], sig: signal.Signals, group: bool) -> None:
    """Send ``sig`` to the child, or to its process group."""
    if group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
