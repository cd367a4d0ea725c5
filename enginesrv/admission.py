"""Who may connect: one admission for every door of a process (docs/protocol.md §2).

Every door that accepts connections from the network asks the same ``Admission`` before it
reads a byte: the protocol's TCP port, the web port (each HTTP connection, and so each
WebSocket, which rides on one), and an event's watch page and cluster result port. It counts
what each *peer* holds, where a peer is an address prefix: an IPv4 address (``/32``) and an
IPv6 ``/48`` by default (``PREFIX_V6``). A connection
is admitted when

* the process holds fewer than ``connections`` admitted connections, and fewer than its
  descriptor budget allows (``descriptor_budget``: the process's descriptor limit less what is
  open and a reserve for the workers, engines, store and listeners, so that running out of
  connections never means running out of descriptors for what the server itself needs);
* its peer holds fewer than ``peer_connections``;
* and, once the process is within ``reserve`` of its cap, its peer holds fewer than
  ``SMALL_PEER`` connections: the last slots are kept for peers that hold almost nothing, so
  that a few addresses that each take their whole share cannot lock everyone else out.

When the process is full all the same (many peers took the reserve), a connection of a peer
holding fewer than ``SMALL_PEER`` is still admitted: the newest connection of the peer holding
most (at least two more than the newcomer's) is closed for it (``Ticket.on_evict``; a
connection that cannot be closed so is never chosen). Only when every peer holds about as
little as the newcomer is it refused.

A connection that has proved itself one of the process's own (a cluster worker that presented
the event's token) is counted apart (``Ticket.trust``): it stops counting against its peer, so
that a host with many workers is not refused.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import resource
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

PREFIX_V4 = 32
"""The bits of an IPv4 address that name a peer by default (one address)."""
PREFIX_V6 = 48
"""The bits of an IPv6 address that name a peer by default: a /48, a site's allocation (a host
is commonly handed a /64, a home a /56, and a free tunnel a /48: any of them would otherwise
come from as many addresses as it likes)."""
WEBSOCKETS_PER_PEER = 24
"""WebSockets one peer may hold by default: fewer than its connections (32), so that a peer
whose sockets are all open can still load the page."""
SMALL_PEER = 2
"""A peer holding fewer connections than this may use the reserved slots."""
RESERVE_SHARE = 4
"""The reserved slots are this fraction (1/4) of the connection cap."""
DESCRIPTOR_RESERVE = 64
"""Descriptors kept beyond the counted needs for listeners, the store, logs and the like."""

log = structlog.get_logger("enginesrv.admission")


def peer_of(host: str, prefix_v4: int = PREFIX_V4, prefix_v6: int = PREFIX_V6) -> str:
    """The peer ``host`` belongs to: its address cut to the prefix (``10.1.2.0/24``, or the
    address alone for a full prefix). An IPv4 address written as IPv6 (``::ffff:10.1.2.3``)
    is an IPv4 peer; a host that is no address (a test's name, ``stdio``) is its own peer."""
    text = host.strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    prefix = prefix_v4 if address.version == 4 else prefix_v6
    if prefix >= address.max_prefixlen:
        return str(address)
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


def open_descriptors() -> int:
    """Descriptors this process has open now (0 where that cannot be counted)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return max(0, len(os.listdir(folder)) - 1)  # less the listing's own
    return 0


def descriptor_budget(needs: int) -> int:
    """Connections the process's descriptor limit leaves room for, beyond those open now,
    ``needs`` (the workers', engines' and store's) and ``DESCRIPTOR_RESERVE`` (0: no limit
    known)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ValueError, OSError):
        return 0
    if soft == resource.RLIM_INFINITY:
        return 0
    return max(1, soft - open_descriptors() - needs - DESCRIPTOR_RESERVE)


@dataclass
class Ticket:
    """One admitted connection; ``release`` (or leaving its ``with`` block) gives it back."""

    admission: Admission
    peer: str
    door: str
    trusted: bool = False
    released: bool = False
    on_evict: Callable[[str], None] | None = None
    """Closes the connection (it is then released) when a newcomer needs its slot; None:
    it cannot be closed so, and is never chosen."""
    serial: int = 0
    """The order of admission (later is larger)."""
    idle: Callable[[], bool] | None = None
    """Whether it is a plain HTTP connection waiting for its next request (None: it is no
    plain HTTP connection): such are closed first, for their own peer too."""

    def trust(self) -> None:
        """The connection proved itself the process's own: count it apart from its peer."""
        self.admission._trust(self)

    def release(self) -> None:
        self.admission._release(self)

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class Admission:
    """The caps of one process's connections (module docstring); 0 means no cap.

    Args:
        connections: connections admitted at once, every door together.
        peer_connections: connections one peer may hold, every door together.
        descriptors: connections the descriptor budget allows (``descriptor_budget``).
        trusted: connections counted apart once trusted (``Ticket.trust``).
    """

    connections: int = 256
    peer_connections: int = 32
    descriptors: int = 0
    trusted: int = 128
    prefix_v4: int = PREFIX_V4
    prefix_v6: int = PREFIX_V6
    held: int = 0
    per_peer: Counter[str] = field(default_factory=Counter)
    per_door: Counter[str] = field(default_factory=Counter)
    holding_trusted: int = 0
    refused: int = 0
    evicted: int = 0
    stopping: bool = False
    _tickets: dict[str, list[Ticket]] = field(default_factory=dict)
    _serial: int = 0

    def peer(self, host: str) -> str:
        return peer_of(host, self.prefix_v4, self.prefix_v6)

    def cap(self) -> int:
        """The most connections admitted at once (0: no cap)."""
        caps = [c for c in (self.connections, self.descriptors) if c > 0]
        return min(caps) if caps else 0

    def refusal(self, host: str) -> str | None:
        """Why a new connection from ``host`` would be refused now (None: it would not)."""
        if self.stopping:
            return "the server is stopping"
        peer = self.peer(host)
        holds = self.per_peer[peer]
        cap = self.cap()
        if cap and self.held >= cap:
            if self.descriptors and cap == self.descriptors and cap < self.connections:
                return f"the server holds the {cap} connections its descriptors allow"
            return f"the server holds its limit of {cap} connections"
        if self.peer_connections and holds >= self.peer_connections:
            return f"{peer} holds its limit of {self.peer_connections} connections"
        reserve = cap // RESERVE_SHARE if cap else 0
        if reserve and self.held >= cap - reserve and holds >= SMALL_PEER:
            return (
                f"the server is nearly full: its last {reserve} connections are kept for "
                f"addresses holding fewer than {SMALL_PEER}, and {peer} holds {holds}"
            )
        return None

    def admit(self, host: str, door: str) -> Ticket | str:
        """A ticket for a new connection from ``host`` through ``door`` (``tcp``, ``http``,
        ``results``...), or why it is refused (counted and logged).

        A peer at its cap that holds an idle plain HTTP connection (a browser's keep-alive)
        has its oldest one closed for the new one; a newcomer to a full server has a
        connection of the peer holding most closed for it (``_victim``)."""
        why = self.refusal(host)
        peer = self.peer(host)
        if (
            why is not None
            and self.peer_connections
            and self.per_peer[peer] >= self.peer_connections
        ):
            own = self._idle_of(peer)
            if own is not None:
                self._evict(own, peer, f"{peer} opened another connection at its cap")
                why = self.refusal(host)
        if why is not None and self._full() and self.per_peer[peer] < SMALL_PEER:
            victim = self._victim(peer)
            if victim is not None:
                reason = (
                    f"the server is full and {victim.peer} holds the most connections: its "
                    "newest is closed for a new peer"
                )
                self._evict(victim, peer, reason)
                why = self.refusal(host)
        if why is not None:
            self.refused += 1
            log.info("connection_refused", peer=host, door=door, reason=why)
            return why
        self.held += 1
        self.per_peer[peer] += 1
        self.per_door[door] += 1
        self._serial += 1
        ticket = Ticket(self, peer, door, serial=self._serial)
        self._tickets.setdefault(peer, []).append(ticket)
        return ticket

    def _full(self) -> bool:
        cap = self.cap()
        return bool(cap) and self.held >= cap

    def _evict(self, ticket: Ticket, for_peer: str, reason: str) -> None:
        assert ticket.on_evict is not None
        log.info("connection_evicted", peer=ticket.peer, door=ticket.door, for_peer=for_peer)
        self.evicted += 1
        evict = ticket.on_evict
        ticket.release()  # its slot is the newcomer's from now on
        evict(reason)

    def _idle_of(self, peer: str) -> Ticket | None:
        """The oldest idle plain HTTP connection of ``peer``."""
        for ticket in self._tickets.get(peer, []):
            if ticket.on_evict is not None and ticket.idle is not None and ticket.idle():
                return ticket
        return None

    def _victim(self, newcomer: str) -> Ticket | None:
        """A connection of the peers holding most, if they hold at least two more than
        ``newcomer``: an idle plain HTTP connection of theirs, else the newest evictable
        connection among them (so that peers who hold as many as an older one cannot aim
        every eviction at it: the last to come loses first)."""
        mine = self.per_peer[newcomer]
        for holds in sorted(set(self.per_peer.values()), reverse=True):
            if holds < mine + 2:
                return None
            tied = [peer for peer, count in self.per_peer.items() if count == holds]
            for peer in tied:
                idle = self._idle_of(peer)
                if idle is not None:
                    return idle
            newest = [
                ticket
                for peer in tied
                for ticket in self._tickets.get(peer, [])
                if ticket.on_evict is not None and not ticket.trusted
            ]
            if newest:
                return max(newest, key=lambda ticket: ticket.serial)
        return None

    def _uncount(self, ticket: Ticket) -> None:
        self.held -= 1
        self.per_peer[ticket.peer] -= 1
        if self.per_peer[ticket.peer] <= 0:
            del self.per_peer[ticket.peer]
        held = self._tickets.get(ticket.peer)
        if held is not None:
            held.remove(ticket)
            if not held:
                del self._tickets[ticket.peer]

    def _trust(self, ticket: Ticket) -> None:
        if ticket.released or ticket.trusted:
            return
        self._uncount(ticket)
        ticket.trusted = True
        self.holding_trusted += 1

    def may_trust(self) -> bool:
        """Whether one more connection may be counted apart (``trusted`` cap)."""
        return not self.trusted or self.holding_trusted < self.trusted

    def _release(self, ticket: Ticket) -> None:
        if ticket.released:
            return
        ticket.released = True
        self.per_door[ticket.door] -= 1
        if self.per_door[ticket.door] <= 0:
            del self.per_door[ticket.door]
        if ticket.trusted:
            self.holding_trusted -= 1
        else:
            self._uncount(ticket)


DESCRIPTORS_PER_GAME = 32
"""Descriptors an event keeps for each game it plays at once (two engines' pipes, their
reapers, records and traces, with room to spare)."""
EVENT_CONNECTIONS = 512
"""Connections an event's doors (its watching page, its cluster result port) hold at once."""


def event_admission(games_at_once: int) -> Admission:
    """The admission of an event's doors: within the descriptors left once the event's own
    are kept (``DESCRIPTORS_PER_GAME`` for each game played at once), so that watchers are
    refused before the event lacks a descriptor for an engine."""
    return Admission(
        connections=EVENT_CONNECTIONS,
        descriptors=descriptor_budget(DESCRIPTORS_PER_GAME * max(1, games_at_once)),
    )
