"""The pool's side of the spawner (``enginesrv.search.spawner``): a spawner process asked for
workers, and each worker it forks as the pool sees a process (``ForkedProcess``: its pipes,
its end, a kill), though it is the spawner's child, not the pool's."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys

import trio

from enginesrv import orphans
from enginesrv.search import spawner

SPAWN_ATTEMPTS = 3
"""How many spawners one request for a worker starts at most (one that died is replaced)."""
SPAWN_TIMEOUT = 30.0
"""Seconds the spawner gets to answer a request for a worker (its first answer comes once it
has loaded the games and bots)."""


def available() -> bool:
    """Whether workers can be forked here (Linux, with pidfds)."""
    return sys.platform == "linux" and hasattr(os, "pidfd_open") and hasattr(socket, "recv_fds")


class _Input(trio.abc.SendStream):
    """The pool's writing half of a worker's socket; closing it ends the worker's input."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self._stream = stream

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        # at once, even while another task sends (as closing a pipe does): that send fails
        with contextlib.suppress(OSError):
            self._stream.socket.shutdown(socket.SHUT_WR)
        await trio.lowlevel.checkpoint()


class _Output(trio.abc.ReceiveStream):
    """The pool's reading half of a worker's socket."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self._stream = stream

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        return await self._stream.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self._stream.aclose()


class ForkedProcess:
    """A worker the spawner forked, as the pool uses a process: ``stdin``, ``stdout``,
    ``pid``, ``returncode`` (None while it runs; its status is its parent's to know, so -9
    once killed, else 0), ``wait``, ``terminate`` and ``kill`` (both SIGKILL: a worker has
    nothing to finish once the pool gives up on it, and what it started is the spawner's to
    end). Signals go through a pidfd, so they can never reach another process that took the
    same process id."""

    def __init__(self, pid: int, stream: trio.SocketStream) -> None:
        self.pid = pid
        self._pidfd = os.pidfd_open(pid)
        self.stdin: trio.abc.SendStream | None = _Input(stream)
        self.stdout: trio.abc.ReceiveStream | None = _Output(stream)
        self.stderr: trio.abc.ReceiveStream | None = None
        self.returncode: int | None = None
        self._killed = False

    def _signal(self, number: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self._pidfd, number)
                self._killed = True

    def terminate(self) -> None:
        self._signal(signal.SIGKILL)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    async def wait(self) -> int:
        if self.returncode is None:
            await trio.lowlevel.wait_readable(self._pidfd)  # readable once it has ended
            self.returncode = -signal.SIGKILL if self._killed else 0
            os.close(self._pidfd)
        return self.returncode


class SpawnerGoneError(OSError):
    """No worker can be forked: the spawner is gone (killed), and may not be started again."""


class Spawner:
    """The spawner process of one pool, started at the first ``fork``. One that died is
    started again only when ``restart`` allows it: started while engines of the same user run,
    a new spawner can be caught as it starts (before it makes itself undumpable) and a handle
    then opened on its memory can write what every worker it forks will run. So an event's
    pool (where engines run) never restarts it, and a pool whose spawner was killed forks no
    more workers; the server's (no engine runs beside it) does."""

    def __init__(self, *, restart: bool = True) -> None:
        self.restart = restart
        self._started = False
        self._closed = False
        self._process: trio.Process | None = None
        self._control: trio.socket.SocketType | None = None
        self._lock = trio.Lock()

    async def _start(self) -> trio.socket.SocketType:
        if self._closed:
            raise SpawnerGoneError("the pool is closed")
        if self._started and not self.restart:
            raise SpawnerGoneError("the spawner of the search workers is gone")
        self._started = True
        old, self._process = self._process, None
        if old is not None:  # gone, or not answering: ended for good before another starts
            if old.returncode is None:
                old.kill()
            with trio.CancelScope(shield=True), trio.move_on_after(1.0):
                await old.wait()
            orphans.forget(old.pid)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with orphans.spawning():
                command = [sys.executable, "-m", spawner.__name__, str(theirs.fileno())]
                self._process = await trio.lowlevel.open_process(
                    command, stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),)
                )
                orphans.known(self._process.pid)
        finally:
            theirs.close()
        self._control = trio.socket.from_stdlib_socket(ours)
        return self._control

    async def fork(self) -> ForkedProcess:
        """A new worker, forked by the spawner.

        Raises:
            OSError: the spawner could not be started or did not answer in time.
        """
        async with self._lock:  # one request, one answer: in order
            for attempt in range(SPAWN_ATTEMPTS):
                control = self._control
                if control is None or self._process is None or self._process.returncode is not None:
                    self._drop()
                    control = await self._start()
                try:
                    with trio.fail_after(SPAWN_TIMEOUT):
                        await control.send(spawner.REQUEST)
                        data, ancillary, _, _ = await control.recvmsg(64, socket.CMSG_SPACE(4))
                except (OSError, trio.ClosedResourceError, trio.BrokenResourceError) as exc:
                    self._drop()  # it is gone (killed, or it refused to serve)
                    if attempt + 1 == SPAWN_ATTEMPTS:
                        raise SpawnerGoneError(f"the spawner did not answer ({exc})") from None
                    continue
                if data:
                    break
                self._drop()
            else:
                raise SpawnerGoneError("the spawner ended before it sent a worker")
            fds = [
                fd
                for level, kind, payload in ancillary
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
                for fd in _ints(payload)
            ]
            if len(data) != 4 or len(fds) != 1:
                for fd in fds:
                    os.close(fd)
                self._drop()
                raise SpawnerGoneError("the spawner did not send a worker")
        pid = int.from_bytes(data, sys.byteorder, signed=True)
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(socket.socket(fileno=fds[0])))
        return ForkedProcess(pid, stream)

    def _drop(self) -> None:
        """Close the socket to the spawner (it is gone, or to end it)."""
        if self._control is not None:
            self._control.close()
            self._control = None

    def close(self) -> None:
        """Tell the spawner to end (and with it every worker it forked), without waiting; a
        ``fork`` waiting for its answer fails with ``SpawnerGoneError``."""
        self._closed = True
        self._drop()

    async def aclose(self) -> None:
        """End the spawner, and with it every worker it forked."""
        self.close()
        if self._process is not None:
            with trio.move_on_after(2.0):
                await self._process.wait()
            if self._process.returncode is None:
                self._process.kill()
                await self._process.wait()
            orphans.forget(self._process.pid)
            self._process = None


def _ints(payload: bytes) -> list[int]:
    usable = len(payload) - len(payload) % 4
    return [int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
