"""Settings from `.deep-memory/config.toml` and `DEEPMEM_*` environment variables."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import msgspec

from deepmem.types import ConfigError, Settings

PROJECT_SUBDIR_ENV = "DEEP_MEMORY_PROJECT_SUBDIR"


def memory_dir(root: str | os.PathLike[str]) -> Path:
    """The project's `.deep-memory/` folder (its name can be changed by environment)."""
    return Path(root) / os.environ.get(PROJECT_SUBDIR_ENV, ".deep-memory")


def load_settings(root: str | os.PathLike[str] | None = None) -> Settings:
    """Defaults, then `[compress]` of config.toml, then `DEEPMEM_<FIELD>` variables."""
    values: dict[str, object] = {}
    if root is not None:
        path = memory_dir(root) / "config.toml"
        if path.is_file():
            try:
                table = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
                raise ConfigError(f"{path}: {exc}") from None
            values.update(table.get("compress", {}))
    for field in Settings.__struct_fields__:
        raw = os.environ.get(f"DEEPMEM_{field.upper()}")
        if raw is not None:
            try:
                values[field] = int(raw)
            except ValueError:
                raise ConfigError(f"DEEPMEM_{field.upper()}: expected an integer, got {raw!r}") from None
    try:
        return msgspec.convert(values, Settings)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"config: {exc}") from None
