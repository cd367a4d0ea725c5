"""The search worker: a child process that runs bot searches for the server.

Searches are CPU-bound pure Python, so the server never runs one on its event loop: it keeps a
pool of these processes and talks to each over its stdin/stdout with msgpack-RPC frames.

* request ``[0, id, "search", [job]]`` with the job map of ``SearchJob.to_map``; the response
  ``[1, id, nil, result]`` carries the ``SearchResult`` fields, or an error
  ``[500, "internal", text, nil]`` if the search failed;
* while it runs, ``[2, "info", [{"search": id, ...}]]`` notifications report progress;
* ``[2, "stop", [{"search": id}]]`` asks that search to return now, whether it runs already or
  is still on its way (a stop that overtakes its search is remembered, so the search returns at
  once when it starts).

A reader thread reads the pipe while the main thread searches, so a stop reaches the search at
once (the search polls a flag). Bots are kept per session (least recently used first out), so a
session's transposition table survives from one of its moves to the next on the same worker;
the tables kept stay within the job's ``hash_budget`` (MB), so that the server's hash budget
bounds what its workers hold whatever the sessions ask for.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from typing import BinaryIO

import games
from bots.compiled import core_for
from bots.engine import Engine
from bots.eval import evaluated_games, evaluator_for
from bots.registry import BotError, create_bot, load_all
from enginesrv import reaper
from enginesrv.search.jobs import SearchJob, info_to_map, result_to_map
from protocol import rpc
from protocol.errors import ProtocolError

MAX_FRAME = 4 * 1024 * 1024
IDLE_BEFORE_COLLECT = 0.02
"""Seconds without a new search after which an idle worker collects the garbage of its last
searches (the young generations)."""
IDLE_BEFORE_FULL_COLLECT = 1.0
"""Seconds without a new search after which it collects everything (the oldest generation too):
a full collection visits every live container, a Python transposition table's quarter million
slots among them, for tens of milliseconds, which the next move must not wait for late in a
game played on the increment."""
FULL_COLLECT_EVERY = 500
"""Young collections after which the next one is a full one, idle long or not: the oldest
generation's cycles are freed even by a worker that is never idle for long."""
BOTS_PER_WORKER = 4
"""Sessions whose bots a worker keeps warm; older ones are dropped."""


class _Worker:
    """The worker's state: its bots, the running search and its stop flag."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.out_lock = threading.Lock()
        self.bots: OrderedDict[tuple[str, str], Engine] = OrderedDict()
        self.games: dict[tuple[str, str], str | None] = {}
        """The game each kept bot last searched for."""
        self.running: int | None = None
        self.stop_flag = threading.Event()
        self.stopped: set[int] = set()
        """Ids of searches stopped before they started."""
        self.retired: list[Engine] = []
        """Bots dropped from the cache, freed once the running search has answered."""
        self.state_lock = threading.Lock()

    def send(self, data: bytes) -> None:
        """Write one packed frame to the pool."""
        with self.out_lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, ValueError):
                os._exit(0)  # the server is gone: nobody is left to answer

    def request_stop(self, msgid: int | None) -> None:
        """Stop search ``msgid`` (None: whatever runs), now or as soon as it starts."""
        with self.state_lock:
            if msgid is None or msgid == self.running:
                self.stop_flag.set()
            else:
                self.stopped.add(msgid)

    def _begin(self, msgid: int) -> None:
        with self.state_lock:
            self.running = msgid
            if msgid in self.stopped:
                self.stop_flag.set()
            else:
                self.stop_flag.clear()
            # ids grow: a stop for an id below this one can no longer be wanted
            self.stopped = {i for i in self.stopped if i > msgid}

    def bot_for(self, job: SearchJob) -> Engine:
        key = (job.session, job.bot)
        bot = self.bots.get(key)
        if bot is None:
            bot = create_bot(job.bot)
            self.bots[key] = bot
        self.bots.move_to_end(key)
        # Every option takes the job's value, or its default when the job names none, so a
        # kept bot never searches with a value the session no longer has.
        given = {bot.option(name).name: value for name, value in job.options}
        for option in bot.options:
            if option.type == "button":
                continue
            wanted = option.parse(given[option.name]) if option.name in given else option.default
            if option.name == "Hash" and job.hash_budget is not None and isinstance(wanted, int):
                # one table never holds more than this worker's share of the server's budget
                wanted = max(1, min(wanted, job.hash_budget))
            if bot.values[option.name] == wanted:
                continue
            if wanted is None:
                bot.values[option.name] = None
            else:
                bot.set_option(option.name, option.text(wanted))
        self._evict(job.hash_budget)
        return bot

    def _evict(self, budget: int | None) -> None:
        """Drop the least recently used bots beyond ``BOTS_PER_WORKER`` or the hash budget
        (the newest bot always stays)."""

        def held() -> int:
            return sum(int(b.values.get("Hash") or 0) for b in self.bots.values())

        while len(self.bots) > 1 and (
            len(self.bots) > BOTS_PER_WORKER or (budget is not None and held() > budget)
        ):
            # freed after the answer is sent: dropping a full table takes tens of ms
            key, bot = self.bots.popitem(last=False)
            self.games.pop(key, None)
            self.retired.append(bot)

    def search(self, msgid: int, job: SearchJob) -> None:
        self._begin(msgid)
        try:
            game = games.load(job.game)
            state = game.state_from_string(job.position)
            bot = self.bot_for(job)
            key = (job.session, job.bot)
            if job.new_game or self.games.get(key, job.game_key) != job.game_key:
                bot.new_game(game)
            self.games[key] = job.game_key
            limits = job.limits_in(state, time.monotonic())
            result = bot.search(
                state,
                limits,
                stop=self.stop_flag.is_set,
                on_info=lambda info: self.send(
                    rpc.pack_notification("info", info_to_map(info, msgid))
                ),
            )
            self.send(rpc.pack_response(msgid, None, result_to_map(result)))
        except Exception as exc:  # any failure of a bot must reach the server, not kill us
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            failure = [500, "internal", f"search failed: {detail}", None]
            self.send(rpc.pack_response(msgid, failure, None))
        finally:
            with self.state_lock:
                self.running = None
            self.retired.clear()


def _read_frames(
    source: BinaryIO, worker: _Worker, jobs: list[tuple[int, SearchJob]], ready: threading.Condition
) -> None:
    frames = rpc.FrameReader(MAX_FRAME)
    try:
        while True:
            chunk = source.read1(65536) if hasattr(source, "read1") else source.read(65536)
            if not chunk:
                break
            frames.feed(chunk)
            for message in frames.envelopes():
                if message.kind == rpc.REQUEST and message.method == "search":
                    with ready:
                        jobs.append((message.msgid or 0, SearchJob.from_map(dict(message.params))))
                        ready.notify()
                elif message.kind == rpc.NOTIFY and message.method == "stop":
                    search = message.params.get("search")
                    worker.request_stop(search if isinstance(search, int) else None)
    except (ProtocolError, OSError):
        pass  # the pool's stream is broken (or reset, a socket's): leave, as at its end
    with ready:
        jobs.append((-1, SearchJob("", "", "", "", ())))  # end of input: leave
        worker.stop_flag.set()
        ready.notify()


def warm_up() -> None:
    """Load now what a first search would load (every game, every bot, every evaluation and
    its tables), so that no move's clock pays for it."""
    for name in games.available():
        games.load(name).new_state()
    with contextlib.suppress(BotError):  # a broken plug-in is reported when it is asked for
        load_all()
    for name in evaluated_games():
        evaluator_for(name).prepare()
        core_for(name)  # imports the game's compiled search core, which builds its tables


def main() -> None:
    """Serve searches on stdin/stdout until stdin closes; a ``ready`` notification is sent
    once the worker has warmed up."""
    prepare()
    serve()


def prepare() -> None:
    """Make this process a worker, before its first search: closed to other processes, deaf
    to Ctrl-C, warmed up, its garbage set aside. A process forked from a prepared one
    (``enginesrv.search.spawner``) is prepared too."""
    # Ctrl-C reaches the whole process group; the server decides when a worker ends (it
    # closes the worker's input), so the worker itself ignores the interrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # its bots' secrets (Yin Yang laws) are in its memory: closed to other processes
    reaper.set_dumpable(False)
    warm_up()
    # A full collection of the cyclic garbage collector can stop the search for tens of ms,
    # which a timed move cannot spare: collect between searches, when the worker is idle,
    # and never during one (``Collector``). What warm-up loaded is set aside for good
    # (freeze).
    gc.collect()
    gc.freeze()
    gc.disable()


class Collector:
    """When an idle worker collects its garbage (the collector is off during searches:
    ``prepare``). Once searches ran, a short idle time collects the young generations, which
    hold what the searches made; a long one, or every ``FULL_COLLECT_EVERY`` young
    collections, collects everything. ``collect``: ``gc.collect``, or a fake."""

    def __init__(self, collect: Callable[[int], object] = gc.collect) -> None:
        self.collect = collect
        self.young = False
        """Whether a search ran since the last collection."""
        self.since_full = 0
        """Young collections since the last full one."""

    def searched(self) -> None:
        self.young = True

    def idle(self, wait: Callable[[float], bool]) -> None:
        """Collect while no search is asked for; ``wait(seconds)`` waits at most that long for
        one and says whether one came (then nothing more is collected)."""
        if self.young:
            if wait(IDLE_BEFORE_COLLECT):
                return
            self.young = False
            self.since_full += 1
            if self.since_full < FULL_COLLECT_EVERY:
                self.collect(1)
                if wait(IDLE_BEFORE_FULL_COLLECT):
                    return
        elif not self.since_full or wait(IDLE_BEFORE_FULL_COLLECT):
            return
        self.collect(2)
        self.since_full = 0


def serve() -> None:
    """Serve searches on stdin/stdout until stdin closes (the process is ``prepare``d); a
    ``ready`` notification first."""
    source = sys.stdin.buffer
    out = sys.stdout.buffer
    # Nothing else may write to the frame stream: send stray prints to stderr.
    sys.stdout = sys.stderr
    worker = _Worker(out)
    worker.send(rpc.pack_notification("ready"))
    jobs: list[tuple[int, SearchJob]] = []
    ready = threading.Condition()
    reader = threading.Thread(target=_read_frames, args=(source, worker, jobs, ready), daemon=True)
    reader.start()
    collector = Collector()

    def wait(seconds: float) -> bool:
        with ready:
            if not jobs:
                ready.wait(timeout=seconds)
            return bool(jobs)

    while True:
        collector.idle(wait)
        with ready:
            while not jobs:
                ready.wait()
            msgid, job = jobs.pop(0)
        if msgid < 0:
            break
        worker.search(msgid, job)
        collector.searched()
    os._exit(0)  # the reader thread may still block on a closed pipe


if __name__ == "__main__":
    main()
