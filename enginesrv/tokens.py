"""A file of tokens: accounts (a name each) and the salted hash of each one's token, never the
token itself. The ladder's players (``enginesrv ladder add``) are kept in one, and so are a
server's clients (``enginesrv token add``, ``enginesrv serve --tokens``; docs/security.md).

A token is 32 random bytes, URL-safe base64 (43 characters), printed once when it is made. A
ladder's bot logs in with its name and token; a server's client presents both as one word,
``NAME:TOKEN`` (``presented``). The file holds a line per account, ``NAME
scrypt$N$r$p$SALT$HASH CREATED`` and its quotas, if any (``searches=N``: searches at once;
``hour=S``: seconds of search an hour), with salt and hash in hex (``hashlib.scrypt``, the
standard memory-hard key-derivation function). ``check`` costs one
scrypt whatever it is given, a known name or not, and compares in constant time, so that
neither its answer's time nor its words tell which part was wrong. The file is written whole
and renamed into place, under a lock, readable by its owner only; its comments (``#`` lines)
and blank lines stay where they were.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import os
import re
import secrets
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from enginesrv.safefiles import FileRefusedError, open_regular, read_capped

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,31}")
"""An account's name: a letter, then up to 31 letters, digits, ``_``, ``.`` or ``-``."""
SCRYPT_N, SCRYPT_R, SCRYPT_P = 1 << 10, 8, 1
"""scrypt's cost: 1 MiB and some 3 ms a check. Passwords need far more (OWASP's minimum is
N = 2^17 at r = 8) because a person's password can be guessed; a token of 256 random bits
cannot, at any cost, so stretching buys nothing against a stolen file, and each check's cost
is what a flood of bad logins makes the server pay (16 MiB and 43 ms at N = 2^14 slowed the
games of a ladder beside it: benchmarks/README.md, "The ladder")."""
MAX_MEMORY = 32 << 20
"""The most memory a line's scrypt costs may ask (128 * N * r bytes): a crafted file cannot
make a check take more."""
MAX_FILE = 1 << 20
"""The largest token file read (some thousands of accounts)."""
TOKEN_CHARS = re.compile(r"[A-Za-z0-9_-]{43}")
MAX_QUOTA = 999_999_999
"""The largest quota a line holds (nine digits)."""


class TokenFileError(Exception):
    """The token file cannot be read or written as one (the message names it and why)."""


@dataclass(frozen=True, slots=True)
class Quotas:
    """What a server lets one account use (None: its limits for anyone)."""

    searches: int | None = None
    """Searches (and analysed positions) at once."""
    hour: int | None = None
    """Seconds of search in any hour."""

    def __post_init__(self) -> None:
        """Refuse a quota the file could not hold.

        Raises:
            ValueError: a quota out of 1 to ``MAX_QUOTA``.
        """
        for key, value in self._pairs():
            if value is not None and not 1 <= value <= MAX_QUOTA:
                raise ValueError(f"{key} {value}: a quota is a whole number, 1 to {MAX_QUOTA:,}")

    def words(self) -> list[str]:
        """The quotas as the file writes them."""
        return [f"{key}={value}" for key, value in self._pairs() if value is not None]

    def _pairs(self) -> tuple[tuple[str, int | None], ...]:
        return (("searches", self.searches), ("hour", self.hour))


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    digest: str
    """``scrypt$N$r$p$SALT$HASH``."""
    created: str
    """When the token was made, ``YYYY-MM-DDTHH:MM:SSZ``."""
    quotas: Quotas = Quotas()


@dataclass(frozen=True, slots=True)
class Grant:
    """What an accepted token grants: its account's name, the digest it matched (a holder
    can tell later whether the account was revoked or given another token since) and
    quotas."""

    name: str
    digest: str = field(repr=False)
    quotas: Quotas


def presented(word: str) -> tuple[str, str]:
    """The name and token of ``NAME:TOKEN`` (an empty name when there is no ``:``: such a
    word is checked, and refused, as an unknown name is)."""
    name, sep, token = word.partition(":")
    return (name, token) if sep else ("", word)


def _hash(token: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(token.encode(), salt=salt, n=n, r=r, p=p, maxmem=2 * MAX_MEMORY, dklen=32)


def digest_of(token: str) -> str:
    """A new salted hash of ``token``, as the file keeps it."""
    salt = secrets.token_bytes(16)
    value = _hash(token, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${value.hex()}"


_DECOYS: dict[tuple[int, int, int], str] = {}


def decoy(n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    """What an unknown name is checked against: a digest of these costs that no token
    matches, so the check does the same work as for a known name of the file."""
    key = (n, r, p)
    if key not in _DECOYS:
        salt, value = secrets.token_bytes(16), secrets.token_bytes(32)
        _DECOYS[key] = f"scrypt${n}${r}${p}${salt.hex()}${value.hex()}"
    return _DECOYS[key]


def matches(token: str, digest: str) -> bool:
    """Whether ``token`` is the one ``digest`` was made from (one scrypt, compared in
    constant time)."""
    kind, n, r, p, salt, value = digest.split("$")
    assert kind == "scrypt"
    made = _hash(token, bytes.fromhex(salt), int(n), int(r), int(p))
    return hmac.compare_digest(made, bytes.fromhex(value))


class TokenFile:
    """The accounts of one file (``path``; it need not exist yet)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def accounts(self) -> list[Account]:
        """Every account, in the file's order.

        Raises:
            TokenFileError: the file is not a token file (which line, and why).
        """
        try:
            data = read_capped(open_regular(self.path, follow=False), MAX_FILE)
        except FileNotFoundError:
            return []
        except FileRefusedError as exc:
            raise TokenFileError(f"{self.path}: {exc.reason}") from None
        except OSError as exc:
            raise TokenFileError(f"{self.path}: {exc.strerror or exc}") from None
        return [_account(self.path, number, line) for number, line in _lines(data)]

    def check(self, name: str, token: str) -> bool:
        """Whether ``token`` is the token of account ``name`` (False for an unknown or
        revoked name, or a token of the wrong form, at the cost of a known one)."""
        return self.grant(name, token) is not None

    def match(self, name: str, token: str) -> str | None:
        """The digest ``token`` matches, when it is the token of account ``name`` (None
        otherwise: ``grant``)."""
        grant = self.grant(name, token)
        return None if grant is None else grant.digest

    def grant(self, name: str, token: str) -> Grant | None:
        """What ``token`` grants, when it is the token of account ``name`` (None for an
        unknown or revoked name, or a token of the wrong form, at the cost of a known
        one)."""
        accounts = self.accounts()
        known = [account for account in accounts if account.name == name]
        # an unknown name costs what the file's first account costs (every line made here
        # has the same costs)
        costs = (int(k) for k in accounts[0].digest.split("$")[1:4]) if accounts else ()
        digest = known[-1].digest if known else decoy(*costs)
        good_form = TOKEN_CHARS.fullmatch(token) is not None
        right = matches(token if good_form else "", digest)
        if not (right and good_form and known):
            return None
        return Grant(name, digest, known[-1].quotas)

    def add(self, name: str, quotas: Quotas | None = None) -> str:
        """A new account ``name`` (with ``quotas``, if any): its token, to be shown once (the
        file keeps its hash).

        Raises:
            ValueError: the name is not a name, or is taken.
            TokenFileError: the file cannot be read or written.
        """
        if NAME.fullmatch(name) is None:
            raise ValueError(f"name {name!r}: a letter, then up to 31 letters, digits, _, . or -")
        token = secrets.token_urlsafe(32)
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with self._locked():
            accounts = self.accounts()
            if any(account.name == name for account in accounts):
                raise ValueError(f"name {name!r}: taken (revoke it first to give it a new token)")
            self._write([*accounts, Account(name, digest_of(token), created, quotas or Quotas())])
        return token

    def revoke(self, name: str) -> None:
        """Remove account ``name``: its token is refused from now on.

        Raises:
            ValueError: no such account.
            TokenFileError: the file cannot be read or written.
        """
        with self._locked():
            accounts = self.accounts()
            kept = [account for account in accounts if account.name != name]
            if len(kept) == len(accounts):
                raise ValueError(f"name {name!r}: no such account")
            self._write(kept)

    def requota(self, name: str, change: Callable[[Quotas], Quotas]) -> Quotas:
        """Give account ``name`` the quotas ``change`` makes of its present ones, read and
        written under the file's lock (its token stays; a running server applies them to its
        open connections within a second): the new quotas.

        Raises:
            ValueError: no such account.
            TokenFileError: the file cannot be read or written.
        """
        with self._locked():
            accounts = self.accounts()
            known = [account for account in accounts if account.name == name]
            if not known:
                raise ValueError(f"name {name!r}: no such account")
            quotas = change(known[-1].quotas)
            self._write(
                [
                    replace(account, quotas=quotas) if account.name == name else account
                    for account in accounts
                ]
            )
        return quotas

    @contextmanager
    def _locked(self) -> Iterator[None]:
        lock = self.path.with_name(f".{self.path.name}.lock")
        try:
            descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise TokenFileError(f"{lock}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def _write(self, accounts: list[Account]) -> None:
        """Write ``accounts`` as the file's accounts; its comments and blank lines stay where
        they were, each account on the line it had (new ones at the end)."""
        try:
            before = read_capped(open_regular(self.path, follow=False), MAX_FILE)
        except FileNotFoundError:
            before = b""
        except (OSError, FileRefusedError) as exc:
            raise TokenFileError(f"{self.path}: {exc}") from None
        self._replace(_merged(before, accounts))

    def _replace(self, text: bytes) -> None:
        try:
            # a new file of a random name (O_EXCL, mode 0600): never one, or a link, that
            # someone put there before
            descriptor, name = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        except OSError as exc:
            raise TokenFileError(f"{self.path}: {exc.strerror or exc}") from None
        temporary = Path(name)
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException as exc:  # Ctrl-C included: no temporary file is left behind
            temporary.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise TokenFileError(f"{self.path}: {exc.strerror or exc}") from None
            raise


def _merged(before: bytes, accounts: list[Account]) -> bytes:
    """The file ``before`` with ``accounts`` as its accounts: each of its comments and blank
    lines kept, each account written on the line of its name (gone if it is not in
    ``accounts``), the accounts it did not hold at the end."""
    waiting: dict[str, list[Account]] = {}
    for account in accounts:
        waiting.setdefault(account.name, []).append(account)
    out: list[bytes] = []
    lines = before.split(b"\n")
    if lines[-1] == b"":  # the end of the last line (or of an empty file)
        lines.pop()
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith(b"#"):
            out.append(raw)
            continue
        name = line.split()[0].decode("ascii", "replace")
        if waiting.get(name):
            out.append(_line(waiting[name].pop(0)))
    out.extend(_line(a) for group in waiting.values() for a in group)
    return b"".join(line + b"\n" for line in out) if out else b""


def _line(account: Account) -> bytes:
    words = [account.name, account.digest, account.created, *account.quotas.words()]
    return " ".join(words).encode("ascii")


def _lines(data: bytes) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(data.split(b"\n"), 1):
        line = raw.decode("ascii", "replace").strip()
        if line and not line.startswith("#"):
            yield number, line


DIGEST = re.compile(r"scrypt\$(\d{1,10})\$(\d{1,3})\$(\d{1,3})\$[0-9a-f]{32}\$[0-9a-f]{64}")


QUOTA = re.compile(r"(searches|hour)=([1-9][0-9]{0,8})")


def _account(path: Path, number: int, line: str) -> Account:
    fields = line.split()
    found = DIGEST.fullmatch(fields[1]) if 3 <= len(fields) <= 5 else None
    if found is None or NAME.fullmatch(fields[0]) is None:
        raise TokenFileError(
            f"{path}, line {number}: not NAME scrypt$N$r$p$SALT$HASH CREATED [searches=N] [hour=S]"
        )
    n, r, p = (int(found[k]) for k in (1, 2, 3))
    if n < 2 or n & (n - 1) or 128 * n * r > MAX_MEMORY or not 1 <= r <= 32 or not 1 <= p <= 16:
        raise TokenFileError(f"{path}, line {number}: scrypt costs out of range")
    quotas: dict[str, int] = {}
    for word in fields[3:]:
        quota = QUOTA.fullmatch(word)
        if quota is None or quota[1] in quotas:
            raise TokenFileError(
                f"{path}, line {number}: {word[:40]!r} is not searches=N or hour=S (once each)"
            )
        quotas[quota[1]] = int(quota[2])
    return Account(fields[0], fields[1], fields[2], Quotas(**quotas))
