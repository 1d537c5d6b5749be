"""A project: its folder and the settings read for it once, where a command or the bridge starts.

Everything below the entry point (memory, checkpoints, upkeep) takes the project and reads
its settings and redactor from it, never from config.toml again. A `Project` is a path
(`os.PathLike`), so it goes wherever a folder went. A bare folder is still accepted by the
library's functions: `project_of` reads its settings then, strictly.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from deepmem.config import Config, read_config
from deepmem.redact import Redactor


class Project(os.PathLike):
    """A project folder with its settings and the redactor they ask for."""

    def __init__(self, root: str | os.PathLike[str], config: Config, problem: str = ""):
        self.root = Path(root)
        self.config = config
        self.problem = problem
        """Why config.toml was not used, when it was bad and the defaults stand in ('' otherwise)."""
        self.redactor = _redactor(config.security.redact, tuple(config.security.patterns))

    @classmethod
    def load(cls, root: str | os.PathLike[str], defaults_on_error: bool = False) -> Project:
        """The project at `root` with its settings (the defaults on a bad one when asked, see `load_config`)."""
        return cls(root, *read_config(root, defaults_on_error))

    def __fspath__(self) -> str:
        return str(self.root)

    def __str__(self) -> str:
        return str(self.root)


def project_of(root: str | os.PathLike[str]) -> Project:
    """The project a caller passed, or, for a bare folder, the project with its settings read now."""
    return root if isinstance(root, Project) else Project.load(root)


@lru_cache(maxsize=16)
def _redactor(enabled: bool, extra: tuple[str, ...]) -> Redactor:
    return Redactor(enabled, extra)
