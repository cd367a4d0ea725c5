"""Whether bubblewrap can make a sandbox here, found apart from the code under test (the
``sandbox`` fixture of tests/conftest.py skips a test where it cannot)."""

from __future__ import annotations

import functools
import shutil
import subprocess


@functools.cache
def no_sandbox() -> str | None:
    """Why bubblewrap cannot be used here (not installed, no namespaces for it), or None."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    proc = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
         "--unshare-ipc", "--unshare-net", "--", "true"],
        capture_output=True, text=True, check=False, timeout=30,
    )  # fmt: skip
    if proc.returncode != 0:
        return f"bwrap cannot make a sandbox here: {proc.stderr.strip()[:200]}"
    return None
