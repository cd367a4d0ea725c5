"""``games.replay``: a move list played from a start, each move checked, and an error that names
the move's number and token."""

from __future__ import annotations

import random

import pytest

import games
from games.yinyang import YinYangState


def a_game(name: str, plies: int, seed: int) -> tuple[games.Game, list[str], str]:
    """A game's random legal tokens from the start and the position they lead to."""
    game = games.load(name)
    state = game.new_state()
    rng = random.Random(seed)
    tokens: list[str] = []
    while len(tokens) < plies and not state.is_terminal():
        moves = state.legal_moves()  # Yin Yang's setup is indexed, not listed
        move = moves[rng.randrange(len(moves))]
        tokens.append(state.move_to_str(move))
        state.push(move)
    return game, tokens, state.to_string()


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii", "yinyang"])
def test_replay_reaches_the_position_the_moves_lead_to(name: str) -> None:
    game, tokens, final = a_game(name, 30, 5)
    assert games.replay(game, None, tokens).to_string() == final
    assert games.replay(game, game.new_state().to_string(), tokens).to_string() == final
    state = game.new_state()
    assert games.replay(game, state, tokens[:10]) is state  # played on in place
    assert games.replay(game, state, tokens[10:], first=11).to_string() == final


@pytest.mark.parametrize("name", ["yinsh", "yohoho", "yoxii", "yinyang"])
def test_a_bad_move_is_named_by_number_and_token(name: str) -> None:
    game, tokens, _ = a_game(name, 12, 9)
    at = min(7, len(tokens))  # a random Yin Yang game may be over sooner
    bad = [*tokens[:at], "zz99", *tokens[at:]]
    with pytest.raises(games.ReplayError) as info:
        games.replay(game, None, bad)
    assert info.value.number == at + 1
    assert info.value.text == "zz99"
    assert isinstance(info.value.error, games.InvalidMoveError)
    assert str(info.value).startswith(f"move {at + 1} 'zz99': ")
    state = games.replay(game, None, bad[:at])
    with pytest.raises(games.ReplayError) as later:
        games.replay(game, state, bad[at:], first=at + 1)
    assert later.value.number == at + 1


def test_an_illegal_move_is_an_illegal_move_error_behind_it() -> None:
    game = games.load("yoxii")
    first = game.new_state().move_to_str(game.new_state().legal_moves()[0])
    with pytest.raises(games.ReplayError) as info:
        games.replay(game, None, [first, first])  # the Totem cannot move twice in a row
    assert info.value.number == 2
    assert isinstance(info.value.error, games.IllegalMoveError)


def test_a_bad_start_is_an_invalid_position() -> None:
    with pytest.raises(games.InvalidPositionError):
        games.replay(games.load("yoxii"), "not a position", [])


def test_shown_moves_only_with_shown() -> None:
    """A Yin Yang setup as the opponent is shown it replays only when the moves are read as
    shown; for a game with no secrets the two are the same."""
    yinyang = games.load("yinyang")
    _, setup, _ = a_game("yinyang", 1, 3)
    with pytest.raises(games.ReplayError, match="shown form"):
        games.replay(yinyang, None, [*setup, "laws:?,?,?,?"])
    view = games.replay(yinyang, None, [*setup, "laws:?,?,?,?"], shown=True)
    assert isinstance(view, YinYangState)
    assert view.law_entries(games.P2) == ("?", "?", "?", "?")
    game, tokens, final = a_game("yoxii", 20, 1)
    assert games.replay(game, None, tokens, shown=True).to_string() == final
