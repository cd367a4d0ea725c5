"""benchmarks/jocly/driver.js, Jocly's Yohoho AI as an engine, against the project's rules: at
every ply of short games the driver's position (as Jocly's board holds it) and legal tokens are
exactly the rules', and every token it answers is legal. Skipped without node or the driver's
npm packages (``npm ci`` in benchmarks/jocly)."""

from __future__ import annotations

import queue
import random
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import games

ROOT = Path(__file__).resolve().parent.parent.parent
DRIVER = ROOT / "benchmarks" / "jocly" / "driver.js"
NODE = shutil.which("node")
INSTALLED = (DRIVER.parent / "node_modules" / "jocly" / "package.json").exists()
pytestmark = pytest.mark.skipif(
    NODE is None or not INSTALLED,
    reason="needs node and the driver's npm packages (npm ci in benchmarks/jocly)",
)

YOHOHO = games.load("yohoho")
START = YOHOHO.start_position
WAIT = 5.0  # seconds for one answer: a cabin-boy turn takes some 50 ms


class Driver:
    """The driver as a child process, its standard output read by a thread."""

    def __init__(self) -> None:
        assert NODE is not None
        self.proc = subprocess.Popen(
            [NODE, str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, *lines: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(line + "\n" for line in lines))
        self.proc.stdin.flush()

    def until(self, prefix: str) -> list[str]:
        """The lines up to and with the first that starts with ``prefix``."""
        seen: list[str] = []
        while True:
            line = self.lines.get(timeout=WAIT)
            assert line is not None, f"the driver ended before {prefix!r}: {seen}"
            seen.append(line)
            if line.startswith(prefix):
                return seen

    def ask(self, line: str) -> str:
        self.send(line)
        return self.until("response ")[-1].removeprefix("response ")

    def close(self) -> int:
        """Quit; the exit status. The process and its pipes end whatever happens."""
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        try:
            if self.proc.poll() is None:
                self.send("quit")
            return self.proc.wait(timeout=WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self.reader.join(timeout=WAIT)
            self.proc.stdin.close()
            self.proc.stdout.close()


@pytest.fixture
def driver() -> Iterator[Driver]:
    engine = Driver()
    try:
        engine.send("ugi")
        hello = engine.until("ugiok")
        assert f"game yohoho colours White Black start {START}" in hello
        engine.send("setoption name Level value cabin-boy", "setoption name Seed value 7")
        engine.send("uginewgame", "isready")
        assert engine.until("readyok") == ["readyok"]
        yield engine
    finally:
        assert engine.close() == 0


def tokens(state: games.State) -> list[str]:
    return sorted(state.move_to_str(m) for m in state.legal_moves())


def best(driver: Driver, go: str = "go") -> str:
    driver.send(go)
    lines = driver.until("bestmove ")
    assert not [line for line in lines if line.startswith("info string error")], lines
    return lines[-1].removeprefix("bestmove ")


def play_one(driver: Driver, seat: int, rng: random.Random) -> list[str]:
    """A game of the driver in ``seat`` against random legal tokens, checked at every ply: the
    driver's position and legal tokens are the rules', and its answers are legal."""
    driver.send("uginewgame")
    state = YOHOHO.new_state()
    played: list[str] = []
    while not state.is_terminal() and len(played) < 60:
        driver.send(f"position fen {START} moves {' '.join(played)}".rstrip())
        assert driver.ask("query position") == state.to_string()
        assert driver.ask("query moves").split() == tokens(state)
        token = best(driver) if state.to_move() == seat else rng.choice(tokens(state))
        state.push(state.parse_move(token))  # raises for a token the rules refuse
        played.append(token)
    driver.send(f"position fen {START} moves {' '.join(played)}")
    assert driver.ask("query position") == state.to_string()
    assert driver.ask("query gameover") == ("true" if state.is_terminal() else "false")
    return played


def test_games_against_random_moves_agree_ply_by_ply(driver: Driver) -> None:
    rng = random.Random(11)
    plies: list[str] = []
    for game in range(12):
        plies += play_one(driver, game % 2, rng)
        if len(plies) >= 200:
            break
    assert len(plies) >= 200
    assert any(token.startswith("x:") for token in plies)


@pytest.mark.parametrize(
    ("position", "answers"),
    [
        ("1c1g5/3g1A2/4a4/8/5GR2/2C1c3/r8/8/2CG2CC1 w 1 0", {"l8-k9", "l8-m9"}),
        ("3g1gc2/8/5r3/A4c2/4c4/3G4/3a1R3/1C1G4/2C4C1 b 1 0", {"g3-e3", "g3-f4", "x:h2", "x:h4"}),
        ("4a3r/8/9/3gg3/1c2A4/G7/9/8/R8 w 1 0", {"i5-g5", "i5-h4", "i5-j4", "x:h6", "x:j6"}),
        ("1ccgrgcc1/8/9/3a4/9/4A3/9/8/1CCGRGCC1 b 2:h6 0", None),
        ("4a4/8/9/8/9/8/9/7r/AC5cR w 1 0", {"a1-b2", "c1-a3", "c1-d2", "c1-e3", "c1-f4"}),
        # Arno's rule; Jocly's own candidates here include two illegal turns, another piece
        # first and the Admiral second (i7-e7 h6-g7, i9-f6 h6-g7)
        ("4rgc2/1c4c1/4g4/3aC3/2cCA4/8/9/8/2CGRG1C1 b 1 0", None),
    ],
)
def test_positions_of_the_rules(driver: Driver, position: str, answers: set[str] | None) -> None:
    state = YOHOHO.state_from_string(position)
    driver.send(f"position fen {position}")
    assert driver.ask("query position") == position
    assert driver.ask("query moves").split() == tokens(state)
    token = best(driver, "go p1time 5000 p2time 5000 p1inc 100 p2inc 100")
    assert token in (answers if answers is not None else set(tokens(state)))
    state.push(state.parse_move(token))
    driver.send(f"position fen {position} moves {token}")
    assert driver.ask("query position") == state.to_string()


def test_bad_input_is_one_error_line_and_changes_nothing(driver: Driver) -> None:
    driver.send("position startpos moves i3-j4")
    before = driver.ask("query position")
    for line in [
        "frobnicate",
        "position startpos moves i3-j4 i7-i6",
        "position fen 1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1",
        "position sideways",
        "setoption name Level value pirate",
        "setoption name Seed value -1",
        "ping x",
        "query nothing",
    ]:
        driver.send(line)
        assert driver.until("info string")[-1].startswith("info string error: "), line
        assert driver.ask("query position") == before, line
    driver.send("go depth 0")
    assert driver.until("bestmove")[-2:] == [
        "info string error: go: depth must be at least 1",
        "bestmove none",
    ]
    driver.send("position fen 3A4r/8/9/8/6a2/8/9/8/R7C b 1 0")
    assert driver.ask("query outcome") == "winner=p1 reason=goal-row"
    driver.send("go")
    assert driver.until("bestmove")[-2:] == [
        "info string error: the game is over (goal-row)",
        "bestmove none",
    ]
    driver.send("ping 5")
    assert driver.until("pong") == ["pong 5"]
