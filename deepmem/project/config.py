"""Settings from `.deep-memory/config.toml` and `DEEPMEM_*` environment variables, checked once.

Every table and key is typed (msgspec, one decode): a value of the wrong type, out of its
range, or a key nobody reads is a `ConfigError` naming the setting and what it accepts.
A key `name` of table `[compress]` is also `DEEPMEM_NAME`; of any other table `[t]`,
`DEEPMEM_T_NAME` (so `[memory] model` is `DEEPMEM_MEMORY_MODEL`). Lists come only from
config.toml.
"""

from __future__ import annotations

import logging
import os
import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from deepmem.bill.prices import FAMILIES, PriceModel, checked
from deepmem.types import ConfigError, Count, Settings

PROJECT_SUBDIR_ENV = "DEEP_MEMORY_PROJECT_SUBDIR"
log = logging.getLogger("deepmem.config")


class MemorySettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """[memory]: the search model, how many entries MEMORY.md keeps, and how sure the whisper must be."""

    model: str = ""
    """The model2vec folder or Hub id for search ('' = the shipped model)."""
    max_entries: Annotated[int, msgspec.Meta(ge=1)] = 200
    """Entries `/dream` keeps in MEMORY.md; the least useful beyond it move to archive.md."""
    whisper_min_score: float | None = None
    """The fused search score a memory needs to be whispered, on top of the relevance test; None: no score
    threshold, the relevance test alone decides (`python -m bench.runners.cross_session` sweeps the threshold)."""


class SecuritySettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """[security]: redact secrets before writing (on by default), plus extra regexes to redact."""

    redact: bool = True
    patterns: tuple[str, ...] = ()


class LimitSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """[limits]: caps on what deepmem keeps; past a cap the oldest goes first."""

    sessions_kept: Annotated[int, msgspec.Meta(ge=1)] = 500
    """Session folders under `sessions/` (raw transcript, checkpoint, stats, stable block)."""
    log_bytes: Annotated[int, msgspec.Meta(ge=4_096)] = 1024 * 1024
    """Each of the bridge log's files (four at most) and `.compaction-log.jsonl`."""
    engine_sessions: Annotated[int, msgspec.Meta(ge=1)] = 64
    """Sessions one engine keeps in memory; an evicted one is rebuilt from the plugin's next request."""


Price = Annotated[float, msgspec.Meta(ge=0)]


class CostSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """[cost]: the prices the jump schedule weighs, over the model's own and its provider family's."""

    family: Literal["", *FAMILIES] = ""  # type: ignore[valid-type]
    """A provider family's price model ('' = the model's own prices, else the family the messages name)."""
    input: Price = 0.0
    """Dollars per million input tokens (0 = not set); with it, cache_read and cache_write."""
    cache_read: Price = 0.0
    cache_write: Price = 0.0
    """0 = the input price (no write premium)."""
    cache_ttl_seconds: Count = 0
    """How long the provider keeps a cached prefix (0 = the family's lifetime)."""
    cache_reads: Literal["", "prefix", "marks"] = ""
    """Where the provider reads a cached prefix up to: `prefix`, wherever the requests agree
    (OpenAI, DeepSeek, Gemini); `marks`, only where an earlier request marked one (Anthropic
    through OpenCode); '' = the family's way."""
    frame_tokens: Count = 0
    """Tokens you add to every request besides OpenCode's own system prompt and tools
    (AGENTS.md, MCP tools), for `deepmem audit` to bill on both sides."""

    def prices(self, fallback: PriceModel) -> PriceModel | None:
        """The price model these settings name over `fallback`, or None when they name none."""
        base = FAMILIES[self.family] if self.family else fallback
        if not self.input and not self.family and not self.cache_ttl_seconds and not self.cache_reads:
            return None
        marks = self.cache_reads == "marks" if self.cache_reads else base.cached_at_marks
        ttl = self.cache_ttl_seconds or base.ttl_seconds
        if not self.input:
            return msgspec.structs.replace(base, ttl_seconds=ttl, cached_at_marks=marks)
        model = PriceModel("config", self.input, self.cache_read, self.cache_write or self.input, ttl, marks)
        return checked(model, base)


class Config(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Every table of config.toml."""

    compress: Settings = Settings()
    memory: MemorySettings = MemorySettings()
    security: SecuritySettings = SecuritySettings()
    limits: LimitSettings = LimitSettings()
    cost: CostSettings = CostSettings()


TABLES: dict[str, type[msgspec.Struct]] = {
    name: msgspec.inspect.type_info(Config).fields[index].type.cls  # type: ignore[attr-defined]
    for index, name in enumerate(Config.__struct_fields__)
}
_reported: set[str] = set()


def memory_dir(root: str | os.PathLike[str]) -> Path:
    """The project's `.deep-memory/` folder (its name can be changed by environment)."""
    return Path(root) / os.environ.get(PROJECT_SUBDIR_ENV, ".deep-memory")


def ccr_folder(root: str | os.PathLike[str]) -> Path:
    """Where the project's originals are kept: the folder handed to `deepmem.vault.ccr.CCRStore`."""
    return memory_dir(root) / "ccr"


def env_name(table: str, field: str) -> str:
    """The environment variable that sets `[table] field`."""
    return f"DEEPMEM_{field.upper()}" if table == "compress" else f"DEEPMEM_{table.upper()}_{field.upper()}"


def load_config(root: str | os.PathLike[str] | None = None, defaults_on_error: bool = False) -> Config:
    """Defaults, then config.toml, then `DEEPMEM_*`; ConfigError on any bad value (see the module doc),
    or with `defaults_on_error` one warning and the defaults (the bridge must keep working)."""
    return read_config(root, defaults_on_error)[0]


def read_config(root: str | os.PathLike[str] | None, defaults_on_error: bool = False) -> tuple[Config, str]:
    """The settings as `load_config` reads them, and their one-line problem ('' when they are valid)."""
    try:
        return check_config(root), ""
    except ConfigError as exc:
        if not defaults_on_error:
            raise
        if str(exc) not in _reported:
            _reported.add(str(exc))
            log.warning("%s; using the default settings", exc)
        return Config(), str(exc)


def config_problem(root: str | os.PathLike[str] | None) -> str:
    """The one-line problem with the settings, or '' when they are valid."""
    try:
        check_config(root)
    except ConfigError as exc:
        return str(exc)
    return ""


def check_config(root: str | os.PathLike[str] | None) -> Config:
    """The validated settings; always raises ConfigError on a bad one."""
    path = memory_dir(root) / "config.toml" if root is not None else None
    values = _read_toml(path) if path is not None else {}
    from_env: dict[tuple[str, str], str] = {}
    for table, struct in TABLES.items():
        for field in struct.__struct_fields__:
            raw = os.environ.get(env_name(table, field))
            if raw is not None and field != "patterns":
                section = values.setdefault(table, {})
                if isinstance(section, dict):
                    section[field] = raw
                    from_env[(table, field)] = raw
    try:
        config = _decode(values)
    except msgspec.ValidationError as exc:
        raise ConfigError(_explain(str(exc), path, from_env)) from None
    _check_consistency(config, path)
    return config


@lru_cache(maxsize=64)
def _decode_cached(key: bytes) -> Config:
    return msgspec.convert(msgspec.json.decode(key), Config, strict=False)


def _decode(values: dict[str, Any]) -> Config:
    """One typed decode (memoized on the values, since every write path asks for the settings)."""
    return _decode_cached(msgspec.json.encode(values))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


AT = re.compile(r" - at `\$((?:\.\w+)*)`")
UNKNOWN = re.compile(r"Object contains unknown field `([^`]*)`")


def _explain(message: str, path: Path | None, from_env: dict[tuple[str, str], str]) -> str:
    """msgspec's message as one line: where the value came from, the setting, what it accepts."""
    at = AT.search(message)
    keys = at.group(1).strip(".").split(".") if at and at.group(1) else []
    unknown = UNKNOWN.search(message)
    source = str(path) if path is not None else "config"
    if unknown and not keys:
        return f"{source}: unknown table [{unknown.group(1)}]; known tables: {', '.join(TABLES)}"
    if unknown:
        struct = TABLES[keys[0]]
        return (f"{source}: unknown setting [{keys[0]}] {unknown.group(1)}; known: "
                f"{', '.join(struct.__struct_fields__)}")
    if len(keys) == 1:
        return f"{source}: [{keys[0]}] must be a table"
    if len(keys) < 2:
        return f"{source}: {message}"
    table, field = keys[0], keys[1]
    raw = from_env.get((table, field))
    if raw is not None:
        return f"{env_name(table, field)}={raw!r}: {field} must be {allowed(table, field)}"
    return f"{source}: [{table}] {field} must be {allowed(table, field)}"


def allowed(table: str, field: str) -> str:
    """What a setting accepts, in words: its type and range."""
    info = msgspec.inspect.type_info(TABLES[table])
    kind = next(item.type for item in info.fields if item.name == field)  # type: ignore[attr-defined]
    if isinstance(kind, msgspec.inspect.IntType):
        bounds = [f">= {kind.ge:,}" if kind.ge is not None else "", f"<= {kind.le:,}" if kind.le is not None else ""]
        return " ".join(["an integer", " and ".join(bound for bound in bounds if bound)]).strip()
    if isinstance(kind, msgspec.inspect.BoolType):
        return "true or false (1 or 0)"
    if isinstance(kind, msgspec.inspect.StrType):
        return "a string"
    if isinstance(kind, msgspec.inspect.FloatType):
        return "a number >= 0"
    if isinstance(kind, msgspec.inspect.LiteralType):
        return "one of " + ", ".join(repr(value) for value in kind.values)
    return "a list of strings"


def _check_consistency(config: Config, path: Path | None) -> None:
    """Rules that span settings or need more than a type: tier order, compilable patterns."""
    source = str(path) if path is not None else "config"
    if config.compress.tier_high_tokens < config.compress.tier_medium_tokens:
        raise ConfigError(f"{source}: tier_high_tokens must be >= tier_medium_tokens "
                          f"({config.compress.tier_high_tokens:,} < {config.compress.tier_medium_tokens:,})")
    for pattern in config.security.patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{source}: [security] patterns: {pattern!r} is not a regular expression: {exc}") from None


def load_settings(root: str | os.PathLike[str] | None = None) -> Settings:
    """The `[compress]` settings (see `load_config`)."""
    return load_config(root).compress
