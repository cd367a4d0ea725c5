"""The program's size gates (design §8: no function over 80 lines, no module over 400 in
``enginesrv``) and its formatting gate (at most ``MAX_FMT_SKIPS`` lines of the program that
``ruff format`` is told to leave alone), counted as a reader meets them: physical lines, a
function from its ``def`` line to its last line (a nested function counts in its parent
too). ruff's complexity rules (``pyproject.toml``) bound the rest."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ("games", "bots", "protocol", "enginesrv")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
MAX_FMT_SKIPS = 10
KEPT_FROM_FORMAT = ("# fmt: skip", "# fmt: off", "# fmt: on")


def _modules(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (ROOT / package).rglob("*.py"))


def long_functions(text: str) -> dict[str, int]:
    """The functions of the module ``text`` longer than ``MAX_FUNCTION_LINES``: their first
    line and name, and their length."""
    long: dict[str, int] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                long[f"{node.lineno} {node.name}"] = lines
    return long


def kept_from_format(text: str) -> list[int]:
    """The lines of ``text`` that ``ruff format`` is told to leave alone."""
    return [
        number
        for number, line in enumerate(text.splitlines(), 1)
        if any(line.rstrip().endswith(marker) for marker in KEPT_FROM_FORMAT)
    ]


def test_no_module_of_the_server_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _modules("enginesrv")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_of_the_server_is_over_80_lines() -> None:
    long = {
        f"{path.relative_to(ROOT)}:{where}": lines
        for path in _modules("enginesrv")
        for where, lines in long_functions(path.read_text(encoding="utf-8")).items()
    }
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_few_lines_of_the_program_are_kept_from_the_formatter() -> None:
    kept = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _modules(*PROGRAM)
        for number in kept_from_format(path.read_text(encoding="utf-8"))
    ]
    assert len(kept) <= MAX_FMT_SKIPS, f"{len(kept)} lines kept from ruff format: {kept}"


def test_the_counts_are_those_of_a_reader() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(78))
    at_most = f"@decorator\ndef f():\n{body}    return 0\n"  # 80 lines from def to return
    assert long_functions(at_most) == {}
    over = f"async def g():\n{body}    x = 1\n    return x\n"
    assert long_functions(over) == {"1 g": 81}
    nested = f"def outer():\n    def inner():\n{body.replace('    ', '        ')}        pass\n"
    assert long_functions(nested + "    return inner\n") == {"1 outer": 82}
    text = "a = [1, 2]  # fmt: skip\n# fmt: off\nb = 1\n# fmt: on\nc = 'fmt: skip'\n"
    assert kept_from_format(text) == [1, 2, 4]
