"""Shared test configuration: the ``--run-slow`` switch, the data folder, and the ``sandbox``
fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.enginesrv.sandbox_support import no_sandbox

DATA = Path(__file__).parent / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow", action="store_true", default=False, help="also run tests marked slow"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def sandbox() -> None:
    """Skip the test where bubblewrap cannot make a sandbox (``sandbox_support``)."""
    problem = no_sandbox()
    if problem is not None:
        pytest.skip(problem)
