"""Search workers forked, not started: the spawner.

A worker holds its bots' secrets (a Yin Yang bot's secret seed and laws) and makes itself
undumpable, so that no other process of its user can read its memory or open its files
through /proc. But a program that is started (``exec``) is dumpable until its first lines of
code run, and a handle on ``/proc/PID/mem`` opened in that window keeps working afterwards:
an engine of the same user that watches /proc can catch a worker the pool starts while the
event runs (a worker that died, or that the engine killed, is replaced) and read it for as
long as it lives. A process that is forked, not started, never has that window: it begins
with its parent's memory, already undumpable. So the pool starts one spawner, before any
engine of its event, and asks it for each worker:

    python -m enginesrv.search.spawner FD

The spawner makes itself undumpable and prepares itself as a worker would (games, bots and
tables loaded: a forked worker is ready at once), then reads requests on the Unix socket FD:
each byte ``s`` asks for a worker. It forks one, connected by a new socket pair whose other
end goes back to the pool with the worker's process id (``SCM_RIGHTS``). Each worker is a
child subreaper, so that what its plug-in bots start stays below it; the spawner is one too,
and kills what a dead worker leaves (any child of its own that is not a worker) with all
below it. When the pool's end of FD closes (the pool is closed, or its process is gone), the
spawner kills every worker and all below them, and exits.

The spawner itself holds no secret: a handle on its memory gives nothing of a worker's, whose
memory is its own copy from the moment it is forked. But a spawner started while engines run
can be caught as it starts like any program, and what is written to its memory then runs in
every worker it forks: so an event's pool never starts a killed spawner again
(``forked.Spawner``), and a spawner that finds itself traced once undumpable (a tracer
attached in that window would follow its forks into the workers) ends at once.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import sys

from enginesrv import reaper
from enginesrv.search import worker

REQUEST = b"s"
"""The byte that asks the spawner for a worker."""
_PID = struct.Struct("=i")


def _become_worker(connection: socket.socket, *others: socket.socket) -> None:
    """In a forked child: serve searches on ``connection`` as a worker, until its end."""
    for other in others:
        other.close()
    os.dup2(connection.fileno(), 0)
    os.dup2(connection.fileno(), 1)
    connection.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    reaper.make_subreaper()  # what a plug-in bot starts stays below its worker
    try:
        worker.serve()
    finally:
        os._exit(0)


def _fork_worker(control: socket.socket, workers: set[int]) -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        _become_worker(theirs, ours, control)
    theirs.close()
    try:
        socket.send_fds(control, [_PID.pack(pid)], [ours.fileno()])
    finally:
        ours.close()
    workers.add(pid)


def _tidy(workers: set[int]) -> None:
    """Reap what ended and, once something did (a worker's end is when what it started comes
    here), kill what a dead worker left: a child that is not a worker."""
    reaped = False
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            break
        workers.discard(pid)
        reaped = True
    if reaped:
        reaper.end_strays(workers)


def _traced() -> bool:
    """Whether a process traces this one (``TracerPid`` in /proc/self/status)."""
    with open("/proc/self/status", "rb") as file:
        for line in file:
            if line.startswith(b"TracerPid:"):
                return line.split()[1] != b"0"
    return False


def main(fd: int) -> None:
    """Serve the pool on the socket ``fd`` (module docstring)."""
    reaper.set_dumpable(False)
    if _traced():
        os._exit(3)  # attached to while it was dumpable: what it forked would be watched too
    reaper.make_subreaper()
    worker.prepare()
    control = socket.socket(fileno=fd)
    poller = select.poll()
    poller.register(control, select.POLLIN)
    workers: set[int] = set()
    while True:
        if poller.poll(100):
            try:
                data = control.recv(64)
            except OSError:
                break
            if not data:
                break  # the pool is gone
            try:
                for _ in range(data.count(REQUEST)):
                    _fork_worker(control, workers)
            except OSError:
                break  # the pool went away meanwhile
        _tidy(workers)
    reaper.sweep()
    os._exit(0)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.stderr.write("usage: python -m enginesrv.search.spawner FD\n")
        sys.exit(2)
    main(int(sys.argv[1]))
