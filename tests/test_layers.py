"""The direction of imports between our packages: games <- bots <- enginesrv -> protocol, and
games <- bots <- envs (the environments, beside the program); and no import cycle among their
modules."""

from __future__ import annotations

import ast
import itertools
import sys
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TypeAlias

import pytest

ROOT = Path(__file__).parent.parent
OURS = {"games", "bots", "protocol", "envs", "enginesrv"}
# package -> (our packages it may import, third-party roots it may import; None = any)
ALLOWED: dict[str, tuple[set[str], set[str] | None]] = {
    "games": (set(), set()),
    "bots": ({"games"}, set()),
    "protocol": (set(), {"msgpack"}),
    "envs": ({"games", "bots"}, {"numpy", "gymnasium", "pettingzoo"}),
    "enginesrv": ({"games", "bots", "protocol", "envs"}, None),
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


TRIO_IN_THE_CLIENT = {"sync.py", "_spawn.py"}
"""The client's modules that may name trio itself: the blocking ``Engine`` runs a trio loop in
a thread, and a reader with no task group becomes a system task under trio."""


def test_the_client_imports_only_the_protocol_and_its_async_library() -> None:
    """``enginesrv.client`` is a library for other programs: it speaks the protocol through
    the ``protocol`` package and runs on anyio (so on trio and asyncio alike), and knows
    nothing of the server, the arbiter, the rules or the bots; trio itself only where
    ``TRIO_IN_THE_CLIENT`` says."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    bad = []
    files = sorted((ROOT / "enginesrv" / "client").rglob("*.py"))
    assert files
    for path in files:
        allowed = stdlib | {"protocol", "anyio"}
        if path.name in TRIO_IN_THE_CLIENT:
            allowed.add("trio")
        for line, name in imported_modules(path):
            if name.split(".")[0] in allowed or name.startswith("enginesrv.client"):
                continue
            bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, "the client imports more than the protocol and anyio:\n" + "\n".join(bad)


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


@pytest.mark.parametrize("side", ["serve", "event", "search", "client", "web"])
def test_nothing_below_the_ladder_imports_it(side: str) -> None:
    """``enginesrv.ladder`` builds on the server and the events, as the web front does; they
    and the web front know nothing of it (the command line wires them together)."""
    bad = []
    for path in sorted((ROOT / "enginesrv" / side).rglob("*.py")):
        for line, name in imported_modules(path):
            if name == "enginesrv.ladder" or name.startswith("enginesrv.ladder."):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, f"enginesrv.{side} imports the ladder:\n" + "\n".join(bad)


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


# -- no import cycle among our modules -------------------------------------------------------------


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Each module of ``packages`` under ``root`` by its dotted name (a package's
    ``__init__.py`` by the package's name)."""
    out: dict[str, Path] = {}
    for package in sorted(packages):
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: Collection[str]) -> list[tuple[int, str]]:
    """(line, module) of each import of one of ``modules`` by the module ``name``, wherever it
    is: at the top, under ``if TYPE_CHECKING:`` or inside a function alike. ``from P import m``
    of a module ``m`` imports ``P.m`` (and, as ``import P.m``, not ``P`` itself, whose
    ``__init__`` runs first but is no dependency of the importer); a name that is no module
    is the module it comes from; relative imports are resolved against ``name``'s package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:  # from . (this package), from .. (its parent), ...
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                source = ".".join([*base, *([source] if source else [])])
            targets = [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # a name in a module, or not ours
                target = target.rpartition(".")[0]
            if target and target != name:
                out.append((node.lineno, target))
    return out


ImportGraph: TypeAlias = dict[str, dict[str, list[int]]]
"""Per module, the modules it imports, each with the lines of its imports there."""


def import_graph(root: Path, packages: Iterable[str]) -> tuple[ImportGraph, dict[str, Path]]:
    """The imports among the modules of ``packages`` under ``root``, and their files."""
    files = module_files(root, packages)
    graph: ImportGraph = {}
    for name, path in files.items():
        edges = graph[name] = {}
        for line, target in imports_of(name, path, files):
            lines = edges.setdefault(target, [])
            if line not in lines:  # ``from m import a, b`` is one import of m
                lines.append(line)
        for lines in edges.values():
            lines.sort()
    return graph, files


def strongly_connected(graph: ImportGraph) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def shortest_cycle(graph: ImportGraph, start: str, within: set[str]) -> list[str]:
    """The shortest chain of imports from ``start`` back to it, through ``within`` only."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    chain = [node]
                    while chain[-1] != start:
                        chain.append(came_from[chain[-1]])
                    return [*reversed(chain), start]
                if target in within and target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{start} is on no cycle")


def import_cycles(graph: ImportGraph) -> list[list[str]]:
    """Per module on a cycle, the shortest cycle through it, each cycle once (rotated to
    start at its least name), as ``[a, b, a]``."""
    found: set[tuple[str, ...]] = set()
    for component in strongly_connected(graph):
        for start in component:
            cycle = shortest_cycle(graph, start, set(component))[:-1]
            first = cycle.index(min(cycle))
            rotated = cycle[first:] + cycle[:first]
            found.add((*rotated, rotated[0]))
    return [list(cycle) for cycle in sorted(found)]


def describe_cycle(
    cycle: list[str], graph: ImportGraph, files: dict[str, Path], root: Path = ROOT
) -> str:
    """``a -> b -> a``, then where each of its imports is (the files relative to ``root``)."""
    lines = [" -> ".join(cycle)]
    for importer, imported in itertools.pairwise(cycle):
        where = files[importer].relative_to(root)
        at = ",".join(map(str, graph[importer][imported]))
        lines.append(f"    {where}:{at} imports {imported}")
    return "\n".join(lines)


def test_no_import_cycle_among_our_modules() -> None:
    """No module of games, bots, protocol and enginesrv imports, through others, a module
    that imports it: not at the top, not under ``if TYPE_CHECKING:``, not inside a function
    (a lazy import hides a cycle from the interpreter, not from the reader)."""
    graph, files = import_graph(ROOT, OURS)
    assert set(files) >= OURS  # every package was found
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(
        describe_cycle(cycle, graph, files) for cycle in cycles
    )


def test_the_cycle_finder_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A cycle made of an import under ``if TYPE_CHECKING:`` and a lazy relative
    ``from . import module`` is found, and a longer one beside it; an import that nothing
    imports back is no cycle."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package."""\n', encoding="utf-8")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.b import B, C\n\n\n"
        "def f() -> None:\n    import pkg.b\n",
        encoding="utf-8",
    )
    (package / "b.py").write_text(
        "import pkg.c\n\nclass B:\n    def f(self) -> None:\n        from . import a\n",
        encoding="utf-8",
    )
    (package / "c.py").write_text("import os\nfrom pkg import d\n", encoding="utf-8")
    (package / "d.py").write_text("from pkg.a import TYPE_CHECKING\n", encoding="utf-8")
    (package / "sub").mkdir()
    (package / "sub" / "__init__.py").write_text("from ..a import B\n", encoding="utf-8")
    graph, files = import_graph(tmp_path, ["pkg"])
    assert graph == {
        "pkg": {},
        "pkg.a": {"pkg.b": [4, 8]},
        "pkg.b": {"pkg.c": [1], "pkg.a": [5]},
        "pkg.c": {"pkg.d": [2]},
        "pkg.d": {"pkg.a": [1]},
        "pkg.sub": {"pkg.a": [1]},
    }
    assert import_cycles(graph) == [
        ["pkg.a", "pkg.b", "pkg.a"],
        ["pkg.a", "pkg.b", "pkg.c", "pkg.d", "pkg.a"],
    ]
    assert describe_cycle(["pkg.a", "pkg.b", "pkg.a"], graph, files, tmp_path) == (
        "pkg.a -> pkg.b -> pkg.a\n    pkg/a.py:4,8 imports pkg.b\n    pkg/b.py:5 imports pkg.a"
    )
