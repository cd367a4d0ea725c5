"""What storing an event's games cost the coordinator of a cluster (``StoreCosts``), logged
at the end of the event (``cluster_games_stored``): from a game's end on its worker to its row
in the store, in two parts, the result's way back and its storing. ``benchmarks/cluster.py``
reads that line."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import structlog

log = structlog.get_logger("enginesrv.cluster")


@dataclass
class StoreCosts:
    """The costs of the games stored so far (module docstring)."""

    received: dict[int, float] = field(default_factory=dict)
    """Per game played and not yet stored, when its result came here (``time.time()``)."""
    overheads: list[float] = field(default_factory=list)
    """Per game stored, seconds from its end on the worker to its row in the store."""
    transfers: list[float] = field(default_factory=list)
    """Per game stored, seconds from its end on the worker to its result here."""
    stores: list[float] = field(default_factory=list)
    """Per game stored, seconds from its result here to its row in the store (this machine's
    own work, one game at a time)."""
    delivered: int = 0
    """Games whose result came straight from the worker (not through Dask)."""

    def stored(self, game_id: int, finished_at: float) -> None:
        """The game ``game_id``, which ended at ``finished_at`` on its worker's clock (0: not
        known), is stored now."""
        received = self.received.pop(game_id, None)
        if finished_at and received is not None:
            now = time.time()
            self.overheads.append(max(0.0, now - finished_at))
            self.transfers.append(max(0.0, received - finished_at))
            self.stores.append(max(0.0, now - received))

    def log(self) -> None:
        """Log what storing the event's games cost, if it stored any."""
        if not self.overheads:
            return
        ordered = sorted(self.overheads)
        transfers = sorted(self.transfers)
        stores = sorted(self.stores)
        log.info(
            "cluster_games_stored",
            games=len(ordered),
            overhead_ms_median=round(1000 * ordered[len(ordered) // 2], 2),
            overhead_ms_max=round(1000 * ordered[-1], 2),
            transfer_ms_median=round(1000 * transfers[len(transfers) // 2], 2),
            store_ms_median=round(1000 * stores[len(stores) // 2], 2),
            sent_straight=self.delivered,
        )
