"""Wrong tokens from many addresses against a real ``enginesrv serve --tokens`` on loopback,
while a signed-in client asks ``isready`` (docs/security.md, "A server with tokens and TLS").

Usage: python benchmarks/auth_flood.py [--connections 1000] [--addresses 10] [--tls]
           [--at-once 16] [--workers 1]

The server runs as ``python -m enginesrv.cli serve --port 0 --game yoxii --tokens FILE`` (with
``--tls-cert`` and ``--tls-key`` of a certificate made for the run under ``--tls``: ``trustme``,
a test dependency), its token file holding one account, ``probe``. The probe connects from
127.0.0.2, presents its token and then sends ``isready`` every 20 ms until the flood has
ended, timing each ``readyok``. The flood: ``--connections`` connections in all, from
``--addresses`` loopback addresses (127.0.3.1 on, each a peer of its own), each address
keeping ``--at-once`` of them open at a time; each sends ``auth`` with a wrong token of the
right form for a name of the file, and reads until the server closes it.

It prints the probe's p50, p99 and max, and how the flood's connections ended: refused as
wrong (``the token is not accepted``: a check was made), refused for their address's tries
(``too many wrong tokens``: no check), refused while 32 checks wait (``busy``), closed with
nothing said (over a connection cap), or other; the server's CPU time over the run; and how
long the flood took. Target: the probe's p99 <= 50 ms, and every connection of the flood
refused (none ends any other way). Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from enginesrv.tokens import TokenFile  # noqa: E402

PROBE_EVERY = 0.02
TARGET_P99_MS = 50.0


def start_server(folder: Path, tls: bool, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    """The server, and its port once it listens."""
    command = [
        sys.executable,
        "-m",
        "enginesrv.cli",
        "serve",
        "--port",
        "0",
        "--game",
        "yoxii",
        "--workers",
        str(workers),
        "--tokens",
        str(folder / "tokens"),
    ]
    if tls:
        command += ["--tls-cert", str(folder / "cert.pem"), "--tls-key", str(folder / "key.pem")]
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=log,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert server.stdout is not None
    line = server.stdout.readline().decode()
    if not line.startswith("listening "):
        server.kill()
        raise SystemExit(f"the server did not start: {line!r}; see {folder / 'server.log'}")
    return server, int(line.rsplit(":", 1)[1])


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def make_certificate(folder: Path) -> ssl.SSLContext:
    """A certificate for 127.0.0.1 in ``folder``; the context of a client that trusts it."""
    import trustme  # noqa: PLC0415 (a test dependency, needed only with --tls)

    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1")
    issued.private_key_pem.write_to_path(str(folder / "key.pem"))
    issued.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    client = ssl.create_default_context()
    authority.configure_trust(client)
    return client


async def connect(port: int, local: str, tls: ssl.SSLContext | None) -> trio.abc.Stream:
    sock = trio.socket.socket()
    await sock.bind((local, 0))
    await sock.connect(("127.0.0.1", port))
    stream: trio.abc.Stream = trio.SocketStream(sock)
    if tls is not None:
        stream = trio.SSLStream(stream, tls, server_hostname="127.0.0.1")
    return stream


async def read_all(stream: trio.abc.Stream, limit: float = 10.0) -> bytes:
    got = b""
    with trio.move_on_after(limit):
        try:
            while chunk := await stream.receive_some(65536):
                got += chunk
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    return got


def outcome(reply: bytes) -> str:
    if b"the token is not accepted" in reply:
        return "wrong"
    if b"too many wrong tokens" in reply:
        return "tries"
    if b"busy checking other tokens" in reply:
        return "busy"
    if not reply:
        return "closed"
    return "other: " + reply[:80].decode("utf-8", "replace")


async def flood_one(port: int, local: str, tls: ssl.SSLContext | None, ends: Counter[str]) -> None:
    try:
        stream = await connect(port, local, tls)
    except (OSError, trio.BrokenResourceError) as exc:
        ends[f"connect failed: {type(exc).__name__}"] += 1
        return
    try:
        await stream.send_all(b"auth probe:" + b"W" * 43 + b"\n")
        ends[outcome(await read_all(stream))] += 1
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        ends["closed"] += 1
    finally:
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)


async def flood(
    port: int, args: argparse.Namespace, tls: ssl.SSLContext | None, ends: Counter[str]
) -> None:
    per_address = args.connections // args.addresses
    async with trio.open_nursery() as nursery:
        for number in range(args.addresses):
            local = f"127.0.3.{number + 1}"
            limiter = trio.CapacityLimiter(args.at_once)

            async def one(local: str = local, limiter: trio.CapacityLimiter = limiter) -> None:
                async with limiter:
                    await flood_one(port, local, tls, ends)

            for _ in range(per_address):
                nursery.start_soon(one)


async def probe(
    port: int, token: str, tls: ssl.SSLContext | None, done: trio.Event, waits: list[float]
) -> None:
    stream = await connect(port, "127.0.0.2", tls)
    buffer = b""
    await stream.send_all(f"auth {token}\nisready\n".encode())

    async def line() -> bytes:
        nonlocal buffer
        with trio.fail_after(10):
            while b"\n" not in buffer:
                buffer += await stream.receive_some(65536)
        got, _, buffer = buffer.partition(b"\n")
        return got

    assert await line() == b"readyok", "the probe's token was refused"
    while not done.is_set():
        sent = time.perf_counter()
        await stream.send_all(b"isready\n")
        assert await line() == b"readyok"
        waits.append((time.perf_counter() - sent) * 1000)
        await trio.sleep(PROBE_EVERY)
    await stream.aclose()


async def run(
    port: int, token: str, args: argparse.Namespace, tls: ssl.SSLContext | None
) -> tuple[list[float], Counter[str], float]:
    waits: list[float] = []
    ends: Counter[str] = Counter()
    done = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(probe, port, token, tls, done, waits)
        await trio.sleep(0.5)
        started = time.perf_counter()
        await flood(port, args, tls, ends)
        took = time.perf_counter() - started
        await trio.sleep(0.5)
        done.set()
    return waits, ends, took


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--addresses", type=int, default=10)
    parser.add_argument(
        "--at-once", type=int, default=16, help="connections open at once per address"
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--tls", action="store_true", help="the server speaks TLS (a certificate of the run's own)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        token = "probe:" + TokenFile(folder / "tokens").add("probe")
        tls = make_certificate(folder) if args.tls else None
        server, port = start_server(folder, args.tls, args.workers)
        try:
            before = cpu_seconds(server.pid)
            waits, ends, took = trio.run(run, port, token, args, tls)
            used = cpu_seconds(server.pid) - before
        finally:
            server.terminate()
            server.wait(10)
    waits.sort()
    p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
    print(
        f"auth-flood{' tls' if args.tls else ''}: {args.connections} connections from "
        f"{args.addresses} addresses in {took:.1f} s; probe isready p50 "
        f"{statistics.median(waits):.1f} ms, p99 {p99:.1f} ms, max {waits[-1]:.1f} ms "
        f"({len(waits)} asked); the server's CPU {used:.2f} s"
    )
    print("  ends: " + ", ".join(f"{name} {count}" for name, count in sorted(ends.items())))
    refused = ends["wrong"] + ends["tries"] + ends["busy"] + ends["closed"]
    ok = p99 <= TARGET_P99_MS and refused == args.connections
    print(f"  {'PASS' if ok else 'FAIL'}: p99 <= {TARGET_P99_MS:g} ms and every connection refused")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
