"""The arbiter as the last reaper of what its engines start.

Every ``cmd:`` engine runs under a reaper (``enginesrv.reaper``) that ends all the engine
started. An engine of the same user can kill its reaper (SIGKILL cannot be caught) after
clearing its own parent-death signal: it then lives on, and what it starts with it. So the
``match`` and ``tournament`` commands make the arbiter a child subreaper too (``adopt``):
what is left when a reaper dies comes to the arbiter, not to init. Its children are its
reapers, which it knows (``known``), and nothing else: any other child is such an orphan, and
``sweep`` (run by ``watch`` when a known child has ended and every 2 s, when an engine is
closed, and when the event ends) stops and kills it with everything below it, and reaps it,
again until none is left (``reaper.end_strays``). The engine's game is then lost as a crash.

Only a program that owns its process may do this (the flag is process-wide, and a sweep kills
every child it does not know): the command line does, ``enginesrv.client`` never does, and
``run_event`` leaves it to its caller. A process being started is not known until it is
(``spawning``): no sweep runs meanwhile.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import trio

from enginesrv import reaper

SWEEP_EVERY = 0.5
"""Seconds between two looks at the known children while an event runs (``watch``)."""
FULL_EVERY = 4
"""Every how many looks ``watch`` sweeps whatever it saw (every 2 s)."""

_lock = threading.Lock()
_adopted = False
_known: set[int] = set()
_spawning = 0


def adopt() -> bool:
    """Make this process a child subreaper whose unknown children are swept; whether it
    could (Linux only)."""
    global _adopted  # noqa: PLW0603 (one flag for the one process)
    _adopted = reaper.make_subreaper()
    return _adopted


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """While a child of this process is being started (it is not ``known`` yet): no sweep."""
    global _spawning  # noqa: PLW0603
    with _lock:
        _spawning += 1
    try:
        yield
    finally:
        with _lock:
            _spawning -= 1


def known(pid: int) -> None:
    """``pid`` is a child this process started (a reaper): never swept."""
    with _lock:
        _known.add(pid)


def forget(pid: int) -> None:
    """The child ``pid`` has been reaped."""
    with _lock:
        _known.discard(pid)


def sweep() -> list[int]:
    """Stop and kill each child of this process that it did not start, with all below it,
    and reap it (module docstring); the children killed. Nothing unless ``adopt``ed, and
    nothing while a child is being started."""
    with _lock:
        if not _adopted or _spawning:
            return []
        known_now = set(_known)
    return reaper.end_strays(known_now)


def suspect() -> bool:
    """Whether a known child has ended (a zombie, or gone): a reaper that was killed leaves
    orphans. Cheap (a look at the known children only), unlike ``sweep``."""
    with _lock:
        pids = list(_known)
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            return True
        if stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] in (b"Z", b"X"):
            return True
    return False


async def watch(every: float = SWEEP_EVERY, full: int = FULL_EVERY) -> None:
    """For ever (run it as a task of the event): every ``every`` seconds, when a known child
    has ended (its orphans come now), and every ``full`` times in any case (an orphan whose
    reaper was reaped and forgotten before it came), sweep, in a thread (it reads all of
    /proc)."""
    count = 0
    while True:
        await trio.sleep(every)
        count += 1
        if _adopted and (count % full == 0 or suspect()):
            await trio.to_thread.run_sync(sweep)
