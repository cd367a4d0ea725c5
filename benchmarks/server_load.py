"""Server targets, measured against a real ``enginesrv serve`` process on loopback.

Usage: python benchmarks/server_load.py [--bot alphabeta] [--game yinsh] [--fuzz 10000]

1. stop -> bestmove latency over 200 ``go infinite`` / ``stop`` cycles (p50, p99, max);
2. isready -> readyok latency while 2 searches run on other connections;
3. 200 concurrent connections, half text and half msgpack, each: newgame, position, query
   moves, go depth 2 (counts errors and the wall time);
4. N random or corrupted frames per framing, each on its own connection followed by the end of
   input: the server must answer with an error or close within 100 ms, and a fresh client must
   still be served afterwards.

Every loop is bounded in count and time and talks only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time

import msgpack
import trio

TIMEOUT = 30.0


class Text:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def send(self, *lines: str) -> None:
        await self.stream.send_all("".join(f"{line}\n" for line in lines).encode())

    async def line(self) -> str:
        with trio.fail_after(TIMEOUT):
            while b"\n" not in self.buffer:
                data = await self.stream.receive_some(65536)
                if not data:
                    raise EOFError("closed")
                self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    async def until(self, prefix: str) -> list[str]:
        lines: list[str] = []
        while not (lines and lines[-1].startswith(prefix)):
            lines.append(await self.line())
        return lines


class Packed:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.unpacker = msgpack.Unpacker(raw=False)
        self.frames: list[list[object]] = []

    async def call(self, msgid: int, method: str, params: dict[str, object]) -> list[object]:
        await self.stream.send_all(msgpack.packb([0, msgid, method, [params]]))
        with trio.fail_after(TIMEOUT):
            while True:
                for i, frame in enumerate(self.frames):
                    if frame[0] == 1 and frame[1] == msgid:
                        return self.frames.pop(i)
                data = await self.stream.receive_some(65536)
                if not data:
                    raise EOFError("closed")
                self.unpacker.feed(data)
                self.frames.extend(self.unpacker)


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"n {len(ordered)} p50 {statistics.median(ordered) * 1000:.1f} ms "
        f"p99 {p99 * 1000:.1f} ms max {ordered[-1] * 1000:.1f} ms"
    )


async def stop_latency(port: int, game: str, bot: str, cycles: int) -> None:
    client = Text(await trio.open_tcp_stream("127.0.0.1", port))
    await client.send(f"setoption name Game value {game}", f"setoption name Bot value {bot}")
    samples = []
    await client.send("go depth 1")  # warm up: the workers load the game and the bot once
    await client.until("bestmove")
    for _ in range(cycles):
        await client.send("go infinite", "isready")
        await client.until("readyok")
        await trio.sleep(0.02)  # let the search get going
        started = time.perf_counter()
        await client.send("stop")
        await client.until("bestmove")
        samples.append(time.perf_counter() - started)
    print(f"stop -> bestmove over {cycles} go infinite/stop cycles: {percentiles(samples)}")
    await client.stream.aclose()


async def ready_latency(port: int, game: str, bot: str, probes: int) -> None:
    searchers = []
    for _ in range(2):
        s = Text(await trio.open_tcp_stream("127.0.0.1", port))
        await s.send(f"setoption name Game value {game}", f"setoption name Bot value {bot}")
        await s.send("go infinite", "isready")
        await s.until("readyok")
        searchers.append(s)
    probe = Text(await trio.open_tcp_stream("127.0.0.1", port))
    samples = []
    for _ in range(probes):
        started = time.perf_counter()
        await probe.send("isready")
        await probe.until("readyok")
        samples.append(time.perf_counter() - started)
        await trio.sleep(0.005)
    print(f"isready -> readyok while 2 searches run: {percentiles(samples)}")
    for s in searchers:
        await s.send("stop")
        await s.until("bestmove")
        await s.stream.aclose()
    await probe.stream.aclose()


async def many_clients(port: int, game: str, bot: str, count: int) -> None:
    errors: list[str] = []
    done = 0

    # The server holds at most 32 connections per peer address: the sessions come from
    # several loopback addresses, as many clients of one server would.
    def local(i: int) -> str:
        return f"127.0.0.{10 + i // 32}"

    async def text_client(i: int) -> None:
        c = Text(await trio.open_tcp_stream("127.0.0.1", port, local_address=local(i)))
        await c.send(f"setoption name Bot value {bot}", f"uginewgame {game}", "position startpos",
                     "query moves", "go depth 2")  # fmt: skip
        lines = await c.until("bestmove")
        errors.extend(line for line in lines if line.startswith(("error", "invalidmove")))
        await c.stream.aclose()

    async def packed_client(i: int) -> None:
        c = Packed(await trio.open_tcp_stream("127.0.0.1", port, local_address=local(i)))
        answers = [
            await c.call(1, "setoption", {"name": "Bot", "value": bot}),
            await c.call(2, "uginewgame", {"game": game}),
            await c.call(3, "position", {}),
            await c.call(4, "query", {"what": "moves"}),
            await c.call(5, "go", {"depth": 2}),
        ]
        errors.extend(str(a[2]) for a in answers if a[2] is not None)
        await c.stream.aclose()

    async def one(i: int) -> None:
        nonlocal done
        await (text_client(i) if i % 2 else packed_client(i))
        done += 1

    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for i in range(count):
            nursery.start_soon(one, i)
    elapsed = time.perf_counter() - started
    print(f"{count} concurrent scripted sessions (half text, half msgpack): completed {done}, "
          f"errors {len(errors)}, {elapsed:.1f} s")  # fmt: skip
    for error in errors[:5]:
        print(f"  error: {error}")


def corrupt(rng: random.Random, framing: str) -> bytes:
    if framing == "text":
        choice = rng.random()
        if choice < 0.3:
            return bytes(rng.randrange(32, 127) for _ in range(rng.randrange(1, 80)))
        if choice < 0.6:
            words = ["go", "position", "fen", "moves", "setoption", "name", "value", "query",
                     "ping", "undo", "play", "-1", "9" * 20, "\t", "\xff"]  # fmt: skip
            return " ".join(rng.choice(words) for _ in range(rng.randrange(1, 8))).encode() + b"\n"
        return b"a" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))
    frame = msgpack.packb([0, rng.randrange(-5, 2**33), rng.choice(["go", "play", "x", 5]),
                           [{"depth": rng.choice([1, "x", -3, None])}]])  # fmt: skip
    choice = rng.random()
    if choice < 0.3:
        return frame[: rng.randrange(1, len(frame))]  # truncated
    if choice < 0.6:
        i = rng.randrange(1, len(frame))
        return frame[:i] + bytes([rng.randrange(256)]) + frame[i + 1 :]
    return b"\x94" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))


async def fuzz(port: int, count: int, seed: int) -> None:
    rng = random.Random(seed)
    slow = 0
    worst = 0.0
    for framing in ("text", "msgpack"):
        for _ in range(count):
            data = corrupt(rng, framing)
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(data)
            await stream.send_eof()
            started = time.perf_counter()
            answered = False
            with trio.move_on_after(1.0):
                while True:
                    chunk = await stream.receive_some(65536)
                    if not chunk:
                        break  # closed
                    answered = True
            elapsed = time.perf_counter() - started
            worst = max(worst, elapsed)
            if elapsed > 0.1:
                slow += 1
            del answered
            await stream.aclose()
    fresh = Text(await trio.open_tcp_stream("127.0.0.1", port))
    await fresh.send("isready")
    served = await fresh.line() == "readyok"
    await fresh.stream.aclose()
    print(f"{count} corrupted frames per framing: answered or closed within 100 ms: "
          f"{2 * count - slow}/{2 * count} (slowest {worst * 1000:.1f} ms); "
          f"a fresh client is served: {served}")  # fmt: skip


async def main_async(args: argparse.Namespace, port: int) -> None:
    await stop_latency(port, args.game, args.bot, args.cycles)
    await ready_latency(port, args.game, args.bot, args.probes)
    await many_clients(port, args.game, args.bot, args.clients)
    await fuzz(port, args.fuzz, args.seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="yinsh")
    parser.add_argument("--bot", default="alphabeta")
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--fuzz", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--port", "0", "--max-connections",
         "1000"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        trio.run(main_async, args, port)
        alive = server.poll() is None
        print(f"server still running after everything: {alive}")
    finally:
        server.terminate()
        print(f"server exit status after SIGTERM: {server.wait(timeout=30)}")


if __name__ == "__main__":
    main()
