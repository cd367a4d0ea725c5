"""The environments of ``envs`` (docs/envs.md): PettingZoo's ``api_test`` on each, then
``--games`` random games each, every step checked (the mask is exactly the legal actions, the
observation lies in its space, the rewards of a finished game are its outcome's).

Usage: python benchmarks/environments.py [--games 1000] [--only yoxii] [--max-plies N] [--seed 1]

Prints per environment the games finished by the rules and truncated, the decisions, the
steps a second (with an observation each step) and the errors; exit status 1 on any error.
Target: every environment passes ``api_test`` and 1,000 random games without error.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
import warnings
from dataclasses import dataclass

import numpy as np
from pettingzoo.test import api_test

import envs
from envs.core import AGENTS, GameEnv


@dataclass
class Tally:
    finished: int = 0
    truncated: int = 0
    steps: int = 0
    seconds: float = 0.0
    errors: int = 0


def one_game(env: GameEnv, rng: random.Random, tally: Tally) -> None:
    env.reset()
    space = env.observation_space(AGENTS[0])
    rewards = dict.fromkeys(AGENTS, 0.0)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        rewards[agent] += reward
        if not space.contains(observation):
            raise AssertionError(f"an observation out of its space at {env.state.to_string()}")
        if terminated or truncated:
            env.step(None)
            continue
        legal = env.legal_actions()
        if sorted(np.flatnonzero(observation["action_mask"]).tolist()) != sorted(legal):
            raise AssertionError(f"the mask is not the legal actions at {env.state.to_string()}")
        env.step(rng.choice(legal))
        tally.steps += 1
    outcome = env.state.outcome() if env.state.is_terminal() else None
    if outcome is None:
        tally.truncated += 1
        return
    winner = outcome.winner_seat
    expected = (0.0, 0.0) if winner is None else (1.0, -1.0)[:: 1 - 2 * winner]
    if (rewards[AGENTS[0]], rewards[AGENTS[1]]) != expected:
        raise AssertionError(f"rewards {rewards} for {outcome}")
    tally.finished += 1


def measure(name: str, games: int, max_plies: int | None, seed: int) -> Tally:
    env = envs.make(name, max_plies=max_plies)
    with warnings.catch_warnings():
        for said in ("Observation is not a NumPy array", "Observation space for each agent"):
            warnings.filterwarnings("ignore", said, UserWarning)
        api_test(envs.make(name, max_plies=max_plies), num_cycles=1000)
    rng = random.Random(f"{seed}:{name}")
    tally = Tally()
    began = time.perf_counter()
    for number in range(games):
        try:
            one_game(env, rng, tally)
        except Exception:
            tally.errors += 1
            print(f"{name}: game {number + 1}:", file=sys.stderr)
            traceback.print_exc()
        if (number + 1) % 100 == 0:
            print(f"  {name}: {number + 1}/{games} games", file=sys.stderr, flush=True)
    tally.seconds = time.perf_counter() - began
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="random games each (1000)")
    parser.add_argument("--only", choices=envs.names(), action="append", help="repeatable")
    parser.add_argument("--max-plies", type=int, help="truncation (default: each game's own)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    failed = False
    print(
        f"{'environment':<12} {'finished':>8} {'truncated':>9} {'steps':>9} {'steps/s':>8} errors"
    )
    for name in args.only or envs.names():
        tally = measure(name, args.games, args.max_plies, args.seed)
        rate = tally.steps / tally.seconds if tally.seconds else 0.0
        print(
            f"{name:<12} {tally.finished:>8} {tally.truncated:>9} {tally.steps:>9} "
            f"{rate:>8.0f} {tally.errors}",
            flush=True,
        )
        failed |= tally.errors > 0
    print("target: api_test passed and no error in any game:", "missed" if failed else "met")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
