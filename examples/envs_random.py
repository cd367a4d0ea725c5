"""Play one game of an environment of ``envs`` with random legal actions and print it.

Usage: python examples/envs_random.py [yinsh|yinsh+blitz|yohoho|yoxii|yinyang] [--seed N]
"""

from __future__ import annotations

import argparse
import random

import envs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", default="yoxii", choices=envs.names())
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    env = envs.make(args.name, render_mode="ansi")
    env.reset(seed=args.seed)
    rng = random.Random(args.seed)
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)  # an agent that is done is stepped with None
            continue
        legal = observation["action_mask"].nonzero()[0]
        action = int(rng.choice(legal))
        print(f"{agent}: {env.adapter.token(action)}")
        env.step(action)
    print(env.render())
    outcome = env.state.outcome()
    if outcome is None:
        print(f"truncated after {env.plies} decisions")
    else:
        print(f"outcome after {env.plies} decisions: {outcome}")


if __name__ == "__main__":
    main()
