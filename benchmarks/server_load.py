"""Server targets, measured against a real ``enginesrv serve`` process on loopback.

Usage: python benchmarks/server_load.py [--bot alphabeta] [--game yinsh] [--fuzz 10000]

0. ugi -> ugiok on the fresh server: the first three handshakes (the first must not build the
   server's tables of games and bots while every other client waits);
1. stop -> bestmove latency over 200 ``go infinite`` / ``stop`` cycles (p50, p99, max);
2. isready -> readyok latency while 2 searches run on other connections;
3. 200 concurrent connections, half text and half msgpack, each: newgame, position, query
   moves, go depth 2 (counts errors and the wall time);
4. N random or corrupted frames per framing, each on its own connection followed by the end of
   input: the server must answer with an error or close within 100 ms, and a fresh client must
   still be served afterwards.

Every loop is bounded in count and time and talks only to 127.0.0.1.

How it talks: parts 1, 2 and the fresh client of part 4 are ``enginesrv.client`` sessions
(``AsyncEngine``; the latencies are timed around its calls). The sessions of part 3 connect
from several loopback addresses, which the client cannot connect from, so they write their
commands with the protocol's encoders and read the answers with its decoders. The corrupted
frames of part 4 go out as raw bytes, and the server's answer to them is only waited for.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import subprocess
import sys
import time

import trio

from enginesrv.client import AsyncEngine, EngineError, SearchHandle
from protocol import messages as m
from protocol import mpack, rpc, text
from protocol.errors import ProtocolError

TIMEOUT = 30.0
SERVER = "127.0.0.1"
RECEIVE = 65536
MAX_LINE = 1 << 20
"""The longest reply line read (the server's own are at most 64 KiB)."""
MAX_FRAME = 1 << 22
"""The largest msgpack frame read."""


class RawText:
    """A text session without the client (for a connection from a chosen local address):
    commands written by ``protocol.text.encode_command``, replies read by the protocol's
    client-side decoder."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = text.TextDecoder("client", max_line=MAX_LINE)

    async def send(self, *commands: m.Command) -> None:
        """All the commands in one write."""
        await self.stream.send_all(b"".join(text.encode_command(c) for c in commands))

    async def until(self, kind: type[m.ReplyLine]) -> list[m.ReplyLine | ProtocolError]:
        """The reply lines up to and with the first of ``kind``; a line the decoder refused
        is kept as its error.

        Raises:
            EOFError: the server closed the connection first.
            ProtocolError: the server broke the framing (fatal).
            trio.TooSlowError: no such line within TIMEOUT.
        """
        lines: list[m.ReplyLine | ProtocolError] = []
        with trio.fail_after(TIMEOUT):
            while True:
                try:
                    line = self.decoder.next_message()
                except ProtocolError as exc:
                    if exc.fatal:
                        raise
                    lines.append(exc)
                    continue
                if line is None:
                    data = await self.stream.receive_some(RECEIVE)
                    if not data:
                        raise EOFError("closed")
                    self.decoder.feed(data)
                    continue
                assert not isinstance(line, m.Request)  # a client's decoder reads replies only
                lines.append(line)
                if isinstance(line, kind):
                    return lines


class RawRpc:
    """A msgpack-RPC session without the client (as ``RawText``): requests written by
    ``protocol.mpack.encode_request``, responses read by the protocol's client decoder."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = mpack.MsgpackDecoder("client", max_frame=MAX_FRAME)
        self.results: dict[int, m.RpcResult] = {}

    async def call(self, msgid: int, command: m.Command) -> m.RpcResult:
        """Send ``command`` as request ``msgid`` and wait (TIMEOUT) for its response;
        notifications (progress) are skipped.

        Raises:
            EOFError: the server closed the connection first.
            ProtocolError: the server broke the framing (fatal).
            trio.TooSlowError: no response within TIMEOUT.
        """
        await self.stream.send_all(mpack.encode_request(msgid, command))
        with trio.fail_after(TIMEOUT):
            while msgid not in self.results:
                data = await self.stream.receive_some(RECEIVE)
                if not data:
                    raise EOFError("closed")
                self.decoder.feed(data)
                while True:
                    try:
                        message = self.decoder.next_message()
                    except ProtocolError as exc:
                        if exc.fatal:
                            raise
                        continue  # a notification with odd params: nothing waits for it
                    if message is None:
                        break
                    if isinstance(message, m.RpcResult):
                        self.results[message.msgid] = message
        return self.results.pop(msgid)


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"n {len(ordered)} p50 {statistics.median(ordered) * 1000:.1f} ms "
        f"p99 {p99 * 1000:.1f} ms max {ordered[-1] * 1000:.1f} ms"
    )


async def first_handshakes(port: int) -> None:
    took = []
    for _ in range(3):
        async with trio.open_nursery() as nursery:
            engine = await AsyncEngine.connect_in(nursery, SERVER, port, handshake=False)
            started = time.perf_counter()
            await engine.handshake(TIMEOUT)
            took.append(time.perf_counter() - started)
            await engine.aclose()
    shown = ", ".join(f"{t * 1000:.1f}" for t in took)
    print(f"ugi -> ugiok on the fresh server, the first three: {shown} ms")


async def stop_latency(port: int, game: str, bot: str, cycles: int) -> None:
    async with AsyncEngine.connect(SERVER, port, timeout=TIMEOUT) as engine:
        await engine.set_option("Game", game, TIMEOUT)
        await engine.set_option("Bot", bot, TIMEOUT)
        samples = []
        # warm up: the workers load the game and the bot once
        await engine.go(depth=1, timeout=TIMEOUT)
        for _ in range(cycles):
            # the start is confirmed by a round trip, as an isready after the go would
            handle = await engine.start_search(infinite=True, timeout=TIMEOUT)
            await trio.sleep(0.02)  # let the search get going
            started = time.perf_counter()
            await handle.stop()
            await handle.result(TIMEOUT)
            samples.append(time.perf_counter() - started)
    print(f"stop -> bestmove over {cycles} go infinite/stop cycles: {percentiles(samples)}")


async def ready_latency(port: int, game: str, bot: str, probes: int) -> None:
    async with contextlib.AsyncExitStack() as stack:
        searches: list[SearchHandle] = []
        for _ in range(2):
            searcher = await stack.enter_async_context(
                AsyncEngine.connect(SERVER, port, timeout=TIMEOUT)
            )
            await searcher.set_option("Game", game, TIMEOUT)
            await searcher.set_option("Bot", bot, TIMEOUT)
            searches.append(await searcher.start_search(infinite=True, timeout=TIMEOUT))
        probe = await stack.enter_async_context(AsyncEngine.connect(SERVER, port, timeout=TIMEOUT))
        samples = []
        for _ in range(probes):
            started = time.perf_counter()
            await probe.isready(TIMEOUT)
            samples.append(time.perf_counter() - started)
            await trio.sleep(0.005)
        print(f"isready -> readyok while 2 searches run: {percentiles(samples)}")
        for search in searches:
            await search.stop()
            await search.result(TIMEOUT)


async def many_clients(port: int, game: str, bot: str, count: int) -> None:
    errors: list[str] = []
    done = 0

    # The server holds at most 32 connections per peer address: the sessions come from
    # several loopback addresses, as many clients of one server would.
    def local(i: int) -> str:
        return f"127.0.0.{10 + i // 32}"

    async def text_client(i: int) -> None:
        c = RawText(await trio.open_tcp_stream(SERVER, port, local_address=local(i)))
        await c.send(m.SetOption("Bot", bot), m.NewGame(game), m.Position(), m.Query("moves"),
                     m.Go(depth=2))  # fmt: skip
        for line in await c.until(m.BestMove):
            if isinstance(line, ProtocolError):
                errors.append(f"a line the decoder refused: {line}")
            elif isinstance(line, m.ErrorReply | m.InvalidMove):
                errors.append(text.encode_reply(line).decode().rstrip("\n"))
        await c.stream.aclose()

    async def packed_client(i: int) -> None:
        c = RawRpc(await trio.open_tcp_stream(SERVER, port, local_address=local(i)))
        answers = [
            await c.call(1, m.SetOption("Bot", bot)),
            await c.call(2, m.NewGame(game)),
            await c.call(3, m.Position()),
            await c.call(4, m.Query("moves")),
            await c.call(5, m.Go(depth=2)),
        ]
        errors.extend(str(mpack.error_of(a.error)) for a in answers if a.error is not None)
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
    frame = rpc.pack([rpc.REQUEST, rng.randrange(-5, 2**33), rng.choice(["go", "play", "x", 5]),
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
            stream = await trio.open_tcp_stream(SERVER, port)
            await stream.send_all(data)
            await stream.send_eof()
            started = time.perf_counter()
            # only the time to the close counts: what the server answered is not read
            with trio.move_on_after(1.0):
                while await stream.receive_some(RECEIVE):
                    pass
            elapsed = time.perf_counter() - started
            worst = max(worst, elapsed)
            if elapsed > 0.1:
                slow += 1
            await stream.aclose()
    try:
        async with AsyncEngine.connect(SERVER, port, timeout=TIMEOUT) as fresh:
            await fresh.isready(TIMEOUT)
        served = True
    except EngineError:  # answered, but with an error instead of readyok
        served = False
    print(f"{count} corrupted frames per framing: answered or closed within 100 ms: "
          f"{2 * count - slow}/{2 * count} (slowest {worst * 1000:.1f} ms); "
          f"a fresh client is served: {served}")  # fmt: skip


async def main_async(args: argparse.Namespace, port: int) -> None:
    await first_handshakes(port)
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
        # the program's own "listening HOST:PORT" line on its stdout, not protocol output
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        trio.run(main_async, args, port)
        alive = server.poll() is None
        print(f"server still running after everything: {alive}")
    finally:
        server.terminate()
        print(f"server exit status after SIGTERM: {server.wait(timeout=30)}")


if __name__ == "__main__":
    main()
