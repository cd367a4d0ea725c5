"""A restricted root (``Limits.root_moves``, ``Limits.avoid_moves``) as a careless or hostile
caller gives it: Yin Yang's setup, whose 405^4 moves are a lazy sequence that is never
iterated; a position of thousands of legal moves with every one of them allowed; the same
move given many times to a compiled core. Each findings' test failed before its fix."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import games
from bots.alphabeta import AlphaBeta
from bots.engine import Limits
from bots.eval import evaluator_for
from bots.search import root_moves_of
from games import Move, State
from tests.bots.test_compiled_games import _both, _core, _fresh_memory

YINYANG = games.load("yinyang")
CROWDED = "bwbw/bwbw/bwbw/bwbw b start -bwbw>*,-wbwb>*,-bbww>*,-wwbb>* ?,?,?,? 8 10 1"
"""Black's view of a position where its four adaptations apply at every anchor: 14,589
legal moves, of which the evaluation offers the search 9."""


def _setup_view() -> State:
    return YINYANG.new_state().view(0)


def _bot() -> AlphaBeta:
    bot = AlphaBeta()
    bot.set_option("SecretSeed", "11")
    bot.new_game(YINYANG)
    return bot


def test_avoidmoves_in_the_setup_keeps_the_bots_own_laws() -> None:
    """The setup is chosen without search; avoiding moves the bot would not choose anyway
    leaves its choice as it was (it used to iterate the setup moves and fail)."""
    view = _setup_view()
    chosen = _bot().search(view.copy(), Limits(depth=1)).move
    assert chosen is not None
    first = view.legal_moves()[0]
    assert first != chosen
    result = _bot().search(view.copy(), Limits(depth=1, avoid_moves=(first,)))
    assert result.move == chosen


def test_avoiding_the_bots_own_setup_gives_another_legal_one() -> None:
    view = _setup_view()
    chosen = _bot().search(view.copy(), Limits(depth=1)).move
    assert chosen is not None
    result = _bot().search(view.copy(), Limits(depth=1, avoid_moves=(chosen,)))
    assert result.move is not None
    assert result.move != chosen
    assert result.move in view.legal_moves()


def test_the_first_legal_move_left_is_found_in_the_setup_by_index() -> None:
    view = _setup_view()
    moves = view.legal_moves()
    evaluator = evaluator_for("yinyang")
    assert list(evaluator.search_moves(view)) == []  # the setup offers the search nothing
    assert root_moves_of(view, evaluator, None, (moves[0], moves[1])) == [moves[2]]


class _Scanned(list[Move]):
    """A list of legal moves that counts how often ``in`` scans it."""

    scans = 0

    def __contains__(self, value: object) -> bool:
        type(self).scans += 1
        return super().__contains__(value)


def test_allowing_thousands_of_moves_checks_each_without_a_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every legal move of a position of 14,589 allowed: each is checked legal by a look-up,
    not by a scan of the legal list (14,580 scans of it took the worker over a second, past
    the deadline of a short search, and the worker was killed)."""
    view = YINYANG.state_from_string(CROWDED)
    legal = list(view.legal_moves())
    assert len(legal) == 14589
    kind = type(view)
    original = kind.legal_moves

    def scanned(self: State) -> Sequence[Move]:
        return _Scanned(original(self))  # a list outside the setup

    monkeypatch.setattr(kind, "legal_moves", scanned)
    _Scanned.scans = 0
    out = root_moves_of(view, evaluator_for("yinyang"), legal)
    assert sorted(out) == sorted(legal)
    assert _Scanned.scans == 0
    with pytest.raises(ValueError, match=r"^root_moves: move 7 is not legal here$"):
        root_moves_of(view, evaluator_for("yinyang"), [*legal, 7])


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii"])
def test_a_root_of_one_move_given_many_times_searches_as_the_reference(name: str) -> None:
    """The reference takes each move of ``root_moves`` once; the core refused more than 160
    of them however few were distinct."""
    core = _core(name)
    state = games.load(name).new_state()
    move = state.legal_moves()[-1]
    limits = Limits(depth=2, root_moves=(move,) * 200)
    # the two searches agree on every figure, info and the history (test_compiled_games)
    reference, compiled = _both(core, name, state, limits, _fresh_memory(core))
    assert reference.move == compiled.move == move
