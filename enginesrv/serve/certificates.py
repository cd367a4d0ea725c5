"""A TLS server's certificate (``serve`` and ``ladder run``, ``--tls-cert`` and ``--tls-key``):
read at start, and again on SIGHUP, so that a renewed certificate is served without a restart.

On SIGHUP the two files are read again on a thread of their own, within ``RELOAD_LIMIT``:
new connections get the new certificate, open ones keep theirs, and files that cannot be
loaded leave the certificate in use as it was (the log says why, ``tls_reload_failed``). Each
file is read once, at most ``MAX_PEM`` bytes, and what was read is loaded from memory; on a
reload each must be a regular file, so that a pipe cannot hold it. A key with a passphrase is
asked for at start only (OpenSSL asks on the terminal): a reload cannot ask, and refuses such
a key. A reload still reading files that do not answer (a hung network mount) is given up
after ``RELOAD_LIMIT``, and no other begins until its thread has ended.

A TLS server ignores SIGHUP from early in its start to its end (``ignore_hangups``), so that
one sent while nothing watches for it does not end it (one sent before the program has
started to run, a fraction of a second, still does).
"""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
from collections.abc import Callable, Iterator

import structlog
import trio

from enginesrv.safefiles import FileRefusedError, open_regular, read_capped

MAX_PEM = 1 << 20
"""The largest certificate chain or key file read (a chain is a few kilobytes)."""
RELOAD_LIMIT = 10.0
"""Seconds a reload may take."""

log = structlog.get_logger("enginesrv.serve.certificates")


class CertificateError(Exception):
    """The certificate or its key cannot be loaded (the message says which file and why)."""


class PassphraseNeededError(Exception):
    """A reload met a key that needs a passphrase."""


def server_context(cert: str, key: str, *, ask: bool = True) -> ssl.SSLContext:
    """A server's TLS context with the certificate chain ``cert`` and its private key ``key``
    (PEM files): TLS 1.2 or later, and HTTP/1.1 as the only protocol a web port offers.
    ``ask``: at start, a key with a passphrase is asked for on the terminal, and the files
    may be pipes (``<(...)``); on a reload (``ask`` false) neither.

    Each file is read once, at most ``MAX_PEM`` bytes, and what was read is what is loaded
    (from memory: a file swapped between the check and the load changes nothing).

    Raises:
        CertificateError: a file cannot be read, is too large (or, on a reload, not a
            regular file), or the two are not a certificate chain and its key.
    """
    chain = _read("--tls-cert", cert, regular=not ask)
    secret = _read("--tls-key", key, regular=not ask)
    if b"-----BEGIN CERTIFICATE-----" not in chain:
        raise CertificateError(f"--tls-cert {cert}: holds no PEM certificate")
    if b"PRIVATE KEY-----" not in secret:
        raise CertificateError(f"--tls-key {key}: holds no PEM private key")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])  # a web port speaks HTTP/1.1 only
    try:
        with _in_memory(chain, cert) as chain_path, _in_memory(secret, key) as key_path:
            context.load_cert_chain(chain_path, key_path, password=None if ask else _no_passphrase)
    except PassphraseNeededError:
        raise CertificateError(f"--tls-key {key}: needs a passphrase") from None
    except (OSError, ssl.SSLError) as exc:
        raise CertificateError(f"--tls-cert {cert} and --tls-key {key}: {exc}") from None
    return context


def _read(what: str, path: str, *, regular: bool) -> bytes:
    """The bytes of ``path``, at most ``MAX_PEM`` (``regular``: a regular file only)."""
    try:
        if regular:
            descriptor = open_regular(path)
        else:
            descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        return read_capped(descriptor, MAX_PEM)
    except FileRefusedError as exc:
        raise CertificateError(f"{what} {path}: {exc.reason}") from None
    except OSError as exc:
        raise CertificateError(f"{what} {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _in_memory(data: bytes, path: str) -> Iterator[str]:
    """A path that reads ``data``: a file in memory only (``memfd``), or ``path`` itself
    where there is no such file or no ``/proc`` to name it."""
    try:
        descriptor = os.memfd_create("tls", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        yield path
        return
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        named = f"/proc/self/fd/{descriptor}"
        yield named if os.path.exists(named) else path
    finally:
        os.close(descriptor)


def _no_passphrase() -> str:
    raise PassphraseNeededError


def ignore_hangups() -> None:
    """SIGHUP does nothing until a watcher takes it (``watch_reloads``), and again after."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


async def watch_reloads(
    load: Callable[[], ssl.SSLContext],
    use: Callable[[ssl.SSLContext], None],
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """On each SIGHUP, ``use`` the context ``load`` makes (module docstring); runs until
    cancelled."""
    reading = trio.CapacityLimiter(1)
    with trio.open_signal_receiver(signal.SIGHUP) as signals:
        task_status.started()
        async for _ in signals:
            await reload(load, use, reading)


async def reload(
    load: Callable[[], ssl.SSLContext],
    use: Callable[[ssl.SSLContext], None],
    reading: trio.CapacityLimiter,
) -> bool:
    """Whether the context ``load`` made on a thread of ``reading`` (one at a time) is now in
    ``use``."""
    if reading.borrowed_tokens:
        why = "the last reload is still reading the files"
    else:
        why = f"the files took more than {RELOAD_LIMIT:g} s to read"
        with trio.move_on_after(RELOAD_LIMIT):
            try:
                context = await trio.to_thread.run_sync(
                    load, abandon_on_cancel=True, limiter=reading
                )
            except CertificateError as exc:
                why = str(exc)
            else:
                use(context)
                log.info("tls_reloaded")
                return True
    log.warning("tls_reload_failed", reason=why, kept="the certificate in use")
    return False
