"""Random playouts over every registered game (design §7): one test, every game joins by
registering. Also fuzzing of the two text inputs of every game, positions and move tokens."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games

MAX_PLIES = 3000
"""Where the rules bound nothing (``Game.max_plies`` None), a playout stops here."""
GAMES_PER_NAME = 12
HUGE = 100_000
"""Move sets larger than this are sampled by index instead of listed."""


def check_position_string(state: games.State) -> None:
    text = state.to_string()
    again = state.game.state_from_string(text)
    assert again.to_string() == text
    assert again.key() == state.key(), f"incremental key differs from a fresh parse of {text}"
    assert again.to_move() == state.to_move()
    for viewer in (games.P1, games.P2, None):
        view = state.view(viewer).to_string()
        assert state.game.state_from_string(view).to_string() == view


def check_moves(state: games.State, rng: random.Random) -> None:
    legal = state.legal_moves()
    n = len(legal)
    assert n, f"no legal move but not terminal: {state}"
    assert state.count_moves() == n
    # a huge move set (Yin Yang's setup, 405^4) is sampled by index, never listed
    moves = list(legal) if n <= HUGE else [legal[i] for i in rng.sample(range(n), 50)]
    tokens = [state.move_to_str(m) for m in moves]
    assert len(set(tokens)) == len(tokens), "two moves share a token"
    for move in rng.sample(moves, min(4, len(moves))):
        assert state.parse_move(state.move_to_str(move)) == move
        assert state.public_move_str(move, state.to_move())


@pytest.mark.parametrize("name", games.available())
def test_random_playouts(name: str) -> None:
    game = games.load(name)
    rng = random.Random(name)
    for _ in range(GAMES_PER_NAME):
        state = game.new_state()
        assert state.to_string() == game.start_position
        history: list[tuple[str, int]] = []
        limit = game.max_plies if game.max_plies is not None else MAX_PLIES
        while not state.is_terminal():
            if len(history) >= limit:
                assert game.max_plies is None, f"{name}: no end after {limit} plies"
                break
            assert state.to_move() in (games.P1, games.P2)
            assert state.outcome() is None
            check_moves(state, rng)
            if rng.random() < 0.2:
                check_position_string(state)
            before = (state.to_string(), state.key())
            legal = state.legal_moves()
            move = legal[rng.randrange(len(legal))]
            # push/pop restores exactly, and a copy is independent of its original
            state.push(move)
            assert state.pop() == move
            assert (state.to_string(), state.key()) == before
            twin = state.copy()
            twin.push(move)
            assert (state.to_string(), state.key()) == before
            history.append(before)
            state.push(move)
            assert twin.to_string() == state.to_string()
            assert twin.key() == state.key()
            assert state.ply() == len(history)

        check_position_string(state)
        if state.is_terminal():
            check_outcome(state)
        # unwinding the whole game restores every position on the way back
        while history:
            state.pop()
            assert (state.to_string(), state.key()) == history.pop()
        with pytest.raises(IndexError):
            state.pop()


def check_outcome(state: games.State) -> None:
    """A finished game: nobody to act, no moves, a well-formed outcome."""
    assert state.to_move() == games.NOBODY
    assert list(state.legal_moves()) == []
    assert state.count_moves() == 0
    outcome = state.outcome()
    assert outcome is not None
    assert outcome.winner in ("p1", "p2", "draw")
    assert outcome.reason
    assert " " not in outcome.reason
    assert all(isinstance(v, int) for _, v in outcome.scores)
    assert games.perft(state, 2) == 0


def sample_positions(name: str, count: int = 40) -> list[str]:
    """Positions from seeded random games, for the fuzz tests."""
    game = games.load(name)
    rng = random.Random(7)
    out: list[str] = []
    while len(out) < count:
        state = game.new_state()
        while not state.is_terminal() and rng.random() > 0.02:
            out.append(state.to_string())
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    return out[:count]


@pytest.mark.parametrize("name", games.available())
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_mutated_position_strings_parse_or_raise(name: str, data: st.DataObject) -> None:
    game = games.load(name)
    base = data.draw(st.sampled_from([game.start_position, *sample_positions(name)]))
    i = data.draw(st.integers(0, len(base)))
    j = data.draw(st.integers(i, min(len(base), i + 3)))
    filler = data.draw(
        st.text(alphabet=st.sampled_from([*list(set(base)), "0", "?", "é"]), max_size=3)
    )
    text = base[:i] + filler + base[j:]
    try:
        state = game.state_from_string(text)
    except games.InvalidPositionError as exc:
        assert text in str(exc)
        return
    assert state.to_string() == text


@pytest.mark.parametrize("name", games.available())
@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=40))
def test_arbitrary_text_is_a_position_error(name: str, text: str) -> None:
    game = games.load(name)
    try:
        state = game.state_from_string(text)
    except games.InvalidPositionError:
        return
    assert state.to_string() == text


@pytest.mark.parametrize("name", games.available())
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_arbitrary_tokens_are_move_errors(name: str, data: st.DataObject) -> None:
    game = games.load(name)
    state = game.state_from_string(data.draw(st.sampled_from(sample_positions(name))))
    moves = state.legal_moves()
    n = len(moves)
    picks = range(n) if n <= HUGE else [data.draw(st.integers(0, n - 1)) for _ in range(3)]
    legal = [state.move_to_str(moves[i]) for i in picks]
    text = data.draw(
        st.one_of(
            st.text(max_size=12),
            st.sampled_from(legal).map(lambda t: t[:-1]),
            st.sampled_from(legal).map(lambda t: t.upper()),
            st.sampled_from(legal).map(lambda t: t + "1"),
        )
    )
    before = state.to_string()
    try:
        move = state.parse_move(text)
    except (games.InvalidMoveError, games.IllegalMoveError) as exc:
        assert exc.text == text
        assert state.to_string() == before
        return
    assert move in moves
    assert state.move_to_str(move) == text


@pytest.mark.parametrize("name", games.available())
def test_max_plies_is_a_true_bound(name: str) -> None:
    """Long random games (many seeds) never pass the bound a game declares."""
    game = games.load(name)
    if game.max_plies is None:
        pytest.skip(f"{name} does not bound the length of a game")
    rng = random.Random(99)
    longest = 0
    for _ in range(300):
        state = game.new_state()
        plies = 0
        while not state.is_terminal():
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
            plies += 1
            assert plies <= game.max_plies
        longest = max(longest, plies)
    assert longest > game.max_plies // 4  # the games were not all trivially short
