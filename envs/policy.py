"""``bot_policy``: one of our bots as the policy of an agent in an environment loop.

The bot is given what the acting agent may know, as a position string (``GameEnv.position``,
the agent's view), never the environment's state; its move becomes the action (or, for a
decision split into several actions, the actions, one per call)."""

from __future__ import annotations

from collections.abc import Mapping

from bots.engine import Limits
from bots.registry import create_bot
from envs.core import GameEnv


class BotPolicy:
    """A bot playing in environments: ``policy(env)`` is the action of the agent to act."""

    def __init__(self, bot: str, options: Mapping[str, object], limits: Limits) -> None:
        self.bot = bot
        self.engine = create_bot(bot)
        for name, value in options.items():
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            self.engine.set_option(name, text)
        self.limits = limits
        self._plan: list[int] = []
        self._seen: tuple[int, int] | None = None
        """The environment and its decisions at the last call (a new game starts anew)."""

    def __call__(self, env: GameEnv, agent: str | None = None) -> int:
        """The action of ``agent`` (default: the agent to act, which it must be)."""
        acting = env.agent_selection
        if agent is not None and agent != acting:
            raise ValueError(f"bot_policy: {agent} is not to act ({acting} is)")
        legal = env.legal_actions()
        if not legal:
            raise ValueError(f"bot_policy: the game is over; step {acting} with None")
        if self._seen is None or self._seen[0] != id(env) or env.plies < self._seen[1]:
            self.engine.new_game(env.game)
            self._plan = []
        self._seen = (id(env), env.plies)
        if self._plan and self._plan[0] in legal:
            return self._plan.pop(0)
        state = env.game.state_from_string(env.position(acting))
        result = self.engine.search(state, self.limits)
        if result.token is None:
            raise ValueError(f"bot_policy: {self.bot} found no move in {state.to_string()}")
        actions = env.adapter.actions_of(state, result.token)
        self._plan = actions[1:]
        return actions[0]


def bot_policy(
    bot: str,
    options: Mapping[str, object] | None = None,
    *,
    depth: int | None = None,
    nodes: int | None = None,
    seconds: float | None = None,
) -> BotPolicy:
    """Bot ``bot`` (``alphabeta``, ``greedy``, ``random``, ...) with its engine ``options``
    (``{"Level": 3}``), searching each decision to ``depth`` plies, ``nodes`` nodes or for
    ``seconds`` (depth 2 when none is given)."""
    if depth is None and nodes is None and seconds is None:
        depth = 2
    limits = Limits(depth=depth, nodes=nodes, target=seconds, deadline=seconds)
    return BotPolicy(bot, options or {}, limits)
