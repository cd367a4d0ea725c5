"""The reaper: runs a command as its only child and, when that command ends or the reaper is
told to stop, ends every process the command started, wherever it went.

    python -I -S reaper.py --parent PID -- COMMAND [ARG...]

An engine can leave its process group and session (``setpgid``, ``setsid``), or fork twice
so that its helper's parent is gone: killing a process group, or the tree below a process,
misses such a helper, and it outlives its game. The reaper is a Linux child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``): a process below it whose parent dies is handed to the
reaper instead of to init, so every living process the command started is the reaper's
child or below one. To end them all, the reaper kills its children (found by their parent
in /proc), takes over the orphans that makes, and repeats until the kernel says it has no
child left (``waitpid`` fails with ECHILD): then no process the command started is alive.
Before it kills, it stops them all (``sweep``), so that none can fork or answer another's
death meanwhile.

It stops, and so ends everything, when

* the command exits (its exit status, or the signal that ended it, is the reaper's own);
* it gets SIGTERM or SIGHUP (``enginesrv.client`` sends SIGTERM to the process group of an
  engine that did not exit after ``quit``; the server's worker pool, to a worker it drops);
* its parent (``--parent``) is gone: checked twice a second, because the parent-death signal
  of ``prctl(PR_SET_PDEATHSIG)`` fires when the parent *thread* exits, and trio starts
  processes from a worker thread that ends after some idle seconds.

SIGINT and SIGQUIT are ignored: a Ctrl-C on the terminal reaches the command itself when it
shares the terminal's process group, and the server lets its workers finish their searches.
The command runs with the parent-death signal SIGKILL, so that even a reaper that is killed
does not leave the command itself behind.

The reaper only uses the standard library and is run as a file with ``-I -S`` (no site
packages, no environment variables of Python's): it starts in a few milliseconds and owes
nothing to the program that imports this module. Processes that the reaper cannot reach
(another user's, or a process in a PID namespace of its own that the command made) are
outside its promise; ``docs/security.md`` says what contains them.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = {signal.SIGTERM, signal.SIGHUP}
"""The signals that make the reaper end the command and all it started."""
PARENT_CHECK = 0.5
"""Seconds between two checks that the parent is still there."""
SWEEP_LIMIT = 0.5
"""Seconds the reaper spends at most stopping what the command left behind before it kills
it (``sweep``)."""
_CORE_LIMIT: tuple[int, int] | None = None
"""The core-file limit the reaper was started with: the command gets it back."""
NAME = "reaper"
"""How the reaper names itself in the one line it writes when it cannot start the command."""


def command(argv: Sequence[str], *, parent: int | None = None) -> list[str]:
    """``argv`` run under the reaper, as a child of this process (or of ``parent``)."""
    me = os.getpid() if parent is None else parent
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), "--parent", str(me), "--", *argv]


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)``; False where it failed (not Linux, or refused)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def make_subreaper() -> bool:
    """``prctl(PR_SET_CHILD_SUBREAPER)`` on this process: the orphans of processes below it
    come to it rather than to init. False where it could not be set."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent() -> bool:
    """``prctl(PR_SET_PDEATHSIG, SIGKILL)``: this process is killed when the thread that
    started it ends (its parent process's main thread, for a process started from it), so
    that a parent killed with -9 leaves no such child behind. False where it could not be
    set, or the parent was gone already."""
    parent = os.getppid()
    if not _prctl(PR_SET_PDEATHSIG, signal.SIGKILL):
        return False
    return os.getppid() == parent  # not orphaned before it was set


def set_dumpable(dumpable: bool) -> bool:
    """``prctl(PR_SET_DUMPABLE)``: an undumpable process's memory, open files and environment
    in /proc, and ptrace, are closed to other processes of its user (not to root with its
    capabilities). The setting is reset when the process runs a new program, so the engines
    it starts are not affected. False where it could not be set."""
    return _prctl(PR_SET_DUMPABLE, int(dumpable))


def processes() -> dict[int, tuple[int, str]]:
    """Every process in /proc: its parent and its state letter (``R``, ``S``, ``T``, ``Z``...)."""
    out: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue  # it ended meanwhile
        fields = stat[stat.rfind(b")") + 2 :].split()  # the name may hold spaces and ")"
        if len(fields) > 1:
            out[int(entry)] = (int(fields[1]), fields[0].decode("ascii", "replace"))
    return out


def descendants(root: int, table: dict[int, tuple[int, str]] | None = None) -> dict[int, str]:
    """The processes below ``root`` (not only its children), with their states: now, or in
    ``table`` (``processes``)."""
    table = processes() if table is None else table
    below: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        below.setdefault(parent, []).append(pid)
    out: dict[int, str] = {}
    todo = list(below.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid not in out:
            out[pid] = table[pid][1]
            todo += below.get(pid, ())
    return out


def _signal(pids: Iterable[int], number: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, number)


def end_strays(keep: set[int], limit: float = SWEEP_LIMIT) -> list[int]:
    """End each child of this process that is not in ``keep``, with every process below it,
    and reap it, until none is left or ``limit`` seconds have passed; the children ended.
    All of them are stopped first (none can fork, or answer another's death), then killed;
    after ``limit`` seconds what still runs (a process in an uninterruptible wait) is killed
    without waiting for it to stop, and after ``2 * limit`` the rest is left to the next call."""
    me = os.getpid()
    ended: list[int] = []
    start = time.monotonic()
    while time.monotonic() - start < 2 * limit:
        table = processes()  # once a round: a subtree is found in it, not in a new read
        strays = [pid for pid, (parent, _) in table.items() if parent == me and pid not in keep]
        if not strays:
            break
        doomed = {pid: table[pid][1] for pid in strays}
        doomed.update(descendants(me, table))
        doomed = {pid: state for pid, state in doomed.items() if pid not in keep}
        for pid in keep:
            for below in descendants(pid, table):
                doomed.pop(below, None)
        running = [pid for pid, state in doomed.items() if state not in "TtZXx"]
        if running and time.monotonic() - start < limit:
            _signal(running, signal.SIGSTOP)
        else:
            _signal(doomed, signal.SIGKILL)
        for pid in strays:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0]:
                    ended.append(pid)
        time.sleep(0.001)
    return ended


def sweep(limit: float = SWEEP_LIMIT) -> None:
    """Kill every process below this one (as it is a subreaper, every process the command
    started) and reap them, until none is left (``end_strays`` of every child). First all are
    stopped (SIGSTOP, which no process can catch): a stopped process can neither fork nor
    answer the death of another (a chain of processes that replace whichever link is killed,
    by their parent-death signals, would otherwise outrun one kill at a time); then all are
    killed at once."""
    end_strays(set(), limit)


def _child_setup() -> None:
    """In the command's process before it starts: the default signal mask and handlers, and
    SIGKILL should the reaper die."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    if _CORE_LIMIT is not None:
        resource.setrlimit(resource.RLIMIT_CORE, _CORE_LIMIT)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _start(argv: list[str]) -> int:
    """Start the command; its pid. Exits with status 127 and one line when it cannot."""
    try:
        return subprocess.Popen(argv, preexec_fn=_child_setup).pid  # noqa: PLW1509
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        sys.stderr.write(f"{NAME}: cannot start {argv[0]}: {reason}\n")
        sys.stderr.flush()
        os._exit(127)


def _wait(main: int, parent: int) -> int | None:
    """Wait until the command ``main`` exits (its wait status), or a stop signal comes or
    the parent is gone (None). Reaps the orphans that come meanwhile."""
    watched = {*STOP_SIGNALS, signal.SIGCHLD}
    while True:
        info = signal.sigtimedwait(watched, PARENT_CHECK)
        if info is not None and info.si_signo in STOP_SIGNALS:
            return None
        if os.getppid() != parent:
            return None
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return 0  # cannot happen while the command runs; nothing left to wait for
            if not pid:
                break
            if pid == main:
                return status


def _exit_as(status: int | None) -> None:
    """End the reaper as the command ended: its exit status, or the signal that killed it;
    a reaper that was stopped (``status`` None) ends by SIGTERM."""
    if status is None or os.WIFSIGNALED(status):
        number = signal.SIGTERM if status is None else os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main(args: list[str]) -> None:
    """``--parent PID -- COMMAND...``: see the module's docstring."""
    if len(args) < 4 or args[0] != "--parent" or args[2] != "--" or not args[1].isdigit():
        sys.stderr.write(f"usage: {NAME} --parent PID -- COMMAND [ARG...]\n")
        os._exit(2)
    parent, argv = int(args[1]), args[3:]
    global _CORE_LIMIT  # noqa: PLW0603 (set once, before the command starts)
    _CORE_LIMIT = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, _CORE_LIMIT[1]))  # it may end by a core signal
    set_dumpable(False)  # it holds the command's standard error: no one else may open it
    if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
        os.execvp(argv[0], argv)  # nowhere to reap: the command runs as itself
    signal.pthread_sigmask(signal.SIG_BLOCK, {*STOP_SIGNALS, signal.SIGCHLD})
    for number in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_IGN)
    main_pid = _start(argv)
    # the pipes belong to the command: once it and its helpers are gone, its reader sees
    # the end of its output without waiting for the reaper
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    status = _wait(main_pid, parent) if os.getppid() == parent else None
    sweep()
    _exit_as(status)


if __name__ == "__main__":
    main(sys.argv[1:])
