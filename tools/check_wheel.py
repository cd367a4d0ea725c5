"""Build enginesrv's sdist and wheel, repair the wheel to a manylinux tag, install it offline in
a new virtual environment with no compiler on PATH, and run it there with every native
accelerator loaded from the installed wheel.

Usage: python tools/check_wheel.py   (it needs `pip install build auditwheel -c constraints.txt`
and Debian's patchelf; everything it makes is in a temporary directory, removed at the end)

Steps: ``python -m build --outdir`` (the sdist, then the wheel built from it, its native modules
compiled with setup.py's portable flags), a check that the sdist holds every C source and
header, ``auditwheel repair``, ``pip download`` of the runtime dependencies as wheels, then, in
an environment whose PATH is the new venv's bin/ alone and from a directory outside the
checkout: ``pip install --no-index --find-links``, ``enginesrv version`` (every native module
loaded, from the venv's site-packages), ``enginesrv perft`` on three games and ``enginesrv
bench`` (every search compiled). Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
COMPILERS = ("gcc", "cc", "c++", "g++", "clang")
WHEELS_ONLY = ("--quiet", "--only-binary=:all:")
"""pip's options for the download and the install: wheels only, never a build."""
PERFT = (  # game, position (None: the start), depth, leaves (tests/data/<game>/<game>.perft)
    ("yinsh", "4/7/5B2/6B2/8BW/6B2/4B1W2W/3W4W/8/7/4 w m 0-0 51", 3, 240259),
    ("yohoho", None, 3, 98290),
    ("yoxii", None, 4, 51136),
)


class CheckError(Exception):
    """A step failed: what failed, and what it printed."""


def native_sources() -> list[str]:
    """The files a build of the native modules reads, as paths from the checkout's root."""
    patterns = ("native/*.h", "native/core/*.h", "games/*.c", "bots/*.c", "bots/eval/*.c")
    return sorted(str(p.relative_to(ROOT)) for pattern in patterns for p in ROOT.glob(pattern))


def native_modules() -> list[str]:
    """The native modules setup.py builds: one per C file of games/ and bots/."""
    return sorted(
        path.removesuffix(".c").replace("/", ".")
        for path in native_sources()
        if path.endswith(".c")
    )


def run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run ``cmd``; its stdout, or CheckError with the end of its output when it fails."""
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=600
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
        raise CheckError(f"{' '.join(cmd)} exited {done.returncode}:\n{tail}")
    return done.stdout


@contextmanager
def step(name: str) -> Iterator[None]:
    """Print the step's name, then, once it is done, how long it took."""
    print(f"-- {name}", flush=True)
    started = time.monotonic()
    yield
    print(f"   ... {time.monotonic() - started:.1f} s", flush=True)


def only(folder: Path, pattern: str) -> Path:
    """The one file of ``folder`` that matches ``pattern``."""
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise CheckError(f"expected one {pattern} in {folder}, found {[p.name for p in found]}")
    return found[0]


def check_sdist(sdist: Path) -> None:
    """The sdist holds setup.py and every C source and header of the native modules."""
    top = sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
    missing = [p for p in ["setup.py", *native_sources()] if f"{top}/{p}" not in names]
    if missing:
        raise CheckError(f"{sdist.name} lacks {missing}")


def manylinux_tag(wheel: Path) -> str:
    """The platform tags of the repaired wheel (``manylinux_2_17_x86_64.manylinux2014_...``)."""
    tags = wheel.name.removesuffix(".whl").split("-")[-1]
    named = tags.split(".")
    if not any(t.startswith("manylinux_") for t in named) or any(
        not t.startswith("manylinux") for t in named
    ):
        raise CheckError(f"{wheel.name} is not tagged manylinux_*")
    return tags


def offline_env(venv: Path, home: Path) -> dict[str, str]:
    """The environment of the install and the runs: the venv's bin/ alone on PATH (no
    compiler), no pip configuration (so no index), nothing of the caller's environment."""
    return {
        "PATH": str(venv / "bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONNOUSERSITE": "1",
    }


def check_natives(report: str, site: Path) -> None:
    """``enginesrv version`` says every native module is loaded, from the venv's
    site-packages."""
    expected = native_modules()
    lines = report.splitlines()
    rows = {line.split(" ", 1)[0]: line for line in lines[1:-1]}
    if sorted(rows) != expected:
        raise CheckError(f"enginesrv version lists {sorted(rows)}, setup.py builds {expected}")
    for name, line in rows.items():
        _, status, where = line.split(" ", 2)
        path = Path(where)
        if status != "native" or not path.is_relative_to(site) or path.is_relative_to(ROOT):
            raise CheckError(f"{name} is not loaded from {site}: {line}")
    if lines[-1] != f"natives: {len(expected)} of {len(expected)} loaded":
        raise CheckError(f"enginesrv version ends with {lines[-1]!r}")


def check_runs(venv: Path, env: dict[str, str], cwd: Path) -> None:
    """``enginesrv perft`` counts right; ``enginesrv bench`` searched with the compiled cores."""
    enginesrv = str(venv / "bin" / "enginesrv")
    for game, position, depth, leaves in PERFT:
        cmd = [enginesrv, "perft", game, str(depth)] + (["--pos", position] if position else [])
        last = run(cmd, env=env, cwd=cwd).splitlines()[-1]
        if last != str(leaves):
            raise CheckError(f"{' '.join(cmd)} counted {last}, not {leaves}")
        print(f"   enginesrv perft {game} {depth}: {last}")
    *searches, signature = run([enginesrv, "bench"], env=env, cwd=cwd).splitlines()
    python = [line for line in searches if not line.endswith(" search compiled")]
    if not searches or python or not signature.startswith("bench: nodes "):
        raise CheckError(f"enginesrv bench did not search compiled: {python or signature}")
    print(f"   enginesrv bench: {len(searches)} searches compiled; {signature}")


def build_and_repair(work: Path) -> Path:
    """The sdist and wheel built (the wheel from the sdist), checked and repaired; the
    repaired wheel."""
    dist, house = work / "dist", work / "wheelhouse"
    env = dict(os.environ, PIP_CONSTRAINT=str(CONSTRAINTS))  # the build back end's pins too
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], env=env)
    check_sdist(only(dist, "*.tar.gz"))
    wheel = only(dist, "*.whl")
    print(f"   built {only(dist, '*.tar.gz').name} and {wheel.name}")
    run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(house), str(wheel)])
    repaired = only(house, "*.whl")
    print(f"   repaired: {repaired.name} (tags {manylinux_tag(repaired)})")
    return repaired


def check_wheel(work: Path) -> None:
    """Every step, in ``work``; CheckError at the first that fails."""
    with step("python -m build --outdir DIR (the sdist, the wheel from it); auditwheel repair"):
        repaired = build_and_repair(work)

    venv, wheels, home, elsewhere = (work / d for d in ("venv", "wheels", "home", "run"))
    with step("a new venv; pip download of the runtime dependencies as wheels"):
        home.mkdir()
        elsewhere.mkdir()
        run([sys.executable, "-m", "venv", str(venv)])
        download = ["download", *WHEELS_ONLY, "--dest", str(wheels), "-c", str(CONSTRAINTS)]
        run([sys.executable, "-m", "pip", *download, str(repaired)])

    env = offline_env(venv, home)
    python = str(venv / "bin" / "python")
    with step("pip install --no-index --find-links DIR, with no compiler on PATH"):
        which = f"import shutil; print([shutil.which(c) for c in {COMPILERS}])"
        on_path = run([python, "-c", which], env=env).strip()
        if on_path != str([None] * len(COMPILERS)):
            raise CheckError(f"a compiler is on PATH: {on_path}")
        install = ["install", *WHEELS_ONLY, "--no-index", "--find-links", str(wheels)]
        run([python, "-m", "pip", *install, str(repaired)], env=env, cwd=elsewhere)

    with step("enginesrv version, perft and bench, from a directory outside the checkout"):
        platlib = "import sysconfig; print(sysconfig.get_path('platlib'))"
        site = Path(run([python, "-c", platlib], env=env).strip())
        report = run([str(venv / "bin" / "enginesrv"), "version"], env=env, cwd=elsewhere)
        print("\n".join(f"   {line}" for line in report.splitlines()))
        check_natives(report, site)
        check_runs(venv, env, elsewhere)


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None).parse_args()
    missing = [m for m in ("build", "auditwheel") if importlib.util.find_spec(m) is None]
    if missing or shutil.which("patchelf") is None:
        need = "`pip install build auditwheel -c constraints.txt` and patchelf (Debian's)"
        print(f"check_wheel: needs {need}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="enginesrv-wheel-") as tmp:
        work = Path(tmp).resolve()
        if work.is_relative_to(ROOT):
            print(
                f"check_wheel: the temporary directory {work} is in the checkout", file=sys.stderr
            )
            return 1
        try:
            check_wheel(work)
        except CheckError as exc:
            print(f"check_wheel: FAILED: {exc}", file=sys.stderr)
            return 1
    print("check_wheel: the wheel installs offline without a compiler and runs native")
    return 0


if __name__ == "__main__":
    sys.exit(main())
