"""Hostile engines for the containment tests: ``python hostile_engine.py MODE [ARGS]``.

Each plays through a well-behaved engine it runs as its child (``fake_engine.py good``),
passing the protocol both ways, and misbehaves around it:

* ``escape PIDFILE``: at start-up it starts three processes that try to outlive it: one in a
  new session (``setsid``), one in a new process group (``setpgid``), and one forked twice
  (its parent gone at once) in a new session; each ignores SIGTERM, as the engine itself
  does, and the engine ignores ``quit``. It writes their PIDs and its child's, one per line,
  to PIDFILE.
* ``ladder PIDFILE PROGRAM``: at start-up it runs PROGRAM PIDFILE (``ladder.c``, compiled: a
  line of processes that grows back what is killed of it) in a new session.
* ``unreap PIDFILE``: on its first ``go`` it frees itself from its reaper: it clears the
  parent-death signal the reaper gave it, moves to a new session, starts a helper that
  sleeps, kills its reaper (its parent) with SIGKILL and plays on. It writes its own PID and
  the helper's to PIDFILE.
* ``catch SECONDS``: from its first ``go``, in a thread, it kills the processes below the
  arbiter that are not its own (the search workers of a ``bot:`` opponent, and what stands
  between them and the arbiter), then for SECONDS watches /proc every millisecond for new
  processes below the arbiter and opens ``/proc/PID/mem`` of each as it appears (a handle
  opened before a process makes itself undumpable keeps working); its next move waits for
  that (the opponent has moved meanwhile). Then it reports ``catch
  killed=N new=N caught=N workers=N`` on its standard error: ``workers`` the search workers
  among the processes caught.
* ``hop NAME``: on its first ``go`` it starts a helper named NAME (``PR_SET_NAME``) in a new
  session that never keeps its process id: it forks, and the parent leaves, over and over,
  for a minute; then it kills its reaper and plays on.
* ``flood BYTES``: on every ``go`` it writes BYTES bytes to its standard error first.
* ``victim``: on every ``go`` it writes a secret of its own, ``SECRET`` (see below) and a
  random hexadecimal number drawn at its start, on its standard error and in an ``info
  string`` line (so that its protocol trace holds it too). Nothing outside the process
  knows the number before it is written.
* ``thief``: on every ``go`` it attacks, as an engine of the same user would, every route to
  another player's secrets, and reports on its standard error, one line each: ``thief saw
  arbiter=N victim=N reaper=N other=N`` (the processes of each kind it could see in /proc:
  the arbiter is its reaper's parent; the others are below the arbiter, or anywhere when
  the arbiter is out of sight) and
  ``thief route ROLE WHAT`` for each route it got through: ``file PATH`` (a readable file
  under a temporary directory, or the current directory, holding a victim's secret), ``fd
  N`` (another process's open file it could open), ``environ``, ``mem`` (opened),
  ``ptrace`` (attached). ROLE is ``arbiter``, ``victim``, ``reaper`` or ``other``; its own
  processes are left alone. A file route names the secrets it found after the path.
* ``escalate``: on every ``go`` it tries to undo its sandbox, as root would: it reports on its
  standard error ``escalate caps=HEX umount=0|1 remount=0|1``, its effective capabilities
  and whether it could unmount /tmp (uncovering the host's) and remount / writable.
* ``thief-or-crash``: as ``thief``, and it exits at once (a crash) when it saw another
  process or got through a route: how it tells where its standard error is not kept.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

FAKE = Path(__file__).with_name("fake_engine.py")
SECRET = "VICTIM" + "-SECRET-"  # in two pieces: this file does not hold the secret's bytes
SKIPPED = {"site-packages", "dist-packages", ".git", "node_modules", "__pycache__"}
"""Directories a thief does not search (there are many files in them, and no secret)."""
READ = 1 << 16
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def linger(new_session: bool, new_group: bool) -> None:
    """In a child: leave as asked, ignore SIGTERM, and sleep (at most a minute)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if new_session:
        os.setsid()
    elif new_group:
        os.setpgid(0, 0)
    time.sleep(60)
    os._exit(0)


def escape(pidfile: Path) -> list[int]:
    """Start the three processes of ``escape``; their PIDs."""
    pids = []
    for new_session, new_group in ((True, False), (False, True)):
        pid = os.fork()
        if pid == 0:
            linger(new_session, new_group)
        pids.append(pid)
    read, write = os.pipe()
    if os.fork() == 0:  # the middle process: forks the grandchild and is gone
        os.close(read)
        grandchild = os.fork()
        if grandchild == 0:
            os.close(write)
            linger(True, False)
        os.write(write, f"{grandchild}\n".encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        pids.append(int(pipe.readline()))
    with contextlib.suppress(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
    pidfile.write_text("".join(f"{pid}\n" for pid in pids))
    return pids


def parents() -> dict[int, int]:
    """The parent of every process this one can see in /proc."""
    out = {}
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            out[int(entry)] = int(stat[stat.rfind(b")") + 2 :].split()[1])
    return out


def role(pid: int, arbiter: int, parent: dict[int, int]) -> str | None:
    """What process ``pid`` is to a thief: the arbiter (its reaper's parent), or below it a
    ``reaper``, a ``victim`` or ``other``; None for a process of no concern to this game."""
    if pid == arbiter:
        return "arbiter"
    above, seen = parent.get(pid), set()
    while above is not None and above != arbiter and above not in seen:
        seen.add(above)
        above = parent.get(above)
    if above != arbiter:
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "other"
    if b"reaper.py" in cmdline:
        return "reaper"
    if b"victim" in cmdline or b"fake_engine.py" in cmdline:
        return "victim"
    return "other"


def read_regular(path: str) -> bytes:
    """The first ``READ`` bytes of a regular file; nothing of anything else (a FIFO would
    block the thief, a device never end)."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return b""
        return os.read(handle, READ)
    finally:
        os.close(handle)


def steal_files(marker: bytes) -> list[str]:
    """The routes through readable files under the temporary directories and here."""
    roots = {"/tmp", "/var/tmp", "/dev/shm", tempfile.gettempdir(), os.environ.get("TMPDIR", "")}
    found = []
    for root in sorted(r for r in roots | {os.getcwd()} if r):
        for folder, folders, names in os.walk(root):
            folders[:] = [f for f in folders if f not in SKIPPED]
            for name in names:
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    data = read_regular(path)
                    secrets = set(re.findall(re.escape(marker) + rb"[0-9a-f]{16}", data))
                    if secrets:
                        found.append(f"file {path} {b' '.join(sorted(secrets)).decode()}")
    return found


def steal_process(pid: int, marker: bytes) -> list[str]:
    """The routes into process ``pid``: its open files, environment, memory, ptrace."""
    found = []
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
                os.close(handle)  # opened: a pipe's bytes, a file's content are ours to read
                found.append(f"fd {fd}")
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/environ").read_bytes()
        found.append("environ")
    with contextlib.suppress(OSError):
        os.close(os.open(f"/proc/{pid}/mem", os.O_RDONLY))
        found.append("mem")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
        found.append("ptrace")
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0x40000000)  # __WALL: the stop of the attach
        libc.ptrace(PTRACE_DETACH, pid, None, None)
    del marker
    return found


def thieve(marker: bytes, own: set[int]) -> bool:
    """Every route, reported on standard error (module docstring); whether it saw another
    process or got through a route."""
    seen = {"arbiter": 0, "victim": 0, "reaper": 0, "other": 0}
    routes = [f"thief route other {r}" for r in steal_files(marker)]
    parent = parents()
    arbiter = parent.get(os.getppid(), 0)  # its reaper's parent (0: out of sight)
    for pid in sorted(set(parent) - own):
        kind = role(pid, arbiter, parent) if arbiter > 0 else "other"
        if kind is None:
            continue
        seen[kind] += 1
        routes += [f"thief route {kind} {r}" for r in steal_process(pid, marker)]
    say("thief saw " + " ".join(f"{kind}={count}" for kind, count in seen.items()))
    for line in routes:
        say(line)
    return any(seen.values()) or bool(routes)


def catch(seconds: float, own: set[int]) -> None:
    """The attack of ``catch`` (module docstring)."""
    parent = parents()
    arbiter = parent.get(os.getppid(), 0)
    first = {p for p in parent if p not in own and role(p, arbiter, parent) in ("other", "reaper")}
    for pid in first:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    seen, caught, handles = set(first), [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        parent = parents()
        for pid in parent:
            if pid in seen or pid in own or role(pid, arbiter, parent) is None:
                continue
            seen.add(pid)
            with contextlib.suppress(OSError):
                handles.append(os.open(f"/proc/{pid}/mem", os.O_RDONLY))
                caught.append(pid)
        time.sleep(0.001)
    # a search worker is forked by a spawner, or started (then it names the worker module)
    parent = parents()
    workers = [
        pid for pid in caught
        if b"search.worker" in _cmdline(pid) or b"spawner" in _cmdline(parent.get(pid, 0))
    ]  # fmt: skip
    say(f"catch killed={len(first)} new={len(seen) - len(first)} caught={len(caught)} "
        f"workers={len(workers)}")  # fmt: skip


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def hop(name: str) -> bool:
    """The attack of ``hop`` (module docstring); True."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, 0, 0, 0, 0)  # no parent-death signal
    if os.fork() == 0:
        os.setsid()
        libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if os.fork() != 0:
                os._exit(0)  # the child goes on under another process id
            time.sleep(0.001)
        os._exit(0)
    os.kill(os.getppid(), signal.SIGKILL)
    return True


def unreap(pidfile: Path) -> bool:
    """Free this process from its reaper (module docstring); True."""
    ctypes.CDLL(None, use_errno=True).prctl(1, 0, 0, 0, 0)  # no parent-death signal
    os.setsid()
    helper = os.fork()
    if helper == 0:
        time.sleep(60)
        os._exit(0)
    pidfile.write_text(f"{os.getpid()}\n{helper}\n")
    os.kill(os.getppid(), signal.SIGKILL)
    return True


def escalate() -> None:
    """Try to undo the sandbox (module docstring)."""
    caps = next(
        line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
        if line.startswith("CapEff:")
    )  # fmt: skip
    libc = ctypes.CDLL(None, use_errno=True)
    mnt_detach, ms_remount, ms_bind = 2, 32, 4096
    umounted = libc.umount2(b"/tmp", mnt_detach) == 0
    remounted = libc.mount(None, b"/", None, ms_remount | ms_bind, None) == 0
    say(f"escalate caps={caps} umount={int(umounted)} remount={int(remounted)}")


class Hostile:
    """What one hostile engine does on each ``go``, by its mode, and what it keeps between
    them (its secret, whether it freed itself, its catching thread)."""

    def __init__(self, mode: str, arg: str, own: set[int]) -> None:
        self.mode = mode
        self.arg = arg
        self.own = own  # its own processes, which its attacks leave alone
        self.secret = SECRET + os.urandom(8).hex()
        self.unreaped = False
        self.catching: threading.Thread | None = None

    def go(self) -> None:
        """Misbehave as the mode says, before the ``go`` is passed on to the engine."""
        actions: dict[str, Callable[[], None]] = {
            "flood": self.flood,
            "victim": self.show_secret,
            "hop": self.hop,
            "unreap": self.unreap,
            "catch": self.catch,
            "escalate": escalate,
            "thief": self.thieve,
            "thief-or-crash": self.thieve_or_crash,
        }
        action = actions.get(self.mode)
        if action is not None:
            action()

    def flood(self) -> None:
        chunk, left = b"x" * (1 << 20), int(self.arg)
        while left > 0:
            left -= sys.stderr.buffer.write(chunk[: min(left, len(chunk))])
        sys.stderr.buffer.flush()

    def show_secret(self) -> None:
        say(self.secret)
        sys.stdout.buffer.write(f"info string {self.secret}\n".encode())
        sys.stdout.buffer.flush()

    def hop(self) -> None:
        if not self.unreaped:
            self.unreaped = hop(self.arg)

    def unreap(self) -> None:
        if not self.unreaped:
            self.unreaped = unreap(Path(self.arg))

    def catch(self) -> None:
        if self.catching is None:
            args = (float(self.arg), self.own)
            self.catching = threading.Thread(target=catch, args=args, daemon=True)
            self.catching.start()
        else:
            self.catching.join()  # its next move waits for the report: the opponent moved

    def thieve(self) -> None:
        thieve(SECRET.encode(), self.own)

    def thieve_or_crash(self) -> None:
        if thieve(SECRET.encode(), self.own):
            os._exit(3)  # where its standard error is not kept: a crash says it


def start_engine(mode: str) -> subprocess.Popen[bytes]:
    """The well-behaved engine it plays through (a flood's own standard error is enough)."""
    return subprocess.Popen(
        [sys.executable, str(FAKE), "good"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if mode == "flood" else None,
    )


def misbehave_at_start(mode: str, arg: str, child: subprocess.Popen[bytes]) -> None:
    """The attacks made at start-up: ``escape`` and ``ladder`` (module docstring)."""
    if mode == "escape":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        escape(Path(arg))
        with open(arg, "a") as file:
            file.write(f"{child.pid}\n")
    if mode == "ladder" and os.fork() == 0:
        os.setsid()
        os.execv(sys.argv[3], [sys.argv[3], arg])


def relay(out: IO[bytes]) -> None:
    """Pass the engine's lines on to standard output."""
    for line in out:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def main() -> None:
    mode, arg = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    child = start_engine(mode)
    assert child.stdin is not None
    assert child.stdout is not None
    misbehave_at_start(mode, arg, child)
    own = {os.getpid(), os.getppid(), child.pid}  # itself, its reaper, its child
    hostile = Hostile(mode, arg, own)
    threading.Thread(target=relay, args=(child.stdout,), daemon=True).start()
    for line in sys.stdin.buffer:
        word = line.split(maxsplit=1)[0] if line.strip() else b""
        if word == b"quit" and mode == "escape":
            continue  # it stays: ended it must be
        if word == b"go":
            hostile.go()
        child.stdin.write(line)
        child.stdin.flush()
        if word == b"quit":
            break
    if mode == "escape":
        time.sleep(60)
    child.wait(5)


if __name__ == "__main__":
    main()
