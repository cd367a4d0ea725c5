"""How often one address may fail to present a token (``Tries``: a ladder's ``login``, a
server's ``auth``): a bucket of ``BURST`` failed tries per peer (an IPv4 address, an IPv6 /48:
``admission.peer_of``), refilled at one try every ``REFILL`` seconds. A peer whose bucket is
empty is refused before its token is looked at (the same refusal, saying to wait), so
guessing a token costs an attacker ``REFILL`` seconds a guess per address and the server
nothing but a refused connection. The peers remembered are capped (``PEERS``, the least
recently failed forgotten first)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import trio

BURST = 5
"""Failed logins a peer may make at once."""
REFILL = 12.0
"""Seconds after which a peer may fail once more (5 tries a minute)."""
PEERS = 4096
"""The most peers remembered."""


class Tries:
    """The failed logins of each peer (module docstring)."""

    def __init__(
        self,
        burst: int = BURST,
        refill: float = REFILL,
        peers: int = PEERS,
        clock: Callable[[], float] = trio.current_time,
    ) -> None:
        self.burst = burst
        self.refill = refill
        self.peers = peers
        self.clock = clock
        self._left: OrderedDict[str, tuple[float, float]] = OrderedDict()
        """peer -> (tries left, when they were counted)."""

    def _now_left(self, peer: str) -> float:
        entry = self._left.get(peer)
        if entry is None:
            return float(self.burst)
        left, at = entry
        return min(float(self.burst), left + (self.clock() - at) / self.refill)

    def wait(self, peer: str) -> float:
        """Seconds until ``peer`` may try again (0: now)."""
        left = self._now_left(peer)
        return 0.0 if left >= 1 else (1 - left) * self.refill

    def failed(self, peer: str) -> None:
        """``peer`` failed a login."""
        left = max(0.0, self._now_left(peer) - 1)
        self._left[peer] = (left, self.clock())
        self._left.move_to_end(peer)
        while len(self._left) > self.peers:
            self._left.popitem(last=False)

    def refund(self, peer: str) -> None:
        """Give back a try counted before a check that succeeded (or could not be made)."""
        entry = self._left.get(peer)
        if entry is None:
            return
        left = min(float(self.burst), self._now_left(peer) + 1)
        if left >= self.burst:
            del self._left[peer]
        else:
            self._left[peer] = (left, self.clock())
