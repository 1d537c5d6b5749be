"""A project: its folder and the settings read for it once, where a command or the bridge starts.

Everything below the entry point (memory, checkpoints, CCR, upkeep) takes the project and
reads its settings and redactor from it, never from config.toml again: a function that needs
a setting takes a `Project`, not a bare folder. A `Project` is a path (`os.PathLike`), so it
goes wherever a folder went.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from deepmem.project.config import Config, read_config
from deepmem.vault.redact import Redactor


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

    def __truediv__(self, name: str | os.PathLike[str]) -> Path:
        """A path inside the project folder, as `Path` joins one."""
        return self.root / name


@lru_cache(maxsize=16)
def _redactor(enabled: bool, extra: tuple[str, ...]) -> Redactor:
    return Redactor(enabled, extra)
