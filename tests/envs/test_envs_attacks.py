"""The environments against hostile input: views with hidden laws as a start, steps after the
end, settings and options of the wrong kind, huge position strings."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import envs
from envs.core import GameEnv


def _random_yinyang_after(decisions: int, seed: int) -> GameEnv:
    """A Yin Yang environment after its setups and ``decisions`` random actions."""
    rng = random.Random(seed)
    while True:
        env = envs.make("yinyang")
        for _ in range(8 + decisions):
            legal = env.legal_actions()
            if not legal:
                break
            env.step(rng.choice(legal))
        else:
            return env


@pytest.mark.parametrize("whose", ["player_0", "player_1", "spectator"])
def test_reset_refuses_a_view_with_hidden_laws(whose: str) -> None:
    """A view string (``?`` for laws its holder does not know) is no game an environment can
    referee: its legal moves leave out whatever depends on a ``?`` law, and its end is
    undecided. ``reset`` must refuse it with a ValueError, and change nothing (a game started on it
    would let the side with ``?`` laws play without them)."""
    env = _random_yinyang_after(10, seed=3)
    if whose == "spectator":
        view = env.state.view(None).to_string()
    else:
        view = env.position(whose)
    assert "?" in view
    before = env.state.to_string()
    with pytest.raises(ValueError, match=r"\?|view|hidden"):
        env.reset(options={"position": view})
    assert env.state.to_string() == before


def _finished(name: str = "yoxii") -> GameEnv:
    env = envs.make(name)
    rng = random.Random(2)
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(rng.choice(env.legal_actions()))
    return env


@pytest.mark.parametrize("action", [None, 0, 3])
def test_stepping_after_every_agent_is_done_is_a_value_error(action: Any) -> None:
    """The game is over and both agents have been stepped with None (``env.agents`` is
    empty): one more step must raise a clear ValueError, not a KeyError."""
    env = _finished()
    env.step(None)
    env.step(None)
    assert env.agents == []
    with pytest.raises(ValueError):  # noqa: PT011 (any clear message)
        env.step(action)


def test_legal_actions_and_last_after_every_agent_is_done() -> None:
    """``legal_actions()`` after the end is documented as none, the agents gone too."""
    env = _finished()
    env.step(None)
    env.step(None)
    assert env.legal_actions() == []


@pytest.mark.parametrize("max_plies", [math.nan, 1.5, True, "3"])
def test_max_plies_must_be_a_whole_number(max_plies: Any) -> None:
    """``max_plies`` is a number of decisions: nan (which silently turns truncation off), a
    fraction, a bool or a string must be a ValueError."""
    with pytest.raises(ValueError, match="max_plies"):
        envs.make("yoxii", max_plies=max_plies)


@pytest.mark.parametrize("options", ["position", ["position"], 5])
def test_reset_with_options_that_are_not_a_mapping(options: Any) -> None:
    """``reset(options=...)`` with something that is not a mapping: a ValueError, not an
    AttributeError."""
    env = envs.make("yoxii")
    with pytest.raises(ValueError):  # noqa: PT011 (any clear message)
        env.reset(options=options)


@pytest.mark.parametrize("name", envs.names())
def test_the_error_of_a_huge_position_string_is_short(name: str) -> None:
    """A 10 MB position string is refused with a clear message that quotes a bounded part
    of the input, not all of it."""
    env = envs.make(name)
    with pytest.raises(ValueError) as caught:  # noqa: PT011
        env.reset(options={"position": "x" * 10_000_000})
    assert len(str(caught.value)) < 10_000
