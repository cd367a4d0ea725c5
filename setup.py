"""The native accelerators of hot paths (everything else is in pyproject.toml).

Each is C against the Python C API, built from source with the system's compiler (gcc) when
the package is installed, and has a pure-Python reference that the tests compare it with; the
Python code uses it only when it was built (``ENGINESRV_PURE_PYTHON=1`` turns them all off);
a failed build leaves the package installable on the reference alone.
"""

from setuptools import Extension, setup

FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"]

NATIVE = [
    # optional: without a compiler the package installs, and runs on the references
    Extension(
        f"bots.eval._{game}_native",
        [f"bots/eval/_{game}_native.c"],
        extra_compile_args=FLAGS,
        optional=True,
    )
    for game in ("yohoho", "yoxii")
]

setup(ext_modules=NATIVE)
