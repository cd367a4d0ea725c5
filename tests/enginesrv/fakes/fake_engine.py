"""A scripted engine for the player tests: ``python fake_engine.py MODE [ARGS]``.

It speaks the text protocol (UGI commands) over stdin/stdout, one line at a time, flushed after
each line. When it plays, it plays the first legal move, sorted by token, of the position it
was given (``position fen X [moves ...]`` or ``position startpos [moves ...]``), in the game
set with ``setoption name Game value G`` (default ``yoxii``). Before each ``bestmove`` it
reports ``info depth 1 nodes N score cp 0`` (N: the number of legal moves).

Modes:

* ``good [GAMES]``: well behaved: ``id name fake``, the options ``Game`` (string, default
  yoxii) and ``Seed`` (spin), then ``ugiok``. With GAMES (comma-separated) it also advertises
  one ``game NAME colours P1 P2 start POSITION`` line per game, as the server does (the
  ``game`` capability).
* ``ugi``: plain UGI only: no ``option`` or ``game`` lines, ``setoption`` ignored; plays yoxii.
* ``crash [N]``: well behaved, then exits with code 3 on its Nth ``go`` (default 1) without
  answering.
* ``hang``: well behaved until a ``go``; then it answers nothing more (no bestmove, no
  readyok) but stays alive, sleeping (for at most a minute, so that it never outlives a test
  run for long).
* ``illegal [legal-but-wrong]``: answers ``go`` with ``bestmove zz99`` (a malformed token), or
  with ``legal-but-wrong`` a well-formed token that is not legal in the position.
* ``late [MS]``: answers ``go`` after sleeping MS milliseconds (default 500).
* ``silent``: never answers ``ugi`` (a stall at start-up); it still leaves on ``quit``.
* ``noready``: answers the handshake, but no ``isready`` after a ``uginewgame`` (a stall at the
  new game); it still leaves on ``quit``.
* ``nobest``: well behaved, answering ``isready`` at any time, but never a ``bestmove``.
* ``bound``: well behaved, but its last ``info`` before each ``bestmove`` is a fail-high,
  ``info depth 7 score cp 35 lowerbound nodes 1000``, after an exact ``score cp -20``.
* ``snoop DIR [MARKER]``: well behaved; on every ``go`` it reports on its standard error what
  it can see: the entries of DIR (the event's directory), the processes in /proc and whether
  /tmp/MARKER exists, as ``snoop dir=N procs=N marker=0|1`` (N = -1 when it cannot look).
* ``spy TOKEN PORT [DIR ...]``: well behaved; on every ``go`` it looks, as a hostile engine
  would, for what it should not see and reports on its standard error
  ``spy found=N arbiter=N net=0|1 tmp=0|1``: ``found`` the files whose name holds TOKEN it
  could read in /tmp, /var/tmp, /dev/shm and each DIR; ``arbiter`` the processes in /proc
  whose command line holds ``enginesrv.cli`` (the arbiter's); ``net`` whether it could
  connect to 127.0.0.1:PORT; ``tmp`` whether it could write a file in its ``TMPDIR``.
* ``fork PIDFILE``: on its first ``go`` it starts a child that sleeps for a minute (writing the
  child's PID to PIDFILE), then exits without answering: what it started must not outlive it.

Every mode leaves on ``quit`` or at the end of its input (``hang`` once it has hung: never).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time

import games

MODES = (
    "good", "ugi", "crash", "hang", "illegal", "late", "silent", "noready", "nobest", "fork",
    "snoop", "bound", "spy",
)  # fmt: skip
MAX_SORTED = 10_000
"""Above this many legal moves the first one generated is played instead of sorting them."""


def _count(path: str, *, digits: bool = False) -> int:
    """The entries of a directory (only the numeric ones: processes), -1 if it is unreadable."""
    try:
        names = os.listdir(path)
    except OSError:
        return -1
    return sum(1 for name in names if name.isdigit()) if digits else len(names)


def spy(token: str, port: int, dirs: list[str]) -> str:
    """What the ``spy`` mode reports (module docstring)."""
    found = 0
    for directory in ["/tmp", "/var/tmp", "/dev/shm", *dirs]:
        try:
            names = [name for name in os.listdir(directory) if token in name]
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(directory, name), "rb") as file:
                    found += bool(file.read(100))
            except OSError:
                pass
    arbiter = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                arbiter += b"enginesrv.cli" in file.read()
        except OSError:
            pass
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            net = 1
    except OSError:
        net = 0
    try:
        with tempfile.TemporaryFile(dir=os.environ.get("TMPDIR") or "/nonexistent"):
            tmp = 1
    except OSError:
        tmp = 0
    return f"spy found={found} arbiter={arbiter} net={net} tmp={tmp}"


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def first_move(state: games.State) -> str | None:
    """The first legal move of ``state`` by token, None when there is none."""
    moves = state.legal_moves()
    if len(moves) == 0:
        return None
    if len(moves) > MAX_SORTED:
        return state.move_to_str(moves[0])
    return min(state.move_to_str(move) for move in moves)


def illegal_token(state: games.State) -> str:
    """A token that parses in ``state``'s game but is not legal in ``state``."""
    game = state.game
    candidates: list[str] = []
    # tokens legal somewhere in a short game from the start: well-formed by construction
    walk = game.new_state()
    for _ in range(30):
        if walk.is_terminal():
            break
        token = first_move(walk)
        if token is None:
            break
        candidates.append(token)
        walk.push(walk.parse_move(token))
    # Yoxii-shaped tokens: every square, every placement
    squares = [f + r for f in "abcdefg" for r in "1234567"]
    candidates += squares + [f"{value}@{square}" for value in "1234" for square in squares]
    for token in candidates:
        try:
            state.parse_move(token)
        except games.IllegalMoveError:
            return token
        except games.GameError:
            continue
    return "zz99"


class Fake:
    def __init__(self, mode: str, arg: str | None) -> None:
        self.mode = mode
        self.arg = arg
        self.game = games.load("yoxii")
        self.state = self.game.new_state()
        self.gos = 0
        self.new_game_seen = False

    def handle(self, line: str) -> None:
        words = line.split()
        if not words:
            return
        command = words[0]
        if command == "quit":
            sys.exit(0)
        if command == "ugi":
            if self.mode != "silent":
                self.hello()
        elif command == "isready":
            if not (self.mode == "noready" and self.new_game_seen):
                say("readyok")
        elif command == "setoption":
            self.setoption(words)
        elif command == "uginewgame":
            self.new_game_seen = True
            self.state = self.game.new_state()
        elif command == "position":
            self.position(words)
        elif command == "go":
            self.go()

    def hello(self) -> None:
        say("id name fake")
        say("id author enginesrv tests")
        if self.mode == "ugi":
            say("ugiok")
            return
        if self.mode == "good" and self.arg:
            for name in self.arg.split(","):
                game = games.load(name)
                p1, p2 = game.colours
                say(f"game {name} colours {p1.lower()} {p2.lower()} start {game.start_position}")
        say("option name Game type string default yoxii")
        say("option name Seed type spin default 0 min 0 max 1000000")
        say("ugiok")

    def setoption(self, words: list[str]) -> None:
        if self.mode == "ugi" or "value" not in words:
            return
        at = words.index("value")
        name = " ".join(words[2:at]).lower()
        value = " ".join(words[at + 1 :])
        if name == "game":
            self.game = games.load(value)
            self.state = self.game.new_state()

    def position(self, words: list[str]) -> None:
        end = words.index("moves") if "moves" in words else len(words)
        if words[1:2] == ["startpos"]:
            state = self.game.new_state()
        else:
            state = self.game.state_from_string(" ".join(words[2:end]))
        for token in words[end + 1 :]:
            state.push(state.parse_move(token))
        self.state = state

    def go(self) -> None:
        self.gos += 1
        sys.stderr.write(f"fake: thinking about go {self.gos}\n")
        sys.stderr.flush()
        if self.mode == "crash" and self.gos >= int(self.arg or "1"):
            sys.exit(3)
        if self.mode == "hang":
            time.sleep(60)
            sys.exit(0)
        if self.mode == "nobest":
            return
        if self.mode == "snoop":
            marker = sys.argv[3] if len(sys.argv) > 3 else ""
            seen = bool(marker) and os.path.exists(os.path.join("/tmp", marker))
            sys.stderr.write(
                f"snoop dir={_count(self.arg or '.')} procs={_count('/proc', digits=True)} "
                f"marker={int(seen)}\n"
            )
            sys.stderr.flush()
        if self.mode == "spy":
            sys.stderr.write(spy(self.arg or "", int(sys.argv[3]), sys.argv[4:]) + "\n")
            sys.stderr.flush()
        if self.mode == "fork":
            child = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(60)"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            with open(self.arg or "fork.pid", "w") as f:
                f.write(str(child.pid))
            os._exit(3)  # no wait for the child: it is left running
        if self.mode == "late":
            time.sleep(int(self.arg or "500") / 1000)
        if self.mode == "illegal":
            token = illegal_token(self.state) if self.arg == "legal-but-wrong" else "zz99"
        else:
            token = first_move(self.state) or "none"
        say(f"info depth 1 nodes {len(self.state.legal_moves())} score cp 0")
        if self.mode == "bound":
            say("info depth 6 score cp -20 nodes 600")
            say("info depth 7 score cp 35 lowerbound nodes 1000")
        say(f"bestmove {token}")


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "good"
    if mode not in MODES:
        sys.stderr.write(f"fake_engine: unknown mode {mode!r}; modes: {', '.join(MODES)}\n")
        return 2
    fake = Fake(mode, argv[2] if len(argv) > 2 else None)
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        fake.handle(line)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
