"""The registry and the shared parts of the rules interface."""

from __future__ import annotations

import doctest

import pytest

import games


def test_registry_lists_and_loads_every_game() -> None:
    names = games.available()
    assert names == sorted(names)
    assert {"yinsh", "yinsh+blitz"} <= set(names)
    for name in names:
        game = games.load(name)
        assert game.name == name
        assert game.players == 2
        assert len(game.colours) == 2
        assert games.load(name) is game


def test_unknown_game_lists_the_known_ones() -> None:
    with pytest.raises(games.UnknownGameError) as info:
        games.load("chess")
    assert info.value.text == "chess"
    for name in games.available():
        assert name in info.value.reason


def test_errors_are_value_errors_carrying_text_and_reason() -> None:
    for cls in (games.InvalidMoveError, games.IllegalMoveError, games.UnknownGameError):
        err = cls("e0", "no such point")
        assert isinstance(err, ValueError)
        assert str(err) == "'e0': no such point"
    err2 = games.InvalidPositionError("x y", "pool", "not a number")
    assert (err2.field, err2.reason) == ("pool", "pool: not a number")


def test_perfect_information_hooks_are_identity() -> None:
    state = games.load("yinsh").new_state()
    move = state.legal_moves()[0]
    assert state.view(games.P2) is state
    assert state.public_move_str(move, games.P2) == state.move_to_str(move)


def test_outcome_forms() -> None:
    win = games.Outcome("p2", "pool-empty", (("score_p1", 0), ("score_p2", 1), ("margin", 1)))
    assert win.winner_seat == games.P2
    assert win.as_dict() == {
        "winner": "p2",
        "reason": "pool-empty",
        "score_p1": 0,
        "score_p2": 1,
        "margin": 1,
    }
    assert str(win) == "p2 wins (pool-empty) score_p1=0 score_p2=1 margin=1"
    assert games.Outcome("draw", "two-passes").winner_seat is None


def test_docstring_examples() -> None:
    failures, attempted = doctest.testmod(games)
    assert attempted > 0
    assert failures == 0
