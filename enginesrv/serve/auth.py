"""Tokens on a server (``enginesrv serve --tokens FILE``; docs/protocol.md §2, "Tokens").

A server given a token file (``enginesrv.tokens``) serves a client nothing but the handshake
until it has presented a token of the file: ``auth NAME:TOKEN`` (text) or the ``auth``
method (msgpack). Before that, ``ugi``, ``isready`` and ``quit`` are answered; anything else,
a wrong token, or no token within the ``firstcommand`` limit is answered with the fatal error
``307 auth-refused`` and the connection is closed. Every refusal of a token says the same
(``the token is not accepted``), whichever part was wrong, and costs the same: one check on
the ``Checker``'s thread, whose time does not depend on the name being known
(``TokenFile.grant``).

An accepted token that is revoked (or replaced) in the file closes its connections, with
``307``, at their next command. A peer (``Admission.peer``) that failed too often
(``Tries``) is refused before its token is looked at, with how long to wait. ``Keeper``
holds what the server's doors share (the file, the tries, the checker, each account's use);
``Guard`` screens one connection's commands. No token appears in a log line, an error or a
``repr``: the ``Auth`` command hides its own, and nothing here quotes one.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import structlog

from enginesrv.checker import Checker, CheckerBusyError
from enginesrv.search.child import SearchRunner
from enginesrv.serve.quotas import Accounts, Metered, account_peer
from enginesrv.tokens import Grant, TokenFile, TokenFileError, presented
from enginesrv.tries import Tries
from protocol import messages as m
from protocol.errors import AUTH_REFUSED, BAD_ARGUMENTS, ProtocolError

BEFORE_AUTH = (m.Ugi, m.IsReady, m.Quit)
"""The commands a client may send before its token (the handshake)."""
HANDSHAKES = 4
"""How many of them (``quit`` aside) a client may send before its token: the handshake's
answer is some 5 KB, which a client without a token must not have again and again."""
NOT_ACCEPTED = "the token is not accepted"
UNREAD = "a command that is not ugi, isready, quit or auth NAME:TOKEN"

log = structlog.get_logger("enginesrv.serve.auth")


class AuthRefusedError(Exception):
    """A token (or a connection without one) refused: ``message`` says why, never quoting
    the token."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class Keeper:
    """The token file of a server and what its doors share to check tokens."""

    tokens: TokenFile
    tries: Tries = field(default_factory=Tries)
    checker: Checker = field(default_factory=Checker)
    accounts: Accounts = field(default_factory=Accounts)
    accepted: int = 0
    refused: int = 0
    _seen: tuple[int, int, int] | None = None
    """The token file's (inode, size, modification time) when ``_digests`` was read."""
    _digests: dict[str, str] = field(default_factory=dict)

    def revoked(self, grant: Grant) -> bool:
        """Whether ``grant``'s account was revoked, or given another token, since it was
        accepted (the file is read again only once it has changed: a look costs a ``stat``;
        a file that cannot be read revokes nothing)."""
        try:
            info = os.stat(self.tokens.path)
            seen = (info.st_ino, info.st_size, info.st_mtime_ns)
            if seen != self._seen:
                self._seen = seen  # a damaged file is read once, not at every look
                accounts = self.tokens.accounts()
                self._digests = {account.name: account.digest for account in accounts}
                for account in accounts:  # new quotas apply to connections open already
                    if account.name in self.accounts.usage:
                        self.accounts.of(account.name, account.quotas)
        except (OSError, TokenFileError):
            return False
        return self._digests.get(grant.name) != grant.digest

    def searching(self, runner: SearchRunner, grant: Grant) -> tuple[str, Metered]:
        """Who the searches of a connection with ``grant`` count against (its account), and
        the runner that keeps them within its quotas (``enginesrv.serve.quotas``)."""
        usage = self.accounts.of(grant.name, grant.quotas)
        return account_peer(grant.name), Metered(runner, grant.name, usage)

    async def check(self, word: str, peer: str) -> Grant:
        """What the token ``word`` (``NAME:TOKEN``) presented by ``peer`` grants.

        Raises:
            AuthRefusedError: a wrong token, a peer that failed too often, a busy checker or
                a token file that cannot be read.
        """
        wait = self.tries.wait(peer)
        if wait > 0:
            self.refused += 1
            raise AuthRefusedError(
                f"too many wrong tokens from {peer}: try again in {math.ceil(wait)} s"
            )
        # counted before the check and given back if it succeeds, so that tries at once from
        # one peer get no more checks than tries one after the other
        self.tries.failed(peer)
        name, token = presented(word)
        try:
            grant = await self.checker.check(self.tokens, name, token)
        except CheckerBusyError:
            self.tries.refund(peer)
            self.refused += 1
            raise AuthRefusedError("the server is busy checking other tokens: try again") from None
        except TokenFileError as exc:
            log.error("tokens_unreadable", detail=str(exc))
            self.tries.refund(peer)
            self.refused += 1
            raise AuthRefusedError("the server cannot read its tokens now: try again") from None
        if grant is None:
            self.refused += 1
            raise AuthRefusedError(NOT_ACCEPTED)
        self.tries.refund(peer)
        self.accepted += 1
        return grant

    def close(self) -> None:
        self.checker.close()


@dataclass(frozen=True, slots=True)
class Passed:
    """A command the guard answered itself (``reply``; None: nothing to send)."""

    reply: m.Reply | None


class Guard:
    """Screens one connection's commands until its token is accepted (module docstring)."""

    def __init__(self, keeper: Keeper | None, peer: str) -> None:
        self.keeper = keeper
        self.peer = peer
        self.grant: Grant | None = None
        self.handshakes = 0
        """Commands of the handshake answered before a token."""

    @property
    def through(self) -> bool:
        """Whether the connection may send anything (a server without tokens, or a token
        accepted)."""
        return self.keeper is None or self.grant is not None

    async def screen(self, item: m.Request | ProtocolError) -> Passed | None:
        """None when ``item`` goes on to the session; else what the guard answered (an
        accepted token: ``Ack``; an ``auth`` that is not needed: an error).

        Raises:
            AuthRefusedError: the connection is to be refused and closed.
        """
        if isinstance(item, ProtocolError):
            if item.fatal or self.through:
                return None
            # not quoted: a token sent without its command word would be
            raise AuthRefusedError(f"auth first: {UNREAD}")
        command = item.command
        if self.grant is not None and self.keeper is not None and self.keeper.revoked(self.grant):
            raise AuthRefusedError("the token was revoked")
        if not isinstance(command, m.Auth):
            if self.through or isinstance(command, m.Quit):
                return None
            if isinstance(command, BEFORE_AUTH) and self.handshakes < HANDSHAKES:
                self.handshakes += 1
                return None
            if isinstance(command, BEFORE_AUTH):
                raise AuthRefusedError(
                    f"auth first: {HANDSHAKES} commands without a token are all a client gets"
                )
            raise AuthRefusedError(
                f"auth first: {command.METHOD} is answered only once a token is accepted "
                "(auth NAME:TOKEN)"
            )
        if self.keeper is None:
            return Passed(_bad("auth: this server takes no tokens"))
        if self.grant is not None:
            return Passed(_bad("auth: the connection's token was accepted already"))
        self.grant = await self.keeper.check(command.token, self.peer)
        return Passed(m.Ack())


def _bad(message: str) -> m.ErrorReply:
    return m.ErrorReply(BAD_ARGUMENTS.code, BAD_ARGUMENTS.name, message)


def unquoted(error: ProtocolError) -> ProtocolError:
    """``error`` without the input it quotes: before a token is accepted, what a client sent
    may hold one (a frame of the wrong shape quotes part of it)."""
    message = f"{error.error.meaning} (the input is not quoted before a token is accepted)"
    return ProtocolError(error.error, message, msgid=error.msgid, method=error.method)


def refusal(exc: AuthRefusedError) -> m.ErrorReply:
    """The fatal reply of a refusal."""
    return m.ErrorReply(AUTH_REFUSED.code, AUTH_REFUSED.name, exc.message)
