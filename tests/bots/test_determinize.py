"""The determinized search (``bots.determinize``): how sample values are combined, the root
search over samples, and the worlds it draws for Yin Yang."""

from __future__ import annotations

import math
import random

import pytest

from bots.determinize import (
    Sampling,
    _best_root_move,
    _combined_score,
    _weighted_sum,
    determinized_search,
    expected_score,
)
from bots.engine import Limits, Score
from bots.eval import MAX_EVAL, evaluator_for
from bots.eval.yinyang import YinYangHidden, rewrite_laws
from bots.registry import create_bot
from bots.search import PROVEN, WIN, Searcher, SearchMemory, TranspositionTable
from games import State
from games.yinyang import ABS_CAUSE, LAW_OF_TEXT, UNKNOWN, YinYangState
from tests.bots.test_eval_yinyang import random_positions, state_of

SCALE = 300.0


def test_expected_scores_order_every_value() -> None:
    values = [-WIN + 1, -WIN + 5, -PROVEN, -5000, -1, 0, 1, 5000, PROVEN, WIN - 5, WIN - 1]
    scores = [expected_score(v, SCALE) for v in values]
    assert scores == sorted(scores)
    assert len(set(scores)) == len(scores)
    assert expected_score(0, SCALE) == pytest.approx(0.5)
    assert expected_score(WIN - 1, SCALE) == pytest.approx(1.0, abs=1e-3)
    assert expected_score(-WIN + 1, SCALE) == pytest.approx(0.0, abs=1e-3)


def test_a_loss_in_one_sample_of_eight_does_not_outweigh_a_clear_edge() -> None:
    # a move winning the race by a threat in seven samples and lost in one scores more than
    # a move that is level in all eight (raw sums made the loss count for 25 such threats)
    risky = [700] * 7 + [-WIN + 3]
    level = [0] * 8
    assert _weighted_sum(risky, [1] * 8, SCALE) > _weighted_sum(level, [1] * 8, SCALE)
    # but a loss in half the samples is not paid for by a small edge in the others
    half = [100] * 4 + [-WIN + 3] * 4
    assert _weighted_sum(half, [1] * 8, SCALE) < _weighted_sum(level, [1] * 8, SCALE)


def test_combined_scores() -> None:
    # proven in the only world: the longest of the wins (there is one world when nothing hides)
    assert _combined_score([WIN - 3, WIN - 5], False, SCALE) == Score("win", 5)
    assert _combined_score([-WIN + 4], False, SCALE) == Score("loss", 4)
    assert _combined_score([WIN - 3, WIN - 5], True, SCALE) == Score("cp", MAX_EVAL - 1)
    assert _combined_score([-WIN + 3], True, SCALE) == Score("cp", -MAX_EVAL + 1)
    assert _combined_score([123], True, SCALE) == Score("cp", 123)
    # the mean expected score, back in centipawns: two values around zero give about zero
    mean = _combined_score([200, -200], True, SCALE)
    assert mean.kind == "cp"
    assert abs(mean.value) <= 1
    # one loss among wins is a good score, not a proven result and not the cap
    mixed = _combined_score([WIN - 3, WIN - 3, WIN - 3, -WIN + 3], True, SCALE)
    assert mixed.kind == "cp"
    assert 0 < mixed.value < MAX_EVAL - 1


def _searchers(worlds: list[YinYangState]) -> list[Searcher]:
    evaluator = evaluator_for("yinyang")
    return [
        Searcher(
            world.copy(),
            evaluator=evaluator,
            memory=SearchMemory(TranspositionTable(4)),
            limits=Limits(),
            stop=lambda: False,
            on_info=lambda info: None,
        )
        for world in worlds
    ]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_root_search_over_samples_chooses_as_full_windows_would(depth: int) -> None:
    evaluator = evaluator_for("yinyang")
    hidden = YinYangHidden()
    rng = random.Random(depth)
    checked = saved = 0
    for state in random_positions(12, seed=40 + depth):
        view = state.view(state.side())
        assert isinstance(view, YinYangState)
        moves = list(evaluator.search_moves(view))
        if not view.is_view() or len(moves) < 2:
            continue
        worlds = [w for w in hidden.samples(view, rng, 3) if isinstance(w, YinYangState)]
        weights = [1, 2, 1]
        full = _searchers(worlds)
        per_move: dict[int, list[int]] = {move: [] for move in moves}
        for searcher in full:
            for move, value in searcher.root_values(depth, moves).items():
                per_move[move].append(value)
        exact = {move: _weighted_sum(per_move[move], weights, SCALE) for move in moves}
        fast = _searchers(worlds)
        values, totals = _best_root_move(fast, weights, moves, depth, SCALE)
        chosen = max(moves, key=lambda m: (totals[m], -moves.index(m)))
        want = max(moves, key=lambda m: (exact[m], -moves.index(m)))
        assert chosen == want
        assert values == per_move[want]
        assert totals[chosen] == pytest.approx(exact[want])
        for move in moves:  # every other total is an upper bound
            assert totals[move] >= exact[move] - 1e-9
        line = fast[0].principal_variation()
        assert line[:1] == (view.move_to_str(chosen),)
        checked += 1
        saved += sum(s.nodes for s in full) - sum(s.nodes for s in fast)
    assert checked >= 5
    if depth >= 3:  # null windows pay off once the trees below the root are deep enough
        assert saved > 0, saved


# -- the worlds drawn for Yin Yang -----------------------------------------------------------------

BLACK_LAWS = "-bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w"


def test_a_slot_seen_rewritten_is_drawn_from_the_laws_written_for_that_board() -> None:
    hidden = YinYangHidden()
    # White's slot 2 was revealed at the start of its last turn, hidden now: an adaptation
    # (revealed in slot 3) rewrote it on this board
    before = state_of(f"w.w./bb../.w.b/b.b. b moved {BLACK_LAWS} ?,+wbww>w.ww,+wbwb>*,? 8 10 41")
    hidden.remember(before, before.parse_move("end"))
    now = state_of(f"w.w./bb../.w.b/b.b. b start {BLACK_LAWS} ?,?,+wbwb>*,? 8 10 43")
    written = set(rewrite_laws(now, 1, *now.board_masks()))
    assert written
    rng = random.Random(5)
    counts = {"rewritten": 0, "other": 0}
    for sample in hidden.samples(now, rng, 200):
        assert isinstance(sample, YinYangState)
        laws, _ = sample.laws(1)
        assert laws is not None
        assert UNKNOWN not in laws
        counts["rewritten"] += laws[1] in written
        counts["other"] += laws[0] in written
    assert counts["rewritten"] >= 100  # about 70%
    assert counts["other"] <= 40
    # a new game forgets it
    hidden.new_game()
    fresh = sum(
        1
        for sample in hidden.samples(now, random.Random(5), 200)
        if isinstance(sample, YinYangState) and (sample.laws(1)[0] or (0,) * 4)[1] in written
    )
    assert fresh <= 40


def test_hidden_setup_laws_are_mostly_drawn_as_we_write_ours() -> None:
    hidden = YinYangHidden()
    start = state_of(
        "bwww/bwww/bbbw/bbbw w start +bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w ?,?,?,? 8 10 2"
    )
    rng = random.Random(9)
    adaptations = 0
    samples = hidden.samples(start, rng, 200)
    for sample in samples:
        assert isinstance(sample, YinYangState)
        laws, _ = sample.laws(1)
        assert laws is not None
        adaptations += sum(1 for law in laws if law in _adaptations(1))
        causes = {ABS_CAUSE[1][law] for law in laws}
        assert len(causes) >= 3
    # our sets always hold an adaptation; a law drawn at random is one about a fifth of the
    # time, so most samples hold one, but not all
    assert 0.7 * len(samples) <= adaptations <= 1.6 * len(samples)


def _adaptations(owner: int) -> set[int]:
    from bots.eval.yinyang import ADAPTATION_CHOICES, _ranked_laws

    del owner
    return set(_ranked_laws(1)[0][:ADAPTATION_CHOICES])


def test_identical_worlds_are_searched_once() -> None:
    # one hidden slot whose every draw is the same law: the search sees one distinct world
    from bots.alphabeta import AlphaBeta

    referee = state_of(
        "w.../..../..../b..w b start -bwbb>b.bb,-....>.b.b,-bwbw>*,-bw.w>b..w "
        "+wbww>w.ww,+..ww>wwww,+wbwb>*,-.bb.>wbbw 8 10 31"
    )
    view = referee.view(0)
    assert view.is_view()
    notes: list[str] = []
    bot = AlphaBeta()
    bot.set_option("Samples", "8")
    bot.set_option("SecretSeed", "2")
    bot.new_game(view.game)
    bot.search(view, Limits(depth=2), on_info=lambda info: notes.append(info.string or ""))
    assert notes
    assert notes[-1].startswith("samples 8 (")
    distinct = int(notes[-1].split("(")[1].split()[0])
    assert 1 <= distinct <= 8
    assert LAW_OF_TEXT["wbww>w.ww"] in (referee.laws(1)[0] or ())


def _logit_mean(values: list[int], weights: list[int]) -> float:
    """The evaluation whose expected score is the weighted mean of ``values``' scores."""
    mean = sum(w * expected_score(v, SCALE) for v, w in zip(values, weights, strict=True))
    mean /= sum(weights)
    return SCALE * math.log(mean / (1.0 - mean))


def _view_and_samples(seed: int, count: int) -> tuple[YinYangState, list[YinYangState]]:
    """White's view with three of Black's laws hidden, and ``count`` samples of it."""
    view = state_of(
        "bwww/bw.w/bbbw/bbbw w start ?,?,?,+wwww>www. -.wbw>*,-w.bb>*,-bbw.>b.w.,-ww..>* 8 10 2"
    )
    drawn = YinYangHidden().samples(view, random.Random(seed), count)
    return view, [w for w in drawn if isinstance(w, YinYangState)]


def test_hidden_laws_count_at_the_leaves_as_the_mean_over_the_samples() -> None:
    evaluator = evaluator_for("yinyang")
    view, worlds = _view_and_samples(5, 6)
    assert len({w.key() for w in worlds}) > 1
    # a view that hides nothing, or samples that all agree, change nothing
    referee = worlds[0]
    assert evaluator.over_samples(referee, [referee.copy()], [1]) is evaluator
    assert evaluator.over_samples(view, [referee, referee.copy()], [1, 1]) is evaluator
    weights = [1, 2, 1, 1, 3, 1]
    averaged = evaluator.over_samples(view, worlds, weights)
    assert averaged is not evaluator
    # in the view itself the value is the samples' own values averaged as expected scores
    values = [evaluator.evaluate(world) for world in worlds]
    assert len(set(values)) > 1
    assert abs(averaged.evaluate(view) - _logit_mean(values, weights)) <= 1
    # down a line the same holds: each sample is what the line does to it
    for move in view.legal_moves()[:6]:
        line = view.copy()
        line.push(move)
        if line.is_terminal():
            continue
        there = []
        for world in worlds:
            copy = world.copy()
            copy.push(move)
            there.append(evaluator.evaluate(copy))
        assert abs(averaged.evaluate(line) - _logit_mean(there, weights)) <= 1


def test_a_hidden_slot_rewritten_in_the_line_counts_as_written() -> None:
    evaluator = evaluator_for("yinyang")
    view, worlds = _view_and_samples(9, 8)
    averaged = evaluator.over_samples(view, worlds, [1] * len(worlds))
    assert averaged is not evaluator
    laws, _ = view.laws(0)
    assert laws is not None
    # every hidden slot written with a law of the line: nothing is left to average
    written = tuple(LAW_OF_TEXT["....>*"] if law == UNKNOWN else law for law in laws)
    line = view.with_laws(0, (written[0], written[1], written[2], written[3]))
    assert averaged.evaluate(line) == evaluator.evaluate(line)


def test_a_player_left_only_hidden_laws_loses_where_none_fits() -> None:
    evaluator = evaluator_for("yinyang")
    # White to act has no piece and no law it has shown; in the view it may still hold a law
    referee = state_of(
        "..../..../..../b... w start -bbbb>*,-....>bb..,-bbbb>b.bb,-bbbb>bbb. "
        "-wwww>w.ww,-wwww>ww.w,-wwww>www.,-wwww>* 8 10 20"
    )
    view = referee.view(0)
    assert not view.is_terminal()
    assert referee.is_terminal()  # with these laws White cannot act: it has lost
    dead = referee.laws(1)[0]
    assert dead is not None
    live = (LAW_OF_TEXT["....>ww.."], dead[1], dead[2], dead[3])
    playing = referee.with_laws(1, live)
    assert not playing.is_terminal()
    alone = evaluator.over_samples(view, [playing, referee], [3, 1])
    assert alone is not evaluator
    # the sample in which White cannot act counts as a loss for it (expected score 0)
    value = alone.evaluate(view)
    mean = 3 * expected_score(evaluator.evaluate(playing), SCALE) / 4
    assert abs(value - SCALE * math.log(mean / (1.0 - mean))) <= 1
    assert value < evaluator.evaluate(playing)


def test_the_search_of_a_view_tries_no_hidden_law_and_plays_on() -> None:
    # the opponent's ``?`` laws are not moves in the view's tree: a position where it has no
    # other token is judged, not taken as won
    bot = create_bot("alphabeta")
    bot.set_option("Samples", "8")
    bot.set_option("SecretSeed", "4")
    view = state_of(
        "..../..../.b../b... b start -bbbb>*,-....>..bb,-bbbb>b.bb,-bbbb>bbb. ?,?,?,? 8 10 21"
    ).view(0)
    bot.new_game(view.game)
    result = bot.search(view, Limits(depth=4))
    assert result.token is not None
    assert result.score is not None
    assert result.score.kind == "cp"
    assert abs(result.score.value) < MAX_EVAL - 1  # an evaluation, not a result


class _SlowHidden(YinYangHidden):
    """Draws its samples while a fake clock moves on by ``cost`` seconds."""

    def __init__(self, now: list[float], cost: float) -> None:
        super().__init__()
        self.now = now
        self.cost = cost

    def samples(self, state: State, rng: random.Random, count: int) -> list[State]:
        self.now[0] += self.cost
        return super().samples(state, rng, count)


@pytest.mark.parametrize("samples", [1, 8])
def test_drawing_the_samples_counts_against_the_decision_time(samples: int) -> None:
    view = state_of(
        "bwww/bw.w/bbbw/bbbw w start ?,?,?,+wwww>www. -.wbw>*,-w.bb>*,-bbw.>b.w.,-ww..>* 8 10 2"
    )
    now = [0.0]

    def clock() -> float:
        now[0] += 1e-4  # every look at the clock takes a tenth of a millisecond
        return now[0]

    evaluator = evaluator_for("yinyang")
    result = determinized_search(
        view,
        evaluator=evaluator,
        sampling=Sampling(_SlowHidden(now, 0.15), random.Random(1), samples),
        memory=SearchMemory(TranspositionTable(4)),
        limits=Limits(deadline=0.2, clock=clock),
        stop=lambda: False,
        on_info=lambda info: None,
    )
    assert result.move is not None
    # the 0.15 s of sampling left 0.05 s of the 0.2 s deadline to search in
    assert now[0] <= 0.2 + 0.005, now[0]
    assert result.time >= 150
