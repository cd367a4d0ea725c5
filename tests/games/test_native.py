"""The native ring moves of Yinsh agree with the Python reference, position by position."""

from __future__ import annotations

import os
import random

import pytest

import games
from games import yinsh, yohoho

PURE = bool(os.environ.get("ENGINESRV_PURE_PYTHON"))


def test_the_native_rules_are_built_and_used() -> None:
    if PURE:
        assert yinsh._native is None
        assert yohoho._native is None
        assert yohoho._add_slides is yohoho._add_slides_python
    else:
        assert yinsh._native is not None, "games/_yinsh_native.c was not built"
        assert yohoho._native is not None, "games/_yohoho_native.c was not built"


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
@pytest.mark.parametrize("name", ["yinsh", "yinsh+blitz"])
def test_the_native_ring_moves_are_the_python_ones_in_order(name: str) -> None:
    game = games.load(name)
    rng = random.Random(name)
    checked = 0
    for _ in range(60):
        state = game.new_state()
        while not state.is_terminal():
            if state.phase() in ("m", "n"):
                assert isinstance(state, yinsh.YinshState)
                reference = state._ring_moves_python()
                assert state._ring_moves() == reference, state.to_string()
                assert state._count_ring_moves() == len(reference)
                checked += 1
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    assert checked > 1000


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
def test_the_native_module_refuses_bad_input_with_an_error() -> None:
    native = yinsh._native
    assert native is not None
    with pytest.raises(ValueError, match="off the board"):
        native.ring_moves(1 << 90, 0, 0, False)
    with pytest.raises(TypeError):
        native.ring_moves("x", 0, 0, False)  # type: ignore[call-overload]


@pytest.mark.skipif(yohoho._native is None, reason="the native slides are not built")
def test_the_native_yohoho_slides_are_the_python_ones_in_order() -> None:
    game = games.load("yohoho")
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        state = game.new_state()
        while not state.is_terminal() and state.ply() < 200:
            assert isinstance(state, yohoho.YohohoState)
            pieces = state.packed_pieces()
            occupied = 0
            for board in pieces:
                occupied |= board
            empty = yohoho.FULL_MASK ^ occupied
            for kind, reach in ((1, 2), (2, 3), (5, 2), (6, 3), (0, 1)):
                native: list[int] = []
                reference: list[int] = []
                yohoho._add_slides(native, pieces[kind], empty, reach)
                yohoho._add_slides_python(reference, pieces[kind], empty, reach)
                assert native == reference, state.to_string()
                count = yohoho._count_slides(pieces[kind], empty, reach)
                assert count == yohoho._count_slides_python(pieces[kind], empty, reach)
                assert count == len(reference)
                checked += 1
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    assert checked > 10_000


@pytest.mark.skipif(yohoho._native is None, reason="the native slides are not built")
def test_the_native_yohoho_module_refuses_bad_input_with_an_error() -> None:
    native = yohoho._native
    assert native is not None
    with pytest.raises(ValueError, match="off the board"):
        native.count_slides(1 << 80, 0, 2)
    with pytest.raises(ValueError, match="reach"):
        native.count_slides(1, 0, 99)
    with pytest.raises(TypeError):
        native.add_slides((), 1, 0, 2)  # type: ignore[arg-type]
