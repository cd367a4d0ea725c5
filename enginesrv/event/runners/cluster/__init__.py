"""The games of an event played on a Dask cluster (``--cluster tcp://HOST:PORT``).

The coordinator (the ``match`` or ``tournament`` command) keeps everything that makes the
event: the schedule, the database and records, the live display, SPRT and resume. Only the
playing of one game moves: each game is one Dask task that a worker runs with the arbiter's
own code, and what comes back is the game's result and record, stored by the coordinator as a
local game would be.

The package, by job:

- ``settings``: every timeout and size of an event on a cluster (``ClusterSettings``);
- ``wire``: what crosses machines (a game's task, its result, the result's frame);
- ``worker``: the worker's side (the tasks, and the host that keeps their players and
  search processes);
- ``coordinator``: the coordinator's side (``ClusterRunner``, ``open_cluster_runner``), with
  ``watch`` (the workers that come and go, each checked before it gets a game; ``roster``
  is its sans-I/O bookkeeping), ``listener`` (the results sent straight back from the
  workers), ``futures`` (Dask's futures seen from trio) and ``costs`` (what storing the
  games cost).

The dask and distributed packages are the ``distributed`` extra: none of these modules imports
them at its top (``wire.import_distributed``).
"""

from enginesrv.event.runners.cluster.coordinator import (
    ClusterRunner,
    ClusterVenue,
    open_cluster_runner,
)
from enginesrv.event.runners.cluster.listener import parse_listen, route_address
from enginesrv.event.runners.cluster.settings import ClusterSettings

__all__ = [
    "ClusterRunner",
    "ClusterSettings",
    "ClusterVenue",
    "open_cluster_runner",
    "parse_listen",
    "route_address",
]
