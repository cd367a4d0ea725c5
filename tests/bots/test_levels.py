"""alphabeta's levels (``Level``, ``bots.levels``): budgets it keeps to whatever the search is
given, noise drawn from the bot's seeds, proven wins taken, analyses left honest, and the
handshake's ``level`` lines in both framings."""

from __future__ import annotations

import random
from dataclasses import replace

import msgpack
import pytest

import games
from bots import levels as levels_module
from bots.alphabeta import AlphaBeta
from bots.engine import Limits, RootScore, Score, SearchResult
from bots.levels import LEVELS, MOST_SCORED, Level, draw, game_levels, infos, level
from bots.simple import RandomBot
from enginesrv.serve.catalog import level_lines
from protocol import messages as m
from protocol import mpack, text

GAMES = ("yinsh", "yohoho", "yoxii", "yinyang")


def _positions(name: str, count: int, seed: int = 7) -> list[games.State]:
    """``count`` positions of random games of ``name``, each the side to act's view, with
    moves to make (not Yin Yang's setup)."""
    game = games.load(name)
    rng = random.Random(seed)
    out: list[games.State] = []
    walker = RandomBot()
    while len(out) < count:
        state = game.new_state()
        for _ in range(rng.randrange(6, 40)):
            if state.is_terminal():
                break
            walker.values["Seed"] = rng.randrange(1 << 30)
            state.push(walker.search(state, Limits(depth=1)).move)  # type: ignore[arg-type]
        view = state.view(state.to_move())
        if not state.is_terminal() and not view.moves_hidden() and view.count_moves() > 1:
            out.append(view)
    return out


def _bot(number: int, seed: int = 1, secret: int = 5) -> AlphaBeta:
    bot = AlphaBeta()
    bot.values.update({"Level": number, "Seed": seed, "SecretSeed": secret})
    return bot


def test_the_levels_go_from_a_beginner_to_full_strength() -> None:
    assert len(LEVELS) >= 6
    assert [x.number for x in LEVELS] == list(range(1, len(LEVELS) + 1))
    assert LEVELS[-1].full
    assert not LEVELS[0].quiescence  # a beginner does not look beyond its depth
    assert not any(x.full for x in LEVELS[:-1])
    for name in (*GAMES, None):
        chosen = game_levels(name) if name else LEVELS
        assert [(x.number, x.name) for x in chosen] == [(x.number, x.name) for x in LEVELS]
        assert chosen[-1].full
        assert not any(x.full for x in chosen[:-1])
        # each level searches at least as deep and as wide as the one below, and cooler
        budgets = [x.nodes or 10**12 for x in chosen]
        assert budgets == sorted(budgets), name
        depths = [x.depth or 10**3 for x in chosen]
        assert depths == sorted(depths), name
        temperatures = [x.temperature for x in chosen]
        assert temperatures == sorted(temperatures, reverse=True), name
        shares = [x.random_share for x in chosen]
        assert shares == sorted(shares, reverse=True), name
        skills = [x.large_skill for x in chosen]
        assert skills == sorted(skills), name
    option = next(o for o in AlphaBeta.options if o.name == "Level")
    assert (option.default, option.min, option.max) == (len(LEVELS), 1, len(LEVELS))
    assert [x.number for x in AlphaBeta.levels] == [x.number for x in LEVELS]


@pytest.mark.parametrize("name", GAMES)
def test_a_level_keeps_to_its_budget_whatever_the_search_is_given(name: str) -> None:
    chosen = level(3, name)
    assert chosen.nodes is not None
    budget = chosen.nodes
    for state in _positions(name, 2):
        bot = _bot(3)
        bot.new_game(state.game)
        result = bot.search(state, Limits(depth=50, nodes=10**9))
        assert result.depth <= (chosen.depth or 99)
        # a search checks its node count every so often: at most one check's worth more
        assert result.nodes <= budget + 1024, (result.nodes, budget)
        assert result.move in state.legal_moves()


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii"])
def test_the_noise_repeats_from_the_seed_and_differs_with_it(name: str) -> None:
    positions = _positions(name, 8)

    def moves(seed: int) -> list[str | None]:
        out = []
        for state in positions:
            bot = _bot(1, seed=seed)
            bot.new_game(state.game)
            out.append(bot.search(state.copy(), Limits()).token)
        return out

    first = moves(11)
    assert moves(11) == first
    assert moves(12) != first
    full = AlphaBeta()
    best = []
    for state in positions:
        full.new_game(state.game)
        best.append(full.search(state.copy(), Limits(depth=1)).token)
    # a beginner blunders often: many of its moves are not the best at its own depth
    assert sum(a != b for a, b in zip(first, best, strict=True)) >= 2


def test_in_a_game_of_hidden_information_the_noise_is_secret() -> None:
    """Yin Yang: the draw comes from the secret generator: the public ``Seed`` does not change
    it, the ``SecretSeed`` does."""
    positions = _positions("yinyang", 6, seed=3)

    def moves(seed: int, secret: int) -> list[str | None]:
        out = []
        for state in positions:
            bot = _bot(1, seed=seed, secret=secret)
            bot.new_game(state.game)
            out.append(bot.search(state.copy(), Limits()).token)
        return out

    first = moves(1, 5)
    assert moves(2, 5) == first
    assert any(moves(1, secret) != first for secret in (6, 7, 8))


def test_a_proven_win_is_always_taken_and_a_loss_avoided() -> None:
    win = RootScore("w", Score("win", 1), 2)
    loss = RootScore("l", Score("loss", 2), 2)
    plain = [RootScore(f"m{i}", Score("cp", -i * 50), 2) for i in range(5)]
    beginner = Level(1, "beginner", depth=1, temperature=50.0)
    rng = random.Random(3)
    won = SearchResult(None, "w", root_scores=(win, *plain, loss))
    assert all(draw(won, beginner, "yoxii", rng) is None for _ in range(50))
    lost = SearchResult(None, "m0", root_scores=(*plain, loss))
    picks = {draw(lost, beginner, "yoxii", rng) for _ in range(300)}
    tokens = {p[0] for p in picks if p is not None}
    assert "l" not in tokens
    assert len(tokens) >= 3  # hot enough to play several of the other moves


def test_an_analysis_at_a_level_reports_its_lines_and_plays_the_best() -> None:
    for state in _positions("yoxii", 4):
        bot = _bot(1)
        bot.new_game(state.game)
        result = bot.search(state.copy(), Limits(lines=3))
        exact = [r for r in result.root_scores if r.bound is None]
        assert result.token == exact[0].token
        assert result.depth == 1  # the level's depth


def test_the_handshake_names_each_level_in_both_framings() -> None:
    lines = level_lines("alphabeta", infos(), ("yinsh", "yoxii"))
    numbers = sorted({line.number for line in lines})
    assert numbers == [x.number for x in LEVELS]
    bot = m.BotInfo("alphabeta", ("yinsh", "yoxii"), m.ANALYSIS_FEATURES, lines)
    written = text.encode_reply(m.BotList((bot,))).decode().splitlines()
    levels = [text.parse_reply_line(x) for x in written if x.startswith("level ")]
    assert tuple(levels) == lines
    assert written[2].startswith("level 1 name beginner bot alphabeta")
    frame = msgpack.unpackb(mpack.encode_reply(1, m.BotList((bot,))), raw=False)
    assert mpack.parse_result("bots", frame[3]) == m.BotList((bot,))


def test_a_level_line_carries_a_measured_game() -> None:
    measured = m.LevelLine(2, "novice", "alphabeta", "yoxii", 812, 41)
    line = text.encode_reply_line(measured).decode().strip()
    assert line == "level 2 name novice bot alphabeta game yoxii elo 812 interval 41"
    assert text.parse_reply_line(line) == measured
    for bad in ("level x name a bot b", "level 1 name a", "level 1 name a bot b game"):
        with pytest.raises(Exception, match="level"):
            text.parse_reply_line(bad)


def _searched(number: int, state: games.State, seeds: int) -> int:
    """Of the moves level ``number`` plays in ``state`` under seeds 0 to ``seeds - 1``, how many
    it searched (each a legal move)."""
    count = 0
    for seed in range(seeds):
        bot = _bot(number, seed=seed)
        bot.new_game(state.game)
        result = bot.search(state.copy(), Limits())
        assert result.move in state.legal_moves()
        count += result.nodes > 0
    return count


def test_a_beginner_makes_a_share_of_its_moves_without_a_search() -> None:
    state = _positions("yoxii", 1)[0]
    share = level(1).random_share
    unsearched = 200 - _searched(1, state, 200)
    # 200 draws of a coin of ``share``: within four standard deviations of its mean
    spread = 4 * (200 * share * (1 - share)) ** 0.5
    assert abs(unsearched - 200 * share) <= spread, unsearched
    novice = _bot(2)
    novice.new_game(state.game)
    assert novice.search(state.copy(), Limits()).nodes > 0


def test_a_beginner_writes_its_laws_at_random_and_a_stronger_level_plans_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Yin Yang's setup (four laws out of 405: too many moves to score) the beginner makes at
    random, as greedy does, without a search; a level that makes none at random plans them."""
    game = games.load("yinyang")
    state = game.new_state()
    assert state.count_moves() > MOST_SCORED
    assert level(1, "yinyang").large_skill == 0.0
    planner = next(x for x in game_levels("yinyang") if x.large_skill == 1.0)
    searched: list[int] = []
    search = AlphaBeta._search

    def spy(self: AlphaBeta, *args: object, **kwargs: object) -> SearchResult:
        searched.append(int(self.values["Level"] or 0))
        return search(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(AlphaBeta, "_search", spy)

    def laws(number: int, secret: int) -> str | None:
        bot = _bot(number, secret=secret)
        bot.new_game(game)
        result = bot.search(state.copy(), Limits())
        assert result.move in state.legal_moves()
        return result.token

    beginner = [laws(1, x) for x in range(8)]
    assert searched == []
    assert len(set(beginner)) == len(beginner)  # the secret seed draws them
    assert laws(planner.number, 0) is not None
    assert searched == [planner.number]


def test_a_level_of_some_skill_writes_laws_that_fit_the_start_board_without_a_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Yin Yang's novice knows the setup's one must: a law for the full start board (Black
    without one loses at once, as some 72% of random sets do); it writes them without a
    search, differently each game."""
    game = games.load("yinyang")
    novice = level(2, "yinyang")
    assert 0.0 < novice.large_skill < 1.0
    monkeypatch.setattr(AlphaBeta, "_search", None)  # a search would fail
    tokens = set()
    for secret in range(20):
        bot = _bot(2, secret=secret)
        bot.new_game(game)
        state = game.new_state()
        result = bot.search(state.copy(), Limits())
        assert result.move is not None
        assert result.move in state.legal_moves()
        tokens.add(result.token)
        state.push(result.move)
        state.push(state.legal_moves()[0])  # any White set
        assert not state.is_terminal(), result.token
    assert len(tokens) == 20


def test_a_large_decision_without_a_plan_is_made_at_random_by_the_share_a_level_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a game whose evaluation has no plan for a decision too large to score (here every
    Yoxii decision, with the limit lowered), a level of skill ``s`` searches it with
    probability ``s`` and otherwise plays a random move."""
    monkeypatch.setattr(levels_module, "MOST_SCORED", 1)
    state = _positions("yoxii", 1)[0]
    for skill, searched in ((0.0, 0), (0.5, None), (1.0, 40)):
        chosen = replace(level(2, "yoxii"), large_skill=skill)
        monkeypatch.setattr(levels_module, "level", lambda number, game, c=chosen: c)
        count = _searched(2, state, 40)
        if searched is None:
            assert 4 <= count <= 36, count  # 40 draws of a fair coin, within 5 deviations
        else:
            assert count == searched
