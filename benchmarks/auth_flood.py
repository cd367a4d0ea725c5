"""Wrong tokens from many addresses against a real ``enginesrv serve --tokens`` on loopback,
while a signed-in client asks ``isready`` (docs/security.md, "A server with tokens and TLS").

Usage: python benchmarks/auth_flood.py [--connections 1000] [--addresses 10] [--tls]
           [--at-once 16] [--workers 1]

The server runs as ``python -m enginesrv.cli serve --port 0 --game yoxii --tokens FILE`` (with
``--tls-cert`` and ``--tls-key`` of a certificate made for the run under ``--tls``: ``trustme``,
a test dependency), its token file holding one account, ``probe``. The probe, a process of
its own, connects from 127.0.0.2, presents its token and then sends ``isready`` every 20 ms
from before the flood until after it, timing each ``readyok`` (those from the flood's start
on are counted). The flood: ``--connections`` connections in all, from
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
import multiprocessing
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event as EventType
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
    authority.cert_pem.write_to_path(str(folder / "ca.pem"))
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


def probe(
    port: int,
    token: str,
    cafile: str | None,
    done: EventType,
    ready: EventType,
    results: Connection,
) -> None:
    """The signed-in client, in a process of its own (so that the flood's work on the
    benchmark's loop is not what it measures): ``isready`` every ``PROBE_EVERY`` seconds
    until ``done``, each wait and its moment sent back on ``results``."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=("127.0.0.2", 0))
    stream: socket.socket = raw
    if cafile is not None:
        stream = ssl.create_default_context(cafile=cafile).wrap_socket(
            raw, server_hostname="127.0.0.1"
        )
    reader = stream.makefile("rb")
    stream.sendall(f"auth {token}\nisready\n".encode())
    assert reader.readline() == b"readyok\n", "the probe's token was refused"
    ready.set()
    waits: list[tuple[float, float]] = []
    while not done.is_set():
        sent = time.perf_counter()
        stream.sendall(b"isready\n")
        assert reader.readline() == b"readyok\n"
        waits.append(((time.perf_counter() - sent) * 1000, sent))
        time.sleep(PROBE_EVERY)
    results.send(waits)
    stream.close()


async def run(
    port: int, args: argparse.Namespace, tls: ssl.SSLContext | None
) -> tuple[Counter[str], float, float]:
    """The flood; how its connections ended, and when it began and how long it took."""
    ends: Counter[str] = Counter()
    started = time.perf_counter()
    await flood(port, args, tls, ends)
    return ends, started, time.perf_counter() - started


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
        context = multiprocessing.get_context("spawn")
        done, ready = context.Event(), context.Event()
        receive, send = context.Pipe(duplex=False)
        cafile = str(folder / "ca.pem") if args.tls else None
        prober = context.Process(target=probe, args=(port, token, cafile, done, ready, send))
        try:
            prober.start()
            assert ready.wait(30), "the probe did not sign in"
            time.sleep(0.5)
            before = cpu_seconds(server.pid)
            ends, started, took = trio.run(run, port, args, tls)
            used = cpu_seconds(server.pid) - before
            time.sleep(0.5)
            done.set()
            timed: list[tuple[float, float]] = receive.recv()
            prober.join(10)
        finally:
            prober.kill()
            server.terminate()
            server.wait(10)
    during = [(wait, at) for wait, at in timed if at >= started - 0.1]
    waits = [wait for wait, _ in during]
    worst = sorted(during, reverse=True)[:3]
    print("  slowest: " + ", ".join(f"{w:.1f} ms at {t - started:+.2f} s" for w, t in worst))
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
