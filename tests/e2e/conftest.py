"""Fixtures for the end-to-end tests that drive the real `opencode` binary."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Project, start_project


@pytest.fixture
def opencode_project(tmp_path: Path) -> Iterator[Callable[..., Project]]:
    """A factory: `opencode_project(script, files=..., **make_project options)` -> Project.

    Fails (never skips) when the pinned OpenCode is not installed; stops the fake models
    at teardown.
    """
    projects: list[Project] = []

    def create(script: list[dict[str, Any]], **options: Any) -> Project:
        project = start_project(tmp_path / f"p{len(projects)}", script, **options)
        projects.append(project)
        return project

    yield create
    for project in projects:
        project.close()
