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


def load_table(root: str | os.PathLike[str], name: str) -> dict[str, object]:
    """The `[name]` table of the project's config.toml (empty when the file or table is absent)."""
    path = memory_dir(root) / "config.toml"
    if not path.is_file():
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get(name, {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{name}] must be a table")
    return table


def load_settings(root: str | os.PathLike[str] | None = None) -> Settings:
    """Defaults, then `[compress]` of config.toml, then `DEEPMEM_<FIELD>` variables."""
    values: dict[str, object] = {}
    if root is not None:
        values.update(load_table(root, "compress"))
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
