"""Yin Yang as an environment (docs/envs.md, "Yin Yang").

Actions (58,846), in blocks (``LAWS`` = ``games.yinyang.LAW_TEXTS``, the 405 valid laws in sorted
order; ``ANCHORS`` = a1 b1 c1 a2 b2 c2 a3 b3 c3, index ``3 * (rank - 1) + file``):

==========  ============  ===============================================  =================
block       actions       index                                            token
==========  ============  ===============================================  =================
piece move  0..47         ``PIECE_MOVES.index(token)``                     ``b2-c2``
end         48            ``48``                                           ``end``
apply       49..84        ``49 + 9 * (k - 1) + a``                         ``L<k>@<A>``
keep        85..120       ``85 + 9 * (k - 1) + a``                         ``L<k>@<A>:keep``
rewrite     121..58440    ``121 + 405 * (4 * (9 * (k - 1) + a) + j - 1)``  ``L<k>@<A>:L<j>=``
                          ``+ l``                                          ``<law>``
setup law   58441..58845  ``58441 + l``                                    ``law:<law>``
==========  ============  ===============================================  =================

(``a`` the index of anchor ``A``, ``l`` the index of ``<law>`` in ``LAWS``.) The setup, one token
``laws:L1,L2,L3,L4`` of 405^4, is four steps of the same agent: the n-th setup-law action writes
its law into slot n; the move is pushed with the fourth. Any valid law may be written into any
slot, the same law twice included (rules R9), so during a setup every setup-law action is legal.
``PIECE_MOVES`` lists every from-to of adjacent squares: from squares a1, b1, ..., d4 (index
``4 * (rank - 1) + file``), to their neighbours in the order N, E, S, W (rules §2).

Observation planes (163 x 4 x 4), ``[plane, rank - 1, file]`` (file a = 0: the absolute board, as
Black sees it, for both agents), from the side of the agent observing ("its colour": Black for
``player_0``, White for ``player_1``):

* 0 its pieces, 1 the opponent's; 2 its goal square (d4 for Black, a1 for White), 3 the
  opponent's goal square;
* 4 the reserve of its colour, 5 the reserve of the opponent's colour, as shares of the start
  reserves (black 8, white 10), on every square;
* 6 all ones when the position's side to act is its colour (its decision; at the end, the
  side that would act);
* 7, 8, 9 all ones in phase ``setup``, ``start``, ``moved`` (one of them);
* 10 the turn counter as ``min(turn, TURN_SCALE) / TURN_SCALE`` (``TURN_SCALE`` = 1,000);
* 11-86 its laws, slots 1-4, ``LAW_PLANES`` (19) each; 87-162 the opponent's laws alike.

A law slot's 19 planes, each all ones or all zeros (``law_features``): 0 the text is in the
observation (its own written laws, those chosen so far in its own setup, the opponent's revealed
laws); 1 revealed; 2-5 the cause's cells TL, TR, BL, BR hold a piece of its colour (the colour
of the agent observing), 6-9 of the opponent's colour; 10 an adaptation (effect ``*``); 11-14,
15-18 the effect's cells alike (zeros for an adaptation). The cells are in the absolute frame:
as the law reads on the board (rules §2 "absolute pattern", R4), so a White law's text is
reversed; TL, TR, BL, BR of window ``xy`` are ``x(y+1)``, ``(x+1)(y+1)``, ``xy``, ``(x+1)y``. An
opponent's hidden law, or a law not written yet, is all zeros: the same whatever it is.

``max_plies`` is 1,000 actions by default: the rules do not bound a game (positions may repeat
for ever), while of 53,000 random games the longest took 877 actions, and of 52 alpha-beta
self-play games (depths 1 and 2) the longest that ended took 361 (13 went on past 3,000).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

import games
from envs.adapter import Partial, Planes, TokenAdapter
from games.base import Move
from games.yinyang import (
    ANCHOR_NAMES,
    LAW_OF_TEXT,
    LAW_TEXTS,
    SQUARE_NAMES,
    UNKNOWN,
    YinYangState,
    parse_token,
    setup_move,
)

N_LAWS = len(LAW_TEXTS)  # 405


def _neighbours(square: int) -> list[int]:
    """The neighbours of ``square`` (index ``4 * (rank - 1) + file``) in the order N, E, S, W."""
    rank, file = divmod(square, 4)
    out = []
    for dr, df in ((1, 0), (0, 1), (-1, 0), (0, -1)):
        if 0 <= rank + dr < 4 and 0 <= file + df < 4:
            out.append(4 * (rank + dr) + file + df)
    return out


PIECE_MOVES = tuple(
    f"{SQUARE_NAMES[frm]}-{SQUARE_NAMES[to]}" for frm in range(16) for to in _neighbours(frm)
)
"""The 48 piece moves: from a1, b1, ..., d4, to each neighbour in the order N, E, S, W."""

PIECE_BASE = 0
END_ACTION = PIECE_BASE + len(PIECE_MOVES)  # 48
APPLY_BASE = END_ACTION + 1  # 49
KEEP_BASE = APPLY_BASE + 4 * 9  # 85
REWRITE_BASE = KEEP_BASE + 4 * 9  # 121
SETUP_BASE = REWRITE_BASE + 4 * 9 * 4 * N_LAWS  # 58,441
SIZE = SETUP_BASE + N_LAWS  # 58,846

TOKENS = (
    *PIECE_MOVES,
    "end",
    *(f"L{k}@{a}" for k in range(1, 5) for a in ANCHOR_NAMES),
    *(f"L{k}@{a}:keep" for k in range(1, 5) for a in ANCHOR_NAMES),
    *(
        f"L{k}@{a}:L{j}={law}"
        for k in range(1, 5)
        for a in ANCHOR_NAMES
        for j in range(1, 5)
        for law in LAW_TEXTS
    ),
    *(f"law:{law}" for law in LAW_TEXTS),
)
"""``TOKENS[i]``: what action ``i`` means (``law:<law>`` is one law of a ``laws:`` token; the
others are move tokens of the rules' notation, §7)."""
assert len(TOKENS) == SIZE


@functools.cache
def action_of_move() -> dict[Move, int]:
    """The action of each move outside the setup (built once: the rewrites are 58,320)."""
    return {parse_token(TOKENS[i]): i for i in range(PIECE_BASE, SETUP_BASE)}


TURN_SCALE = 1000
"""The turn counter's plane is ``min(turn, TURN_SCALE) / TURN_SCALE``."""
START_RESERVES = (8, 10)
"""The black and the white reserves at the start."""
BOARD_PLANES = 11
LAW_PLANES = 19
"""The planes of one law slot."""
PLANES = BOARD_PLANES + 8 * LAW_PLANES  # 163
GOALS = (15, 0)
"""The goal square of Black (d4) and of White (a1)."""


def law_features(law: int, owner: int, colour: int) -> np.ndarray:
    """The 19 values of law number ``law`` (an index of ``LAW_TEXTS``; ``UNKNOWN``: all zeros)
    of ``owner`` (0 Black, 1 White) as the agent of ``colour`` (0 Black, 1 White) sees it: the
    planes of its slot but the revealed flag (index 1), which the position holds."""
    values = np.zeros(LAW_PLANES, dtype=np.float32)
    if law == UNKNOWN:
        return values
    text = LAW_TEXTS[law]
    cause, effect = text[:4], text[5:]
    if owner:  # a White law reads on the board reversed (R4)
        cause, effect = cause[::-1], effect[::-1]
    mine, theirs = "bw"[colour], "wb"[colour]
    values[0] = 1.0
    for i in range(4):
        values[2 + i] = cause[i] == mine
        values[6 + i] = cause[i] == theirs
    if effect == "*":
        values[10] = 1.0
    else:
        for i in range(4):
            values[11 + i] = effect[i] == mine
            values[15 + i] = effect[i] == theirs
    return values


FEATURES = np.stack(
    [
        np.stack(
            [
                np.stack([law_features(law, owner, colour) for law in range(N_LAWS + 1)])
                for colour in (0, 1)
            ]
        )
        for owner in (0, 1)
    ]
)
"""``FEATURES[owner, colour, law]``: ``law_features(law, owner, colour)`` (``UNKNOWN`` = 405
included)."""
SQUARE_BITS = np.arange(16, dtype=np.int64)


class YinYangAdapter(TokenAdapter):
    """The token table of ``TOKENS`` (a setup law's action is a part of a ``laws:`` token),
    with the setup split into four actions and the moves mapped without listing the setup."""

    game = "yinyang"
    shape = (PLANES, 4, 4)
    max_plies = 1000
    """The default truncation, in actions (the setup's 8 included): see the module docstring."""

    def __init__(self) -> None:
        super().__init__(TOKENS)
        assert self.size == SIZE

    def legal(self, state: games.State, partial: Partial) -> tuple[list[int], list[Move]]:
        if state.is_terminal():
            return [], []
        if state.phase() == "setup":  # every law, into the next slot (never the 405^4 moves)
            actions = list(range(SETUP_BASE, SIZE))
            if len(partial) < 3:
                return actions, [-1] * N_LAWS
            chosen = [action - SETUP_BASE for action in partial]
            return actions, [setup_move((*chosen, law)) for law in range(N_LAWS)]
        moves = list(state.legal_moves())
        table = action_of_move()
        return [table[move] for move in moves], moves

    def play(self, state: games.State, partial: Partial, action: int, move: Move) -> Partial:
        if move == -1:
            return (*partial, action)
        state.push(move)
        return ()

    def actions_of(self, state: games.State, token: str) -> list[int]:
        if token.startswith("laws:"):
            laws = token[5:].split(",")
            if len(laws) != 4 or any(law not in LAW_OF_TEXT for law in laws):
                raise ValueError(f"{self.game}: {token!r} is not a setup of four valid laws")
            return [SETUP_BASE + LAW_OF_TEXT[law] for law in laws]
        return [self.index(token)]

    def observe(self, view: games.State, seat: int, partial: Partial) -> Planes:
        assert isinstance(view, YinYangState)
        planes = np.zeros(self.shape, dtype=np.float32)
        masks = view.board_masks()
        for plane, mask in ((0, masks[seat]), (1, masks[1 - seat])):
            planes[plane] = ((mask >> SQUARE_BITS) & 1).reshape(4, 4)
        for plane, goal in ((2, GOALS[seat]), (3, GOALS[1 - seat])):
            planes[plane, goal // 4, goal % 4] = 1.0
        reserves = view.reserves()
        planes[4] = reserves[seat] / START_RESERVES[seat]
        planes[5] = reserves[1 - seat] / START_RESERVES[1 - seat]
        planes[6] = float(view.side() == seat)
        planes[7 + ("setup", "start", "moved").index(view.phase())] = 1.0
        planes[10] = min(view.turn(), TURN_SCALE) / TURN_SCALE
        for side, first in ((seat, BOARD_PLANES), (1 - seat, BOARD_PLANES + 4 * LAW_PLANES)):
            written, revealed = view.laws(side)
            laws: Sequence[int] = written or ()
            if written is None and side == seat:
                # its own setup under way: the laws it has chosen so far (hidden)
                laws = [action - SETUP_BASE for action in partial]
            for slot, law in enumerate(laws):
                at = first + slot * LAW_PLANES
                values = FEATURES[side, seat, law]
                planes[at : at + LAW_PLANES] = values[:, None, None]
                planes[at + 1] = float(revealed >> slot & 1)
        return planes
