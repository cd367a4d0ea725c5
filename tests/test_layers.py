"""The direction of imports between our packages: games <- bots <- enginesrv -> protocol."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
OURS = {"games", "bots", "protocol", "enginesrv"}
# package -> (our packages it may import, third-party roots it may import; None = any)
ALLOWED: dict[str, tuple[set[str], set[str] | None]] = {
    "games": (set(), set()),
    "bots": ({"games"}, set()),
    "protocol": (set(), {"msgpack"}),
    "enginesrv": ({"games", "bots", "protocol"}, None),
}


def imported_roots(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_point_the_right_way(package: str) -> None:
    ours_ok, third_ok = ALLOWED[package]
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    bad = []
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"package {package} has no modules"
    for path in files:
        for line, root in imported_roots(path):
            if root == package or root in stdlib:
                continue
            ok = root in ours_ok if root in OURS else third_ok is None or root in third_ok
            if not ok:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {root}")
    assert not bad, "imports point the wrong way:\n" + "\n".join(bad)


def test_checker_catches_a_wrong_import(tmp_path: Path) -> None:
    bad = tmp_path / "mod.py"
    bad.write_text("import trio\nfrom bots.x import y\n", encoding="utf-8")
    assert [root for _, root in imported_roots(bad)] == ["trio", "bots"]


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, full module name) of every absolute import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def test_the_client_imports_only_the_protocol_and_trio() -> None:
    """``enginesrv.client`` is a library for other programs: it speaks the protocol through
    the ``protocol`` package and runs on trio, and knows nothing of the server, the arbiter,
    the rules or the bots."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    bad = []
    files = sorted((ROOT / "enginesrv" / "client").rglob("*.py"))
    assert files
    for path in files:
        for line, name in imported_modules(path):
            root = name.split(".")[0]
            if root in stdlib | {"protocol", "trio"} or name.startswith("enginesrv.client"):
                continue
            bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, "the client imports more than the protocol and trio:\n" + "\n".join(bad)


SIDES = {"serve": "event", "event": "serve"}


@pytest.mark.parametrize("side", sorted(SIDES))
def test_the_server_and_the_events_do_not_import_each_other(side: str) -> None:
    """``enginesrv.serve`` (listener, sessions) and ``enginesrv.event`` (arbiter, players,
    tournaments) share the search pool and the client, never each other."""
    other = f"enginesrv.{SIDES[side]}"
    bad = []
    files = sorted((ROOT / "enginesrv" / side).rglob("*.py"))
    assert files
    for path in files:
        for line, name in imported_modules(path):
            if name == other or name.startswith(other + "."):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, f"enginesrv.{side} imports {other}:\n" + "\n".join(bad)


@pytest.mark.parametrize("side", ["serve", "event", "search", "client"])
def test_nothing_below_the_web_front_imports_it(side: str) -> None:
    """``enginesrv.web`` builds on the server and the events; they know nothing of it (the
    command line wires them together)."""
    bad = []
    for path in sorted((ROOT / "enginesrv" / side).rglob("*.py")):
        for line, name in imported_modules(path):
            if name == "enginesrv.web" or name.startswith("enginesrv.web."):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, f"enginesrv.{side} imports the web front:\n" + "\n".join(bad)


def test_the_admission_knows_none_of_the_doors_it_serves() -> None:
    """``enginesrv.admission`` is shared by the server, the web front and the events (every
    door that accepts connections): it imports none of them."""
    bad = []
    path = ROOT / "enginesrv" / "admission.py"
    for line, name in imported_modules(path):
        root = name.split(".")[0]
        if root in sys.stdlib_module_names or root == "__future__" or name == "structlog":
            continue
        bad.append(f"admission.py:{line} imports {name}")
    assert not bad, "\n".join(bad)
