"""Every environment of ``envs``: PettingZoo's own API test, whole random games (each action
the mask allows is legal, each legal move has its action), the rewards and the end, refused
actions, a start from a position, and our bots playing through ``bot_policy``."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

import envs
import games
from envs.core import AGENTS, GameEnv

NAMES = envs.names()
GAMES_EACH = 12
"""Random games a test plays per environment (the benchmark plays 1,000)."""
TRUNCATED = 300
"""The ``max_plies`` of the random games here (long random games prove nothing more)."""


def random_game(env: GameEnv, rng: random.Random) -> list[int]:
    """Play ``env`` to its end with random legal actions, checking each step's mask against
    the legal actions; the actions played."""
    played = []
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            assert not observation["action_mask"].any()
            env.step(None)
            continue
        mask = observation["action_mask"]
        legal = env.legal_actions()
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(legal)
        assert legal, f"{env.game.name}: no legal action in {env.state.to_string()}"
        other = AGENTS[1 - AGENTS.index(agent)]
        assert not env.observe(other)["action_mask"].any()  # only the agent to act has moves
        action = rng.choice(legal)
        played.append(action)
        env.step(action)
    return played


@pytest.mark.parametrize("name", NAMES)
def test_each_environment_passes_pettingzoo_api_test(name: str) -> None:
    env = envs.make(name, max_plies=TRUNCATED)
    with warnings.catch_warnings():
        # an observation is a mapping with its action mask, as in PettingZoo's classic games,
        # of which the API test says this much (and fails on anything else)
        for said in ("Observation is not a NumPy array", "Observation space for each agent"):
            warnings.filterwarnings("ignore", said, UserWarning)
        api_test(env, num_cycles=200)


@pytest.mark.parametrize("name", NAMES)
def test_random_games_end_with_the_rewards_of_their_outcome(name: str) -> None:
    """Whole random games: every step's mask is exactly the legal actions, every observation
    lies in its space, and a game ends either by the rules (rewards +1/-1 or 0/0, as its
    outcome says) or by truncation at ``max_plies`` (no reward)."""
    rng = random.Random(name)
    env = envs.make(name, max_plies=TRUNCATED)
    space = env.observation_space(AGENTS[0])
    for _ in range(GAMES_EACH):
        env.reset()
        rewards = dict.fromkeys(AGENTS, 0.0)
        steps = 0
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            rewards[agent] += reward
            assert space.contains(observation)
            if terminated or truncated:
                env.step(None)
                continue
            env.step(rng.choice(env.legal_actions()))
            steps += 1
        if env.state.is_terminal():
            outcome = env.state.outcome()
            assert outcome is not None
            winner = outcome.winner_seat
            expected = (0.0, 0.0) if winner is None else (1.0, -1.0)[:: 1 - 2 * winner]
            assert (rewards[AGENTS[0]], rewards[AGENTS[1]]) == expected
            assert steps == env.plies <= TRUNCATED
        else:
            assert env.plies == TRUNCATED
            assert rewards == dict.fromkeys(AGENTS, 0.0)


@pytest.mark.parametrize("name", NAMES)
def test_an_illegal_action_is_refused_and_changes_nothing(name: str) -> None:
    env = envs.make(name)
    before = env.state.to_string()
    legal = set(env.legal_actions())
    illegal = next(i for i in range(env.adapter.size) if i not in legal)
    with pytest.raises(ValueError, match=rf"action {illegal} \(.+\) is not legal for player_0"):
        env.step(illegal)
    for bad in (-1, env.adapter.size, "c3", 1.5):
        with pytest.raises(ValueError, match="is not one of 0 to"):
            env.step(bad)  # type: ignore[arg-type]
    assert env.state.to_string() == before
    assert env.plies == 0
    assert set(env.legal_actions()) == legal


@pytest.mark.parametrize("name", NAMES)
def test_a_bot_plays_a_whole_game_through_bot_policy(name: str) -> None:
    """alphabeta at depth 1 against random moves: every action it returns is legal."""
    env = envs.make(name, max_plies=TRUNCATED)
    policy = envs.bot_policy("alphabeta", depth=1)
    rng = random.Random(7)
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = policy(env) if agent == AGENTS[0] else rng.choice(env.legal_actions())
        assert action in env.legal_actions()
        env.step(action)
    assert env.plies > 0


@pytest.mark.parametrize("name", NAMES)
def test_reset_from_a_position_and_back_to_the_start(name: str) -> None:
    env = envs.make(name, max_plies=TRUNCATED)
    rng = random.Random(3)
    for _ in range(6):
        env.step(rng.choice(env.legal_actions()))
        if env.terminations[env.agent_selection]:
            break
    if env.partial:  # the middle of a decision has no position string: finish it
        while env.partial:
            env.step(rng.choice(env.legal_actions()))
    position = env.state.to_string()
    fresh = envs.make(name)
    fresh.reset(options={"position": position})
    assert fresh.state.to_string() == position
    assert fresh.agent_selection == AGENTS[env.state.to_move()]
    assert sorted(fresh.legal_actions()) == sorted(env.legal_actions())
    fresh.reset()
    assert fresh.state.to_string() == games.load(env.adapter.game).start_position


def test_make_names_every_game_and_refuses_others() -> None:
    assert envs.names() == ["yinsh", "yinsh+blitz", "yinyang", "yohoho", "yoxii"]
    with pytest.raises(ValueError, match="no environment 'chess'; there are yinsh, "):
        envs.make("chess")
    with pytest.raises(ValueError, match="render_mode"):
        envs.make("yoxii", render_mode="rgb_array")
    with pytest.raises(ValueError, match="max_plies"):
        envs.make("yoxii", max_plies=0)


@pytest.mark.parametrize("name", NAMES)
def test_render_as_text(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = envs.make(name, render_mode="ansi").render()
    assert isinstance(text, str)
    assert text == envs.make(name).state.render()
    env = envs.make(name, render_mode="human")
    env.step(env.legal_actions()[0])
    assert capsys.readouterr().out.strip() == env.state.render().strip()
    with pytest.warns(UserWarning, match="render_mode"):
        assert envs.make(name).render() is None
