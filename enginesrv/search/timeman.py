"""Time management: from clocks to a search's soft target and hard deadline.

One pure function, used by the server and by in-process matches alike, so that a bot behaves
the same whoever runs it. The rules of thumb (after the usual practice of chess engines):

* ``movetime`` is exact: target and deadline are both the move time less the overhead.
* With a clock, spend the remaining time over the moves still expected (``movestogo``; else,
  on a clock with an increment, the game's estimate, ``State.decisions_left``, with a margin;
  else a default horizon) plus most of the increment; never plan to use more than a fixed
  share of what is left, so a long think cannot flag. A clock without an increment keeps the
  default horizon: nothing refills it, and a game that runs longer than its estimate would
  find it empty.
* The deadline allows an iteration to finish past the target, up to a multiple of it, but stays
  within a safe share of the remaining time.
* ``MoveOverhead`` is kept back from every move for transport and process latency; on a clock
  with an increment, a reserve for a stall of the machine too (``STALL_MS``): a bot that lives
  on its increment late in a long game spends its deadline on every move, and a core taken by
  another process or a pause of the interpreter would otherwise cost it the game.
* The clock is budgeted by the **turn**, not by the decision: where a player makes several
  decisions in a row (Yohoho's two sub-moves, Yoxii's Totem move and placement, Yinsh's
  removals), the turn gets what its decisions would have one by one, but its first decision,
  whose search looks through the whole turn, takes most of it; each later one
  ``FOLLOW_SHARE`` (a bot answers it from the first decision's search where it can, and the
  time it does not use stays on the clock).
* A decision the rules call light (``State.time_weight``: Yinsh's ring placements) gets that
  share of an ordinary decision's budget, increment included, and a deadline in proportion:
  its search may not run on into the time of the play that follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol import messages as m

DEFAULT_MOVES_TO_GO = 25
"""Decisions assumed left in the game when the clock gives no ``movestogo``; also the longest
horizon a game's own estimate makes."""
HORIZON_MARGIN = 2
"""Decisions added to a game's estimate of those left (``State.decisions_left``): the estimate
is of a typical game, and one that runs longer must not find its clock spent."""
MIN_HORIZON = 8
"""The shortest horizon a game's estimate makes: near a game's expected end a decision plans
an eighth of what is left (a Yoxii turn of two decisions, a quarter), never more, for a game
may go on well past its estimate."""
FOLLOW_SHARE = 0.2
"""The share of a turn's budget for each decision after its first."""
MAX_SHARE = 0.4
"""The largest share of the remaining time one move may plan to use."""
DEADLINE_FACTOR = 2.5
DEADLINE_SHARE = 0.7
MIN_MS = 5
"""A search always gets at least this long, even on a nearly empty clock."""
STALL_MS = 150
"""Kept back from a clock with an increment, beyond ``MoveOverhead``, for a stall of the
machine during a move made on a nearly empty clock; no more than ``RESERVE_INCREMENTS``
increments, which give it back (a clock without one has nothing to keep it with)."""
RESERVE_INCREMENTS = 2


def reserve_ms(inc_ms: int) -> int:
    """What a clock with the increment ``inc_ms`` keeps back for a stall (``STALL_MS``)."""
    return min(STALL_MS, RESERVE_INCREMENTS * max(0, inc_ms))


@dataclass(frozen=True, slots=True)
class Budget:
    """The time a search may use, in milliseconds (None: not limited by time)."""

    target_ms: int | None
    deadline_ms: int | None


def allot(
    *,
    time_ms: int | None = None,
    inc_ms: int = 0,
    movestogo: int | None = None,
    movetime_ms: int | None = None,
    overhead_ms: int = 50,
    turn: tuple[int, int] = (0, 1),
    weight: float = 1.0,
    expected: int | None = None,
) -> Budget:
    """The budget of one move of the player whose clock is ``time_ms`` (with ``inc_ms``).

    Args:
        time_ms: the mover's remaining clock (may be negative: treated as nearly empty).
        inc_ms: the mover's increment per move.
        movestogo: moves to the next time control, if the clock has one.
        movetime_ms: a fixed time for this move; it wins over the clock.
        overhead_ms: time kept back for latency (the ``MoveOverhead`` option), and with an
            increment ``reserve_ms`` more.
        turn: where the decision stands in its turn (``State.turn_position``): decisions
            made before it in the turn, and the turn's decisions in all.
        weight: the decision's share of an ordinary decision's budget
            (``State.time_weight``), in (0, 1]; other values are taken as 1.
        expected: the game's estimate of the mover's decisions left (``State.decisions_left``;
            None: none), the horizon when there is no ``movestogo`` and an increment: with
            ``HORIZON_MARGIN`` more, within ``MIN_HORIZON`` and ``DEFAULT_MOVES_TO_GO``.

    Returns:
        The target (after which no new iteration starts) and the deadline (by which the search
        must return); both None when nothing limits the time.
    """
    overhead = max(0, overhead_ms)
    if movetime_ms is not None:
        exact = max(MIN_MS, movetime_ms - overhead)
        return Budget(exact, exact)
    if time_ms is None:
        return Budget(None, None)
    inc = max(0, inc_ms)
    left = max(0, time_ms - overhead - reserve_ms(inc))
    made, decisions = max(0, turn[0]), max(1, turn[1])
    # the horizon counts decisions (a control's movestogo does): the turn holds its share
    if movestogo is not None and movestogo > 0:
        horizon = movestogo
    elif expected is not None and inc > 0:
        horizon = min(DEFAULT_MOVES_TO_GO, max(MIN_HORIZON, expected + HORIZON_MARGIN))
    else:
        horizon = DEFAULT_MOVES_TO_GO
    # a share of the clock as left * decisions / horizon, in that order: a single decision's
    # is then exactly left / horizon (left * (1 / horizon) can round the other way)
    share = left * decisions / horizon if decisions < horizon else float(left)
    planned = share + inc * 0.75 * decisions
    if decisions > 1:
        first = 1.0 - FOLLOW_SHARE * (decisions - 1)
        planned *= FOLLOW_SHARE if made > 0 else max(FOLLOW_SHARE, first)
    if 0.0 < weight < 1.0:
        planned *= weight
    target = min(planned, left * MAX_SHARE)
    deadline = min(target * DEADLINE_FACTOR, left * DEADLINE_SHARE)
    if movestogo == 1:
        # the last move before the control: the whole clock is there to be used, safely
        target = deadline = left * DEADLINE_SHARE
    return Budget(max(MIN_MS, round(target)), max(MIN_MS, round(deadline)))


@dataclass(frozen=True, slots=True)
class SearchTime:
    """The time of one search, in seconds from when it was asked for (None: not limited by
    time), and whether it comes from a clock that budgets whole turns (``Limits.from_pv``)."""

    target: float | None
    deadline: float | None
    from_pv: bool


def search_time(
    go: m.Go,
    seat: int,
    turn: tuple[int, int],
    overhead_ms: int,
    *,
    most_ms: int = 0,
    weight: float = 1.0,
    expected: int | None = None,
) -> SearchTime:
    """What ``go`` gives the player in ``seat`` (0 = p1) for a decision at ``turn``
    (``State.turn_position``) of ``weight`` (``State.time_weight``), in a game expected to
    leave the mover ``expected`` decisions (``State.decisions_left``): its budget (``allot``)
    as a job's target and deadline, the one conversion from the protocol's clocks to a search
    used by the server's sessions and the arbiter's bots alike. An infinite search has
    neither. ``most_ms``: the longest a search may take (a server's ``movetime`` limit; 0: no
    limit)."""
    mine = go.p1time if seat == 0 else go.p2time
    inc = go.p1inc if seat == 0 else go.p2inc
    if go.infinite:
        return SearchTime(None, None, False)
    budget = allot(
        time_ms=mine,
        inc_ms=inc or 0,
        movestogo=go.movestogo,
        movetime_ms=go.movetime,
        overhead_ms=overhead_ms,
        turn=turn,
        weight=weight,
        expected=expected,
    )
    target_ms, deadline_ms = budget.target_ms, budget.deadline_ms
    if most_ms > 0 and deadline_ms is not None and target_ms is not None:
        deadline_ms = min(deadline_ms, most_ms)
        target_ms = min(target_ms, deadline_ms)
    return SearchTime(
        target=None if target_ms is None else target_ms / 1000,
        deadline=None if deadline_ms is None else deadline_ms / 1000,
        # a clock that budgets turns, not a time, depth or node count per decision
        from_pv=mine is not None and go.movetime is None and go.depth is None and go.nodes is None,
    )
