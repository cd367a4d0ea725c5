"""Finding the native accelerators: modules built from C by ``setup.py`` that do exactly what a
piece of Python does, faster (see docs/bots.md, "Speed: native accelerators").

Every user keeps its Python code as the reference and calls ``native_module`` once, at import;
it gets None when the module was not built (no compiler), when its tables fail their checks as
it is imported (a ValueError naming the table), or when ``ENGINESRV_PURE_PYTHON`` is set in the
environment, and then runs on the reference alone.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

PURE_PYTHON = "ENGINESRV_PURE_PYTHON"
"""The environment variable that turns every native accelerator off."""


def native_module(name: str) -> ModuleType | None:
    """The accelerator ``name`` (``"games._yinsh_native"``), or None when it is off or absent."""
    if os.environ.get(PURE_PYTHON):
        return None
    try:
        return importlib.import_module(name)
    except (ImportError, ValueError):  # not built, or its tables failed their checks at import
        return None
