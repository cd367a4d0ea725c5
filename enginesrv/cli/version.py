"""``enginesrv version``: the version, the Python that runs it, and for each native accelerator
(``setup.py``'s extension modules) whether it is loaded, from which file, or why the Python
reference runs instead."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
from typing import TextIO

from enginesrv import __version__
from enginesrv.cli.common import Subcommands
from enginesrv.event.results.wording import printable
from games.native import PURE_PYTHON, native_module

NATIVE_MODULES: tuple[tuple[str, str], ...] = (
    ("games._yinsh_native", "games.yinsh"),
    ("games._yohoho_native", "games.yohoho"),
    ("bots.eval._yinsh_native", "bots.eval.yinsh"),
    ("bots.eval._yohoho_native", "bots.eval.yohoho"),
    ("bots.eval._yoxii_native", "bots.eval.yoxii"),
    ("bots.eval._yinyang_native", "bots.eval.yinyang"),
    ("bots._core_yinsh", "bots.compiled"),
    ("bots._core_yohoho", "bots.compiled"),
    ("bots._core_yoxii", "bots.compiled"),
)
"""Each native module that ``setup.py`` builds, and the module that loads it."""


def add_version(sub: Subcommands) -> argparse.ArgumentParser:
    """``enginesrv version``."""
    return sub.add_parser(
        "version",
        help="print the version and which native accelerators are loaded",
        description="Print 'enginesrv VERSION (Python X.Y.Z, PATH)', then one line per native "
        "accelerator (the C modules that setup.py builds): 'MODULE native FILE' when it is "
        "loaded, from FILE, or 'MODULE reference (WHY)' when its Python reference runs "
        "instead: not built (no compiler at install), failed to load, or "
        f"{PURE_PYTHON} set. The last line is 'natives: N of M loaded'.",
    )


def native_status(name: str, user: str) -> tuple[bool, str]:
    """``(True, file)`` when the accelerator ``name`` is loaded, as ``user`` loads it, else
    ``(False, why)``: why the Python reference runs instead."""
    importlib.import_module(user)  # it loads the accelerator and hands it its tables
    if os.environ.get(PURE_PYTHON):
        return False, f"{PURE_PYTHON} is set"
    module = native_module(name)
    if module is not None:
        return True, str(module.__file__)
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return False, "not built"
        return False, f"failed to load: {printable(str(exc))}"
    except (ImportError, ValueError) as exc:
        return False, f"failed to load: {printable(str(exc))}"
    return False, "not loaded"


def cmd_version(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """``enginesrv version``."""
    del args, err
    out.write(f"enginesrv {__version__} (Python {platform.python_version()}, {sys.executable})\n")
    loaded = 0
    for name, user in NATIVE_MODULES:
        native, detail = native_status(name, user)
        loaded += native
        out.write(f"{name} native {detail}\n" if native else f"{name} reference ({detail})\n")
    out.write(f"natives: {loaded} of {len(NATIVE_MODULES)} loaded\n")
