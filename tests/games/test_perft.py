"""Perft vectors of every game: ``tests/data/<game>/<game>.perft``.

Shallow counts always run; counts above ``SLOW_LEAVES`` run with ``--run-slow``. A failure
prints the per-move breakdown (divide) so the wrong subtree can be found.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

import games

DATA = Path(__file__).parent.parent / "data"
SLOW_LEAVES = 1_500_000


@dataclass(frozen=True)
class PerftVector:
    game: str
    name: str
    position: str
    depth: int
    leaves: int


def read_perft_file(path: Path, game: str) -> list[PerftVector]:
    """Parse the perft format of shared/data/README.md (blocks of id/pos/perft lines)."""
    vectors: list[PerftVector] = []
    name = position = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        if key == "id":
            name, position = value, None
        elif key == "pos":
            position = value
        elif key == "perft":
            if name is None or position is None:
                raise AssertionError(f"{path}: a perft line before its id and pos")
            depth, leaves = value.split()
            vectors.append(PerftVector(game, name, position, int(depth), int(leaves)))
        else:
            raise AssertionError(f"{path}: unknown line {raw!r}")
    return vectors


def all_vectors() -> list[object]:
    params: list[object] = []
    for path in sorted(DATA.glob("*/*.perft")):
        for v in read_perft_file(path, path.stem):
            marks = [pytest.mark.slow] if v.leaves > SLOW_LEAVES else []
            params.append(pytest.param(v, id=f"{v.game}-{v.name}-d{v.depth}", marks=marks))
    return params


def test_perft_files_are_found() -> None:
    assert len(all_vectors()) >= 20


@pytest.mark.parametrize("vector", all_vectors())
def test_perft(vector: PerftVector) -> None:
    state = games.load(vector.game).state_from_string(vector.position)
    got = games.perft(state, vector.depth)
    if got != vector.leaves:
        divide = "\n".join(
            f"  {token} {count}" for token, count in games.perft_divide(state, vector.depth)
        )
        pytest.fail(
            f"perft({vector.name}, {vector.depth}) = {got}, expected {vector.leaves}\n{divide}"
        )
    assert state.to_string() == vector.position  # perft leaves the state as it found it


def test_divide_sums_to_perft() -> None:
    game = games.load("yinsh")
    state = game.state_from_string("2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41")
    rows = games.perft_divide(state, 2)
    assert sum(count for _, count in rows) == 1876
    assert [token for token, _ in rows] == sorted(token for token, _ in rows)
    assert len(rows) == 63
