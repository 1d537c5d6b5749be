"""Shared fixtures: isolated memory roots, and flags that regenerate committed expectations."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-golden` rewrites golden outputs; `--update-baseline` the fidelity baseline."""
    parser.addoption("--update-golden", action="store_true", help="rewrite fixtures/golden/*")
    parser.addoption("--update-baseline", action="store_true", help="rewrite the fidelity baseline")


@pytest.fixture(autouse=True)
def isolated_roots(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the global memory root and the user's data folder (the key) at temp dirs and clear
    DEEPMEM_* settings from the shell."""
    import os

    monkeypatch.setenv("DEEP_MEMORY_GLOBAL_ROOT", str(tmp_path_factory.mktemp("global-memory")))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))
    for name in list(os.environ):
        if name.startswith("DEEPMEM_") or name == "DEEP_MEMORY_PROJECT_SUBDIR":
            monkeypatch.delenv(name)
