"""The native rules (Yinsh ring moves, Yohoho slides) agree with the Python reference, position
by position; they refuse damaged init tables and bad ints; the build suits any x86-64.

The helpers for damaging init tables (``Damage``, ``init_args``, ``refused``) are shared with
tests/bots/test_native.py. An accelerator is one module per process: every test that re-inits
one restores it with the reference's tables (the ``restore`` fixture).
"""

from __future__ import annotations

import ast
import os
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import games
from games import yinsh, yohoho

PURE = bool(os.environ.get("ENGINESRV_PURE_PYTHON"))
SETUP = Path(__file__).resolve().parents[2] / "setup.py"


def test_the_native_rules_are_built_and_used() -> None:
    if PURE:
        assert yinsh._native is None
        assert yohoho._native is None
        assert yohoho._add_slides is yohoho._add_slides_python
    else:
        assert yinsh._native is not None, "games/_yinsh_native.c was not built"
        assert yohoho._native is not None, "games/_yohoho_native.c was not built"


def ring_moves_agree(name: str, count: int) -> int:
    """Compare the native ring moves with the reference's in every ring-moving position of
    ``count`` random games; the number of positions compared."""
    game = games.load(name)
    rng = random.Random(name)
    checked = 0
    for _ in range(count):
        state = game.new_state()
        while not state.is_terminal():
            if state.phase() in ("m", "n"):
                assert isinstance(state, yinsh.YinshState)
                reference = state._ring_moves_python()
                assert state._ring_moves() == reference, state.to_string()
                assert state._count_ring_moves() == len(reference)
                checked += 1
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    return checked


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
@pytest.mark.parametrize("name", ["yinsh", "yinsh+blitz"])
def test_the_native_ring_moves_are_the_python_ones_in_order(name: str) -> None:
    assert ring_moves_agree(name, 60) > 1000


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
def test_the_native_module_refuses_bad_input_with_an_error() -> None:
    native = yinsh._native
    assert native is not None
    with pytest.raises(ValueError, match="off the board"):
        native.ring_moves(1 << 90, 0, 0, False)
    with pytest.raises(TypeError):
        native.ring_moves("x", 0, 0, False)  # type: ignore[call-overload]


def slides_agree(count: int) -> int:
    """Compare the native slides with the reference's for every kind of ship in every position
    of ``count`` random Yohoho games (200 plies at most); the number of comparisons."""
    game = games.load("yohoho")
    rng = random.Random(7)
    checked = 0
    for _ in range(count):
        state = game.new_state()
        while not state.is_terminal() and state.ply() < 200:
            assert isinstance(state, yohoho.YohohoState)
            pieces = state.packed_pieces()
            occupied = 0
            for board in pieces:
                occupied |= board
            empty = yohoho.FULL_MASK ^ occupied
            for kind, reach in ((1, 2), (2, 3), (5, 2), (6, 3), (0, 1)):
                native: list[int] = []
                reference: list[int] = []
                yohoho._add_slides(native, pieces[kind], empty, reach)
                yohoho._add_slides_python(reference, pieces[kind], empty, reach)
                assert native == reference, state.to_string()
                count = yohoho._count_slides(pieces[kind], empty, reach)
                assert count == yohoho._count_slides_python(pieces[kind], empty, reach)
                assert count == len(reference)
                checked += 1
            moves = state.legal_moves()
            state.push(moves[rng.randrange(len(moves))])
    return checked


@pytest.mark.skipif(yohoho._native is None, reason="the native slides are not built")
def test_the_native_yohoho_slides_are_the_python_ones_in_order() -> None:
    assert slides_agree(60) > 10_000


@pytest.mark.skipif(yohoho._native is None, reason="the native slides are not built")
def test_the_native_yohoho_module_refuses_bad_input_with_an_error() -> None:
    native = yohoho._native
    assert native is not None
    with pytest.raises(ValueError, match="off the board"):
        native.count_slides(1 << 80, 0, 2)
    with pytest.raises(ValueError, match="reach"):
        native.count_slides(1, 0, 99)
    with pytest.raises(TypeError):
        native.add_slides((), 1, 0, 2)  # type: ignore[arg-type]


# -- the build ---------------------------------------------------------------------------------


def test_the_build_flags_suit_any_x86_64() -> None:
    """No -m option (-mpopcnt, -march=native...) in setup.py: a build made on one machine runs
    on any x86-64; counting bits fast is chosen when a module loads (target_clones)."""
    text = SETUP.read_text(encoding="utf-8")
    tree = ast.parse(text)
    assigned = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "FLAGS" for t in node.targets)
    ]
    assert len(assigned) == 1
    flags = ast.literal_eval(assigned[0])
    assert "-O2" in flags
    assert [flag for flag in flags if flag.startswith("-m")] == []
    # nothing adds to them later, and no option of the kind is spelled anywhere else
    changed = [
        node
        for node in ast.walk(tree)
        if (isinstance(node, ast.AugAssign) and ast.unparse(node.target) == "FLAGS")
        or (isinstance(node, ast.Attribute) and ast.unparse(node.value) == "FLAGS")
    ]
    assert changed == []
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert [v for v in strings if isinstance(v, str) and v.startswith("-m")] == []
    assert "cpuinfo" not in text


# -- damaged init tables -----------------------------------------------------------------------

Change = Callable[[Any], object]


def shorter(entry: Any) -> object:
    """The entry with its last item dropped."""
    return tuple(entry)[:-1]


def longer(entry: Any) -> object:
    """The entry with its last item repeated."""
    items = tuple(entry)
    return (*items, items[-1])


def becomes(value: object) -> Change:
    """A change that puts ``value`` in place of the entry."""
    return lambda _entry: value


@dataclass(frozen=True)
class Damage:
    """One damage to the arguments of an accelerator's init: the entry at ``path`` (the
    argument's position, then indices into it) replaced by ``change(entry)``; the ValueError
    must name ``table``."""

    table: str
    path: tuple[int, ...]
    change: Change
    what: str

    def applied(self, args: tuple[object, ...]) -> tuple[object, ...]:
        result = _replaced(args, self.path, self.change)
        assert isinstance(result, tuple)
        return result

    def __str__(self) -> str:
        return f"{self.table}: {self.what}"


def _replaced(value: Any, path: Sequence[int], change: Change) -> object:
    if not path:
        return change(value)
    items = list(value)
    items[path[0]] = _replaced(items[path[0]], path[1:], change)
    return tuple(items)


class _Recorder:
    """Stands in for an accelerator to catch the arguments its init is given."""

    def __init__(self) -> None:
        self.args: tuple[object, ...] = ()

    def init(self, *args: object) -> None:
        self.args = args


def init_args(owner: ModuleType) -> tuple[object, ...]:
    """The arguments ``owner._load_native()`` hands its accelerator's init: the reference's
    tables, taken from the very code that loads the module."""
    recorder = _Recorder()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(owner, "native_module", lambda _name: recorder)
        owner._load_native()
    return recorder.args


def refused(owner: ModuleType, damage: Damage, probe: Callable[[Any], object]) -> None:
    """Init with ``damage`` raises a ValueError naming the table, and leaves the module
    unready: ``probe`` (a call of its own) raises RuntimeError."""
    native = owner._native
    with pytest.raises(ValueError, match=rf"^{re.escape(damage.table)}[\[:]"):
        native.init(*damage.applied(init_args(owner)))
    with pytest.raises(RuntimeError, match=r"init\(\) has not succeeded"):
        probe(native)


class Reentrant:
    """A table that, as init reads it, calls the accelerator (``probe``) and records whether
    it was refused; a sequence only through iteration, so init iterates it."""

    def __init__(self, items: Any, native: Any, probe: Callable[[Any], object]) -> None:
        self.items = items
        self.native = native
        self.probe = probe
        self.refused = False

    def __iter__(self) -> Iterator[object]:
        try:
            self.probe(self.native)
        except RuntimeError:
            self.refused = True
        return iter(self.items)


def restore(*owners: ModuleType) -> None:
    """Init the accelerators of ``owners`` again with the reference's tables."""
    for owner in owners:
        if owner._native is not None:
            owner._load_native()


@pytest.fixture
def restored() -> Iterator[None]:
    yield
    restore(yinsh, yohoho)


def _a_long_ray(rays: Any) -> tuple[int, int]:
    return next((p, d) for p in range(len(rays)) for d in range(6) if len(rays[p][d]) >= 2)


_P, _D = _a_long_ray(yinsh.RAYS)
RAYS_DAMAGE = [
    # the rays of games/yinsh.py as both Yinsh accelerators read them (argument 0)
    Damage("rays", (0,), shorter, "84 points"),
    Damage("rays", (0,), becomes(7), "an int for the table"),
    Damage("rays", (0, _P), shorter, "five directions"),
    Damage("rays", (0, _P), becomes(3), "an int for a point's rays"),
    Damage("rays", (0, _P, _D), becomes(tuple(range(11))), "a ray of eleven points"),
    Damage("rays", (0, _P, _D, 1), becomes(85), "a point off the board"),
    Damage("rays", (0, _P, _D, 1), becomes(-1), "a negative point"),
    Damage("rays", (0, _P, _D, 1), becomes(1 << 64), "a point beyond 64 bits"),
    Damage("rays", (0, _P, _D, 1), becomes("x"), "a string"),
    Damage("rays", (0, _P, _D, 1), becomes(1.0), "a float"),
]
RING_MOVES_DAMAGE = [
    *RAYS_DAMAGE,
    Damage("ring move tag", (1,), becomes(-yinsh.RING_MOVE), "negative"),
    Damage("ring move tag", (1,), becomes(yinsh.RING_MOVE | 1), "over the points of a move"),
    Damage("ring move tag", (1,), becomes(1 << 40), "too large"),
    Damage("ring move tag", (1,), becomes("x"), "a string"),
]
SLIDES_DAMAGE = [
    damage
    for table, arg, last in (("up slides", 0, 1), ("down slides", 1, 2))
    for damage in (
        Damage(table, (arg,), shorter, "a direction missing"),
        Damage(table, (arg,), longer, "a direction too many"),
        Damage(table, (arg, last), shorter, "a pair of one"),
        Damage(table, (arg, last), becomes(5), "an int for a pair"),
        Damage(table, (arg, last, 0), becomes(1 << 77), "a cell off the board"),
        Damage(table, (arg, last, 0), becomes(-1), "a negative board"),
        Damage(table, (arg, last, 0), becomes(1 << 200), "a board beyond 128 bits"),
        Damage(table, (arg, last, 0), becomes("x"), "a string for a board"),
        Damage(table, (arg, last, 1), becomes(0), "no shift"),
        Damage(table, (arg, last, 1), becomes(77), "a shift off the board"),
        Damage(table, (arg, last, 1), becomes(-8), "a negative shift"),
        Damage(table, (arg, last, 1), becomes("x"), "a string for a shift"),
    )
]


def probe_ring_moves(native: Any) -> object:
    return native.ring_moves(1, 1, 0, True)


def probe_slides(native: Any) -> object:
    return native.count_slides(1, 2, 1)


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
@pytest.mark.parametrize("damage", RING_MOVES_DAMAGE, ids=str)
def test_the_ring_moves_refuse_a_damaged_table(damage: Damage, restored: None) -> None:
    refused(yinsh, damage, probe_ring_moves)


@pytest.mark.skipif(yohoho._native is None, reason="the native slides are not built")
@pytest.mark.parametrize("damage", SLIDES_DAMAGE, ids=str)
def test_the_slides_refuse_a_damaged_table(damage: Damage, restored: None) -> None:
    refused(yohoho, damage, probe_slides)


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
def test_the_ring_moves_after_a_failed_init_refuse_then_a_good_one_restores_them(
    restored: None,
) -> None:
    # the damage is in the last table read: the rays were already written over
    refused(yinsh, RING_MOVES_DAMAGE[-1], probe_ring_moves)
    yinsh._load_native()
    assert probe_ring_moves(yinsh._native) == sum(len(ray) for ray in yinsh.RAYS[0])
    assert ring_moves_agree("yinsh", 4) > 50


@pytest.mark.skipif(yohoho._native is None, reason="the native slides are not built")
def test_the_slides_after_a_failed_init_refuse_then_a_good_one_restores_them(
    restored: None,
) -> None:
    refused(yohoho, SLIDES_DAMAGE[-1], probe_slides)  # in the down slides, read last
    yohoho._load_native()
    assert slides_agree(3) > 500


@pytest.mark.parametrize(
    ("owner", "probe"), [(yinsh, probe_ring_moves), (yohoho, probe_slides)], ids=["yinsh", "yohoho"]
)
def test_a_call_while_init_reads_the_tables_is_refused(
    owner: ModuleType, probe: Callable[[Any], object], restored: None
) -> None:
    if owner._native is None:
        pytest.skip("not built")
    args = init_args(owner)
    table = Reentrant(args[0], owner._native, probe)
    owner._native.init(table, *args[1:])
    assert table.refused  # unready from the start of init, not only after a failure
    probe(owner._native)  # and ready at its end


# -- reading ints ------------------------------------------------------------------------------

BAD_BOARDS = [
    (-1, OverflowError),
    (-(1 << 100), OverflowError),
    (1 << 128, OverflowError),
    ((1 << 300) + 1, OverflowError),
    ((1 << 128) - 1, ValueError),
    (1 << 127, ValueError),
    ("1", TypeError),
    (1.0, TypeError),
]


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
@pytest.mark.parametrize(("value", "error"), [*BAD_BOARDS, (1 << 85, ValueError)])
@pytest.mark.parametrize("position", [0, 1, 2])
def test_the_ring_moves_refuse_a_bad_board(position: int, value: object, error: type) -> None:
    native: Any = yinsh._native  # wrong types on purpose
    boards: list[object] = [1, 1, 0]
    boards[position] = value
    with pytest.raises(error):
        native.ring_moves(*boards, False)


@pytest.mark.skipif(yohoho._native is None, reason="the native slides are not built")
@pytest.mark.parametrize(("value", "error"), [*BAD_BOARDS, (1 << 77, ValueError)])
@pytest.mark.parametrize("position", [0, 1])
def test_the_slides_refuse_a_bad_board(position: int, value: object, error: type) -> None:
    native: Any = yohoho._native  # wrong types on purpose
    boards: list[object] = [1, 2]
    boards[position] = value
    with pytest.raises(error):
        native.count_slides(*boards, 1)
    with pytest.raises(error):
        native.add_slides([], *boards, 1)


@pytest.mark.skipif(yinsh._native is None, reason="the native ring moves are not built")
def test_a_lone_ring_anywhere_moves_along_its_rays() -> None:
    """Every point, the high half of the board (bits 64 to 84) included: its bits are read
    whole."""
    native = yinsh._native
    assert native is not None
    for p, rays in enumerate(yinsh.RAYS):
        expected = [yinsh.RING_MOVE | p << 7 | t for ray in rays for t in ray]
        assert native.ring_moves(1 << p, 1 << p, 0, False) == expected
        assert native.ring_moves(1 << p, 1 << p, 0, True) == len(expected)
