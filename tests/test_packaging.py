"""pyproject.toml lists every package of the program, so that an install that is not editable
(a wheel, ``tools/check_wheel.py`` in ``.ci/run``) holds every module the program imports."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(pyproject["tool"]["setuptools"]["packages"])
    tops = {name for name in listed if "." not in name}
    found = {
        path.parent.relative_to(ROOT).as_posix().replace("/", ".")
        for top in tops
        for path in (ROOT / top).rglob("__init__.py")
    }
    assert tops >= {"games", "bots", "protocol", "enginesrv"}
    assert not found - listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
