"""Levels of play: alphabeta made weaker by a search budget and seeded noise, from a beginner
who blunders often to full strength (the ``Level`` option).

A level below the top makes a share of its decisions at random (``random_share``: a beginner
blunders often), and otherwise searches at most ``depth`` plies and ``nodes`` nodes (never
wall time, so that its strength does not depend on the machine), scores its first decisions
(the best ``lines`` of them, or all), and plays one drawn with probability proportional to
``exp(score / temperature)``: at a temperature of 0 the best, and the higher it is the more
often a worse move, more often a little worse than a lot. The temperature is a multiple of the
game's ``SCALE``, the spread of the scores of a position's moves at depth 1 (their standard
deviation, in the middle of many positions), so that one level blunders about as often in
every game. Outside the random share, a proven win is always taken, a proven loss avoided
while there is another move.
The draws come from the bot's chance (``bots.chance``): repeatable from the ``Seed`` option in
a game of perfect information, secret in a game of hidden information.

The top level, ``LEVELS[-1]``, is the bot itself: whatever the search is given. Each level's
strength is measured, game by game, by ``benchmarks/levels.py`` against a fixed pool (random,
greedy and the other levels); ``ELO`` keeps the figures it printed (the Elo and the half-width
of its 95% interval, greedy at ``ANCHOR``), which the handshake announces.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from bots.engine import LevelInfo, Limits, RootScore, SearchResult

ANCHOR = 1000
"""The Elo of the greedy bot, on which the levels' figures are anchored."""


@dataclass(frozen=True, slots=True)
class Level:
    """One level: its number and name, and how it plays (module docstring)."""

    number: int
    name: str
    depth: int | None = None
    """The deepest iteration (None: what the search is given)."""
    nodes: int | None = None
    """The most nodes of a decision's search (None: what the search is given)."""
    lines: int = 0
    """The first decisions scored exactly, among which the move is drawn (0: all)."""
    temperature: float = 0.0
    """The noise, in units of the game's ``SCALE`` (0: the best move)."""
    quiescence: bool = True
    """Whether it looks at the noisy moves beyond its depth (the bot's ``Quiescence``)."""
    random_share: float = 0.0
    """The share of its decisions it makes at random, without a search (a beginner's)."""
    large_skill: float = 1.0
    """How much of a decision of more moves than a draw scores (``MOST_SCORED``: Yin Yang's
    four laws out of 405), which the bot plans without a search, it makes as the bot does, the
    rest at random: 0 all at random, as greedy makes it (a person new to the game cannot yet
    tell a good law from a bad one), 1 all planned. The game says what a part is and which
    parts count most (Yin Yang: each law; the one that fits the start board first)."""

    @property
    def full(self) -> bool:
        """Whether this is the bot at full strength (nothing limited, no noise)."""
        return (
            self.depth is None
            and self.nodes is None
            and not self.temperature
            and self.quiescence
            and not self.random_share
            and self.large_skill >= 1.0
        )

    def limits(self, limits: Limits, moves: int, *, analysing: bool) -> Limits:
        """``limits`` within this level's budget; the lines its draw needs
        (``moves`` legal moves in the position), unless the search is an analysis (its own
        lines)."""
        depth, nodes = limits.depth, limits.nodes
        if self.depth is not None:
            depth = self.depth if depth is None else min(depth, self.depth)
        if self.nodes is not None:
            nodes = self.nodes if nodes is None else min(nodes, self.nodes)
        lines = limits.lines
        if self.temperature and not analysing and moves <= MOST_SCORED:
            lines = max(lines, min(moves, self.lines or moves))
        return replace(limits, depth=depth, nodes=nodes, lines=lines)


LEVELS: tuple[Level, ...] = (
    Level(
        1,
        "beginner",
        depth=1,
        nodes=5_000,
        temperature=3.0,
        quiescence=False,
        random_share=0.4,
        large_skill=0.0,
    ),
    Level(2, "novice", depth=1, nodes=5_000, temperature=0.6),
    Level(3, "casual", depth=2, nodes=10_000, temperature=0.5),
    Level(4, "club", depth=4, nodes=25_000, lines=8, temperature=0.08),
    Level(5, "strong", depth=6, nodes=120_000, lines=4, temperature=0.05),
    Level(6, "expert", nodes=250_000, lines=3, temperature=0.02),
    Level(7, "full"),
)
"""The levels, weakest first; the last is full strength (the option's default)."""

GAME_LEVELS: dict[str, dict[int, Level]] = {
    # Yinsh: a ply costs some three to six times the nodes of the last (depth 5 about 40,000
    # nodes, 6 about 250,000, 7 about 600,000), so its levels are set by depth; random moves
    # cost a Yinsh player a row at once: its beginner makes fewer of them, and cooler.
    **{
        variant: {
            1: replace(LEVELS[0], random_share=0.05, temperature=1.0),
            4: replace(LEVELS[3], depth=3),
            5: replace(LEVELS[4], depth=4),
            6: replace(LEVELS[5], depth=5),
        }
        for variant in ("yinsh", "yinsh+blitz")
    },
    # A Yohoho node is cheap and its moves many: the general budgets of levels 5 and 6 both
    # end at depth 5, a step of twice the nodes; here each step is some five times the last.
    "yohoho": {
        3: replace(LEVELS[2], nodes=8_000),
        4: replace(LEVELS[3], nodes=8_000),
        5: replace(LEVELS[4], nodes=40_000),
        6: replace(LEVELS[5], nodes=180_000),
    },
    # Yin Yang: the four secret laws weigh most, and a Black set without a law for the full
    # start board loses at once (73.5% of random sets: greedy's, which plays at random's level
    # there). Its levels keep a growing share of the laws the bot plans (``large_skill``: the
    # first quarter is the law for the start board) and search deeper without noise, since
    # depth gains slowly (depth 4 some 75 Elo over 2, 7 some 100 over 4; the top reaches
    # depth 14 or so in 0.2 s).
    "yinyang": {
        2: replace(LEVELS[1], temperature=1.0, large_skill=0.25),
        3: replace(LEVELS[2], temperature=0.4, large_skill=0.45),
        4: replace(LEVELS[3], depth=3, nodes=50_000, temperature=0.0, large_skill=0.65),
        5: replace(LEVELS[4], depth=4, nodes=50_000, temperature=0.0, large_skill=0.85),
        6: replace(LEVELS[5], depth=6, nodes=50_000, temperature=0.0),
    },
}
"""Per game, the levels defined otherwise than ``LEVELS`` where the general definition does
not separate them (``level``): a game's cost of a node, its branching and what its greedy bot
sees differ, so that one budget is a ply in one game and a fraction of one in another."""

SCALE: dict[str, int] = {"yinsh": 75, "yinsh+blitz": 75, "yohoho": 25, "yoxii": 100, "yinyang": 40}
"""Per game, the spread of the scores of a position's moves at depth 1 (module docstring)."""

ELO: dict[str, dict[int, tuple[int, int]]] = {
    "yinsh": {
        1: (827, 52),
        2: (1235, 105),
        3: (1510, 128),
        4: (1815, 147),
        5: (2045, 159),
        6: (2297, 170),
        7: (2753, 197),
    },
    "yinsh+blitz": {
        1: (877, 49),
        2: (1140, 79),
        3: (1358, 100),
        4: (1771, 133),
        5: (2017, 147),
        6: (2242, 158),
        7: (2397, 166),
    },
    "yohoho": {
        1: (324, 342),
        2: (900, 378),
        3: (1091, 381),
        4: (1473, 391),
        5: (1771, 396),
        6: (1922, 399),
        7: (2142, 404),
    },
    "yinyang": {
        1: (958, 31),
        2: (1194, 66),
        3: (1448, 91),
        4: (1630, 106),
        5: (1763, 113),
        6: (1921, 122),
        7: (2105, 133),
    },
    "yoxii": {
        1: (877, 53),
        2: (1014, 73),
        3: (1147, 88),
        4: (1292, 103),
        5: (1439, 114),
        6: (1836, 139),
        7: (2022, 147),
    },
}
"""Per game, each level's measured Elo and the half-width of its 95% interval (greedy at
``ANCHOR``), as ``benchmarks/levels.py`` printed them; a game not measured has none."""

MOST_SCORED = 256
"""The most first decisions a draw scores; a decision of more (Yin Yang's setup) is the
search's own."""

WON = 1_000_000
"""The value a draw gives a proven win (less its distance): above every evaluation."""


def infos() -> tuple[LevelInfo, ...]:
    """The levels as the handshake names them, with the Elo measured in each game."""
    return tuple(
        LevelInfo(
            lvl.number,
            lvl.name,
            tuple(
                (game, *figures[lvl.number])
                for game, figures in sorted(ELO.items())
                if lvl.number in figures
            ),
        )
        for lvl in LEVELS
    )


def level(number: int, game: str | None = None) -> Level:
    """The level ``number`` (1 to ``len(LEVELS)``), as ``game`` defines it (``GAME_LEVELS``;
    None: the general definition)."""
    general = LEVELS[number - 1]
    if game is None:
        return general
    return GAME_LEVELS.get(game, {}).get(number, general)


def game_levels(game: str) -> tuple[Level, ...]:
    """Every level as ``game`` defines it, weakest first."""
    return tuple(level(lvl.number, game) for lvl in LEVELS)


def _value(entry: RootScore) -> int:
    score = entry.score
    if score.kind == "win":
        return WON - score.value
    if score.kind == "loss":
        return -WON + score.value
    return score.value


def draw(
    result: SearchResult, level: Level, game: str, rng: random.Random
) -> tuple[str, RootScore] | None:
    """The move ``level`` plays after ``result`` (its search, with the lines of ``limits``):
    one of the exactly scored first decisions drawn by its temperature (module docstring), or
    None to play the search's own (no noise, or fewer than two moves scored)."""
    if not level.temperature:
        return None
    scored = [entry for entry in result.root_scores if entry.bound is None]
    if len(scored) < 2:
        return None
    values = [_value(entry) for entry in scored]
    best = max(values)
    if best >= WON - 10_000:  # a proven win: taken
        return None
    temperature = level.temperature * SCALE.get(game, 50)
    weights = [math.exp(max(-50.0, (v - best) / temperature)) for v in values]
    chosen = rng.choices(range(len(scored)), weights)[0]
    return scored[chosen].token, scored[chosen]
