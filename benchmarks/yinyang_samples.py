"""How well alphabeta's Yin Yang determinizer guesses, and what its samples cost, measured on
the records of a finished match (a ``benchmarks/ladder.py`` run directory).

Usage: python benchmarks/yinyang_samples.py inference RUN_DIR [--games 25] [--draws 100]
       python benchmarks/yinyang_samples.py depths RUN_DIR
       python benchmarks/yinyang_samples.py cost RUN_DIR [--game N] [--draws 8]

``inference`` replays each game, gives each player's determinizer (``YinYangHidden``) what that
player saw, as a bot in the match does (``remember`` after each of its decisions), and at the
start of every turn after the first draws ``--draws`` samples of the opponent's hidden laws.
For each hidden slot it counts how often the law the opponent really held was drawn: the mean
log-probability of the true law (add-half smoothing over the 405 laws), and how often it was
drawn at all, for slots seen rewritten and for the others, with the share of samples drawn as
our own setup draws (``SELF_MODEL_SHARE``) at 0, today's value and 1. Higher is better.

``depths`` reads the ``depth=`` of every decision at the start of a turn in the records and
prints each player's mean and median depth, and the share at depth 5 or less: what a player's
samples cost it in depth under the match's own load.

``cost`` replays the run's longest game (or ``--game N``) as one player saw it and times the
drawing of ``--draws`` samples (8) at the start of each of its turns: the median and the worst,
overall and in the last quarter of the game. That time comes before the search and counts
against the decision's time, so it must not grow with the game's length.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from bots.eval import yinyang  # noqa: E402
from enginesrv.event.play.records import parse_record  # noqa: E402
from games.yinyang import N_LAWS, UNKNOWN, YinYangState  # noqa: E402


def records(run: Path, limit: int | None) -> list[tuple[dict[str, str], list[str]]]:
    """The headers and move tokens of a run's game records, in order."""
    out = []
    for path in sorted((run / "games").glob("game-*.txt"))[:limit]:
        record = parse_record(path.read_text())
        out.append((record.headers, [move.token for move in record.moves]))
    if not out:
        raise SystemExit(f"yinyang_samples: no game records in {run / 'games'}")
    return out


def inference(run: Path, limit: int, draws: int) -> None:
    game = games.load("yinyang")
    played = records(run, limit)
    today = yinyang.SELF_MODEL_SHARE
    for share in sorted({0.0, today, 1.0}):
        rng = random.Random(3)
        tally: dict[str, list[float]] = {"rewritten": [0.0, 0, 0], "other": [0.0, 0, 0]}
        for _, tokens in played:
            state = game.new_state()
            assert isinstance(state, YinYangState)
            seers = (
                yinyang.YinYangHidden(self_model_share=share),
                yinyang.YinYangHidden(self_model_share=share),
            )
            for token in tokens:
                move = state.parse_move(token)
                if state.phase() != "setup" and not state.is_terminal():
                    me = state.to_move()
                    view = state.view(me)
                    if state.phase() == "start" and state.turn() > 1:
                        _score(seers[me], view, state, 1 - me, rng=rng, draws=draws, tally=tally)
                    seers[me].remember(view, move)
                state.push(move)
        parts = []
        for kind, (logp, slots, hits) in tally.items():
            if slots:
                parts.append(
                    f"{kind}: mean log p {logp / slots:.3f}, drawn {hits / slots:.1%} "
                    f"({int(slots)} slots)"
                )
        total = sum(t[1] for t in tally.values())
        mean = sum(t[0] for t in tally.values()) / max(1, total)
        print(f"self-model share {share:.1f}: mean log p {mean:.3f}; " + "; ".join(parts))


def _score(
    seer: yinyang.YinYangHidden,
    view: YinYangState,
    state: YinYangState,
    opponent: int,
    *,
    rng: random.Random,
    draws: int,
    tally: dict[str, list[float]],
) -> None:
    shown, _ = view.laws(opponent)
    true, _ = state.laws(opponent)
    assert shown is not None
    assert true is not None
    slots = [slot for slot in range(4) if shown[slot] == UNKNOWN]
    if not slots:
        return
    samples = seer.samples(view, rng, draws)
    for slot in slots:
        count = 0
        for sample in samples:
            assert isinstance(sample, YinYangState)
            laws, _ = sample.laws(opponent)
            count += laws is not None and laws[slot] == true[slot]
        p = (count + 0.5) / (draws + 0.5 * N_LAWS)
        kind = "rewritten" if (opponent, slot) in seer._rewritten else "other"
        tally[kind][0] += math.log(p)
        tally[kind][1] += 1
        tally[kind][2] += count > 0


def depths(run: Path) -> None:
    game = games.load("yinyang")
    found: dict[str, list[int]] = {}
    for path in sorted((run / "games").glob("game-*.txt")):
        record = parse_record(path.read_text())
        names = (record.headers.get("P1", "p1"), record.headers.get("P2", "p2"))
        state = game.new_state()
        assert isinstance(state, YinYangState)
        for move in record.moves:
            if state.phase() == "start":
                depth = dict(move.annotations).get("depth")
                if depth is not None and depth.isdigit():
                    found.setdefault(names[state.to_move()], []).append(int(depth))
            state.push(state.parse_move(move.token))
    for name, values in sorted(found.items()):
        shallow = sum(1 for v in values if v <= 5) / len(values)
        print(
            f"{name}: {len(values)} decisions, depth mean {statistics.mean(values):.2f}, "
            f"median {statistics.median(values):g}, at most 5: {shallow:.1%}"
        )


def cost(run: Path, number: int | None, draws: int) -> None:
    paths = sorted((run / "games").glob("game-*.txt"))
    if not paths:
        raise SystemExit(f"yinyang_samples: no game records in {run / 'games'}")
    if number is not None:
        chosen = run / "games" / f"game-{number:05d}.txt"
        if not chosen.exists():
            raise SystemExit(f"yinyang_samples: no record {chosen}")
    else:
        chosen = max(paths, key=lambda path: len(parse_record(path.read_text()).moves))
    record = parse_record(chosen.read_text())
    game = games.load("yinyang")
    evaluator = yinyang.YinYangEvaluator()
    evaluator.prepare()  # as an engine's worker does when it starts
    for me in (0, 1):
        state = game.new_state()
        assert isinstance(state, YinYangState)
        seer = yinyang.YinYangHidden()
        rng = random.Random(me)
        times: list[tuple[int, float]] = []
        for move in record.moves:
            token = move.token
            parsed = state.parse_move(token)
            if state.to_move() == me and state.phase() != "setup" and not state.is_terminal():
                view = state.view(me)
                if state.phase() == "start" and view.is_view():
                    started = time.perf_counter()
                    seer.samples(view, rng, draws)
                    times.append((state.ply(), time.perf_counter() - started))
                seer.remember(view, parsed)
            state.push(parsed)
        if not times:
            continue
        late = [t for ply, t in times if ply >= 0.75 * len(record.moves)] or [0.0]
        every = [t for _, t in times]
        print(
            f"{chosen.name} ({len(record.moves)} plies), p{me + 1}: {len(times)} draws of "
            f"{draws}: median {statistics.median(every) * 1000:.2f} ms, worst "
            f"{max(every) * 1000:.2f} ms; last quarter median "
            f"{statistics.median(late) * 1000:.2f} ms, worst {max(late) * 1000:.2f} ms"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    inf = sub.add_parser("inference", help="how likely the samples make the true hidden laws")
    inf.add_argument("run", type=Path, help="a match directory (its games/ records)")
    inf.add_argument("--games", type=int, default=25, help="records replayed (25)")
    inf.add_argument("--draws", type=int, default=100, help="samples per position (100)")
    dep = sub.add_parser("depths", help="each player's search depth in a match's records")
    dep.add_argument("run", type=Path, help="a match directory (its games/ records)")
    cst = sub.add_parser("cost", help="how long drawing the samples takes as a game goes on")
    cst.add_argument("run", type=Path, help="a match directory (its games/ records)")
    cst.add_argument("--game", type=int, help="the record's number (default: the longest)")
    cst.add_argument("--draws", type=int, default=8, help="samples per decision (8)")
    args = parser.parse_args()
    if args.what == "inference":
        inference(args.run, args.games, args.draws)
    elif args.what == "cost":
        cost(args.run, args.game, args.draws)
    else:
        depths(args.run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
