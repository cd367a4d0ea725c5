"""The native accelerators of hot paths (everything else is in pyproject.toml).

Each is C against the Python C API, built from source with the system's compiler (gcc) when
the package is installed, and has a pure-Python reference that the tests compare it with; the
Python code uses it only when it was built (``ENGINESRV_PURE_PYTHON=1`` turns them all off);
a failed build leaves the package installable on the reference alone.
"""

import platform
from pathlib import Path

from setuptools import Extension, setup


def _has_popcnt() -> bool:
    """Whether this machine's processor counts bits in one instruction (x86 ``popcnt``); the
    accelerators are built for the machine that builds them."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        return " popcnt" in Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False


FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
if _has_popcnt():
    FLAGS.append("-mpopcnt")

MODULES = (
    "games._yinsh_native",  # ring moves
    "games._yohoho_native",  # ship slides
    "bots.eval._yinsh_native",  # the board counts of the evaluation
    "bots.eval._yohoho_native",  # the evaluation
    "bots.eval._yoxii_native",  # the evaluation, with its endgame solver
    "bots.eval._yinyang_native",  # the evaluation, over the samples of a determinized search
)

CORES = ("yinsh", "yohoho", "yoxii")
"""The compiled search cores: bots/_core_<game>.c, each the game's rules and evaluation
(native/core/<game>.h) under the shared search (native/core/search.h)."""

NATIVE = [
    # optional: without a compiler the package installs, and runs on the references
    Extension(
        name,
        [name.replace(".", "/") + ".c"],
        include_dirs=["native"],  # bitboard128.h, which they share
        depends=["native/bitboard128.h"],
        extra_compile_args=FLAGS,
        optional=True,
    )
    for name in MODULES
] + [
    Extension(
        f"bots._core_{game}",
        [f"bots/_core_{game}.c"],
        include_dirs=["native"],
        depends=["native/core/common.h", "native/core/search.h", f"native/core/{game}.h"],
        extra_compile_args=FLAGS,
        optional=True,
    )
    for game in CORES
]

setup(ext_modules=NATIVE)
