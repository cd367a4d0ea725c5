"""The native accelerators of hot paths (everything else is in pyproject.toml).

Each is C against the Python C API, built from source with the system's compiler (gcc) when
the package is installed, and has a pure-Python reference that the tests compare it with; the
Python code uses it only when it was built (``ENGINESRV_PURE_PYTHON=1`` turns them all off);
a failed build leaves the package installable on the reference alone.
"""

from setuptools import Extension, setup

FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
"""The same on every machine: no -m option, so a build runs on any x86-64. Counting bits fast
is chosen when a module loads instead (gcc's target_clones on the functions that count)."""

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
        depends=["native/bitboard128.h", "native/pyint128.h"],
        extra_compile_args=FLAGS,
        optional=True,
    )
    for name in MODULES
] + [
    Extension(
        f"bots._core_{game}",
        [f"bots/_core_{game}.c"],
        include_dirs=["native"],
        depends=[
            "native/pyint128.h",
            "native/core/common.h",
            "native/core/search.h",
            f"native/core/{game}.h",
        ],
        extra_compile_args=FLAGS,
        optional=True,
    )
    for game in CORES
]

setup(ext_modules=NATIVE)
