"""The bots behind the engine interface: registry, options, every bot in every phase of every
game, determinism, the transposition table on a game with transpositions."""

from __future__ import annotations

import random
from importlib import metadata

import pytest

import games
from bots import registry
from bots.alphabeta import AlphaBeta
from bots.engine import Engine, Limits, Option, OptionError, Score
from bots.eval import evaluated_games
from bots.search import Searcher, SearchMemory, SearchOptions, TranspositionTable
from bots.simple import GreedyBot, RandomBot
from tests.bots.toy import NimEvaluator, TwoHeaps

PERFECT_INFORMATION = [
    g for g in ("yinsh", "yinsh+blitz", "yohoho", "yoxii") if g in games.available()
]


def positions_by_phase(name: str, per_phase: int = 3, seed: int = 5) -> list[str]:
    """Positions from seeded random games, a few of every phase the game reaches."""
    game = games.load(name)
    rng = random.Random(seed)
    found: dict[str, list[str]] = {}
    for _ in range(60):
        state = game.new_state()
        while not state.is_terminal() and state.ply() < 400:
            bucket = found.setdefault(state.phase(), [])
            if len(bucket) < per_phase and rng.random() < 0.3:
                bucket.append(state.to_string())
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    return [pos for bucket in found.values() for pos in bucket]


# -- registry -----------------------------------------------------------------------------------


def test_built_in_bots_are_registered_as_entry_points() -> None:
    names = {ep.name for ep in metadata.entry_points(group=registry.GROUP)}
    assert {"alphabeta", "greedy", "random"} <= names
    assert {"alphabeta", "greedy", "random"} <= set(registry.bot_names())
    assert isinstance(registry.create_bot("alphabeta"), AlphaBeta)
    assert set(registry.load_all()) >= {"alphabeta", "greedy", "random"}


def test_unknown_bot_lists_the_known_ones() -> None:
    with pytest.raises(registry.BotError, match=r"unknown bot 'nobody'.*alphabeta"):
        registry.create_bot("nobody")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("no_such_module_xyz:Bot", "failed to load: ModuleNotFoundError"),
        ("games:load", "is not an Engine subclass"),
    ],
)
def test_a_broken_plugin_fails_loudly_with_its_name(
    monkeypatch: pytest.MonkeyPatch, value: str, reason: str
) -> None:
    broken = metadata.EntryPoint("broken", value, registry.GROUP)
    real = metadata.entry_points

    def fake(**kwargs: str) -> list[metadata.EntryPoint]:
        return [*real(**kwargs), broken]

    monkeypatch.setattr(metadata, "entry_points", fake)
    assert "broken" in registry.bot_names()
    with pytest.raises(registry.BotError, match=f"'broken'.*{reason}"):
        registry.load_all()


# -- options ------------------------------------------------------------------------------------


def test_option_parsing() -> None:
    spin = Option("Hash", "spin", 64, 1, 4096)
    assert spin.parse(" 128 ") == 128
    for bad in ("0", "5000", "big", None):
        with pytest.raises(OptionError, match="Hash"):
            spin.parse(bad)
    check = Option("Ponder", "check", False)
    assert check.parse("TRUE") is True
    with pytest.raises(OptionError):
        check.parse("yes")
    combo = Option("Style", "combo", "solid", vars=("solid", "wild"))
    assert combo.parse("WILD") == "wild"
    with pytest.raises(OptionError, match="solid, wild"):
        combo.parse("calm")
    assert Option("Clear", "button").parse(None) is None
    assert Option("Name", "string", "").parse("a b") == "a b"


def test_set_option_is_case_insensitive_and_rejects_unknown_names() -> None:
    bot = AlphaBeta()
    bot.set_option("hash", "8")
    assert bot.values["Hash"] == 8
    with pytest.raises(OptionError, match="no option 'Colour'"):
        bot.set_option("Colour", "red")
    with pytest.raises(OptionError):
        bot.set_option("Depth", "-1")
    assert bot.values["Depth"] == 0  # a rejected value changes nothing


# -- every bot, every phase, every game ---------------------------------------------------------


@pytest.mark.parametrize("name", PERFECT_INFORMATION)
@pytest.mark.parametrize("bot_name", ["random", "greedy", "alphabeta"])
def test_each_bot_plays_a_legal_move_in_every_phase(name: str, bot_name: str) -> None:
    game = games.load(name)
    bot: Engine = registry.create_bot(bot_name)
    if not bot.supports(name):
        pytest.skip(f"{bot_name} does not play {name}")
    bot.new_game(game)
    phases = set()
    for position in positions_by_phase(name):
        state = game.state_from_string(position)
        result = bot.search(state, Limits(depth=2))
        assert state.to_string() == position, "the bot changed the position it was given"
        assert result.move is not None
        assert result.token is not None
        assert state.parse_move(result.token) == result.move
        phases.add(state.phase())
    assert len(phases) >= 2


@pytest.mark.parametrize("name", [n for n in PERFECT_INFORMATION if n in evaluated_games()])
def test_alphabeta_is_deterministic_at_fixed_depth(name: str) -> None:
    game = games.load(name)
    position = positions_by_phase(name, per_phase=1, seed=9)[-1]
    results = []
    for _ in range(2):
        bot = AlphaBeta()
        bot.new_game(game)
        result = bot.search(game.state_from_string(position), Limits(depth=3))
        results.append((result.move, result.nodes, result.score, result.pv))
    assert results[0] == results[1]


def test_random_bot_is_seeded() -> None:
    game = games.load("yinsh")
    choices = []
    for _ in range(2):
        bot = RandomBot()
        bot.set_option("Seed", "42")
        bot.new_game(game)
        state = game.new_state()
        picks = []
        for _ in range(12):
            result = bot.search(state, Limits())
            picks.append(result.token)
            state.push(state.parse_move(result.token or ""))
        choices.append(picks)
    assert choices[0] == choices[1]


def test_greedy_takes_an_immediate_win() -> None:
    if "yinsh+blitz" not in evaluated_games():
        pytest.skip("no Yinsh evaluation")
    # T7 in blitz: e3-e6 makes White's row; then x:a4-e4 and any ring removal win at once
    state = games.load("yinsh+blitz").state_from_string(
        "2wb/3wb2/3wb3/3wb4/2wwbW4/9/10/9/8/WWWW2B/BBBB w x 0-0 40"
    )
    result = GreedyBot().search(state, Limits())
    assert result.token == "x:a4-e4"


# -- the transposition table on a game that transposes -------------------------------------------


class _NoTable(TranspositionTable):
    def __init__(self) -> None:
        super().__init__(1)

    def store(self, key: int, depth: int, bound: int, score: int, move: int) -> None:
        del key, depth, bound, score, move


@pytest.mark.parametrize(("a", "b"), [(3, 4), (5, 5), (6, 4), (7, 2), (8, 8), (4, 9)])
def test_table_solves_a_transposing_game_like_no_table(a: int, b: int) -> None:
    kinds = []
    for table in (TranspositionTable(1), _NoTable()):
        result = Searcher(
            TwoHeaps(a, b).new_state(),
            evaluator=NimEvaluator(),
            memory=SearchMemory(table),
            limits=Limits(depth=a + b + 1),
            stop=lambda: False,
            on_info=lambda info: None,
            options=SearchOptions(quiescence=False),
        ).run()
        assert result.score is not None
        kinds.append(result.score.kind)
    expected = "loss" if a % 3 == b % 3 else "win"
    assert kinds == [expected, expected]


def test_scores_are_side_relative() -> None:
    assert Score("win", 3) != Score("loss", 3)
