"""A client library for the enginesrv protocol (docs/client.md): talk to ``enginesrv serve``,
``enginesrv engine`` or any UGI engine from Python, in the text framing or msgpack-RPC.

``AsyncEngine`` is the async API, on trio or asyncio alike (anyio underneath), ``Engine`` the
same methods blocking (a trio loop in a thread of its own). Every answer is decoded by the
``protocol`` package; this package imports only it, anyio and trio.
"""

from enginesrv.client._args import SEARCH_TIMEOUT, STOP_GRACE, TIMEOUT
from enginesrv.client.aio import AsyncEngine
from enginesrv.client.handle import SearchHandle
from enginesrv.client.sync import Engine, SyncSearchHandle
from enginesrv.client.types import (
    BotInfo,
    ClientError,
    Clock,
    EngineError,
    EngineInfo,
    EngineTerminatedError,
    EngineTimeoutError,
    GameInfo,
    LegalMoves,
    MoveScore,
    OptionSpec,
    Score,
    SearchResult,
    TraceCallback,
)
from protocol.messages import Analysis, AnalysisItem

__all__ = [
    "SEARCH_TIMEOUT",
    "STOP_GRACE",
    "TIMEOUT",
    "Analysis",
    "AnalysisItem",
    "AsyncEngine",
    "BotInfo",
    "ClientError",
    "Clock",
    "Engine",
    "EngineError",
    "EngineInfo",
    "EngineTerminatedError",
    "EngineTimeoutError",
    "GameInfo",
    "LegalMoves",
    "MoveScore",
    "OptionSpec",
    "Score",
    "SearchHandle",
    "SearchResult",
    "SyncSearchHandle",
    "TraceCallback",
]
