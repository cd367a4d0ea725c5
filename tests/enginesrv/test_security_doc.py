"""docs/security.md names, for each thing an adversary cannot do, the test that tries it: each
test it names exists."""

from __future__ import annotations

import re

from tests.enginesrv.test_tournament import ROOT


def test_every_test_the_threat_model_names_exists() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    named = re.findall(r"`(test_\w+\.py)::(test_\w+)`", text)
    named += [(file, name) for file, name in re.findall(r"(test_\w+\.py)`?, `::(test_\w+)`", text)]
    assert len(named) >= 10
    for file, name in named:
        source = (ROOT / "tests" / "enginesrv" / file).read_text(encoding="utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, re.M), f"{file}::{name}"
