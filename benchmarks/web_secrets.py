"""Refereed Yin Yang games played by a hostile page: nothing hidden reaches it, and no search
worker's memory passes the server's budget.

Usage: python benchmarks/web_secrets.py [--games 200] [--seed 1] [--workers 2] [--max-hash 64]
           [--json]

The benchmark runs the server in its own process, as ``enginesrv serve --web`` does: its search
workers are real processes (forked by the pool's spawner), ``--max-hash`` MB shared among them;
the page talks to ``/ws`` on loopback with trio-websocket. Being in the server's process, it can
read each game's full position (the referee's), which the page must never learn.

Addresses are tried until ``--games`` games have been played. Each address is drawn at random:
the bot (random, greedy or alphabeta at a small movetime), the person's seat, and up to three
bot options, from those a page may set (``Depth``, ``Samples``, ``Quiescence``, ``Aspiration``)
and those it may not (``SecretSeed``, ``Seed``, ``Hash`` up to 4096, ``Threads``). A refused
address must be closed with 4400 and a reason that names a refused option; an accepted one is
played to its end. The person plays random legal decisions (its setup: four random laws), asks
for the bot's with ``go``, and at random sends ``undo 1`` to ``undo 4``, ``show``, ``query
position`` and ``query played``.

Checked on every WebSocket frame the page receives: no law text the bot holds unrevealed at that
moment appears in it, unless the page knows that text otherwise (one of its own laws, or a law
revealed before); every Yin Yang view in it shows the bot's laws as ``?`` or as revealed
(``+``). ``query moves`` answers are left out of the text check: on the person's own decision
they list every law it may write. After each game, the law texts the bot held and never revealed
must appear in no frame of that game at all, and no ``undo`` may take back a decision that
revealed a law (``State.reveals``: every law applied, also one rewritten at once). An ``undo``
refused for a revealed decision is counted.

Memory: after every game, each worker's resident set (``/proc/PID/status`` VmRSS) is read; the
figure is the largest growth of any worker over its size after start-up. Target: under the
worker's share of the budget (``--max-hash`` / (workers + 1 spare)), plus 16 MB for the
interpreter's own heap (a search of a Yin Yang view allocates its samples).

Targets: 0 hidden law texts reaching the page, every refused address closed with 4400 naming the
option, and the memory target. The exit status is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import structlog
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import games
from enginesrv import reaper
from enginesrv.search.pool import WorkerPool
from enginesrv.serve.app import peer_searches
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import Server
from enginesrv.serve.settings import SessionConfig
from enginesrv.web.app import WebApp
from enginesrv.web.referee import Referee
from enginesrv.web.run import serve_web
from games.yinyang import LAW_TEXTS

YINYANG = games.load("yinyang")
ALLOWED = [
    lambda r: f"Depth={r.randint(1, 3)}",
    lambda r: f"Samples={r.randint(1, 8)}",
    lambda r: f"Quiescence={r.choice(['true', 'false'])}",
    lambda r: f"Aspiration={r.randint(0, 200)}",
]
REFUSED = [
    lambda r: f"SecretSeed={r.randint(1, 2**31 - 1)}",
    lambda r: f"Seed={r.randint(1, 1000)}",
    lambda r: f"Hash={r.choice([64, 512, 4096])}",
    lambda r: "Threads=8",
]
BOTS = ("random", "greedy", "alphabeta")
OWN, BOT = 3, 4
"""The law fields of Black (p1) and White (p2) in a Yin Yang position string."""


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def workers() -> list[int]:
    """The search workers: this process's descendants but the spawner (its child, their
    parent)."""
    table = reaper.processes()
    below = reaper.descendants(os.getpid(), table)
    return [pid for pid in below if table[pid][0] != os.getpid()]


def entries(field: str) -> list[str]:
    return [] if field == "none" else field.split(",")


def setup(rng: random.Random) -> str:
    """Four random laws under which Black has a first move (or any four, after 50 tries)."""
    start = YINYANG.new_state()
    for _ in range(50):
        laws = [rng.choice(LAW_TEXTS) for _ in range(4)]
        token = "laws:" + ",".join(laws)
        state = start.copy()
        state.push(state.parse_move(token))
        answers = state.legal_moves()
        state.push(answers[rng.randrange(len(answers))])
        if len(state.legal_moves()):
            return token
    return token


class Game:
    """One page's game and what it saw."""

    def __init__(self, referee: Referee, person: int) -> None:
        self.referee = referee
        self.person = person
        self.bot = 1 - person
        self.held: set[str] = set()
        """Every law the bot held at some time (rewrites add new ones)."""
        self.revealed: set[str] = set()
        self.own: set[str] = set()
        self.frames: list[tuple[str, bool]] = []
        self.leaks: list[str] = []
        self.last = referee.state.copy()

    def note_state(self) -> None:
        fields = self.referee.state.to_string().split()
        own_field, bot_field = fields[OWN + self.person], fields[OWN + self.bot]
        for entry in entries(bot_field):
            self.held.add(entry[1:])
            if entry[0] == "+":
                self.revealed.add(entry[1:])
        self.own.update(entry[1:] for entry in entries(own_field))

    def check(self, frame: str, moves_answer: bool) -> None:
        self.note_state()
        state = self.referee.state
        if state.ply() < self.last.ply():
            before = self.last.copy()
            while before.ply() > state.ply():
                move = before.pop()
                if before.reveals(move):
                    shown = before.move_to_str(move)
                    self.leaks.append(f"taken back, hidden again: {shown} at ply {before.ply()}")
        self.last = state.copy()
        self.frames.append((frame, moves_answer))
        if not moves_answer:
            for law in self.held - self.revealed - self.own:
                if law in frame:
                    self.leaks.append(f"{law} in {frame[:120]!r}")
        for line in frame.splitlines():
            view = line.removeprefix("response ").removeprefix("show position: ")
            fields = view.split()
            if view != line and len(fields) == 8 and fields[0].count("/") == 3:
                for entry in entries(fields[OWN + self.bot]):
                    if entry != "?" and entry[0] != "+":
                        self.leaks.append(f"a hidden law in a view: {line[:160]!r}")

    def final_check(self) -> None:
        never = self.held - self.revealed - self.own
        for frame, moves_answer in self.frames:
            if moves_answer:
                continue
            self.leaks.extend(f"never revealed: {law}" for law in never if law in frame)


class Page:
    def __init__(self, ws: Any, game: Game) -> None:
        self.ws = ws
        self.game = game
        self.pending: list[str] = []

    async def line(self, moves_answer: bool = False) -> str:
        while not self.pending:
            with trio.fail_after(30):
                frame = await self.ws.get_message()
            assert isinstance(frame, str)
            self.game.check(frame, moves_answer)
            self.pending.extend(frame.splitlines())
        return self.pending.pop(0)

    async def ask(self, command: str) -> str:
        await self.ws.send_message(command)
        line = await self.line(moves_answer=command == "query moves")
        if not line.startswith("response"):
            raise AssertionError(f"{command}: {line}")
        return line[9:]


@dataclass(frozen=True)
class Address:
    """A ``/ws`` address drawn at random (module docstring)."""

    opponent: str
    refused: list[str]
    """The options a page may not set, by name: the address must be refused."""
    side: str
    query: str


def draw_address(rng: random.Random) -> Address:
    bot = rng.choice(BOTS)
    options = [rng.choice(ALLOWED + REFUSED)(rng) for _ in range(rng.randint(0, 3))]
    if bot != "alphabeta":  # random and greedy have no strength options: only the refused
        options = [o for o in options if o.split("=")[0] in ("SecretSeed", "Seed", "Hash")]
    refused = [o.split("=")[0] for o in options if o.split("=")[0] not in {
        "Depth", "Samples", "Quiescence", "Aspiration"}]  # fmt: skip
    opponent = f"bot:{bot}" + (":" + ",".join(options) if options else "")
    side = rng.choice(["p1", "p2"])
    query = urlencode({"game": "yinyang", "opponent": opponent, "side": side,
                       "movetime": str(rng.choice([20, 50, 100]))})  # fmt: skip
    return Address(opponent, refused, side, query)


async def check_refusal(ws: Any, address: Address, stats: dict[str, Any]) -> None:
    """The socket must be closed with 4400 and a reason that names a refused option."""
    try:
        with trio.fail_after(10):
            await ws.get_message()
    except ConnectionClosed as exc:
        close = exc.reason
        code = close.code if close is not None else 0
        reason = (close.reason or "") if close is not None else ""
        named = any(f"option {name!r}" in reason for name in address.refused)
        if code != 4400 or not named:
            stats["bad_refusals"].append(f"{address.opponent}: {code} {reason}")
        stats["refused"] += 1
        return
    stats["bad_refusals"].append(f"{address.opponent}: not refused")


async def send_aside(page: Page, rng: random.Random, stats: dict[str, Any]) -> bool:
    """At random, an ``undo``, a ``show`` or a query between the moves; whether one was sent."""
    roll = rng.random()
    if roll < 0.08:
        await page.ws.send_message(f"undo {rng.randint(1, 4)}")
        line = await page.line()
        if "revealed what was hidden" in line:
            stats["undo_refused_revealed"] += 1
        elif line.startswith("response"):
            stats["undos"] += 1
        return True
    if roll < 0.12:
        await page.ws.send_message("show")
        while await page.line() != "showok":
            pass
        return True
    if roll < 0.16:
        await page.ask(rng.choice(["query position", "query played", "query clock"]))
        return True
    return False


async def play_turn(page: Page, rng: random.Random, side: str) -> bool:
    """The next decision, the person's or the bot's; False when the game is over."""
    if await page.ask("query gameover") == "true":
        return False
    if await page.ask("query turn") == side:
        moves = await page.ask("query moves")
        if moves.startswith("count ") and " moves " not in moves:
            token = setup(rng)
        else:
            listed = moves.split(" moves ", 1)[-1] if moves.startswith("count ") else moves
            token = rng.choice(listed.split())
        await page.ask(f"play {token}")
    else:
        await page.ws.send_message("go")
        while not (await page.line()).startswith("bestmove "):
            pass
    return True


async def play(web_url: str, app: WebApp, rng: random.Random, stats: dict[str, Any]) -> None:
    address = draw_address(rng)
    url = web_url.replace("http://", "ws://") + "ws?" + address.query
    before = set(app.referees)
    async with open_websocket_url(url) as ws:
        if address.refused:
            await check_refusal(ws, address, stats)
            return
        await ws.send_message("isready")
        assert await ws.get_message() == "readyok\n"
        (referee,) = set(app.referees) - before
        person = 0 if address.side == "p1" else 1
        game = Game(referee, person)
        page = Page(ws, game)
        for _ in range(600):
            if await send_aside(page, rng, stats):
                continue
            if not await play_turn(page, rng, address.side):
                break
        await page.ask("query outcome")
        game.final_check()
        stats["games"] += 1
        stats["plies"] += referee.state.ply()
        stats["revealed"] += len(game.revealed)
        stats["leaks"].extend(game.leaks)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    base = Limits(hash_mb=args.max_hash)
    limits = Limits(hash_mb=args.max_hash, peer_searches=peer_searches(base, args.workers))
    config = SessionConfig(
        default_game=None,
        default_bot="alphabeta",
        limits=limits.announced(),
        hash_limit=max(1, args.max_hash // args.workers),
        hash_budget=args.max_hash,
    )
    stats: dict[str, Any] = {
        "games": 0, "refused": 0, "plies": 0, "revealed": 0, "undos": 0,
        "undo_refused_revealed": 0, "leaks": [], "bad_refusals": [],
    }  # fmt: skip
    started = time.monotonic()
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(
            nursery,
            args.workers,
            per_peer=limits.peer_searches,
            hash_budget=args.max_hash,
            spare=1,
        )
        await pool.start()
        server = Server(config, pool, limits)
        app = WebApp(server, pool, peer_cap=64)
        url = await nursery.start(
            lambda task_status: serve_web(
                server, pool, host="127.0.0.1", port=0, app=app, task_status=task_status
            )
        )
        idle = {pid: rss_kb(pid) for pid in workers()}
        growth = 0
        number = 0
        while stats["games"] < args.games:
            number += 1
            await play(url, app, rng, stats)
            for pid in workers():
                base_kb = idle.setdefault(pid, rss_kb(pid))
                growth = max(growth, rss_kb(pid) - base_kb)
            if number % 20 == 0 and not args.json:
                print(
                    f"  {number} addresses: {stats['games']} games, {stats['refused']} refused, "
                    f"largest worker growth {growth / 1024:.1f} MB",
                    flush=True,
                )
        server.stop.set()
        await pool.aclose()
        nursery.cancel_scope.cancel()
    share = args.max_hash / (args.workers + 1)
    stats["worker_growth_mb"] = round(growth / 1024, 1)
    stats["memory_target_mb"] = round(share + 16, 1)
    stats["seconds"] = round(time.monotonic() - started, 1)
    return stats


def cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games played (200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-hash", type=int, default=64, help="the server's budget, MB (64)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    stats = trio.run(main, args)
    ok = (
        not stats["leaks"]
        and not stats["bad_refusals"]
        and stats["worker_growth_mb"] <= stats["memory_target_mb"]
    )
    if args.json:
        print(json.dumps(stats, indent=1))
    else:
        print(
            f"{stats['games']} games played ({stats['plies']} plies, {stats['revealed']} laws "
            f"revealed, {stats['undos']} undos, {stats['undo_refused_revealed']} refused for a "
            f"revealed decision), {stats['refused']} addresses refused, in {stats['seconds']} s"
        )
        print(f"hidden law texts reaching the page: {len(stats['leaks'])} (target 0)")
        for leak in stats["leaks"][:10]:
            print(f"  {leak}")
        print(f"refusals not 4400 naming the option: {len(stats['bad_refusals'])} (target 0)")
        for bad in stats["bad_refusals"][:10]:
            print(f"  {bad}")
        print(
            f"largest growth of a worker: {stats['worker_growth_mb']} MB "
            f"(target at most {stats['memory_target_mb']} MB)"
        )
        print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(cli())
