"""The evaluation weights a bot exposes as options, so that a tuner can move them.

Yinsh (both variants), Yohoho and Yoxii list their tunable weights here (``TUNABLES``; Yin
Yang has none yet): one integer option per term, named ``Eval`` + the game + the term in
CamelCase (``EvalYohohoGalleon``), so that no two games share a name and a name says whose it
is. Each has its default and a range wide enough to tune: 0 to four times the default for a
term whose sign the game fixes (material, threats), symmetric around 0 for the others, and at
least 40 either way. An option sets one field of the game's ``Weights``, one entry of a table
field, or scales a whole table in percent (a table indexed by a distance or a count: one knob
moves it and keeps its shape; an entry becomes ``(entry * percent + 50) // 100``).

An evaluator made with options (``Evaluator.tuned``) takes every weight an option does not
name at its default, so equal options always make equal evaluations. Yinsh's options of the
ring-move weights set the standard set in ``yinsh`` and the blitz set in ``yinsh+blitz`` (the
variant played); its placement options set the placement set of both.

This module imports none of the evaluations: a bot's option list is built from it when the bot
loads, and the evaluation modules build large tables when they load. The defaults are therefore
written twice, here and in the evaluations' ``Weights``; a test checks that they agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeVar

W = TypeVar("W", bound=NamedTuple)


@dataclass(frozen=True, slots=True)
class Tunable:
    """One weight option.

    Attributes:
        name: the option's name (``EvalYohohoGalleon``).
        field: the field of the game's ``Weights`` it sets.
        default, low, high: the option's default and range.
        about: what the weight is worth, in a few words (docs/bots.md lists the same).
        index: for a table field, the entry it sets (None: the whole field).
        percent: the option scales the table ``field`` in percent (its default is 100).
    """

    name: str
    field: str
    default: int
    low: int
    high: int
    about: str
    index: int | None = None
    percent: bool = False


def _weight(
    name: str,
    field: str,
    default: int,
    about: str,
    *,
    signed: bool = False,
    index: int | None = None,
) -> Tunable:
    """A weight of range 0..4x its default (at least 0..40), or symmetric when ``signed``."""
    reach = max(4 * abs(default), 40)
    return Tunable(name, field, default, -reach if signed else 0, reach, about, index)


def _scale(name: str, field: str, about: str) -> Tunable:
    """A table scaled in percent, 0..400."""
    return Tunable(name, field, 100, 0, 400, about, percent=True)


YINSH_PLAY: Final = (
    _weight("EvalYinshRace", "race", 84, "a removed ring, per marker the pool is below the next"),
    Tunable("EvalYinshRacePool", "race_pool", 12, 0, 51, "the pool below which rings race"),
    _weight("EvalYinshTempo", "tempo", 42, "the next ring move", signed=True),
    _weight("EvalYinshMarker", "marker", 74, "a marker on the board"),
    _weight("EvalYinshMobility", "mobility", -20, "an empty point next to a ring", signed=True),
    _weight("EvalYinshContact", "contact", 50, "a ring with a marker next to it", signed=True),
    _weight("EvalYinshCentre3", "centre3", 2, "a ring within 3 of the centre", signed=True),
    _weight("EvalYinshCentre2", "centre2", 75, "a ring within 2 of the centre", signed=True),
    _weight("EvalYinshCentre1", "centre1", -29, "a ring next to the centre", signed=True),
    _weight("EvalYinshTwoNext", "two_next", -18, "two in a window, next mover", signed=True),
    _weight("EvalYinshTwoOther", "two_other", -28, "two in a window, other", signed=True),
    _weight("EvalYinshThreeNext", "three_next", -10, "three in a window, next", signed=True),
    _weight("EvalYinshThreeOther", "three_other", -6, "three in a window, other", signed=True),
    _weight(
        "EvalYinshThreeMixedNext", "three_mixed_next", 14, "three among the other's", signed=True
    ),
    _weight(
        "EvalYinshThreeMixedOther", "three_mixed_other", 3, "three among the other's", signed=True
    ),
    _weight("EvalYinshFourNext", "four_next", -5, "four, fifth point free", signed=True),
    _weight("EvalYinshFourOther", "four_other", -33, "four, fifth point free", signed=True),
    _weight("EvalYinshFourFlipNext", "four_flip_next", 17, "four and the other's marker"),
    _weight("EvalYinshFourFlipOther", "four_flip_other", 99, "four and the other's marker"),
    _weight("EvalYinshThreatNext", "threat_next", 299, "a ring threat, next mover"),
    _weight("EvalYinshThreatOther", "threat_other", 297, "a ring threat, other"),
    _weight("EvalYinshThreatWinNext", "threat_win_next", 3811, "a threat that wins, next"),
    _weight("EvalYinshThreatWinOther", "threat_win_other", 874, "a threat that wins, other"),
)
"""Yinsh's ring-move weights (``bots.eval.yinsh.Weights``; the unit, ``ring`` 1000, stays)."""

YINSH_PLACEMENT: Final = (
    _weight("EvalYinshPlaceMobility", "mobility", 4, "placement: a ring's empty neighbour"),
    _weight("EvalYinshPlaceCentre3", "centre3", 21, "placement: a ring within 3 of the centre"),
    _weight("EvalYinshPlaceCentre2", "centre2", 20, "placement: a ring within 2 of the centre"),
    _weight("EvalYinshPlaceCentre1", "centre1", 8, "placement: a ring next to the centre"),
)
"""Yinsh's placement weights (``bots.eval.yinsh.PLACEMENT_WEIGHTS``)."""

YOHOHO: Final = (
    _weight("EvalYohohoChebec", "chebec", 72, "a Chebec"),
    _weight("EvalYohohoGalleon", "galleon", 133, "a Galleon"),
    _weight("EvalYohohoRowStep", "row_step", 52, "a row an Admiral sailed"),
    _scale("EvalYohohoProg", "prog", "the route to the goal row, a table in percent"),
    _scale("EvalYohohoRace", "race", "the lead in the race, a table in percent"),
    _scale("EvalYohohoStepSafe", "step_safe", "an Admiral's safe steps, a table in percent"),
    _scale("EvalYohohoRobust", "robust", "an Admiral's robust steps, a table in percent"),
    _weight("EvalYohohoRockCone", "rock_cone", 12, "the own Rock in the enemy Admiral's way"),
    _weight("EvalYohohoPressure", "pressure", 8, "ship strength near the enemy Admiral"),
    _scale("EvalYohohoAttacked", "attacked", "a capturable Admiral, a table in percent"),
    _weight("EvalYohohoTrapSoon", "trap_soon", 3242, "an Admiral trapped next turn"),
    _weight("EvalYohohoHangOwn1", "own_hang_p1", 22, "phase 1: first own hanging ship, %", index=0),
    _weight(
        "EvalYohohoHangOwnMore1", "own_hang_p1", 65, "phase 1: second own hanging ship, %", index=1
    ),
    _weight("EvalYohohoHangEnemy1", "enemy_hang_p1", 54, "phase 1: best enemy hanging ship, %"),
    _weight("EvalYohohoHangOwn2", "own_hang_p2", 27, "phase 2: first own hanging ship, %", index=0),
    _weight(
        "EvalYohohoHangOwnMore2", "own_hang_p2", 83, "phase 2: second own hanging ship, %", index=1
    ),
    _weight("EvalYohohoHangEnemy2", "enemy_hang_p2", 14, "phase 2: best enemy hanging ship, %"),
    _weight("EvalYohohoTempo1", "tempo_p1", 12, "the side to act, phase 1", signed=True),
    _weight("EvalYohohoTempo2", "tempo_p2", -23, "the side to act, phase 2", signed=True),
    _weight("EvalYohohoRaceWon", "race_won", 3154, "a race no defender can stop"),
    _weight("EvalYohohoRaceTurn", "race_turn", 154, "less, per turn such a race still takes"),
)
"""Yohoho's weights (``bots.eval.yohoho.Weights``)."""

YOXII: Final = (
    _weight("EvalYoxiiRing1", "ring1", 100, "a point next to the Totem"),
    _weight("EvalYoxiiRing2", "ring2", 30, "a point 2 from the Totem", signed=True),
    _weight("EvalYoxiiRing3", "ring3", 10, "a point 3 from the Totem", signed=True),
    _weight("EvalYoxiiCount", "count1", 20, "a piece next to the Totem", signed=True),
    _weight("EvalYoxiiMobility", "mobility", 15, "a Totem destination", signed=True),
    _weight("EvalYoxiiStock1", "stock", 0, "a 1 kept in stock", signed=True, index=0),
    _weight("EvalYoxiiStock2", "stock", 5, "a 2 kept in stock", signed=True, index=1),
    _weight("EvalYoxiiStock3", "stock", 10, "a 3 kept in stock", signed=True, index=2),
    _weight("EvalYoxiiStock4", "stock", 20, "a 4 kept in stock", signed=True, index=3),
    Tunable(
        "EvalYoxiiTempoTotem", "tempo_totem", 320, -800, 800, "the turn to come (Totem to move)"
    ),
    Tunable("EvalYoxiiTempoPlace", "tempo_place", 6, -800, 800, "the placement to come"),
)
"""Yoxii's heuristic weights (``bots.eval.yoxii.Weights``)."""

TUNABLES: Final[Mapping[str, tuple[Tunable, ...]]] = {
    "yinsh": YINSH_PLAY + YINSH_PLACEMENT,
    "yinsh+blitz": YINSH_PLAY + YINSH_PLACEMENT,
    "yohoho": YOHOHO,
    "yoxii": YOXII,
}
"""Per game, its weight options."""


def tunables_for(game: str) -> tuple[Tunable, ...]:
    """The weight options of ``game`` (none for a game without: Yin Yang)."""
    return TUNABLES.get(game, ())


def apply(weights: W, tunables: Sequence[Tunable], values: Mapping[str, int]) -> W:
    """``weights`` with the fields of ``tunables`` set from ``values`` (by option name); an
    option that ``values`` does not name, or names at its default, leaves its field alone."""
    changes: dict[str, Any] = {}
    for tunable in tunables:
        value = values.get(tunable.name, tunable.default)
        if value == tunable.default:
            continue
        current = changes.get(tunable.field, getattr(weights, tunable.field))
        if tunable.percent:
            changes[tunable.field] = tuple((entry * value + 50) // 100 for entry in current)
        elif tunable.index is not None:
            entries = list(current)
            entries[tunable.index] = value
            changes[tunable.field] = tuple(entries)
        else:
            changes[tunable.field] = value
    return weights._replace(**changes) if changes else weights
