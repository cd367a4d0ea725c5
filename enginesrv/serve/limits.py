"""The limits of a server's connections, announced in the handshake (docs/protocol.md §2)."""

from __future__ import annotations

from dataclasses import dataclass

from enginesrv.admission import PREFIX_V4, PREFIX_V6, Admission, descriptor_budget
from enginesrv.serve.settings import MAX_ANALYSES, MAX_CLOCK, MAX_MOVETIME, MAX_PLIES
from protocol import messages as m


@dataclass(frozen=True)
class Limits:
    """The limits of connections and of the server (0 means none; docs/protocol.md §2)."""

    line: int = 65536
    frame: int = 1024 * 1024
    inflight: int = 32
    idle: float = 300.0
    first_command: float = 10.0
    output: int = 8 * 1024 * 1024
    connections: int = 256
    peer_connections: int = 32
    peer_searches: int = 0
    hash_mb: int = 0
    movetime: int = MAX_MOVETIME
    clock: int = MAX_CLOCK
    plies: int = MAX_PLIES
    analyses: int = MAX_ANALYSES
    output_total: int = 64 * 1024 * 1024
    prefix_v4: int = PREFIX_V4
    prefix_v6: int = PREFIX_V6

    def admission(self, needs: int = 0) -> Admission:
        """The admission of these caps, within the descriptors left once ``needs`` (the
        workers' and engines') are kept (``descriptor_budget``)."""
        return Admission(
            connections=self.connections,
            peer_connections=self.peer_connections,
            descriptors=descriptor_budget(needs),
            prefix_v4=self.prefix_v4,
            prefix_v6=self.prefix_v6,
        )

    def announced(self) -> tuple[m.LimitInfo, ...]:
        """The ``limit`` lines of the handshake."""
        return (
            m.LimitInfo("line", self.line),
            m.LimitInfo("frame", self.frame),
            m.LimitInfo("inflight", self.inflight),
            m.LimitInfo("idle", round(self.idle * 1000)),
            m.LimitInfo("firstcommand", round(self.first_command * 1000)),
            m.LimitInfo("output", self.output),
            m.LimitInfo("connections", self.connections),
            m.LimitInfo("peerconnections", self.peer_connections),
            m.LimitInfo("peersearches", self.peer_searches),
            m.LimitInfo("hash", self.hash_mb),
            m.LimitInfo("movetime", self.movetime),
            m.LimitInfo("clock", self.clock),
            m.LimitInfo("plies", self.plies),
            m.LimitInfo("analyses", self.analyses),
            m.LimitInfo("outputtotal", self.output_total),
            m.LimitInfo("peerprefix4", self.prefix_v4),
            m.LimitInfo("peerprefix6", self.prefix_v6),
        )
