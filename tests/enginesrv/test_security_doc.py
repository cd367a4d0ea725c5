"""docs/security.md names, for each thing an adversary cannot do, the test that tries it: each
test it names exists."""

from __future__ import annotations

import re

from tests.enginesrv.test_tournament import ROOT


def test_every_test_the_threat_model_names_exists() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    # `file.py::test_a`, `::test_b` (the file named last), or `file.py`, `::test_c`
    named: list[tuple[str, str]] = []
    file = ""
    for token in re.findall(r"`([^`\n]+)`", text):
        found = re.fullmatch(r"(test_\w+\.py)(?:::(test_\w+))?|::(test_\w+)", token)
        if found is None:
            continue
        file = found[1] or file
        name = found[2] or found[3]
        if name:
            assert file, f"::{name} follows no test file"
            named.append((file, name))
    assert len(named) >= 10
    for file, name in named:
        (path,) = (ROOT / "tests").rglob(file)
        source = path.read_text(encoding="utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, re.M), f"{file}::{name}"
