"""``enginesrv ladder run``: a ladder server (docs/ladder.md).

It opens the ladder's folder (its settings, the store of each game and the standings made of
every stored game), starts its house bots' pool of searches, listens for bots (``door``) and
pairs the waiting ones continuously (``pairing``), playing each game (``referee``) as it is
paired. SIGINT or SIGTERM stops it: the door closes, the games being played are abandoned
(never stored: a game is stored whole or not at all) and every connection is closed. Run
again with the same folder, it goes on where it was; a ``kill -9`` loses the games being
played, nothing else.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import ssl
from collections.abc import AsyncIterator, Callable

import anyio
import structlog
import trio
from anyio.abc import ByteStream, SocketAttribute

import games
from enginesrv.admission import Admission, descriptor_budget
from enginesrv.event.feed import Feed, event_message
from enginesrv.event.results.wording import result_words
from enginesrv.ladder.accounts import TOKENS, players
from enginesrv.ladder.door import Door
from enginesrv.ladder.lobby import Link, Lobby
from enginesrv.ladder.pairing import History, Waiting, pair
from enginesrv.ladder.referee import Ended, Referee
from enginesrv.ladder.settings import (
    LadderError,
    LadderSettings,
)
from enginesrv.ladder.standings import Board
from enginesrv.ladder.state import Ladder, LadderRun
from enginesrv.ladder.store import Section
from enginesrv.logs import tell
from enginesrv.search.pool import WorkerPool
from enginesrv.serve.app import raise_descriptor_limit
from enginesrv.serve.certificates import watch_reloads
from enginesrv.tokens import TokenFileError

log = structlog.get_logger("enginesrv.ladder.server")

PAIR_EVERY = 1.0
"""Seconds between two looks at who is waiting, when nothing wakes the pairer sooner."""
DESCRIPTORS_PER_GAME = 16
"""Descriptors kept for each game of the ladder (its store and log, a record being written)."""
DESCRIPTORS_PER_HOUSE = 8
"""Descriptors kept for each house bot's search worker (its pipes) and the spawner."""
LEADERBOARD = "leaderboard.json"
"""The standings, written whole after each game (``results --json``'s form)."""


def _open_sections(run: LadderRun) -> tuple[dict[str, Section], dict[str, Board], History]:
    sections, boards = {}, {}
    played: list[tuple[str, str, str]] = []
    for game in run.settings.games:
        section = Section(run.folder, game, run.settings)
        rows = section.open()
        sections[game] = section
        boards[game] = Board(run.settings.anchor, run.min_games).add_all(rows)
        played.extend((game, row.p1, row.p2) for row in rows)
    return sections, boards, History.of(played)


def _house_names_free(run: LadderRun) -> None:
    """Refuse a house bot named as a player (their games would be one player's)."""
    try:
        accounts = {account.name for account in players(run.folder).accounts()}
    except TokenFileError as exc:
        raise LadderError(str(exc)) from None
    for spec in run.house:
        if spec.name in accounts:
            raise LadderError(
                f"--house {spec.text!r}: {spec.name} is a player of this ladder; give the "
                "house bot another name with name=NAME:"
            )


@contextlib.asynccontextmanager
async def open_ladder(run: LadderRun) -> AsyncIterator[Ladder]:
    """The ladder of ``run``, its folder opened (and its stores closed on leaving).

    Raises:
        LadderError: a folder that cannot be used (said in one line).
    """
    try:
        run.folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LadderError(f"{run.folder}: {exc.strerror or exc}") from None
    await trio.to_thread.run_sync(_house_names_free, run)
    anchor = run.house[0].name if run.house else None
    settings = LadderSettings.make(list(run.settings.games), run.settings.tc, anchor)
    run.settings = await trio.to_thread.run_sync(settings.kept, run.folder)
    sections, boards, history = await trio.to_thread.run_sync(_open_sections, run)
    ladder = Ladder(run, Lobby(run.links_per_player), sections, boards, history)
    try:
        yield ladder
    finally:
        for section in sections.values():
            section.close()


async def serve_ladder(
    ladder: Ladder,
    *,
    on_ready: Callable[[str, int], None],
    on_page: Callable[[str], None] | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``ladder`` until ``ladder.stop`` is set (module docstring); ``on_page`` is told
    the web port's address (``--web``) once it is served.

    Raises:
        OSError: the address cannot be listened on.
    """
    run = ladder.run
    listener = await anyio.create_tcp_listener(local_host=run.host, local_port=run.port)
    bound = listener.extra(SocketAttribute.local_address)
    assert isinstance(bound, tuple)
    ladder.address = (str(bound[0]), int(bound[1]))
    admission = _admission(run)
    ladder.door = Door(
        run.folder, ladder.lobby, admission, run.settings.games, run.deadlines, tls=run.tls
    )
    ladder.tls_users = [ladder.door.use]
    feeds = _feeds(ladder) if run.web is not None else {}
    async with trio.open_nursery() as nursery:
        if run.tls is not None and run.reload_tls is not None:
            await nursery.start(
                watch_reloads, run.reload_tls, functools.partial(use_certificate, ladder)
            )
        pool = None
        if run.house:
            pool = WorkerPool(nursery, len(run.house), spare=1, restart_spawner=False)
            await pool.start()
        ladder.referee = Referee(
            run.settings,
            ladder.lobby,
            ladder.sections,
            ladder.boards,
            pool,
            run.deadlines,
            run.grace,
            event=f"ladder {run.folder.name}",
            on_end=lambda ended: _tell_ended(ladder, ended),
            leaderboard=run.folder / LEADERBOARD,
            feeds=feeds,
        )
        _seat_house(ladder)
        try:
            async with trio.open_nursery() as games_nursery:
                games_nursery.start_soon(_accept, ladder, listener)
                page = None
                if run.web is not None:
                    from enginesrv.ladder.web import serve_ladder_web  # noqa: PLC0415 (the web extra)

                    page = await games_nursery.start(
                        functools.partial(
                            serve_ladder_web,
                            ladder,
                            feeds,
                            admission,
                            host=run.host,
                            port=run.web,
                        )
                    )
                on_ready(*ladder.address)
                if page is not None and on_page is not None:
                    on_page(page)
                task_status.started()
                games_nursery.start_soon(_pair_loop, ladder, games_nursery)
                await ladder.stop.wait()
                games_nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                await listener.aclose()
                ladder.door.checker.close()
                if pool is not None:
                    await pool.aclose()
            nursery.cancel_scope.cancel()


def _admission(run: LadderRun) -> Admission:
    """The caps of the ladder's doors, within the descriptors left once its own are kept
    (the house bots' workers' pipes, each game's store, the listeners)."""
    raise_descriptor_limit()
    needs = DESCRIPTORS_PER_HOUSE * (len(run.house) + 1)
    needs += DESCRIPTORS_PER_GAME * len(run.settings.games)
    return Admission(connections=run.connections, descriptors=descriptor_budget(needs))


def _seat_house(ladder: Ladder) -> None:
    """The house bots join the lobby, waiting in their order."""
    house, games_ = ladder.run.house, frozenset(ladder.run.settings.games)
    for index, spec in enumerate(house):
        link = Link(spec.name, None, "house", games_, house=spec.text)
        link.since = -float(len(house) - index)
        ladder.lobby.join(link)


async def _accept(ladder: Ladder, listener: anyio.abc.Listener[ByteStream]) -> None:
    door = ladder.door
    assert door is not None

    async def handle(stream: ByteStream) -> None:
        try:
            address = stream.extra(SocketAttribute.remote_address)
            host = str(address[0]) if isinstance(address, tuple) else str(address)
        except (anyio.TypedAttributeLookupError, OSError):
            host = "unknown"
        await door.handle(stream, host)

    async with anyio.create_task_group() as group:
        await listener.serve(handle, group)


async def _pair_loop(ladder: Ladder, nursery: trio.Nursery) -> None:
    """Pair whoever waits, whenever someone new waits (and every ``PAIR_EVERY`` s)."""
    lobby, referee = ladder.lobby, ladder.referee
    assert referee is not None
    while True:
        changed = lobby.changed
        await _review(ladder, nursery)
        waiting = lobby.idle_links()
        by_key = {link.serial: link for link in waiting}
        chosen = pair(
            [Waiting(link.serial, link.name, link.games, bool(link.house)) for link in waiting],
            ladder.history,
            ladder.run.settings.games,
        )
        for pairing in chosen:
            links = (by_key[pairing.p1.key], by_key[pairing.p2.key])
            for link in links:
                link.busy = True
            nursery.start_soon(referee.play, pairing, links)
        with trio.move_on_after(PAIR_EVERY):
            await changed.wait()


async def _review(ladder: Ladder, nursery: trio.Nursery) -> None:
    """When the token file has changed: no more games for the links of players revoked (or
    given another token) since they logged in, and their idle links closed."""
    path = ladder.run.folder / TOKENS
    try:
        info = os.stat(path)
        stamp: tuple[int, ...] = (info.st_ino, info.st_mtime_ns, info.st_size)
    except OSError:
        stamp = ()
    if stamp == ladder.tokens_stamp:
        return
    try:
        accounts = await trio.to_thread.run_sync(players(ladder.run.folder).accounts)
    except TokenFileError as exc:  # the links stay as they are until it can be read
        log.error("ladder_tokens_unreadable", detail=str(exc))
        return
    ladder.tokens_stamp = stamp
    for link in ladder.lobby.review({account.name: account.digest for account in accounts}):
        log.info("ladder_revoked", player=link.name, peer=link.peer)
        if link.engine is not None:
            nursery.start_soon(link.engine.aclose)


def _feeds(ladder: Ladder) -> dict[str, Feed]:
    """A watch feed for each game of the ladder, its event message published."""
    feeds = {}
    control = str(ladder.run.settings.control)
    for name in ladder.run.settings.games:
        feed = Feed()
        title = f"ladder {ladder.run.folder.name}: {name}"
        feed.publish(event_message(title, games.load(name), [], 0, f"tc={control}"))
        feeds[name] = feed
    return feeds


def use_certificate(ladder: Ladder, tls: ssl.SSLContext) -> None:
    """Give every TLS port of ``ladder``, and those it opens later, a renewed certificate."""
    ladder.run.tls = tls
    for use in ladder.tls_users:
        use(tls)


def _tell_ended(ladder: Ladder, ended: Ended) -> None:
    row = ended.row
    words = result_words(ended.result.outcome, (row.p1, row.p2), ended.result.detail)
    tell(f"game {row.id} {ended.game}: {row.p1} - {row.p2}: {words}\n")
    for told in ladder.ended:
        told(ended)


async def watch_signals(
    stop: trio.Event, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """SIGINT or SIGTERM sets ``stop``."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            log.info("signal", signal=signal.Signals(signum).name)
            stop.set()
            return
