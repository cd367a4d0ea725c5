"""``enginesrv version``: one line per native accelerator that setup.py builds, saying whether
it is loaded (and from which file) or why the Python reference runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from enginesrv.cli import main
from enginesrv.cli.version import NATIVE_MODULES, native_status
from games.native import PURE_PYTHON, native_module

ROOT = Path(__file__).resolve().parents[2]


def version(capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["version"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out.splitlines()


def test_every_module_that_setup_py_builds_is_listed() -> None:
    sources = {
        path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
        for package in ("games", "bots")
        for path in (ROOT / package).rglob("*.c")
    }
    assert {name for name, _ in NATIVE_MODULES} == sources


def test_each_line_says_what_the_program_runs(capsys: pytest.CaptureFixture[str]) -> None:
    first, *lines, last = version(capsys)
    assert first.startswith("enginesrv ")
    assert [line.split()[0] for line in lines] == [name for name, _ in NATIVE_MODULES]
    loaded = 0
    for line, (name, _) in zip(lines, NATIVE_MODULES, strict=True):
        module = native_module(name)
        if module is None:
            assert line.startswith(f"{name} reference ("), line
        else:
            assert line == f"{name} native {module.__file__}"
            loaded += 1
    assert last == f"natives: {loaded} of {len(NATIVE_MODULES)} loaded"


def test_pure_python_turns_every_one_off(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PURE_PYTHON, "1")
    _, *lines, last = version(capsys)
    assert lines == [f"{name} reference ({PURE_PYTHON} is set)" for name, _ in NATIVE_MODULES]
    assert last == f"natives: 0 of {len(NATIVE_MODULES)} loaded"


def test_a_module_that_was_not_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PURE_PYTHON, raising=False)
    assert native_status("games._no_such_native", "games") == (False, "not built")
