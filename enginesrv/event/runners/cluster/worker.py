"""The worker's side of an event on a cluster: the Dask tasks a worker runs for it
(``play_task``, ``preflight_task``, ``release_task``), each on the host of its process
(``host.WorkerHost``).

Each game is one task, ``play_task``, which a worker runs with the arbiter's own code:
``play.plan.play_planned`` with its bots' searches in worker processes of that machine and
its ``cmd:`` engines started there. A finished game goes straight back to the coordinator
(``WorkerHost.push``) before the task ends, and the task then returns a marker only; a worker
that cannot reach the coordinator (a firewall, a cluster behind NAT, ``--cluster-listen
off``) returns the result as the task's value, as Dask would.

Dask sends these functions to the workers by name: they stay at this module's top level.
"""

from __future__ import annotations

import time

import trio

import games
from enginesrv.event.play.plan import play_planned
from enginesrv.event.play.players import ForfeitError, GameOptions, PlayerSpecError
from enginesrv.event.play.slots import Slot, make_player
from enginesrv.event.runners.cluster.host import WorkerHost
from enginesrv.event.runners.cluster.wire import GameTask, TaskResult, import_distributed


def _this_worker() -> tuple[str, WorkerHost]:
    """This worker's address, and the host of its games (one search process a thread)."""
    worker = import_distributed().get_worker()
    return str(worker.address), WorkerHost.get(int(worker.state.nthreads))


def play_task(task: GameTask) -> TaskResult:
    """Play one game on this worker (a Dask task)."""
    address, host = _this_worker()
    stop = import_distributed().Event(task.stop) if task.stop else None

    async def play() -> TaskResult:
        with trio.CancelScope() as scope:
            if stop is not None:
                host.watch(stop, task.stop, scope, task.settings.stop_poll)
            try:
                return await _play(host, task, address)
            finally:
                host.unwatch(task.stop, scope)
        assert scope.cancelled_caught
        return TaskResult(None, (0, 0), address, time.time())

    result: TaskResult = host.call(play)
    return result


async def _play(host: WorkerHost, task: GameTask, address: str) -> TaskResult:
    """Play the game of ``task`` on ``host``'s loop, with a slot of its event (kept for the
    event's next game), and send its result straight back when the task says where."""
    key = task.config
    event = host.event(key)
    wrap = (await host.containment(key)).wrap
    cap = event.config.log_cap << 20
    slot = host.take(
        key, lambda: Slot(list(event.specs), host.pool, event.deadlines, None, wrap, log_cap=cap)
    )
    finished = False
    try:
        played = await play_planned(event.game, slot, task.plan)
        finished = True
        answer = TaskResult(played.result, played.secret_seeds, address, time.time())
        game_id = task.plan.game_id
        if task.reply is not None and await host.push(task.reply, game_id, answer, task.settings):
            return TaskResult(None, (0, 0), address, answer.finished_at, delivered=True)
        return answer
    finally:
        if finished:
            await host.give_back(key, slot)
        else:  # stopped mid-game: its players are in no state for another
            await slot.close()


def release_task(config_json: str) -> None:
    """The event of ``config_json`` has ended: its engines kept started on this worker for
    its next game are ended (a Dask task, sent to every worker)."""
    _, host = _this_worker()
    host.call(host.release, config_json)


def preflight_task(config_json: str, options: GameOptions = ()) -> dict[str, str]:
    """Start each player of the event once on this worker (a Dask task), telling it of a new
    game with ``options`` when there are any (a tuning run's start values, as
    ``preflight.check_players`` does on the coordinator's machine): the players that cannot
    start here, or refuse the game or an option, by name, with the reason."""
    _, host = _this_worker()
    problems: dict[str, str] = host.call(_check_players, host, config_json, options)
    return problems


async def _check_players(
    host: WorkerHost, config_json: str, options: GameOptions
) -> dict[str, str]:
    """``preflight_task`` on ``host``'s loop."""
    event = host.event(config_json)
    game, deadlines = event.game, event.deadlines
    problems: dict[str, str] = {}
    containment = await host.containment(config_json)
    for spec in event.specs:
        name = spec.name
        if spec.kind == "cmd" and containment.notice is not None:
            problems[name] = f"cannot contain its engine here: {containment.notice}"
            continue
        wrapper = containment.wrap(spec.command) if containment.wrap and spec.kind == "cmd" else ()
        player = make_player(spec, host.pool, deadlines, wrapper=wrapper)
        try:
            await player.start(game)
            if options:
                await player.new_game("preflight", 0, 0, options)
        except ForfeitError as exc:
            problems[name] = f"{exc.reason}: {exc.detail}"
        except (PlayerSpecError, games.GameError, OSError) as exc:
            problems[name] = str(exc)
        finally:
            await player.close()
    return problems
