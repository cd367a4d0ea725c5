"""The feed of a running event: what its watchers are told, on an in-process channel.

The tournament publishes each message (plain JSON-ready dicts; the message set is documented
in docs/web.md, "The event feed"); any number of subscribers read them, each from a bounded
queue of its own. A subscriber that falls behind by a whole queue is dropped (its channel is
closed: a page reconnects and starts from a snapshot), so that no watcher ever slows the
games. A new subscriber first gets a snapshot: the event, the standings, the last finished
games in full and the games being played so far.

Everything in the feed is what a spectator may know: moves as a spectator is shown them and
positions as a spectator's view (``State.view(None)``), so a Yin Yang player's unrevealed laws
never reach a watcher.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import trio

import games
from enginesrv.event.play.outcome import Outcome
from enginesrv.event.results import stats
from enginesrv.event.results.standings import PairingResult

Message = dict[str, Any]

QUEUE = 4096
"""Messages a subscriber may have unread before it is dropped."""
KEEP_FINISHED = 100
"""Finished games a new subscriber is sent in full."""


@dataclass(frozen=True)
class Subscription:
    """A subscriber's messages, and the event set when the feed drops it."""

    messages: trio.MemoryReceiveChannel[Message]
    dropped: trio.Event


class Feed:
    """Publishes an event's messages to its subscribers (module docstring)."""

    def __init__(self, *, queue: int = QUEUE, keep_finished: int = KEEP_FINISHED) -> None:
        self.queue = queue
        self._subscribers: dict[trio.MemorySendChannel[Message], trio.Event] = {}
        self._event: Message | None = None
        self._standings: Message | None = None
        self._end: Message | None = None
        self._live: dict[int, list[Message]] = {}
        self._finished: deque[list[Message]] = deque(maxlen=keep_finished)
        self.dropped = 0
        """Subscribers dropped for falling behind."""

    # -- publishing ----------------------------------------------------------------------------

    def publish(self, message: Message) -> None:
        """Keep ``message`` for the snapshot and send it to every subscriber (never waits)."""
        kind = message.get("type")
        if kind == "event":
            self._event = message
        elif kind == "standings":
            self._standings = message
        elif kind == "end":
            self._end = message
        elif kind == "game":
            self._live[int(message["id"])] = [message]
        elif kind in ("move", "result"):
            log = self._live.get(int(message["id"]))
            if log is not None:
                log.append(message)
                if kind == "result":
                    self._finished.append(self._live.pop(int(message["id"])))
        for channel in list(self._subscribers):
            try:
                channel.send_nowait(message)
            except trio.WouldBlock:
                self.dropped += 1
                self._drop(channel)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._drop(channel)

    def _drop(self, channel: trio.MemorySendChannel[Message]) -> None:
        dropped = self._subscribers.pop(channel, None)
        if dropped is not None:
            dropped.set()
        channel.close()

    # -- reading -------------------------------------------------------------------------------

    def snapshot(self) -> list[Message]:
        """What a new subscriber is told first (module docstring)."""
        out: list[Message] = []
        if self._event is not None:
            out.append(self._event)
        if self._standings is not None:
            out.append(self._standings)
        for log in self._finished:
            out.extend(log)
        for log in self._live.values():
            out.extend(log)
        if self._end is not None:
            out.append(self._end)
        return out

    @contextmanager
    def subscribe(self) -> Iterator[Subscription]:
        """A channel of the snapshot, then of every message published while the block runs;
        it closes early (and ``dropped`` is set) if the subscriber falls a whole queue behind."""
        snapshot = self.snapshot()
        send, receive = trio.open_memory_channel[Message](self.queue + len(snapshot))
        for message in snapshot:
            send.send_nowait(message)
        dropped = trio.Event()
        self._subscribers[send] = dropped
        try:
            yield Subscription(receive, dropped)
        finally:
            self._drop(send)
            receive.close()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def game(
        self,
        game_id: int,
        round_: int,
        names: tuple[str, str],
        start: games.State,
        base_ms: int | tuple[int, int] | None,
    ) -> Callable[[str, games.State, tuple[float, float] | None], None]:
        """Publish that a game begins (``base_ms``: both clocks' or p1's and p2's starting
        time, None without clocks); returns what to tell each of its moves (the arbiter's
        ``on_move``)."""
        self.publish(game_message(game_id, round_, names, start, base_ms))
        plies = itertools.count(1)

        def on_move(token: str, state: games.State, clocks: tuple[float, float] | None) -> None:
            self.publish(move_message(game_id, next(plies), token, state, clocks))

        return on_move


# -- the messages (docs/web.md, "The event feed") ----------------------------------------------


def event_message(
    name: str, game: games.Game, players: list[str], total: int, control: str
) -> Message:
    """The event: its game, players and number of games."""
    return {
        "type": "event",
        "name": name,
        "game": game.name,
        "colours": list(game.colours),
        "players": list(players),
        "total": total,
        "control": control,
    }


def clock_map(clocks: tuple[float, float] | None) -> dict[str, int] | None:
    if clocks is None:
        return None
    return {"p1": round(clocks[0]), "p2": round(clocks[1])}


def game_message(
    game_id: int,
    round_: int,
    names: tuple[str, str],
    start: games.State,
    base_ms: int | tuple[int, int] | None,
) -> Message:
    """A game begins: its players and its first position (after any book moves)."""
    if isinstance(base_ms, int):
        base_ms = (base_ms, base_ms)
    return {
        "type": "game",
        "id": game_id,
        "round": round_,
        "p1": names[0],
        "p2": names[1],
        "position": start.view(None).to_string(),
        "clock": None if base_ms is None else {"p1": base_ms[0], "p2": base_ms[1]},
    }


def move_message(
    game_id: int, ply: int, token: str, state: games.State, clocks: tuple[float, float] | None
) -> Message:
    """A move as a spectator is shown it, the position after it and the clocks."""
    seat = state.to_move()
    return {
        "type": "move",
        "id": game_id,
        "ply": ply,
        "move": token,
        "position": state.view(None).to_string(),
        "turn": "none" if seat < 0 else f"p{seat + 1}",
        "clock": clock_map(clocks),
    }


def result_message(game_id: int, outcome: Outcome, plies: int, text: str = "") -> Message:
    """A game ended: its ``outcome`` (the winner as p1, p2 or draw, and the reason), and
    ``text``, the same in words (``greedy wins: alphabeta lost on time (239 ms used of 200
    ms)``)."""
    winner, reason = outcome.result, outcome.reason
    return {
        "type": "result",
        "id": game_id,
        "winner": winner,
        "reason": reason,
        "plies": plies,
        "text": text or f"{winner} ({reason})",
    }


def standings_message(
    pairings: list[PairingResult], done: int, total: int, sprt: stats.SprtParams | None
) -> Message:
    return {
        "type": "standings",
        "done": done,
        "total": total,
        "pairings": [p.to_json(sprt) for p in pairings],
    }
