"""``enginesrv selfplay``: games of a bot against itself on the worker pool, written for
learners as one columnar ``.npz`` file (``enginesrv.selfplay``; docs/envs.md, "Self-play
data"). The same command again goes on where a stopped run was."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any, TextIO

import games
from enginesrv.cli.common import CommandError, Subcommands, natural, positive
from enginesrv.cli.display import duration
from enginesrv.event.results.wording import printable

MOST_GAMES = 10_000_000


def add_selfplay(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv selfplay``."""
    p = sub.add_parser(
        "selfplay",
        help="play a bot against itself and write the decisions for learners (.npz)",
        description="Play GAMES games of a bot against itself on worker processes, each "
        "decision a search of the acting player's view, and write every decision of the bot "
        "as a row of OUT (a NumPy .npz file): the environment's observation (envs, from the "
        "acting player's side), the action played, the scores of the first decisions its "
        "search scored, and the game's result for that player. Each game starts with "
        "--random-plies random decisions, so that the games differ. Games are kept as they "
        "end in OUT.parts/; the same command again goes on where a stopped one was. Needs "
        "the [envs] extra. docs/envs.md, 'Self-play data', describes the file.",
    )
    p.add_argument("game", metavar="GAME", help="game name: " + ", ".join(games.available()))
    p.add_argument("--games", metavar="N", type=positive, required=True, help="games to play")
    p.add_argument("--out", metavar="FILE", required=True, help="the .npz file to write")
    p.add_argument("--bot", default="alphabeta", help="the bot (default alphabeta)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--depth", metavar="N", type=positive, help="plies a search (default 1)")
    limit.add_argument("--nodes", metavar="N", type=positive, help="nodes a search")
    p.add_argument(
        "--option", metavar="NAME=VALUE", action="append", default=[], help="a bot option"
    )
    p.add_argument(
        "--random-plies",
        metavar="N",
        type=natural,
        default=4,
        help="random decisions at the start of each game (default 4)",
    )
    p.add_argument(
        "--max-plies", metavar="N", type=positive, help="truncate a game after N decisions"
    )
    p.add_argument("--seed", type=natural, default=1, help="the run's seed (default 1)")
    p.add_argument(
        "--workers",
        metavar="N",
        type=positive,
        default=min(2, os.cpu_count() or 1),
        help="games played at once, each on a worker process (default 2)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    return p


def cmd_selfplay(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv selfplay`` (module docstring)."""
    try:
        from enginesrv.selfplay.play import SelfPlayError  # noqa: PLC0415
        from enginesrv.selfplay.store import Parts  # noqa: PLC0415
    except ImportError as exc:
        raise CommandError(
            f"selfplay needs the [envs] extra (numpy, gymnasium, pettingzoo): {exc}; "
            "pip install -e '.[envs]'"
        ) from None
    settings = _settings(args)
    target = Path(args.out)
    try:
        parts = Parts(target)
        done = parts.begin(settings.config())
    except (ValueError, OSError) as exc:
        raise CommandError(_said(exc, args.out)) from None
    progress = _Progress(err, settings.games, len(done))
    try:
        joined = _play_and_join(settings, parts, done, args.workers, progress, err)
    except SelfPlayError as exc:
        raise CommandError(f"selfplay: {printable(str(exc))}") from None
    except OSError as exc:
        raise CommandError(_said(exc, args.out)) from None
    finally:
        parts.close()
    progress.close()
    summary = _summary(joined, progress, target)
    played = settings.games - len(done)
    summary["workers"] = min(args.workers, played) if played else 0
    if summary["workers"]:
        summary["positions_per_second_per_worker"] = round(progress.rate() / summary["workers"])
    if args.json:
        out.write(json.dumps(summary) + "\n")
        return
    winners = summary["winners"]
    out.write(
        f"selfplay {settings.game}: {settings.games} games (p1 {winners['p1']}, p2 "
        f"{winners['p2']}, draws {winners['draw']}, truncated {winners['truncated']}), "
        f"{summary['rows']} positions; {summary['positions_per_second']} positions a second "
        f"once the workers had started -> {printable(str(target))}\n"
    )


def _play_and_join(
    settings: Any, parts: Any, done: set[int], workers: int, progress: _Progress, err: TextIO
) -> dict[str, Any]:
    """Play the games not done, then join the parts; a damaged part's game is played again
    (once: a part damaged again is an error)."""
    from enginesrv.selfplay.play import run  # noqa: PLC0415
    from enginesrv.selfplay.store import DamagedPartsError  # noqa: PLC0415

    shape = _shape(settings.game)
    for round_ in (1, 2):
        todo = [n for n in range(settings.games) if n not in done]
        if todo:
            run(settings, parts, todo, workers, progress.tell, progress.ready)
        try:
            joined: dict[str, Any] = parts.join(settings.config(), shape)
        except DamagedPartsError as exc:
            if round_ == 2:
                raise OSError(f"{parts.folder}: its parts were damaged again") from None
            err.write(f"selfplay: {len(exc.numbers)} damaged part files, played again\n")
            done -= set(exc.numbers)
            progress.done -= len(exc.numbers)
            continue
        return joined
    raise AssertionError("not reached")


def _shape(game: str) -> tuple[int, ...]:
    import envs  # noqa: PLC0415

    return envs.adapter(game).shape


def _said(exc: Exception, out: str) -> str:
    """One line for an error of the file or its parts."""
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename if exc.filename is not None else out
        return f"{printable(str(where))}: {exc.strerror}"
    return printable(str(exc))


def _settings(args: argparse.Namespace) -> Any:
    from bots.eval import evaluated_games, evaluator_for  # noqa: PLC0415
    from bots.registry import bot_names, create_bot  # noqa: PLC0415
    from enginesrv.selfplay.play import Settings  # noqa: PLC0415

    try:
        game = games.load(args.game)
    except games.UnknownGameError as exc:
        raise CommandError(f"game {printable(args.game)!r}: {exc.reason}") from None
    if args.bot not in bot_names():
        raise CommandError(f"--bot {printable(args.bot)!r}: the bots are {', '.join(bot_names())}")
    if args.games > MOST_GAMES:
        raise CommandError(f"--games {args.games}: at most {MOST_GAMES:,}")
    engine = create_bot(args.bot)
    options = []
    for text in args.option:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise CommandError(f"--option {printable(text)!r}: write NAME=VALUE")
        try:
            engine.set_option(name, value)
        except ValueError as exc:
            raise CommandError(f"--option {printable(text)!r}: {exc}") from None
        options.append((name, value))
    if not engine.supports(game.name):
        raise CommandError(f"--bot {args.bot}: it does not play {game.name}")
    names = {option.name for option in engine.options}
    scale = evaluator_for(game.name).expectation_scale if game.name in evaluated_games() else 400.0
    return Settings(
        game=game.name,
        games=args.games,
        bot=args.bot,
        depth=args.depth if args.depth or args.nodes else 1,
        nodes=args.nodes,
        options=tuple(options),
        seed=args.seed,
        random_plies=args.random_plies,
        max_plies=args.max_plies,
        secret_seed=game.hidden_information and "SecretSeed" in names,
        scale=scale,
    )


class _Progress:
    """One line a second on stderr: games done of all, positions, their rate, the time left."""

    def __init__(self, err: TextIO, total: int, done: int) -> None:
        self.err, self.total, self.done, self.before = err, total, done, done
        self.rows = 0
        self.began = self.said = self.last = time.monotonic()

    def ready(self) -> None:
        """The workers have started: the rate counts from now."""
        self.began = self.said = self.last = time.monotonic()

    def tell(self, number: int, rows: int) -> None:
        del number
        self.done += 1
        self.rows += rows
        now = self.last = time.monotonic()
        if now - self.said < 1.0 and self.done < self.total:
            return
        self.said = now
        spent = now - self.began
        played = self.done - self.before
        eta = duration(spent / played * (self.total - self.done)) if played else "-"
        self.err.write(
            f"selfplay: {self.done}/{self.total} games, {self.rows} positions, "
            f"{self.rate():.0f} a second, eta {eta}\n"
        )
        self.err.flush()

    def rate(self) -> float:
        """Positions a second, from the workers' start to the last game's end."""
        spent = self.last - self.began
        return self.rows / spent if spent > 0 else 0.0

    def close(self) -> None:
        self.err.flush()


def _summary(joined: dict[str, Any], progress: _Progress, target: Path) -> dict[str, Any]:
    winners = joined["game_winner"].tolist()
    return {
        "file": str(target),
        "games": len(winners),
        "rows": len(joined["action"]),
        "winners": {
            "p1": winners.count(0),
            "p2": winners.count(1),
            "draw": winners.count(-1),
            "truncated": winners.count(-2),
        },
        "positions_per_second": round(progress.rate()),
    }
