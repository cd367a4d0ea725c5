"""An event's results store as one run of it opens it (``open_event_store``): made, with the
configuration, when the run is the event's first, or opened to resume; the runner's ``check``
made before anything is written (a player that cannot play leaves nothing behind) or, when
the event resumes, before its first game; a store this run made and stored no game in
removed when the run fails. Matches, tournaments and tuning runs open theirs so, and store
their games with ``OpenedStore.keep``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import trio

from enginesrv.event.config import EventError
from enginesrv.event.play.plan import Played
from enginesrv.event.play.records import format_record
from enginesrv.event.prepared import PreparedEvent
from enginesrv.event.results.rows import GameRow, game_row
from enginesrv.event.results.store import ResultsDB, store_game
from enginesrv.event.runners.base import GameRunner
from enginesrv.event.schedule import ScheduledGame


class OpenedStore:
    """An event's store as this run uses it: ``stored`` counts the games the run stores."""

    def __init__(self, db: ResultsDB, out_dir: Path | None, *, created: bool) -> None:
        self.db = db
        self.out_dir = out_dir
        self.created = created
        """Whether this run made the store."""
        self.stored = 0
        self._lock = trio.Lock()

    async def keep(
        self,
        event: PreparedEvent,
        item: ScheduledGame,
        played: Played,
        runner: GameRunner,
        *,
        with_row: Callable[[GameRow], list[tuple[str, str]]] | None = None,
    ) -> GameRow:
        """Store the game ``item`` of ``event`` as ``played`` (its record in ``games/``, then
        in one transaction its row, a hidden-information game's secret seeds, and the meta
        entries ``with_row`` makes of the row: a tuning run's iteration and step), tell
        ``runner`` whether it was stored, and return its row.

        Raises:
            OSError, sqlite3.Error: the record or the row could not be written.
        """
        out_dir = self.out_dir
        row = game_row(item, event.names, played.result, with_record=out_dir is not None)
        meta = [] if with_row is None else with_row(row)
        if event.game.hidden_information:
            # the secret seeds are kept for audit, once the game is over (stored with its
            # row: a stored game always has them)
            meta.append((f"seeds:{item.id}", json.dumps(list(played.secret_seeds))))
        record_text = format_record(played.result.record)

        def store() -> None:
            store_game(
                self.db,
                row,
                out_dir=out_dir,
                record_name=row.record,
                record_text=record_text,
                meta=meta,
            )

        stored = False
        try:
            await self.write(store, in_thread=runner.clocks_here)
            stored = True
        finally:
            runner.settle(item.id, stored=stored)
        self.stored += 1
        return row

    async def write(self, work: Callable[[], None], *, in_thread: bool) -> None:
        """Run ``work``, a write to the store, one at a time: ``in_thread`` when games'
        clocks run on this event loop (the file and database writes wait on the disk, an
        fsync each), else here (no clock runs on this loop, and a thread's two hand-overs
        would cost more than the writes hold it)."""
        if in_thread:
            async with self._lock:
                await trio.to_thread.run_sync(work)
        else:
            work()


@contextlib.asynccontextmanager
async def open_event_store(
    event: PreparedEvent,
    out_dir: Path | None,
    runner: GameRunner,
    *,
    pending: Callable[[ResultsDB], bool],
    meta: Mapping[str, str] | None = None,
) -> AsyncIterator[OpenedStore]:
    """The store of ``event`` in ``out_dir`` (in memory without one), made with ``meta``
    beside the configuration when it does not exist (module docstring). ``pending`` tells,
    of a store that exists, whether the run has a game left to play (the runner is checked
    only then).

    Raises:
        EventError: a player that cannot play, a results directory that cannot be made or
            written, or a damaged store (kept as it is).
    """
    db_path = None if out_dir is None else out_dir / "results.sqlite"
    # only a store this run makes may be removed (when it ends before a game is stored)
    created = db_path is None or not db_path.exists()
    if created:
        await runner.check()
    if out_dir is not None:
        records = out_dir / "games"
        try:
            records.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EventError(f"{out_dir}: cannot create the results directory: {exc}") from None
        if records.is_symlink():  # its records would be written where the link points
            raise EventError(f"{records} is a symbolic link: the records are kept in {out_dir}")
    db = ResultsDB.create(db_path, event.config, meta) if created else ResultsDB(db_path)
    opened = OpenedStore(db, out_dir, created=created)
    try:
        db.write_ahead()
        if db.config() is None:
            db.put("config", event.config.to_json())
        if not created and pending(db):
            await runner.check()
        try:
            yield opened
        except EventError:
            if db_path is not None and created and opened.stored == 0:
                # this run made the store and stored no game in it: leave no event behind, so
                # the corrected command runs (a store that was there before is never removed)
                db.close()
                db_path.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    (db_path.parent / "games").rmdir()
            raise
    finally:
        db.close()
