"""A search as the pool hands it to a worker (``SearchJob``), and the maps that carry jobs,
progress and results over the pipe between them."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import games
from bots.engine import Limits, RootScore, Score, SearchInfo, SearchResult

MIN_SEARCH = 0.002
"""Seconds a timed search gets at least, however late it starts."""


@dataclass(frozen=True, slots=True)
class SearchJob:
    """Everything a worker needs for one search."""

    session: str
    game: str
    position: str
    bot: str
    options: tuple[tuple[str, str | None], ...]
    depth: int | None = None
    nodes: int | None = None
    target: float | None = None
    deadline: float | None = None
    new_game: bool = False
    hash_budget: int | None = None
    """MB of transposition tables this worker may keep over all its bots (None: no cap)."""
    game_key: str | None = None
    """The game the search is for: a bot that last searched for another game starts this one
    afresh (``new_game``), on whichever worker the search lands."""
    issued: float | None = None
    """``time.monotonic()`` when the move was asked for: ``target`` and ``deadline`` count
    from then, so the time a job spends reaching a busy worker is the search's, not extra."""
    from_pv: bool = False
    """The time is a clock's, budgeted by turns (``Limits.from_pv``)."""
    lines: int = 1
    """The lines to report (``Limits.lines``, the session's ``MultiPV``)."""
    searchmoves: tuple[str, ...] | None = None
    """The tokens of the only first decisions to search (``Limits.root_moves``), checked
    legal by the server; None: all."""
    avoidmoves: tuple[str, ...] = ()
    """The tokens of first decisions never to search (``Limits.avoid_moves``)."""
    score_forced: bool = False
    """A single legal move is searched too, for its score (``Limits.score_forced``)."""
    background: bool = False
    """An analysis: it gives its worker up at once to a search of its own peer
    (``FairShare.lend_to``). The pool's concern, not sent to the worker."""

    def limits_in(self, state: games.State, now: float) -> Limits:
        """``limits`` with the first decisions to search read in ``state``, the position
        searched."""
        limits = self.limits(now)
        if self.searchmoves is None and not self.avoidmoves:
            return limits
        allowed = self.searchmoves
        return dataclasses.replace(
            limits,
            root_moves=None if allowed is None else tuple(state.parse_move(t) for t in allowed),
            avoid_moves=tuple(state.parse_move(t) for t in self.avoidmoves),
        )

    def limits(self, now: float) -> Limits:
        """The search's limits for a search that starts at ``time.monotonic()`` ``now``."""
        lag = 0.0 if self.issued is None else max(0.0, now - self.issued)

        def left(seconds: float | None) -> float | None:
            return None if seconds is None else max(MIN_SEARCH, seconds - lag)

        return Limits(
            self.depth,
            self.nodes,
            left(self.target),
            left(self.deadline),
            time.monotonic,
            from_pv=self.from_pv,
            lines=self.lines,
            score_forced=self.score_forced,
        )

    def to_map(self) -> dict[str, object]:
        """The params map of a ``search`` request."""
        return {
            "session": self.session,
            "game": self.game,
            "position": self.position,
            "bot": self.bot,
            "options": [list(pair) for pair in self.options],
            "depth": self.depth,
            "nodes": self.nodes,
            "target": self.target,
            "deadline": self.deadline,
            "new_game": self.new_game,
            "hash_budget": self.hash_budget,
            "game_key": self.game_key,
            "issued": self.issued,
            "from_pv": self.from_pv,
            "lines": self.lines,
            "searchmoves": None if self.searchmoves is None else list(self.searchmoves),
            "avoidmoves": list(self.avoidmoves),
            "score_forced": self.score_forced,
        }

    @classmethod
    def from_map(cls, raw: dict[str, Any]) -> SearchJob:
        """The inverse of ``to_map`` (the server is trusted: no validation beyond types)."""
        return cls(
            session=str(raw["session"]),
            game=str(raw["game"]),
            position=str(raw["position"]),
            bot=str(raw["bot"]),
            options=tuple((str(k), None if v is None else str(v)) for k, v in raw["options"]),
            depth=raw.get("depth"),
            nodes=raw.get("nodes"),
            target=raw.get("target"),
            deadline=raw.get("deadline"),
            new_game=bool(raw.get("new_game")),
            hash_budget=raw.get("hash_budget"),
            game_key=raw.get("game_key"),
            issued=raw.get("issued"),
            from_pv=bool(raw.get("from_pv")),
            lines=int(raw.get("lines") or 1),
            searchmoves=None if raw.get("searchmoves") is None else tuple(raw["searchmoves"]),
            avoidmoves=tuple(raw.get("avoidmoves") or ()),
            score_forced=bool(raw.get("score_forced")),
        )


def score_to_map(score: Score | None) -> dict[str, int] | None:
    """A score as the msgpack framing writes it."""
    return None if score is None else {score.kind: score.value}


def score_from_map(raw: object) -> Score | None:
    """The inverse of ``score_to_map``."""
    if not isinstance(raw, dict) or len(raw) != 1:
        return None
    [(kind, value)] = raw.items()
    if kind in ("cp", "win", "loss") and isinstance(value, int):
        return Score(kind, value)
    return None


def info_to_map(info: SearchInfo, search: int) -> dict[str, object]:
    """An ``info`` notification's params."""
    return {
        "search": search,
        "depth": info.depth,
        "seldepth": info.seldepth,
        "score": score_to_map(info.score),
        "nodes": info.nodes,
        "nps": info.nps,
        "time": info.time,
        "pv": list(info.pv),
        "hashfull": info.hashfull,
        "string": info.string,
        "line": info.line,
    }


def info_from_map(raw: dict[str, Any]) -> SearchInfo:
    """The inverse of ``info_to_map``."""
    return SearchInfo(
        depth=raw.get("depth"),
        seldepth=raw.get("seldepth"),
        score=score_from_map(raw.get("score")),
        nodes=raw.get("nodes"),
        nps=raw.get("nps"),
        time=raw.get("time"),
        pv=tuple(raw.get("pv") or ()),
        hashfull=raw.get("hashfull"),
        string=raw.get("string"),
        line=raw.get("line"),
    )


def result_to_map(result: SearchResult) -> dict[str, object]:
    """A search result as the response map."""
    return {
        "token": result.token,
        "score": score_to_map(result.score),
        "depth": result.depth,
        "seldepth": result.seldepth,
        "nodes": result.nodes,
        "time": result.time,
        "pv": list(result.pv),
        "hashfull": result.hashfull,
        "stopped": result.stopped,
        "root_scores": [
            [r.token, score_to_map(r.score), r.depth, r.bound] for r in result.root_scores
        ],
    }


def result_from_map(raw: dict[str, Any]) -> SearchResult:
    """The inverse of ``result_to_map`` (moves travel as tokens; ``move`` is left at -1)."""
    token = raw.get("token")
    return SearchResult(
        move=None if token is None else -1,
        token=token,
        score=score_from_map(raw.get("score")),
        depth=int(raw.get("depth") or 0),
        seldepth=int(raw.get("seldepth") or 0),
        nodes=int(raw.get("nodes") or 0),
        time=int(raw.get("time") or 0),
        pv=tuple(raw.get("pv") or ()),
        hashfull=int(raw.get("hashfull") or 0),
        stopped=bool(raw.get("stopped")),
        root_scores=tuple(_root_score(r) for r in raw.get("root_scores") or ()),
    )


def _root_score(raw: list[Any]) -> RootScore:
    token, score, depth, bound = raw
    return RootScore(str(token), score_from_map(score) or Score("cp", 0), int(depth), bound)
