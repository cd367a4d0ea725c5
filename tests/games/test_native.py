"""The native ring moves of Yinsh agree with the Python reference, position by position."""

from __future__ import annotations

import os
import random

import pytest

import games
from games import yinsh

PURE = bool(os.environ.get("ENGINESRV_PURE_PYTHON"))


def test_the_native_ring_moves_are_built_and_used() -> None:
    if PURE:
        assert yinsh._native is None
    else:
        assert yinsh._native is not None, "games/_yinsh_native.c was not built"


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
