"""Ratings of any number of players from the results of one event, by maximum likelihood.

The model is the logistic Elo model as Ordo uses it: a player rated ``d`` Elo above its
opponent is expected to score ``1 / (1 + 10^(-d / 400))`` per game, and a draw counts as half a
win and half a loss. The ratings maximise the likelihood of the points scored

    L(r) = sum over games of  s * log p(r_a - r_b) + (1 - s) * log(1 - p(r_a - r_b))

(``s`` the first player's points in the game, ``p`` the expected score), which is concave; the
fit is Newton's method with a step cap, from all ratings at 0. Only the differences are fixed by
the results: one player is anchored at 0 (``anchor``), or else the rated players average 0.

The 95% interval of a rating is the normal approximation at the maximum: the covariance of the
ratings is the inverse of the information matrix (minus the Hessian of ``L``) under the same
constraint as the ratings (the anchor fixed, or the average fixed), and ``error`` is 1.96 times
the standard deviation, in Elo. With an anchor, a rating's error is its uncertainty relative to
the anchor, whose own error is 0.

No finite rating fits a player that won every game or lost every game (the likelihood grows
for ever as its rating moves away): such a player gets no rating, and the others are fitted
among themselves, again until no rated player has a perfect or a zero score among the rated. A
group of players that the results do not tie to the rest (nobody outside it ever scored
against it, or it never scored against anyone outside) is treated the same way: only the
largest group whose members all scored against each other through some chain is rated, and
only if it holds two players at least: one player alone has nobody to be rated against (a
one-sided match rates neither side).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from enginesrv.event.results.stats import Z95

K = math.log(10.0) / 400.0
"""d p / d r at a level score is ``K / 4``: natural-log units per Elo point."""
MAX_STEP = 400.0
"""The largest change of a rating in one Newton step (Elo); keeps early steps in range."""
TOLERANCE = 1e-9
MAX_ITERATIONS = 200


class RatingError(ValueError):
    """An anchor that is not a player, or one without a finite rating."""


@dataclass(frozen=True, slots=True)
class Encounter:
    """The games of one pair of players: ``points`` is what ``a`` scored in ``games`` games."""

    a: str
    b: str
    games: int
    points: float


@dataclass(frozen=True, slots=True)
class Rating:
    """One player's line of the table.

    ``elo`` and ``error`` are None for a player with no finite rating; ``note`` says why.
    ``score`` is the share of points in [0, 1] (0.5 with no games).
    """

    player: str
    elo: float | None
    error: float | None
    games: int
    points: float
    note: str = ""

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.5

    def to_json(self) -> dict[str, object]:
        return {
            "player": self.player,
            "elo": self.elo,
            "error": self.error,
            "games": self.games,
            "score": self.score,
            "points": self.points,
            "note": self.note or None,
        }


@dataclass(frozen=True, slots=True)
class RatingTable:
    """The ratings, best first (rated players by Elo, then the unrated by score)."""

    ratings: tuple[Rating, ...]
    anchor: str | None
    iterations: int

    def get(self, player: str) -> Rating:
        for rating in self.ratings:
            if rating.player == player:
                return rating
        raise KeyError(player)


def expected(diff: float) -> float:
    """The expected score of a player ``diff`` Elo above its opponent."""
    return 0.5 * (1.0 + math.tanh(diff * K / 2.0))


def fit_ratings(
    encounters: Iterable[Encounter], players: Sequence[str] = (), *, anchor: str | None = None
) -> RatingTable:
    """Rate every player of ``players`` (and any other one met in ``encounters``).

    Raises:
        RatingError: ``anchor`` is not a player, or has no finite rating.
    """
    names: list[str] = list(dict.fromkeys(players))
    games: dict[tuple[str, str], list[float]] = {}
    for e in encounters:
        if e.games <= 0 or e.a == e.b:
            continue
        for name in (e.a, e.b):
            if name not in names:
                names.append(name)
        # one entry per unordered pair, from the first-listed player's side
        if (e.b, e.a) in games:
            entry = games[(e.b, e.a)]
            entry[0] += e.games
            entry[1] += e.games - e.points
        else:
            entry = games.setdefault((e.a, e.b), [0, 0.0])
            entry[0] += e.games
            entry[1] += e.points
    if anchor is not None and anchor not in names:
        raise RatingError(f"--anchor {anchor!r} is not a player; the players: {', '.join(names)}")
    totals = {name: [0, 0.0] for name in names}
    for (a, b), (n, pts) in games.items():
        totals[a][0] += int(n)
        totals[a][1] += pts
        totals[b][0] += int(n)
        totals[b][1] += n - pts

    rated, notes = _ratable(names, games)
    elos: dict[str, float] = {}
    errors: dict[str, float] = {}
    iterations = 0
    if anchor is not None and anchor not in rated:
        raise RatingError(f"--anchor {anchor!r} has no finite rating ({notes[anchor]})")
    if rated:
        pairs = [
            (rated.index(a), rated.index(b), float(n), pts)
            for (a, b), (n, pts) in games.items()
            if a in rated and b in rated
        ]
        fixed = rated.index(anchor) if anchor is not None else None
        values, sd, iterations = _newton(len(rated), pairs, fixed)
        for i, name in enumerate(rated):
            elos[name] = values[i]
            errors[name] = Z95 * sd[i]
    out = [
        Rating(
            name,
            elos.get(name),
            errors.get(name),
            int(totals[name][0]),
            totals[name][1],
            notes.get(name, ""),
        )
        for name in names
    ]
    out.sort(
        key=lambda r: (r.elo is None, -(r.elo if r.elo is not None else 0.0), -r.score, r.player)
    )
    return RatingTable(tuple(out), anchor, iterations)


def _ratable(
    names: list[str], games: dict[tuple[str, str], list[float]]
) -> tuple[list[str], dict[str, str]]:
    """The players a finite rating fits, and a note for each of the others."""
    notes: dict[str, str] = {}
    active = list(names)
    for name in names:
        if not any(name in pair for pair in games):
            notes[name] = "no games"
    active = [name for name in active if name not in notes]
    against = ""  # first against everyone; then against those still to be rated
    while True:
        # a perfect or a zero score among the players still rated; all such players at once,
        # so that the loser of a one-sided match is not left to be rated alone
        out: dict[str, str] = {}
        for name in active:
            n = pts = 0.0
            for (a, b), (count, got) in games.items():
                if a == name and b in active:
                    n, pts = n + count, pts + got
                elif b == name and a in active:
                    n, pts = n + count, pts + count - got
            if n == 0:
                continue
            if pts == n or pts == 0:
                out[name] = f"{'won' if pts == n else 'lost'} every game{against}"
        if not out:
            break
        against = " against the players left to rate"
        notes.update(out)
        active = [name for name in active if name not in out]
    # the likelihood has a finite maximum exactly where every player scored against every
    # other through a chain of such results both ways (strongly connected, Zermelo 1929)
    group = _largest_strong_component(active, games)
    if len(group) < 2:
        group = []  # one player alone has nobody to be rated against
    for name in active:
        if name not in group:
            notes[name] = "its results do not tie it to the rated players"
    return [name for name in active if name in group], notes


def _largest_strong_component(
    names: list[str], games: dict[tuple[str, str], list[float]]
) -> list[str]:
    """Edges ``a -> b`` where ``a`` scored against ``b``; the largest strongly connected set."""
    edges: dict[str, set[str]] = {name: set() for name in names}
    for (a, b), (count, got) in games.items():
        if a in edges and b in edges:
            if got > 0:
                edges[a].add(b)
            if got < count:
                edges[b].add(a)

    def reach(start: str, graph: dict[str, set[str]]) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    back: dict[str, set[str]] = {name: set() for name in names}
    for a, targets in edges.items():
        for b in targets:
            back[b].add(a)
    best: list[str] = []
    placed: set[str] = set()
    for name in names:
        if name in placed:
            continue
        component = reach(name, edges) & reach(name, back)
        placed |= component
        if len(component) > len(best):
            best = [n for n in names if n in component]
    return best


def _newton(
    n: int, pairs: list[tuple[int, int, float, float]], fixed: int | None
) -> tuple[list[float], list[float], int]:
    """Maximise the likelihood over ``n`` ratings; the ratings, their standard deviations and
    the iterations taken. ``fixed`` is held at 0, or else the ratings average 0."""
    # one rating is held at 0 while solving (the anchor, or the last player), which leaves an
    # invertible system; without an anchor the result is shifted to average 0 afterwards
    held = fixed if fixed is not None else n - 1
    free = [i for i in range(n) if i != held]
    where = {i: k for k, i in enumerate(free)}
    r = [0.0] * n
    iterations = 0
    while iterations < MAX_ITERATIONS:
        iterations += 1
        grad, hess = _derivatives(n, pairs, r)
        g = [grad[i] for i in free]
        h = [[hess[i][j] for j in free] for i in free]
        step = _solve(h, g)
        largest = max((abs(s) for s in step), default=0.0)
        if largest > MAX_STEP:
            step = [s * MAX_STEP / largest for s in step]
        for i in free:
            r[i] += step[where[i]]
        if largest < TOLERANCE:
            break
    _, hess = _derivatives(n, pairs, r)
    if fixed is not None:
        cov_free = _inverse([[hess[i][j] for j in free] for i in free])
        sd = [0.0] * n
        for i in free:
            sd[i] = math.sqrt(max(0.0, cov_free[where[i]][where[i]]))
        return r, sd, iterations
    # average 0: the covariance is the pseudo-inverse of the information matrix, whose only
    # null direction is the common shift: (H + J/n)^-1 - J/n with J the all-ones matrix
    mean = sum(r) / n
    r = [x - mean for x in r]
    shifted = [[hess[i][j] + 1.0 / n for j in range(n)] for i in range(n)]
    cov = _inverse(shifted)
    sd = [math.sqrt(max(0.0, cov[i][i] - 1.0 / n)) for i in range(n)]
    return r, sd, iterations


def _derivatives(
    n: int, pairs: list[tuple[int, int, float, float]], r: list[float]
) -> tuple[list[float], list[list[float]]]:
    """The gradient of the log-likelihood (per Elo) and the information matrix (minus its
    Hessian) at ratings ``r``."""
    grad = [0.0] * n
    info = [[0.0] * n for _ in range(n)]
    for a, b, games, points in pairs:
        p = expected(r[a] - r[b])
        g = K * (points - games * p)
        grad[a] += g
        grad[b] -= g
        w = K * K * games * p * (1.0 - p)
        info[a][a] += w
        info[b][b] += w
        info[a][b] -= w
        info[b][a] -= w
    return grad, info


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """``x`` with ``matrix @ x = rhs`` (Gaussian elimination with partial pivoting)."""
    size = len(rhs)
    m = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda i: abs(m[i][col]))
        if abs(m[pivot][col]) < 1e-300:
            raise ArithmeticError("the information matrix is singular")
        m[col], m[pivot] = m[pivot], m[col]
        for i in range(col + 1, size):
            factor = m[i][col] / m[col][col]
            if factor:
                for j in range(col, size + 1):
                    m[i][j] -= factor * m[col][j]
    x = [0.0] * size
    for i in range(size - 1, -1, -1):
        x[i] = (m[i][size] - sum(m[i][j] * x[j] for j in range(i + 1, size))) / m[i][i]
    return x


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """The inverse (Gauss-Jordan with partial pivoting, one elimination for all columns: the
    table is redrawn during a run, on the event loop, every ``--rating-interval`` games)."""
    size = len(matrix)
    m = [[*row, *(1.0 if i == j else 0.0 for j in range(size))] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda i: abs(m[i][col]))
        if abs(m[pivot][col]) < 1e-300:
            raise ArithmeticError("the information matrix is singular")
        m[col], m[pivot] = m[pivot], m[col]
        head = m[col]
        scale = 1.0 / head[col]
        head[:] = [x * scale for x in head]
        for i in range(size):
            if i != col and (factor := m[i][col]):
                row = m[i]
                m[i] = [x - factor * y for x, y in zip(row, head, strict=True)]
    return [row[size:] for row in m]
