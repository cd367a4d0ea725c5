"""The command line of tuning: ``enginesrv tune`` (a run, shown as it goes) and ``enginesrv
tune-report`` (what a run found). Their arguments are in ``tune_args``."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from enginesrv import orphans
from enginesrv.admission import event_admission
from enginesrv.cli.common import Handler, Subcommands
from enginesrv.cli.display import duration, write_table
from enginesrv.cli.events import debug_traces, event_venue, run_shown, swept, warn
from enginesrv.cli.tune_args import add_tune, add_tune_report, tune_configs
from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.lock import lock_event
from enginesrv.event.prepared import prepare
from enginesrv.event.results.store import open_stored
from enginesrv.event.results.wording import printable, quoted
from enginesrv.tune.config import TUNE_KEY, TuneConfig, check_params
from enginesrv.tune.report import (
    player_line,
    report_json,
    summarize,
    tail_count,
    toml_pairs,
    trajectory_svg,
)
from enginesrv.tune.run import PreparedTune, Stepped, TuneObservers, run_tune
from enginesrv.tune.size import check_store_size
from enginesrv.tune.state import Step, TuneState

SVG_NAME = "trajectory.svg"
"""The picture a run with ``--out DIR`` writes into DIR when it ends."""


def add_tune_commands(sub: Subcommands, fail: type[Exception]) -> None:
    """Register ``tune`` and ``tune-report``; ``fail`` is the CLI's error type."""
    add_tune(sub).set_defaults(func=_tune_handler(fail))
    add_tune_report(sub).set_defaults(func=_report_handler(fail))


def _tune_handler(fail: type[Exception]) -> Handler:
    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        if args.cluster is not None and not args.cluster.strip():
            raise fail("--cluster needs the scheduler's address: tcp://HOST:PORT")
        if hasattr(args, "cluster_listen") and not args.cluster:
            raise fail("--cluster-listen goes with --cluster: give both, or neither")
        tune, config = tune_configs(args, fail)
        out_dir = Path(args.out) if args.out else None
        with contextlib.ExitStack() as held:
            try:
                # the directory is this run's from the look at what it holds to its end
                held.enter_context(lock_event(out_dir))
                prepared = _prepared(tune, config, out_dir, resume=args.resume)
            except EventError as exc:
                raise fail(str(exc)) from None
            state = _play(args, out, err, prepared, out_dir, fail)
        write_summary(out, state.tune, state.steps, state.forfeits)
        if out_dir is not None:
            svg = trajectory_svg(state.tune, state.steps)
            _write_svg(out, out_dir / SVG_NAME, svg, fail, in_place=False)

    return run


def _prepared(
    tune: TuneConfig | None, config: EventConfig, out_dir: Path | None, *, resume: bool
) -> PreparedTune:
    """The run to play: the configuration given, or with ``resume`` the run stored in
    ``out_dir`` (which the one given, if any, must equal)."""
    event = prepare(config, out_dir, resume=resume)
    if resume:
        assert out_dir is not None  # prepare refuses --resume without --out
        stored = _stored_tune(out_dir)
        if tune is not None and tune.to_json() != stored.to_json():
            raise EventError(
                "--resume: the command line differs from the stored run in its player, "
                "parameters or schedule; give only --resume --out DIR, or the same arguments"
            )
        tune = stored
    assert tune is not None
    check_params(tune, event.game.name)
    if not resume:  # a stored run was checked when it began
        check_store_size(tune, event.game.hidden_information, len(event.config.to_json()))
    return PreparedTune(tune, event)


def _stored_tune(out_dir: Path) -> TuneConfig:
    """The tuning run stored in ``out_dir``, read without writing."""
    path = out_dir / "results.sqlite"
    db = open_stored(out_dir, "no tuning run there")
    try:
        text = db.get(TUNE_KEY)
        games = db.config()
    finally:
        db.close()
    if text is None:
        raise EventError(f"{path} holds a match or tournament, not a tuning run")
    try:
        tune = TuneConfig.from_json(text)
    except EventError as exc:
        raise EventError(f"{path}: {exc}") from None
    if games is None or (tuple(games.players), games.games) != (tune.players, tune.games):
        # what --resume plays is the stored event's players: they must be the run's, which
        # tune-report shows (a bot:noisy run's event could otherwise name a cmd:)
        raise EventError(
            f"{path}: the tuning run is damaged: the players or the number of its games "
            f"are not those of its configuration ({quoted(tune.player)}, {tune.games} games)"
        )
    return tune


def _play(
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    prepared: PreparedTune,
    out_dir: Path | None,
    fail: type[Exception],
) -> TuneState:
    """Play the run, shown as it goes; its state at the end."""
    event = prepared.event
    display = TuneDisplay(out, err, prepared, live=err.isatty())
    if args.cluster:
        display.where = f"on the cluster {args.cluster}"
    traces = debug_traces(event, out_dir, err, "tune")
    admission = event_admission(event.config.concurrency)
    orphans.adopt()  # the arbiter is the last reaper of its engines' processes
    observers = TuneObservers(
        on_step=display.step,
        on_start=display.start,
        on_tick=display.tick if display.live else None,
    )
    venue = event_venue(args, traces, admission, functools.partial(warn, err, "tune"))
    play = functools.partial(run_tune, prepared, out_dir, observers, venue=venue)
    return run_shown(lambda: swept(play), display.close, fail)


class TuneDisplay:
    """Progress: a line per step on stdout (the iteration, its result and ``theta``); on a
    terminal also a status line on stderr (iterations done, time, ETA, the forfeits so far),
    redrawn every second."""

    def __init__(self, out: TextIO, err: TextIO, prepared: PreparedTune, *, live: bool) -> None:
        self.out, self.err = out, err
        self.prepared = prepared
        self.live = live
        self.where = ""
        self.first = self.done = 0
        self.elapsed = 0.0
        self.forfeits = 0

    def start(self, state: TuneState) -> None:
        tune, event = self.prepared.tune, self.prepared.event
        self.first = self.done = len(state.steps)
        self.forfeits = state.forfeits.total()  # a resumed run's, from the games stored
        names = ", ".join(p.name for p in tune.params)
        resumed = f", resuming after {self.done} iterations" if self.done else ""
        where = self.where or f"concurrency {event.config.concurrency}"
        self.err.write(
            f"tune {event.game.name}: {printable(tune.player)}, "
            f"{_count(len(tune.params), 'parameter')} ({names}), "
            f"{tune.games} games ({tune.schedule.iterations} iterations), "
            f"{event.limits.describe()}, {where}{resumed}\n"
        )
        self.err.flush()

    def step(self, stepped: Stepped) -> None:
        self._clear()
        taken, tune = stepped.step, self.prepared.tune
        theta = " ".join(f"{p.name}={v:.4g}" for p, v in zip(tune.params, taken.theta, strict=True))
        self.out.write(
            f"iteration {taken.k}/{tune.schedule.iterations}: result {taken.result:+d}; {theta}\n"
        )
        self.out.flush()
        self.done = len(stepped.state.steps)
        self.forfeits = stepped.state.forfeits.total()
        self.tick(stepped.elapsed)

    def tick(self, elapsed: float) -> None:
        """Redraw the status line with the time so far and the estimate of what is left."""
        self.elapsed = elapsed
        if not self.live:
            return
        total = self.prepared.tune.schedule.iterations
        played = self.done - self.first
        eta = f"eta {duration(elapsed / played * (total - self.done))}" if played else "eta -"
        lost = f" forfeits {self.forfeits}" if self.forfeits else ""
        self.err.write(f"\r\x1b[K[{self.done}/{total}] time {duration(elapsed)} {eta}{lost}")
        self.err.flush()

    def _clear(self) -> None:
        if self.live:
            self.err.write("\r\x1b[K")
            self.err.flush()

    def close(self) -> None:
        self._clear()
        self.live = False


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def write_summary(
    out: TextIO, tune: TuneConfig, steps: list[Step], forfeits: Mapping[str, int]
) -> None:
    """The table of the final values, then the lines to paste into a player spec and a TOML
    file; first a warning of the games lost by a forfeit (``forfeits``, by reason), if any."""
    found = summarize(tune, steps)
    done = len(steps)
    out.write(
        f"{done} of {tune.schedule.iterations} iterations ({2 * done} games); final value: "
        f"the mean of the last {tail_count(done)} steps\n"
    )
    if lost := sum(forfeits.values()):
        reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(forfeits.items()))
        out.write(
            f"warning: {_count(lost, 'game')} lost by a forfeit ({reasons}): such a game "
            "tells of the machine or the engine, not of the weights (enginesrv results DIR)\n"
        )
    head = ("parameter", "start", "final", "+/-sd", "min", "max", "step")
    rows = [
        (
            f.param.name,
            f"{f.param.start:g}",
            f.value,
            f"{f.spread:.2f}",
            f"{f.param.low:g}",
            f"{f.param.high:g}",
            f"{f.param.c_end:g}",
        )
        for f in found
    ]
    write_table(out, head, rows)
    out.write(f"player {printable(player_line(tune, found))}\n")
    out.write(f"toml   options = {{ {', '.join(toml_pairs(found))} }}\n")


def _report_handler(fail: type[Exception]) -> Handler:
    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        del err
        out_dir = Path(args.dir)
        try:
            tune = _stored_tune(out_dir)
            db = open_stored(out_dir, "no tuning run there")
            try:
                state = TuneState.load(tune, db)
            finally:
                db.close()
        except EventError as exc:
            raise fail(str(exc)) from None
        if args.json:
            report = report_json(tune, state.steps, state.forfeits)
            out.write(json.dumps(report, indent=2) + "\n")
            return
        write_summary(out, tune, state.steps, state.forfeits)
        if args.table:
            _write_steps(out, tune, state.steps)
        svg = trajectory_svg(tune, state.steps)
        if args.svg == "-":
            out.write(svg)
            return
        target = Path(args.svg) if args.svg else out_dir / SVG_NAME
        _write_svg(out, target, svg, fail, in_place=bool(args.svg))

    return run


def _write_svg(
    out: TextIO, target: Path, svg: str, fail: type[Exception], *, in_place: bool
) -> None:
    """Write the picture to ``target``: a file named with ``--svg`` as it is (a device, or
    through a link, as its user wrote it), ``DIR/trajectory.svg`` as a new file renamed over
    whatever is there (the directory may be anyone's: a link there is replaced, not
    followed, and a FIFO never waited on)."""
    try:
        if in_place:
            target.write_text(svg, encoding="utf-8")
        else:
            _replace(target, svg)
    except OSError as exc:
        raise fail(f"{target}: cannot write the picture: {exc.strerror or exc}") from None
    out.write(f"picture {target}\n")


def _replace(target: Path, text: str) -> None:
    """``text`` as the file ``target``, written under a new name beside it (made without
    following a link) and renamed over it."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.new")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        with open(os.open(temporary, flags, 0o666), "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _write_steps(out: TextIO, tune: TuneConfig, steps: list[Step]) -> None:
    out.write("\n")
    head = ("step", "iteration", "result", *(p.name for p in tune.params))
    rows = [(str(s.seq), str(s.k), f"{s.result:+d}", *(f"{v:.4g}" for v in s.theta)) for s in steps]
    write_table(out, head, rows, left=())
