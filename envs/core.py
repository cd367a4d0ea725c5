"""``GameEnv``: PettingZoo's AEC API over a game of ``games`` (docs/envs.md).

Two agents, ``player_0`` (the game's p1) and ``player_1`` (p2), act in turn, each as often as
its game says (a compound turn is several steps of the same agent). An observation is a
mapping, as in PettingZoo's classic games: ``observation``, the planes of what the agent may
know (``Adapter.observe`` of its view, so a hidden law of the other side is never in it), and
``action_mask``, 1 for each legal action of the agent to act (all 0 for the other). At the end
the winner is rewarded 1, the loser -1 (0 each for a draw); a game that reaches ``max_plies``
decisions is truncated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

import games
from envs.adapter import Adapter, Partial
from games.base import Move

MAX_POSITION = 4096
"""The longest position string ``reset`` reads (a game's are a few hundred characters)."""
AGENTS = ("player_0", "player_1")
"""The agents, as PettingZoo names them: ``player_0`` is the game's p1, ``player_1`` its p2."""


class GameEnv(AECEnv):  # type: ignore[misc]  # PettingZoo has no type information
    """One game as an AEC environment: ``make(name)`` builds one."""

    def __init__(
        self, adapter: Adapter, render_mode: str | None = None, max_plies: int | None = None
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi", "human"):
            raise ValueError(f"render_mode: {render_mode!r} is none of None, 'ansi', 'human'")
        if max_plies is not None and (not _is_action(max_plies) or max_plies < 1):
            raise ValueError(f"max_plies: {max_plies!r} is not a positive whole number of actions")
        self.adapter = adapter
        self.game = games.load(adapter.game)
        self.render_mode = render_mode
        self.max_plies = adapter.max_plies if max_plies is None else max_plies
        self.metadata = {
            "render_modes": ["ansi", "human"],
            "name": f"{adapter.game.replace('+', '_')}_v0",
            "is_parallelizable": False,
        }
        self.possible_agents = list(AGENTS)
        planes = spaces.Box(low=0.0, high=1.0, shape=adapter.shape, dtype=np.float32)
        mask = spaces.Box(low=0, high=1, shape=(adapter.size,), dtype=np.int8)
        self._observation_space = spaces.Dict({"observation": planes, "action_mask": mask})
        self._action_space = spaces.Discrete(adapter.size)
        self.state: games.State = self.game.new_state()
        self.partial: Partial = ()
        self.plies = 0
        self._legal: tuple[list[int], list[Move]] | None = None
        self.reset()

    # -- the spaces ------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_space

    # -- the game --------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game, from the start or from ``options["position"]`` (a position string of
        the whole game: not a view, which hides some of it)."""
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"reset: options must be a mapping, not {type(options).__name__}")
        self.state = self._start((options or {}).get("position"))
        self.partial = ()
        self.plies = 0
        self._legal = None
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = AGENTS[self.state.to_move()]
        self._end_if_over()

    def _start(self, position: object) -> games.State:
        if position is None:
            return self.game.new_state()
        if not isinstance(position, str):
            raise ValueError(f"reset: the position must be a string, not {type(position).__name__}")
        if len(position) > MAX_POSITION:
            raise ValueError(
                f"reset: a position of {len(position)} characters; no {self.game.name} position "
                f"is longer than {MAX_POSITION}"
            )
        state = self.game.state_from_string(position)  # its error names the field at fault
        if state.is_view():
            raise ValueError(
                f"reset: {position!r} is a view (hidden laws written ?): the environment "
                "referees the whole game, so it starts from the whole position"
            )
        return state

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to act (none once the game is over)."""
        if not self.agents or self.terminations[self.agent_selection]:
            return []
        if self.truncations[self.agent_selection]:
            return []
        return list(self._legal_now()[0])

    def _legal_now(self) -> tuple[list[int], list[Move]]:
        if self._legal is None:
            self._legal = self.adapter.legal(self.state, self.partial)
        return self._legal

    def step(self, action: int | None) -> None:
        if not self.agents:
            raise ValueError(f"{self.game.name}: the game is over and every agent is done: reset")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        actions, moves = self._legal_now()
        if not _is_action(action):
            raise ValueError(self._why_illegal(action))
        try:
            where = actions.index(int(action))
        except ValueError:
            raise ValueError(self._why_illegal(action)) from None
        self._cumulative_rewards[agent] = 0.0
        self.partial = self.adapter.play(self.state, self.partial, actions[where], moves[where])
        self._legal = None
        self.plies += 1
        self.agent_selection = AGENTS[self.state.to_move()]
        if not self._end_if_over() and self.max_plies is not None and self.plies >= self.max_plies:
            self.truncations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _why_illegal(self, action: object) -> str:
        name = self.game.name
        if not _is_action(action) or not 0 <= int(action) < self.adapter.size:
            return f"{name}: action {action!r} is not one of 0 to {self.adapter.size - 1}"
        token = self.adapter.token(int(action))
        return f"{name}: action {action} ({token}) is not legal for {self.agent_selection} here"

    def _end_if_over(self) -> bool:
        """At the end: the rewards, and every agent terminated. Whether the game is over."""
        if not self.state.is_terminal():
            return False
        outcome = self.state.outcome()
        winner = outcome.winner_seat if outcome is not None else None
        for seat, agent in enumerate(AGENTS):
            self.rewards[agent] = 0.0 if winner is None else (1.0 if seat == winner else -1.0)
            self.infos[agent] = {"outcome": outcome.as_dict() if outcome is not None else {}}
        self.terminations = dict.fromkeys(self.agents, True)
        return True

    # -- what an agent sees ----------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, Any]:
        seat = _seat(agent)
        acting = agent == self.agent_selection
        view = self.state.view(seat)
        planes = self.adapter.observe(view, seat, self.partial if acting else ())
        mask = np.zeros(self.adapter.size, dtype=np.int8)
        if acting:
            mask[self.legal_actions()] = 1
        return {"observation": planes, "action_mask": mask}

    def position(self, agent: str) -> str:
        """The position string of what ``agent`` may know (its view: the other side's hidden
        laws as ``?``), as an engine is given it."""
        return self.state.view(_seat(agent)).to_string()

    def render(self) -> str | None:
        """The board as text (the whole position, hidden laws included: the environment's
        own picture, not an agent's)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render: the environment was made without a render_mode")
            return None
        text = self.state.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


def _is_action(action: object) -> TypeGuard[int | np.integer[Any]]:
    """Whether ``action`` is an integer (a Python or NumPy one; not a bool, not a float)."""
    return isinstance(action, int | np.integer) and not isinstance(action, bool | np.bool_)


def _seat(agent: object) -> int:
    if agent not in AGENTS:
        raise ValueError(f"agent {agent!r}: the agents are {', '.join(AGENTS)}")
    return AGENTS.index(str(agent))
