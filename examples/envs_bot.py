"""Our alpha-beta bot (``player_0``) against random legal actions (``player_1``) in an
environment of ``envs``, through ``envs.bot_policy``; prints each decision and the result.

Usage: python examples/envs_bot.py [yinsh|yinsh+blitz|yohoho|yoxii|yinyang] [--depth N]
"""

from __future__ import annotations

import argparse
import random

import envs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", default="yoxii", choices=envs.names())
    parser.add_argument("--depth", type=int, default=2, help="plies the bot searches (2)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    env = envs.make(args.name)
    bot = envs.bot_policy("alphabeta", depth=args.depth)
    rng = random.Random(args.seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        returns[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        if agent == "player_0":
            action = bot(env)
        else:
            action = int(rng.choice(observation["action_mask"].nonzero()[0]))
        print(f"{agent}: {env.adapter.token(action)}")
        env.step(action)
    outcome = env.state.outcome()
    print("outcome:", outcome if outcome is not None else f"truncated after {env.plies}")
    print("returns:", " ".join(f"{agent} {value:+g}" for agent, value in returns.items()))


if __name__ == "__main__":
    main()
