"""Contracts shared by every module: the message model, compressor results, errors, keys.

OpenCode messages arrive as plain decoded JSON. We keep that raw JSON for pass-through
(unknown fields and part types must survive untouched) and validate it once against the
typed views below, which name only the fields deepmem reads.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
import orjson
import xxhash

CACHE_VERSION = "1"
"""Hashed into every CCR key (`cache_key`). A key names an original, which no compressor change
alters, so this stays put; changing it would rename every stored original and every marker."""

Tier = Literal["low", "medium", "high"]
TIERS: tuple[Tier, ...] = ("low", "medium", "high")

Part = dict[str, Any]
Message = dict[str, Any]


class DeepmemError(Exception):
    """Root of every error deepmem raises on purpose; the CLI prints it as one line."""


class InputError(DeepmemError):
    """The input (file, JSON, shape) cannot be used."""


class UnknownKeyError(DeepmemError):
    """A CCR key that the store does not hold."""


class ConfigError(DeepmemError):
    """A configuration file or variable has a bad value."""


# Typed views: only the fields we read. msgspec ignores unknown fields while validating.


class MessageInfoView(msgspec.Struct):
    """The fields of `message.info` that deepmem reads."""

    role: Literal["user", "assistant"]
    id: str = ""
    sessionID: str = ""
    summary: Any = None


class PartView(msgspec.Struct):
    """The fields every part carries."""

    type: str
    id: str = ""
    text: Any = None
    synthetic: bool = False
    tool: str = ""
    state: dict[str, Any] | None = None


class MessageView(msgspec.Struct):
    """One OpenCode message: `{info, parts}`."""

    info: MessageInfoView
    parts: list[PartView]


class Facts(msgspec.Struct, frozen=True):
    """What compressors may know about the rest of the session, frozen at the boundary."""

    named_lines: frozenset[tuple[str, int]] = frozenset()
    """(path, line) pairs named by errors, tracebacks or greps at or before the boundary."""
    newer_call: dict[str, str] = {}
    """Part id of an older duplicate call → callID of its newest copy."""
    edit_steps: dict[str, tuple[tuple[str, int], ...]] = {}
    """File name → (path, last step that edited it) for each edited path of that name, up to
    the boundary (by name, so a read finds its edits without scanning them all)."""
    working_set: frozenset[str] = frozenset()
    """Part ids of the outputs the agent is still working on (`deepmem.transform.working_set`)."""
    whole_views: frozenset[str] = frozenset()
    """Of those, the file views kept whole: their files are being worked on."""
    replaced_runs: frozenset[str] = frozenset()
    """Part ids of the command runs a later run of the same command replaced (a test run again)."""


Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Tunable numbers ([compress]); defaults follow DESIGN.md, overridden by config.toml and DEEPMEM_*."""

    tail_steps: Annotated[int, msgspec.Meta(ge=0, le=1_000)] = 4
    batch_steps: Annotated[int, msgspec.Meta(ge=1, le=1_000)] = 10
    schedule: Literal["priced", "fixed"] = "priced"
    tier_medium_tokens: Positive = 50_000
    tier_high_tokens: Positive = 150_000
    context_window: Count = 0
    capture_cap_tokens: Count = 0
    """New file views above this are trimmed when first seen; 0: the budget of the views kept
    whole (`deepmem.history.whole_view_tokens`, a quarter of the window)."""
    capture_command_cap_tokens: Annotated[int, msgspec.Meta(ge=100)] = 500
    capture_input_cap_tokens: Annotated[int, msgspec.Meta(ge=100)] = 700
    tool_error_chars: Positive = 100
    ccr_disk_bytes: Count = 512 * 1024 * 1024
    ccr_memory_entries: Positive = 2_048
    cache_mark: bool = True
    """Where the provider reads its cache only at marks (Anthropic), mark the last text of the
    answering model at or before the boundary, so a jump reads the old steps up to it from the
    cache (`deepmem.transform.cache_mark`)."""


class Context(msgspec.Struct, frozen=True):
    """What a compressor knows besides the part itself."""

    age: int
    """Steps between the part's message and the boundary (never the moving current step)."""
    step: int
    """Assistant index (1-based) of the part's message; 0 for user messages before any step."""
    tier: Tier
    """Pressure tier of the history up to the boundary."""
    settings: Settings
    facts: Facts
    captured: bool = False
    """True for capture-time trimming of a new output inside the protected tail."""
    copied: frozenset[str] = frozenset()
    """Stripped lines of the message's tool inputs copied from earlier tool outputs (`deepmem.transform.copied`)."""


class SavedTotals(msgspec.Struct):
    """What compression saved over the whole history of one session, at its latest step: the
    toast, the bridge's stats reply, `sessions/<sid>/stats.json` and `deepmem stats`."""

    step: int = 0
    parts: int = 0
    compressed: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    cost_with: float = 0.0
    """Dollars the session's requests have cost so far with deepmem (estimated, whole requests;
    0 in a record from before the bills were kept)."""
    cost_without: float = 0.0
    """Dollars the same requests would have cost sent as recorded, without deepmem's additions."""


class SessionTotals(SavedTotals, kw_only=True):
    """One session's saved totals as `sessions/<sid>/stats.json` holds them: the totals and the session's id."""

    session: str


class Original(msgspec.Struct, frozen=True, gc=False):
    """An original text a compressor cut, stored in CCR under `key`."""

    key: str
    text: str


class Result(msgspec.Struct, frozen=True):
    """A compressor's answer: the replacement part and the originals its markers point to."""

    part: Part
    originals: tuple[Original, ...] = ()


def canonical_bytes(value: Any) -> bytes:
    """Deterministic bytes for hashing: UTF-8 for strings, sorted-key JSON otherwise."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        return value
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def cache_key(value: Any, compressor: str) -> str:
    """The one CCR key: xxh3-128 hex over canonical bytes + compressor name + CACHE_VERSION."""
    digest = xxhash.xxh3_128()
    digest.update(canonical_bytes(value))
    digest.update(b"\x00" + compressor.encode() + b"\x00" + CACHE_VERSION.encode())
    return digest.hexdigest()
