"""Yin Yang: the evaluation, the moves the search tries, the laws a bot writes, and how it
guesses the opponent's hidden laws.

The game (rules/yinyang.md) is a race: a piece of your colour on the far corner at the end of
your turn wins (Black aims at d4, White at a1), and each corner starts guarded by the enemy's
piece. Laws are the only way to remove a guard or to put pieces where moving cannot, and each
law fires only on one exact 2x2 pattern. So a position is judged by the race and by which laws
can fire for each side.

Evaluation (hundredths of a "move" of the race; from the side to act):

* the race: the distance of each side's nearest piece to its goal, a bonus for every piece close
  to it, a penalty while an enemy piece guards the goal, a bonus for guarding one's own home
  corner (the enemy's goal), and a threat bonus when one's goal is empty next to one's piece
  (worth far more to the side to act at the start of its turn: it wins by moving there);
* mobility: piece moves available to each side;
* laws: for each side, the best board change among its applicable destructions and
  regenerations (valued by the race terms; a law that completes a goal is a near win), counted
  almost fully for the side to act, which can fire it now, and at a third for the other side,
  which may fire it next turn if the board stays; plus the number of applicable laws and
  whether an adaptation is applicable (the means to write a fresh law for the board at hand).
  Regenerations without reserve and laws blocked by a revealed law of the same cause are not
  applicable, so the reserves and the conflicts count through this term.

Moves the search tries (``search_moves``): every piece move, law application and ``end``, but
of the 1,621 tokens of an applicable adaptation only ``:keep`` and a few rewrites: the best
laws for the board as it stands (each destruction and regeneration whose cause is the pattern
of some window now, valued by what it would do there; the next turn's board differs from this
one by the opponent's reply only), written into the adaptation's own slot or into the own law
that is least useful now (dead regenerations, laws blocked by a conflict, laws that fire
nowhere). Laws cannot block the opponent in advance: a hidden law never conflicts, and a law
whose cause matches an opponent's revealed law can never be applied to reveal it.

Writing laws (setup): the laws are scored once against a few hundred boards that are plausible
in play (the start board after random removals and moves), each law by the average of the best
it would do where it fits. Four laws are then drawn at random, not picked: one that fits the
start board and removes an enemy piece (Black loses at once without a law that fits the full
board; the strongest such opener in ``OPENER_SHARE`` of the games only, and then not in the
rest of the set either), one of the adaptations whose cause is on the start board, and two more
from the best-scored laws in proportion to their score, all with different causes (two revealed
laws with one cause block each other) and in a random slot order. So the set is strong but
different every game, and no law is in most of a side's sets.

Guessing the opponent's hidden laws (determinization, ``bots.determinize``): in most samples
(``SELF_MODEL_SHARE``) the ``?`` slots get the laws of a set drawn as our own setup draws one
(an opener, an adaptation, two strong laws; those of a cause already known left out); a slot
seen revealed at the start of the opponent's last turn and hidden now was rewritten by an
adaptation on the board as it is, so it mostly (``REWRITE_SHARE``) gets one of the laws we
would write there (``rewrite_laws``). Any other slot gets a law drawn from an even mix of the
uniform distribution (an opponent who writes at random) and the law scores above (one who
writes as we do), and, like the laws we write, of a cause none of that player's other laws
has (known or drawn for the same sample; a duplicate cause is drawn twenty times less often).
What the bot has seen weighs in, on every draw: a law that would
have won the game at once at the start of one of the opponent's earlier turns, while the slot
was already hidden, was very likely not there (the opponent did not win), so such laws are
drawn five times less often; so is, after an opponent's turn that was a lone piece move (no
law revealed or rewritten, one of its pieces one step away), a law that wins on the board that
move left, since the opponent could have applied it then. The bot remembers the position after
each of its own turns; a slot seen revealed and later hidden was rewritten, so only the turns
after that count. Without the tokens the opponent played, a silent rewrite of a hidden slot
cannot be seen, which is why this is a weight and not a rule.

Counting the samples in the view's tree (``over_samples``, for more than one sample): a leaf is
worth the mean, as expected scores, of what it would be worth in each sample (the laws term
above with each sample's laws in the slots still ``?``), a sample in which the side to act has
no token at all counting as lost.

Speed: the evaluations (plain and over the samples), ``rewrite_laws`` and ``order_moves``, which
the search calls at every node, run in C when ``bots/eval/_yinyang_native.c`` is built (it takes
this module's tables, ``native_tables``); the Python functions (``evaluate_python`` and the
other ``*_python``) are the reference it is tested against, to the bit.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import Final, Protocol, cast

from bots.eval import MAX_EVAL, Evaluator, HiddenInformation
from games import Move, State
from games.native import native_module
from games.yinyang import (
    ABS_CAUSE,
    ADAPTATION,
    BLACK,
    CELL_MASKS,
    EFFECT_POSITIONS,
    EMPTY,
    FILE_A_MASK,
    FILE_D_MASK,
    K_KEEP,
    K_PIECE,
    K_REWRITE,
    LAW_KIND,
    N_ANCHORS,
    N_LAWS,
    REGEN_COLOUR,
    ROW_PAIRS,
    ROW_PAIRS_HIGH,
    START,
    UNKNOWN,
    Laws,
    YinYangState,
    setup_move,
    window_codes,
)

# -- geometry -----------------------------------------------------------------------------------

GOAL_BIT: Final = (1 << 15, 1)  # Black aims at d4, White at a1
HOME_BIT: Final = (1, 1 << 15)  # the own corner, which is the enemy's goal
GOAL_ADJACENT: Final = (1 << 11 | 1 << 14, 1 << 1 | 1 << 4)  # d3 c4 / b1 a2
DISTANCE: Final = (
    tuple((3 - s % 4) + (3 - s // 4) for s in range(16)),
    tuple(s % 4 + s // 4 for s in range(16)),
)
NO_PIECE_DISTANCE: Final = 8

# -- weights --------------------------------------------------------------------------------------

W_DISTANCE: Final = 40
PROXIMITY: Final = (0, 30, 15, 6, 2, 0, 0)  # per piece, by its distance to the goal
W_GUARDED_GOAL: Final = 60
W_HOME_GUARD: Final = 50
W_THREAT: Final = 150
W_THREAT_TO_ACT: Final = 700
W_MOBILITY: Final = 4
W_LAW_COUNT: Final = 6
W_ADAPTATION: Final = 30
EXPECTATION_SCALE: Final = 300.0
"""The logistic's unit for averaging samples: a threat to win next turn (``W_THREAT_TO_ACT``)
is then worth a 90% score."""
WIN_NOW: Final = 5000
"""The value of a law application that completes one's goal (it ends the turn: a win)."""


def _byte_tables(player: int) -> tuple[list[int], list[int], list[int], list[int]]:
    """Per byte of a 16-bit mask (low, high): the least distance to ``player``'s goal and the
    sum of the proximity bonuses of the pieces."""
    dist = DISTANCE[player]
    out: list[list[int]] = []
    for shift in (0, 8):
        mins, prox = [NO_PIECE_DISTANCE] * 256, [0] * 256
        for m in range(1, 256):
            low = m & -m
            sq = low.bit_length() - 1 + shift
            mins[m] = min(mins[m ^ low], dist[sq])
            prox[m] = prox[m ^ low] + PROXIMITY[dist[sq]]
        out += [mins, prox]
    return out[0], out[1], out[2], out[3]


_TABLES: Final = (_byte_tables(0), _byte_tables(1))


def race(own: int, enemy: int, player: int) -> int:
    """The board terms for ``player`` whose pieces are ``own`` (module docstring)."""
    min_lo, prox_lo, min_hi, prox_hi = _TABLES[player]
    lo, hi = own & 255, own >> 8
    value = -W_DISTANCE * min(min_lo[lo], min_hi[hi]) + prox_lo[lo] + prox_hi[hi]
    if enemy & GOAL_BIT[player]:
        value -= W_GUARDED_GOAL
    elif not own & GOAL_BIT[player] and own & GOAL_ADJACENT[player]:
        value += W_THREAT
    if own & HOME_BIT[player]:
        value += W_HOME_GUARD
    return value


def board_value(black: int, white: int) -> int:
    """The race terms from Black's side."""
    return race(black, white, 0) - race(white, black, 1)


def _piece_moves(own: int, empty: int) -> int:
    return (
        ((own << 4) & empty).bit_count()
        + ((own >> 4) & empty).bit_count()
        + (((own & ~FILE_D_MASK) << 1) & empty).bit_count()
        + (((own & ~FILE_A_MASK) >> 1) & empty).bit_count()
    )


def apply_effect(black: int, white: int, player: int, anchor: int, law: int) -> tuple[int, int]:
    """The board after ``player`` applies ``law`` on window ``anchor`` (no legality check)."""
    kind = LAW_KIND[law]
    if kind == ADAPTATION:
        return black, white
    mask = CELL_MASKS[anchor][EFFECT_POSITIONS[player][law]]
    colour = REGEN_COLOUR[law]
    if colour == EMPTY:
        return black & ~mask, white & ~mask
    if colour == BLACK:
        return black | mask, white
    return black, white | mask


def law_gain(black: int, white: int, player: int, anchor: int, law: int) -> int:
    """What applying ``law`` on ``anchor`` is worth to ``player``: ``WIN_NOW`` if it completes
    the player's goal, ``-WIN_NOW`` if it completes only the enemy's, else the change of the
    race terms."""
    b2, w2 = apply_effect(black, white, player, anchor, law)
    own2, enemy2 = (b2, w2) if player == 0 else (w2, b2)
    if own2 & GOAL_BIT[player]:
        return WIN_NOW
    if enemy2 & GOAL_BIT[player ^ 1]:
        return -WIN_NOW
    before = board_value(black, white)
    after = board_value(b2, w2)
    return after - before if player == 0 else before - after


def _laws_by_cause(owner: int) -> tuple[tuple[int, ...], ...]:
    """Per absolute cause code, the destructions and regenerations ``owner`` could write with
    it (adaptations left out)."""
    table: list[list[int]] = [[] for _ in range(81)]
    for law in range(N_LAWS):
        if LAW_KIND[law] != ADAPTATION:
            table[ABS_CAUSE[owner][law]].append(law)
    return tuple(tuple(laws) for laws in table)


LAWS_BY_CAUSE: Final = (_laws_by_cause(0), _laws_by_cause(1))
ADAPTATION_BY_CAUSE: Final = tuple(
    tuple(
        next(
            law
            for law in range(N_LAWS)
            if LAW_KIND[law] == ADAPTATION and ABS_CAUSE[owner][law] == code
        )
        for code in range(81)
    )
    for owner in (0, 1)
)

# -- law scores over plausible boards -------------------------------------------------------

START_BOARD: Final = (0b0001_0001_0111_0111, 0b1110_1110_1000_1000)
"""The start position's black and white masks (rules §3: Black a1 b1 c1 a2 b2 c2 a3 a4)."""
N_PLAUSIBLE_BOARDS: Final = 300


def _plausible_boards() -> list[tuple[int, int]]:
    """The start board after 1 to 6 random removals and moves (a fixed seed: the same boards
    on every run)."""
    rng = random.Random(20261129)
    boards = [START_BOARD]
    while len(boards) < N_PLAUSIBLE_BOARDS:
        black, white = START_BOARD
        for _ in range(rng.randint(1, 6)):
            pieces = [(c, s) for c in (0, 1) for s in range(16) if (black, white)[c] >> s & 1]
            if not pieces:
                break
            colour, sq = rng.choice(pieces)
            empty = ~(black | white) & 0xFFFF
            targets = [
                t
                for t in (sq + 4, sq - 4, sq + 1 if sq % 4 < 3 else -1, sq - 1 if sq % 4 else -1)
                if 0 <= t < 16 and empty >> t & 1
            ]
            bit = 1 << sq
            if targets and rng.random() < 0.4:
                bit |= 1 << rng.choice(targets)
            if colour == 0:
                black ^= bit
            else:
                white ^= bit
        boards.append((black, white))
    return boards


SCORE_CAP: Final = 1000
"""A law that wins where it fits scores this much there: the winning patterns are rare in
play, more so than on boards made by random removals."""
ADAPTATION_WORTH: Final = 150
"""What an adaptation is worth on a board where it fits, in the units of a law's gain."""
_law_scores: dict[int, tuple[float, ...]] = {}


def law_scores(owner: int) -> tuple[float, ...]:
    """Per law, its average usefulness to ``owner`` over the plausible boards: the best gain
    where it fits (destructions and regenerations, capped at ``SCORE_CAP``), or how often its
    cause appears, times ``ADAPTATION_WORTH`` (adaptations). Computed once per owner."""
    cached = _law_scores.get(owner)
    if cached is not None:
        return cached
    totals = [0.0] * N_LAWS
    boards = _plausible_boards()
    for black, white in boards:
        best: dict[int, int] = {}
        for anchor, code in enumerate(window_codes(black, white)):
            for law in LAWS_BY_CAUSE[owner][code]:
                gain = min(SCORE_CAP, law_gain(black, white, owner, anchor, law))
                if gain > best.get(law, 0):
                    best[law] = gain
            best[ADAPTATION_BY_CAUSE[owner][code]] = ADAPTATION_WORTH
        for law, gain in best.items():
            totals[law] += gain
    scores = tuple(t / len(boards) for t in totals)
    _law_scores[owner] = scores
    return scores


def _weighted_choice(rng: random.Random, items: Sequence[int], weights: Sequence[float]) -> int:
    return rng.choices(items, weights=weights, k=1)[0]


ADAPTATION_CHOICES: Final = 6
"""The adaptation written at setup is one of the best this many, all of them alike (the six
best of each side all fit the start board)."""


_openers_of: dict[int, tuple[list[int], list[float]]] = {}


def _openers(owner: int) -> tuple[list[int], list[float]]:
    """The laws of ``owner`` that fit the start board and remove an enemy piece there, with
    their gains (worked out once per side: every sample of a hidden setup draws an opener)."""
    cached = _openers_of.get(owner)
    if cached is None:
        cached = _openers_of[owner] = _find_openers(owner)
    return cached


def _find_openers(owner: int) -> tuple[list[int], list[float]]:
    black, white = START_BOARD
    openers: list[int] = []
    gains: list[float] = []
    for anchor, code in enumerate(window_codes(black, white)):
        for law in LAWS_BY_CAUSE[owner][code]:
            gain = law_gain(black, white, owner, anchor, law)
            if gain > 0 and law not in openers:
                openers.append(law)
                gains.append(float(gain))
    return openers, gains


OPENER_SHARE: Final = 0.4
"""The chance of writing the strongest opener: never a law in most of a side's sets, so an
opponent cannot count on it (it was in 93% of Black's sets and 97% of White's)."""


def choose_opener(owner: int, rng: random.Random) -> tuple[int, frozenset[int]]:
    """The opener of a law set: the strongest with ``OPENER_SHARE``, else one of the others,
    drawn by the square root of its gain; and the laws the rest of the set must not hold (the
    strongest opener, when another was drawn: else most sets would hold it all the same)."""
    openers, gains = _openers(owner)
    best = max(range(len(openers)), key=lambda i: gains[i])
    others = [i for i in range(len(openers)) if i != best]
    if not others or rng.random() < OPENER_SHARE:
        return openers[best], frozenset()
    chosen = openers[_weighted_choice(rng, others, [gains[i] ** 0.5 for i in others])]
    return chosen, frozenset({openers[best]})


STRONG_LAWS: Final = 40
"""How many of the best-scored destructions and regenerations a law set's last two laws are
drawn from."""
_rankings: dict[int, tuple[list[int], list[int]]] = {}


def _ranked_laws(owner: int) -> tuple[list[int], list[int]]:
    """``owner``'s adaptations by score, and its destructions and regenerations of positive
    score by score (one more than ``STRONG_LAWS``, so that one can be left out), best first."""
    cached = _rankings.get(owner)
    if cached is None:
        scores = law_scores(owner)
        adaptations = sorted(
            (law for law in range(N_LAWS) if LAW_KIND[law] == ADAPTATION),
            key=lambda law: -scores[law],
        )
        strong = sorted(
            (law for law in range(N_LAWS) if LAW_KIND[law] != ADAPTATION and scores[law] > 0),
            key=lambda law: -scores[law],
        )[: STRONG_LAWS + 1]
        cached = _rankings[owner] = (adaptations, strong)
    return cached


def _draw_laws(
    owner: int, rng: random.Random, opener: int, avoid: frozenset[int] = frozenset()
) -> list[int]:
    """Four laws drawn at random from the strong ones, ``opener`` first and none of ``avoid``
    (module docstring)."""
    scores = law_scores(owner)
    causes: set[int] = set()
    chosen: list[int] = []

    def take(law: int) -> None:
        chosen.append(law)
        causes.add(ABS_CAUSE[owner][law])

    take(opener)

    adaptations, strong = _ranked_laws(owner)
    pool = [law for law in adaptations[:ADAPTATION_CHOICES] if ABS_CAUSE[owner][law] not in causes]
    take(rng.choice(pool))  # all fit the start board: any of them, for variety

    ranked = [law for law in strong if law not in avoid][:STRONG_LAWS]
    while len(chosen) < 4:
        pool = [law for law in ranked if ABS_CAUSE[owner][law] not in causes]
        take(_weighted_choice(rng, pool, [scores[law] for law in pool]))
    return chosen


_window_sets: list[frozenset[int]] = []


_WINDOW_MASKS: Final = tuple(
    0b110011 << (anchor % 3 + 4 * (anchor // 3)) for anchor in range(N_ANCHORS)
)
"""The squares of each window (anchors a1 b1 c1 a2 b2 c2 a3 b3 c3)."""


def _first_turn_boards(owner: int) -> list[tuple[int, int, int]]:
    """The boards ``owner`` may face on its first turn, each with the absolute cause of the
    law the opponent revealed to make it (-1: none). Black faces the start board. White faces
    the start board after an adaptation of any cause found there, or the start board less any
    one piece after a destruction with the cause of a window that held it: a revealed law
    blocks every other law of its cause (rules R5), and a White set whose only fitting law has
    the cause of Black's first law has no token (the commonest quick loss)."""
    black, white = START_BOARD
    if owner == 0:
        return [(black, white, -1)]
    codes = window_codes(black, white)
    out = [(black, white, code) for code in sorted(set(codes))]
    for sq in range(16):
        causes = {codes[anchor] for anchor in range(N_ANCHORS) if _WINDOW_MASKS[anchor] >> sq & 1}
        out.extend((black & ~(1 << sq), white & ~(1 << sq), code) for code in sorted(causes))
    return out


def _piece_move_boards(black: int, white: int, player: int) -> list[tuple[int, int]]:
    """The boards after each piece move of ``player``."""
    own = white if player else black
    empty = ~(black | white) & 0xFFFF
    out: list[tuple[int, int]] = []
    for frm in range(16):
        if not own >> frm & 1:
            continue
        for to in (frm + 4, frm - 4, frm + 1 if frm % 4 < 3 else -1, frm - 1 if frm % 4 else -1):
            if 0 <= to < 16 and empty >> to & 1:
                moved = own ^ (1 << frm | 1 << to)
                out.append((black, moved) if player else (moved, white))
    return out


def _has_token(black: int, white: int, player: int, laws: Sequence[int], blocked: int = -1) -> bool:
    """Whether ``player`` holding ``laws`` (all hidden) can act on this board, its laws of the
    absolute cause ``blocked`` (a revealed law's) left out."""
    own = white if player else black
    if _piece_moves(own, ~(black | white) & 0xFFFF):
        return True
    codes = window_codes(black, white)
    return any(
        ABS_CAUSE[player][law] in codes and ABS_CAUSE[player][law] != blocked for law in laws
    )


def _survives(black: int, white: int, owner: int, laws: Sequence[int], blocked: int = -1) -> bool:
    """Whether ``owner``, to act on this board with ``laws``, has a turn after which it can act
    again whatever the opponent replies: a piece move or none, then a destruction of any one
    piece or nothing (the opponent's laws are not known here, and its adaptation can write a
    destruction for the board at hand: a set whose one fitting law empties a square that only
    enemy pieces touch is lost to a do-nothing reply, and many sets are lost to a reply that
    empties such a square)."""
    results: list[tuple[int, int]] = _piece_move_boards(black, white, owner)
    for anchor, code in enumerate(window_codes(black, white)):
        for law in laws:
            if ABS_CAUSE[owner][law] == code and code != blocked:
                results.append(apply_effect(black, white, owner, anchor, law))
    for b2, w2 in results:
        if all(_has_token(b3, w3, owner, laws, blocked) for b3, w3 in _replies(b2, w2, owner ^ 1)):
            return True
    return False


def _replies(black: int, white: int, player: int) -> Iterator[tuple[int, int]]:
    """The boards ``player`` may leave from this one in a turn whatever its laws: a piece move
    or none, then one piece destroyed or none."""
    moved = [*_piece_move_boards(black, white, player), (black, white)]
    for b, w in moved:
        yield b, w
        pieces = b | w
        while pieces:
            bit = pieces & -pieces
            pieces ^= bit
            yield b & ~bit, w & ~bit


W_SURVIVES_ALL: Final = 800
"""What a set is worth more when it survives every first turn the opponent may make."""


def law_set_value(owner: int, laws: Sequence[int]) -> float:
    """How robust and strong a set of laws is for ``owner``: the share of the possible
    first-turn boards (with the law the opponent revealed to make each) where ``owner`` has a
    token (losing there is losing the game) and where it has a first turn that leaves it a
    token whatever the opponent answers (``_survives``), more if that holds on all of them, the
    share of the plausible boards where some law fits, and the laws' own scores."""
    return _judge_set(owner, laws)[0]


def _judge_set(owner: int, laws: Sequence[int]) -> tuple[float, bool]:
    """``law_set_value``, and whether the set survives every first turn of the opponent."""
    if not _window_sets:
        _window_sets.extend(frozenset(window_codes(b, w)) for b, w in _plausible_boards())
    causes = {ABS_CAUSE[owner][law] for law in laws}
    first = _first_turn_boards(owner)
    covered = survived = 0
    for black, white, blocked in first:
        if _has_token(black, white, owner, laws, blocked):
            covered += 1
            if _survives(black, white, owner, laws, blocked):
                survived += 1
    fits = sum(1 for codes in _window_sets if causes & codes)
    scores = law_scores(owner)
    every = survived == len(first)
    value = (
        1000 * covered / len(first)
        + 600 * survived / len(first)
        # a searching opponent finds the one first turn of its that leaves us stuck
        + W_SURVIVES_ALL * every
        + 500 * fits / len(_window_sets)
        + sum(scores[i] for i in laws)
    )
    return value, every


SETUP_DRAWS: Final = 24
"""Law sets drawn at setup; one of the best few is written."""


OPENER_TRIES: Final = 3
"""Openers tried at setup before a set that some first turn of the opponent leaves stuck is
written all the same."""


def write_laws(owner: int, rng: random.Random, skill: float = 1.0) -> Laws:
    """Four laws for ``owner`` to write at setup: the best few of ``SETUP_DRAWS`` random draws
    by ``law_set_value`` that survive every first turn of the opponent, one of them at random,
    in a random slot order. When no draw with its opener survives them all, another opener is
    drawn (up to ``OPENER_TRIES``).

    A ``skill`` below 1 (a level's) keeps ``4 * skill`` of those laws on average (rounded up
    or down at random), the most useful first: the opener, then the adaptation, then the
    strong laws; the others are drawn uniformly from the 405, as a player who writes at random
    (greedy) writes them all. So a little skill is a law that fits the start board and more is
    more of a plan."""
    kept = 4 if skill >= 1.0 else min(4, int(4 * max(0.0, skill) + rng.random()))
    if not kept:
        return (
            rng.randrange(N_LAWS),
            rng.randrange(N_LAWS),
            rng.randrange(N_LAWS),
            rng.randrange(N_LAWS),
        )
    pool: list[list[int]] = []
    for _ in range(OPENER_TRIES):
        opener, avoid = choose_opener(owner, rng)
        draws = [_draw_laws(owner, rng, opener, avoid) for _ in range(SETUP_DRAWS)]
        judged = sorted(
            ((_judge_set(owner, laws), laws) for laws in draws), key=lambda item: -item[0][0]
        )
        robust = [laws for (_, every), laws in judged if every]
        pool = robust[:4] or pool or [laws for _, laws in judged[:4]]
        if robust:
            break
    chosen = list(rng.choice(pool))  # opener, adaptation, strong, strong
    chosen[kept:] = [rng.randrange(N_LAWS) for _ in range(4 - kept)]
    rng.shuffle(chosen)
    return chosen[0], chosen[1], chosen[2], chosen[3]


# -- the evaluator ---------------------------------------------------------------------------------

REWRITE_LAWS: Final = 3
"""How many new laws an adaptation may write in the search (into each target slot)."""


class YinYangEvaluator(Evaluator):
    """The Yin Yang evaluation and search advice (module docstring)."""

    expectation_scale = EXPECTATION_SCALE

    def __init__(self) -> None:
        self._hidden = YinYangHidden()

    def hidden_information(self) -> HiddenInformation:
        return self._hidden

    def prepare(self) -> None:
        for owner in (0, 1):
            law_scores(owner)
            _openers(owner)
        law_set_value(0, (0, 1, 2, 3))  # builds the window sets of the plausible boards

    def evaluate(self, state: State) -> int:
        if _native is not None:
            return _native.evaluate(state)
        return self.evaluate_python(state)

    def evaluate_python(self, state: State) -> int:
        """The evaluation in Python: the reference of ``_yinyang_native.c``'s ``evaluate``."""
        assert isinstance(state, YinYangState)
        black, white = state.board_masks()
        side = state.side()
        value = self._board_terms(state, side, black, white)
        for player in (0, 1):
            term = self._law_term(state, player, side, black, white)
            value += -term if player else term
        return -value if side else value

    @staticmethod
    def _board_terms(state: YinYangState, side: int, black: int, white: int) -> int:
        """The race, the threat to act and mobility, from Black's side."""
        value = board_value(black, white)
        if state.phase() == "start":
            own = white if side else black
            if own & GOAL_ADJACENT[side] and not (black | white) & GOAL_BIT[side]:
                value += W_THREAT_TO_ACT if side == 0 else -W_THREAT_TO_ACT
        empty = ~(black | white) & 0xFFFF
        return value + W_MOBILITY * (_piece_moves(black, empty) - _piece_moves(white, empty))

    def _law_term(self, state: YinYangState, player: int, side: int, black: int, white: int) -> int:
        """What ``player``'s applicable laws are worth: the best board change, nearly in full
        for the side to act and at a third for the other, their number and an adaptation."""
        best = count = adapt = 0
        for _, anchor, law in state.applications(player):
            if LAW_KIND[law] == ADAPTATION:
                adapt = W_ADAPTATION
                continue
            count += 1
            gain = law_gain(black, white, player, anchor, law)
            if gain > best:
                best = gain
        return best * (9 if player == side else 3) // 10 + W_LAW_COUNT * min(count, 4) + adapt

    def over_samples(
        self, lead: State, others: Sequence[State], weights: Sequence[int]
    ) -> Evaluator:
        """An evaluation for searching the view ``lead`` itself, in which each ``?`` law of
        ``lead`` counts at a leaf as what it would do there in each completion ``others``
        (weighted), the completions' values averaged as expected scores (module docstring).
        A view that hides nothing, or completions that all agree on what it hides, get this
        evaluation as it is."""
        assert isinstance(lead, YinYangState)
        averaged = _SampledThreats(self._hidden, self.expectation_scale)
        for player in (0, 1):
            laws, _ = lead.laws(player)
            if laws is None or UNKNOWN not in laws:
                continue
            slots = tuple(s for s in range(4) if laws[s] == UNKNOWN)
            variants: list[tuple[int, ...]] = []
            for world in others:
                assert isinstance(world, YinYangState)
                filled, _ = world.laws(player)
                assert filled is not None
                variants.append(tuple(filled[s] for s in slots))
            if variants:
                averaged.variants[player] = (slots, variants)
        distinct = {
            tuple(v for entry in averaged.variants.values() for v in entry[1][i])
            for i in range(len(others))
        }
        if not averaged.variants or len(distinct) < 2:
            return self
        averaged.weights = list(weights)
        return averaged

    def search_moves(self, state: State) -> Sequence[Move]:
        assert isinstance(state, YinYangState)
        moves = state.base_moves()
        keeps = [m for m in moves if m & 7 == K_KEEP]
        if keeps:
            side = state.side()
            black, white = state.board_masks()
            laws = rewrite_laws(state, side, black, white)
            for keep in keeps:
                slot = keep >> 3 & 3
                base = keep & ~7 | K_REWRITE
                for target in _rewrite_targets(state, side, slot):
                    for law in laws:
                        moves.append(base | target << 9 | law << 11)
        return moves

    def order_moves(self, state: State, moves: Sequence[Move]) -> list[Move]:
        if _native is not None:
            try:
                return _native.order_moves(state, moves)
            except ValueError:
                pass  # moves the native code does not take: the reference orders them
        return self.order_moves_python(state, moves)

    def order_moves_python(self, state: State, moves: Sequence[Move]) -> list[Move]:
        """``order_moves`` in Python: the reference of ``_yinyang_native.c``'s."""
        assert isinstance(state, YinYangState)
        side = state.side()
        black, white = state.board_masks()
        laws, _ = state.laws(side)
        dist = DISTANCE[side]

        def score(move: Move) -> int:
            kind = move & 7
            if kind == K_PIECE:
                return 10 * (dist[move >> 3 & 15] - dist[move >> 7 & 15])
            if kind == 2 and laws is not None:  # K_APPLY
                law = laws[move >> 3 & 3]
                return law_gain(black, white, side, move >> 5 & 15, law)
            return 0

        return sorted(moves, key=lambda m: -score(m))


class _SampledThreats(YinYangEvaluator):
    """The evaluation of a view's search in which the ``?`` laws count as they would be in
    each completion (``YinYangEvaluator.over_samples``)."""

    def __init__(self, hidden: YinYangHidden, scale: float) -> None:
        super().__init__()
        self._hidden = hidden
        self._scale = scale
        self.variants: dict[int, tuple[tuple[int, ...], list[tuple[int, ...]]]] = {}
        """Per player with ``?`` laws at the root: those slots, and per completion the laws
        it holds there."""
        self.weights: list[int] = []
        """Per completion, how many of the samples drew it."""
        self._plan: object = None
        """The native evaluation's copy of ``variants`` and ``weights``, made at the first
        evaluation (they do not change once the search has begun), or ``_NO_PLAN``."""

    def evaluate(self, state: State) -> int:
        plan = self._plan
        if plan is None:
            plan = self._plan = self._native_plan()
        if plan is not _NO_PLAN:
            assert _native is not None
            return _native.evaluate_sampled(state, plan)
        return self.evaluate_python(state)

    def _native_plan(self) -> object:
        """The plan of ``_yinyang_native.evaluate_sampled``, or ``_NO_PLAN`` when the native
        module is off, or does not take these completions (they are then evaluated by the
        reference, which raises where it raises)."""
        if _native is None:
            return _NO_PLAN
        try:
            return _native.plan(
                self.variants.get(0), self.variants.get(1), self.weights, self._scale
            )
        except (TypeError, ValueError):
            return _NO_PLAN

    def evaluate_python(self, state: State) -> int:
        """The evaluation over the samples in Python: the reference of
        ``_yinyang_native.c``'s ``evaluate_sampled``."""
        value = round(self.logit_python(state))
        return max(-MAX_EVAL + 1, min(MAX_EVAL - 1, value))

    def logit_python(self, state: State) -> float:
        """The mean of the completions' expected scores, turned back into an evaluation: the
        value before it is rounded (and the reference of ``_yinyang_native.c``'s
        ``sampled_logit``, which must give the same double)."""
        assert isinstance(state, YinYangState)
        black, white = state.board_masks()
        side = state.side()
        common = self._board_terms(state, side, black, white)
        per_world = [common] * len(self.weights)
        stuck = [False] * len(self.weights)
        for player in (0, 1):
            sign = -1 if player else 1
            entry = self.variants.get(player)
            if entry is None:
                term = self._law_term(state, player, side, black, white)
                per_world = [v + sign * term for v in per_world]
                continue
            terms, fits = self._sampled_terms(state, player, side, black, white, entry=entry)
            per_world = [v + sign * t for v, t in zip(per_world, terms, strict=True)]
            if player == side and not all(fits):
                # without a token it knows of, the side to act must fire a hidden law, and in
                # a completion where none fits it has lost
                known = (
                    state.phase() != "start"
                    or _can_move(black, white, side)
                    or bool(state.applications(side))
                )
                if not known:
                    stuck = [not f for f in fits]
        scale = self._scale
        total = weight_sum = 0.0
        for value, weight, lost in zip(per_world, self.weights, stuck, strict=True):
            if lost:
                expectation = 0.0
            else:
                mine = -value if side else value
                expectation = 1.0 / (1.0 + math.exp(max(-60.0, min(60.0, -mine / scale))))
            total += weight * expectation
            weight_sum += weight
        mean = min(max(total / weight_sum, 1e-9), 1.0 - 1e-9)
        return scale * math.log(mean / (1.0 - mean))

    def _sampled_terms(
        self,
        state: YinYangState,
        player: int,
        side: int,
        black: int,
        white: int,
        *,
        entry: tuple[tuple[int, ...], list[tuple[int, ...]]],
    ) -> tuple[list[int], list[bool]]:
        """``player``'s law term in each completion, and whether any of its laws fits in it:
        the laws it holds in the line count as they are, and each slot still ``?`` as the
        completion fills it."""
        slots, variants = entry
        laws, revealed = state.laws(player)
        assert laws is not None
        open_slots = [
            i for i, slot in enumerate(slots) if laws[slot] == UNKNOWN and not revealed >> slot & 1
        ]
        best_known = count_known = adapt_known = 0
        for _, anchor, law in state.applications(player):
            if LAW_KIND[law] == ADAPTATION:
                adapt_known = W_ADAPTATION
                continue
            count_known += 1
            best_known = max(best_known, law_gain(black, white, player, anchor, law))
        any_known = bool(count_known or adapt_known)
        share = 9 if player == side else 3
        if not open_slots:
            term = best_known * share // 10 + W_LAW_COUNT * min(count_known, 4) + adapt_known
            return [term] * len(variants), [any_known] * len(variants)
        codes = window_codes(black, white)
        where: dict[int, list[int]] = {}
        for anchor, code in enumerate(codes):
            where.setdefault(code, []).append(anchor)
        blocked = revealed_causes(state)
        res_b, res_w = state.reserves()
        cause = ABS_CAUSE[player]
        terms: list[int] = []
        fits: list[bool] = []
        for hidden in variants:
            best, count, adapt = best_known, count_known, adapt_known
            for i in open_slots:
                law = hidden[i]
                anchors = where.get(cause[law])
                if anchors is None or cause[law] in blocked:
                    continue
                if LAW_KIND[law] == ADAPTATION:
                    adapt = W_ADAPTATION
                    continue
                colour = REGEN_COLOUR[law]
                if colour and (res_b if colour == BLACK else res_w) < 2:
                    continue
                for anchor in anchors:
                    count += 1
                    best = max(best, law_gain(black, white, player, anchor, law))
            terms.append(best * share // 10 + W_LAW_COUNT * min(count, 4) + adapt)
            fits.append(bool(count or adapt))
        return terms, fits


def _can_move(black: int, white: int, side: int) -> bool:
    """Whether ``side`` has a piece move."""
    empty = ~(black | white) & 0xFFFF
    return _piece_moves(white if side else black, empty) > 0


def revealed_causes(state: YinYangState) -> set[int]:
    """The absolute causes of every revealed law: no other law with one of them can fire."""
    blocked = set()
    for player in (0, 1):
        laws, revealed = state.laws(player)
        if laws is None:
            continue
        for slot in range(4):
            if revealed >> slot & 1 and laws[slot] != UNKNOWN:
                blocked.add(ABS_CAUSE[player][laws[slot]])
    return blocked


def rewrite_laws(state: YinYangState, side: int, black: int, white: int) -> list[int]:
    """The best destructions and regenerations ``side`` could write for this board: each
    valued by its best gain on a window it fits now, at most ``REWRITE_LAWS``, of different
    causes. Left out: laws blocked by a revealed law, regenerations short of reserve, and laws
    with the cause of one ``side`` holds already (two revealed laws with one cause block each
    other)."""
    if _native is not None:
        return _native.rewrite_laws(state, side, black, white)
    return rewrite_laws_python(state, side, black, white)


def rewrite_laws_python(state: YinYangState, side: int, black: int, white: int) -> list[int]:
    """``rewrite_laws`` in Python: the reference of ``_yinyang_native.c``'s."""
    blocked = revealed_causes(state)
    own, _ = state.laws(side)
    held = {ABS_CAUSE[side][law] for law in own or () if law != UNKNOWN}
    res_b, res_w = state.reserves()
    scored: list[tuple[int, int, int]] = []
    for anchor, code in enumerate(window_codes(black, white)):
        if code in blocked or code in held:
            continue
        for law in LAWS_BY_CAUSE[side][code]:
            colour = REGEN_COLOUR[law]
            if colour and (res_b if colour == BLACK else res_w) < 2:
                continue
            gain = law_gain(black, white, side, anchor, law)
            if gain > 0:
                scored.append((-gain, law, code))
    scored.sort()
    out: list[int] = []
    causes: set[int] = set()
    for _, law, code in scored:
        if code in causes or law in out:
            continue
        out.append(law)
        causes.add(code)
        if len(out) == REWRITE_LAWS:
            break
    return out


def _rewrite_targets(state: YinYangState, side: int, adapt_slot: int) -> list[int]:
    """The slots an adaptation in ``adapt_slot`` rewrites in the search: itself and the other
    own law that is least useful now."""
    laws, revealed = state.laws(side)
    assert laws is not None
    applicable = {slot for slot, _, _ in state.applications(side)}
    res_b, res_w = state.reserves()

    def usefulness(slot: int) -> int:
        law = laws[slot]
        if slot in applicable:
            return 100
        if law == UNKNOWN:  # a hidden law of the opponent in a view: kept, as unknown
            return 60
        if LAW_KIND[law] == ADAPTATION:
            return 50
        colour = REGEN_COLOUR[law]
        if colour and (res_b if colour == BLACK else res_w) < 2:
            return 0
        return 20

    others = sorted((s for s in range(4) if s != adapt_slot), key=lambda s: (usefulness(s), s))
    del revealed
    return [adapt_slot, others[0]]


# -- hidden information --------------------------------------------------------------------------

MISSED_WIN_WEIGHT: Final = 0.2
SELF_MODEL_SHARE: Final = 0.7
"""The share of samples whose hidden setup laws are drawn as we draw our own (``_draw_laws``):
most opponents a bot meets write strong sets of different causes, as we do; the rest are drawn
law by law from the even mix of the uniform distribution and the law scores."""
REWRITE_SHARE: Final = 0.7
"""The chance that a slot seen rewritten holds one of the laws we would have written there."""
_base: dict[int, tuple[float, ...]] = {}


def _base_weights(player: int) -> tuple[float, ...]:
    """The prior of one hidden law of ``player`` drawn law by law: an even mix of the uniform
    distribution (an opponent who writes at random) and the law scores (one who writes as we
    do)."""
    cached = _base.get(player)
    if cached is None:
        scores = law_scores(player)
        total = sum(scores)
        cached = _base[player] = tuple(0.5 / N_LAWS + 0.5 * s / total for s in scores)
    return cached


def _setup_proposal(player: int, rng: random.Random, known: set[int]) -> list[int]:
    """Laws for ``player``'s hidden slots as our own setup would write them: a set drawn by
    ``_draw_laws`` less the laws of a cause already known (those slots are revealed, or the
    set would block itself), in a random order (taken from the end)."""
    opener, avoid = choose_opener(player, rng)
    drawn = [
        law for law in _draw_laws(player, rng, opener, avoid) if ABS_CAUSE[player][law] not in known
    ]
    rng.shuffle(drawn)
    return drawn


class YinYangHidden(HiddenInformation):
    """Setup by ``write_laws``; samples of the opponent's hidden laws (module docstring)."""

    def __init__(self, *, self_model_share: float = SELF_MODEL_SHARE) -> None:
        self._self_model_share = self_model_share
        """``SELF_MODEL_SHARE`` unless a measurement tries another share."""
        self._seen: list[YinYangState] = []
        self._rewritten: dict[tuple[int, int], list[int]] = {}
        """Per (player, slot) seen rewritten, the laws it was likely rewritten to."""
        self._wins: dict[tuple[int, int], frozenset[int]] = {}
        """Per (position key, player), the laws that would have won there at once: each
        remembered turn is weighed in every later search, so it is worked out once."""

    def new_game(self) -> None:
        self._seen.clear()
        self._rewritten.clear()
        self._wins.clear()

    def _winning_laws(self, state: YinYangState, player: int) -> frozenset[int]:
        key = (state.key(), player)
        wins = self._wins.get(key)
        if wins is None:
            wins = self._wins[key] = frozenset(_winning_laws(state, player))
        return wins

    def is_hidden(self, state: State) -> bool:
        assert isinstance(state, YinYangState)
        return state.is_view()

    def choose_without_search(
        self, state: State, rng: random.Random, skill: float = 1.0
    ) -> Move | None:
        assert isinstance(state, YinYangState)
        if state.phase() != "setup" or state.is_terminal():
            return None
        return setup_move(write_laws(state.side(), rng, skill))

    def remember(self, state: State, move: Move) -> None:
        assert isinstance(state, YinYangState)
        if state.phase() == "setup":
            self._seen.clear()
            self._wins.clear()
            return
        if self._seen and self._seen[-1].turn() >= state.turn():
            # a new game, or positions out of order: start afresh
            self._seen.clear()
            self._rewritten.clear()
            self._wins.clear()
        after = state.copy()
        after.push(move)
        if after.phase() == "start" and not after.is_terminal():
            self._seen.append(after.with_laws(after.side(), _laws_of(after, after.side())))

    def samples(self, state: State, rng: random.Random, count: int) -> list[State]:
        assert isinstance(state, YinYangState)
        self._note_rewrites(state)
        filled: list[list[Laws]] = [[], []]
        for player in (0, 1):
            laws, _ = state.laws(player)
            if laws is None or UNKNOWN not in laws:
                continue
            cause = ABS_CAUSE[player]
            known = {cause[law] for law in laws if law != UNKNOWN}
            hidden_slots = [slot for slot in range(4) if laws[slot] == UNKNOWN]
            base = _base_weights(player)
            weights = {slot: self.slot_weights(state, player, slot) for slot in hidden_slots}
            cumulative = {slot: list(accumulate(weights[slot])) for slot in hidden_slots}
            for _ in range(count):
                causes = set(known)
                drawn = list(laws)
                proposal = (
                    _setup_proposal(player, rng, known)
                    if rng.random() < self._self_model_share
                    else []
                )
                for slot in hidden_slots:
                    rewrites = self._rewritten.get((player, slot))
                    candidate: int | None = None
                    if rewrites and rng.random() < REWRITE_SHARE:
                        candidate = rng.choice(rewrites)
                    elif rewrites is None and proposal:
                        candidate = proposal.pop()
                    if candidate is not None:
                        # what was seen weighs in as for any other draw (slot_weights)
                        keep = weights[slot][candidate] / base[candidate]
                        if cause[candidate] in causes:
                            keep *= DUPLICATE_CAUSE_WEIGHT
                        if rng.random() >= keep:
                            candidate = None
                    law = (
                        candidate
                        if candidate is not None
                        else _draw_distinct(rng, cumulative[slot], cause, causes)
                    )
                    causes.add(cause[law])
                    drawn[slot] = law
                filled[player].append((drawn[0], drawn[1], drawn[2], drawn[3]))
        out: list[State] = []
        for i in range(count):
            sample = state
            for player in (0, 1):
                if filled[player]:
                    sample = sample.with_laws(player, filled[player][i])
            out.append(sample if sample is not state else state.copy())
        return out

    def _note_rewrites(self, state: YinYangState) -> None:
        """Note the slots of the opponent seen revealed at the start of its last turn and
        hidden now: an adaptation rewrote them in that turn, on the board of this position (an
        adaptation ends the turn and leaves the board as it is), so they likely hold one of the
        laws we would write for it (``rewrite_laws``)."""
        if state.phase() != "start":
            return
        opponent = 1 - state.side()
        before = self._last_turn_start(state, opponent)
        if before is None or before.turn() != state.turn() - 1:
            return
        then, now = before.law_entries(opponent), state.law_entries(opponent)
        if then is None or now is None:
            return
        black, white = state.board_masks()
        for slot in range(4):
            if now[slot] != "?":
                self._rewritten.pop((opponent, slot), None)
            elif then[slot].startswith("+"):
                self._rewritten[(opponent, slot)] = rewrite_laws(state, opponent, black, white)

    def slot_weights(self, state: YinYangState, player: int, slot: int) -> list[float]:
        """The prior of a hidden law of ``player`` in ``slot``, lowered for the laws that
        would have won at once at the start of a remembered turn of ``player``."""
        weights = list(_base_weights(player))
        for seen in reversed(self._seen):
            if seen.turn() > state.turn():
                continue
            laws, _ = seen.laws(player)
            if seen.side() != player or laws is None or laws[slot] != UNKNOWN:
                if laws is not None and laws[slot] != UNKNOWN:
                    break  # known then: the hidden law now was written after that turn
                continue
            for law in self._winning_laws(seen, player):
                weights[law] *= MISSED_WIN_WEIGHT
        if _moved_only(self._last_turn_start(state, player), state, player, slot):
            # its last turn was a piece move and nothing else: a law that wins on the board it
            # left (this one) could have been applied then, so it was very likely not there
            for law in _winning_laws(state, player):
                weights[law] *= MISSED_WIN_WEIGHT
        return weights

    def _last_turn_start(self, state: YinYangState, player: int) -> YinYangState | None:
        """The remembered position at the start of ``player``'s latest turn before ``state``."""
        for seen in reversed(self._seen):
            if seen.turn() < state.turn() and seen.side() == player:
                return seen
        return None


def _moved_only(before: YinYangState | None, after: YinYangState, player: int, slot: int) -> bool:
    """Whether ``player``'s turn from ``before`` (its start) to ``after`` was one piece move and
    no law: its laws as seen are unchanged (nothing revealed or rewritten, ``slot`` hidden
    throughout), the other side's pieces are where they were, and one of its own moved one
    step. (Applying a law that was already revealed without changing the board would pass for
    this, which is why the result is a weight, not a rule.)"""
    if before is None or after.turn() != before.turn() + 1:
        return False
    if before.law_entries(player) != after.law_entries(player):
        return False
    entries = after.law_entries(player)
    if entries is None or entries[slot] != "?":
        return False
    (b_black, b_white), (a_black, a_white) = before.board_masks(), after.board_masks()
    own_before, own_after = (b_white, a_white) if player else (b_black, a_black)
    if ((b_black, b_white)[1 - player]) != ((a_black, a_white)[1 - player]):
        return False
    left, arrived = own_before & ~own_after, own_after & ~own_before
    if left.bit_count() != 1 or arrived.bit_count() != 1:
        return False
    frm, to = left.bit_length() - 1, arrived.bit_length() - 1
    return abs(frm - to) == 4 or (abs(frm - to) == 1 and frm // 4 == to // 4)


DUPLICATE_CAUSE_WEIGHT: Final = 0.05
"""How much less often a sampled hidden law has the cause of another law of the same player
(known, or drawn for the same sample): a writer who plays as we do never writes two laws with
one cause, which would block each other once revealed; a careless one might."""
_REDRAWS: Final = 16
"""Draws tried for a law of a cause not yet taken, before one of a taken cause is kept."""


def _draw_distinct(
    rng: random.Random, cumulative: list[float], cause: Sequence[int], taken: set[int]
) -> int:
    """A law drawn by the weights summed up in ``cumulative``, with those whose cause
    (``cause[law]``) is in ``taken`` kept only with ``DUPLICATE_CAUSE_WEIGHT``: rejection
    sampling, so the result follows the weights times that factor (up to ``_REDRAWS`` tries)."""
    items = range(N_LAWS)
    law = rng.choices(items, cum_weights=cumulative, k=1)[0]
    for _ in range(_REDRAWS):
        if cause[law] not in taken or rng.random() < DUPLICATE_CAUSE_WEIGHT:
            return law
        law = rng.choices(items, cum_weights=cumulative, k=1)[0]
    return law


def _laws_of(state: YinYangState, player: int) -> Laws:
    laws, _ = state.laws(player)
    assert laws is not None
    return laws


def _winning_laws(state: YinYangState, player: int) -> set[int]:
    """The destructions and regenerations ``player`` could have applied in ``state`` (a view
    at the start of its turn) that complete its goal at once."""
    black, white = state.board_masks()
    blocked = revealed_causes(state)
    res_b, res_w = state.reserves()
    out: set[int] = set()
    for anchor, code in enumerate(window_codes(black, white)):
        if code in blocked:
            continue
        for law in LAWS_BY_CAUSE[player][code]:
            colour = REGEN_COLOUR[law]
            if colour and (res_b if colour == BLACK else res_w) < 2:
                continue
            if law_gain(black, white, player, anchor, law) == WIN_NOW:
                out.add(law)
    return out


# -- the native evaluation -------------------------------------------------------------------------


class _Native(Protocol):
    """What ``bots/eval/_yinyang_native.c`` offers."""

    def init(self, tables: dict[str, object], /) -> None: ...

    def evaluate(self, state: State, /) -> int: ...

    def plan(
        self,
        black: tuple[tuple[int, ...], list[tuple[int, ...]]] | None,
        white: tuple[tuple[int, ...], list[tuple[int, ...]]] | None,
        weights: list[int],
        scale: float,
        /,
    ) -> object: ...

    def evaluate_sampled(self, state: State, plan: object, /) -> int: ...

    def sampled_logit(self, state: State, plan: object, /) -> float: ...

    def rewrite_laws(self, state: State, side: int, black: int, white: int, /) -> list[int]: ...

    def order_moves(self, state: State, moves: Sequence[Move], /) -> list[Move]: ...

    def law_gain(self, black: int, white: int, player: int, anchor: int, law: int, /) -> int: ...


_NO_PLAN: Final = object()
"""A sampled evaluation that the native module does not evaluate."""


def native_tables() -> dict[str, object]:
    """The tables and weights ``_yinyang_native.init`` takes, by name: this module's and the
    rules' own, so that the C code has no copy of its own to drift."""
    return {
        "N_LAWS": N_LAWS,
        "UNKNOWN": UNKNOWN,
        "N_ANCHORS": N_ANCHORS,
        "ADAPTATION": ADAPTATION,
        "EMPTY": EMPTY,
        "BLACK": BLACK,
        "START": START,
        "K_PIECE": K_PIECE,
        "REWRITE_LAWS": REWRITE_LAWS,
        "CELL_MASKS": CELL_MASKS,
        "EFFECT_POSITIONS": EFFECT_POSITIONS,
        "REGEN_COLOUR": REGEN_COLOUR,
        "LAW_KIND": LAW_KIND,
        "ABS_CAUSE": ABS_CAUSE,
        "ROW_PAIRS": ROW_PAIRS,
        "ROW_PAIRS_HIGH": ROW_PAIRS_HIGH,
        "RACE_TABLES": _TABLES,
        "LAWS_BY_CAUSE": LAWS_BY_CAUSE,
        "GOAL_BIT": GOAL_BIT,
        "HOME_BIT": HOME_BIT,
        "GOAL_ADJACENT": GOAL_ADJACENT,
        "DISTANCE": DISTANCE,
        "FILE_A_MASK": FILE_A_MASK,
        "FILE_D_MASK": FILE_D_MASK,
        "W_DISTANCE": W_DISTANCE,
        "W_GUARDED_GOAL": W_GUARDED_GOAL,
        "W_HOME_GUARD": W_HOME_GUARD,
        "W_THREAT": W_THREAT,
        "W_THREAT_TO_ACT": W_THREAT_TO_ACT,
        "W_MOBILITY": W_MOBILITY,
        "W_LAW_COUNT": W_LAW_COUNT,
        "W_ADAPTATION": W_ADAPTATION,
        "WIN_NOW": WIN_NOW,
        "MAX_EVAL": MAX_EVAL,
    }


def _load_native() -> _Native | None:
    """The C evaluation (``bots/eval/_yinyang_native.c``) with this module's tables; None when
    it is not built, or ``ENGINESRV_PURE_PYTHON`` is set."""
    module = native_module("bots.eval._yinyang_native")
    if module is None:
        return None
    native = cast(_Native, module)
    native.init(native_tables())
    return native


_native = _load_native()
