"""Where each scope's memory lives, a lock against concurrent writers, and cached reads of MEMORY.md."""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import xxhash

from deepmem.config import memory_dir
from deepmem.memory.entries import (
    HEADINGS,
    TITLE,
    TYPES,
    Entry,
    Problem,
    normalise,
    parse_markdown,
    render_entry,
    render_markdown,
)
from deepmem.sessionio import atomic_write
from deepmem.types import InputError

GLOBAL_ROOT_ENV = "DEEP_MEMORY_GLOBAL_ROOT"
SCOPES = ("project", "global")
NOTES_TITLE = "# Notes (automatic captures, waiting for /dream)"
log = logging.getLogger("deepmem.memory")


def global_dir() -> Path:
    """The global memory folder: DEEP_MEMORY_GLOBAL_ROOT or ~/.local/share/opencode/deep-memory/."""
    configured = os.environ.get(GLOBAL_ROOT_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".local/share/opencode/deep-memory"


def scope_dir(root: str | os.PathLike[str], scope: str) -> Path:
    """The folder holding MEMORY.md, notes.md and index/ for one scope."""
    if scope == "project":
        return memory_dir(root)
    if scope == "global":
        return global_dir()
    raise InputError(f"unknown scope {scope!r}; choose project or global")


def scopes_of(scope: str) -> tuple[str, ...]:
    """The scopes a `--scope` value names (`all` = project and global)."""
    if scope == "all":
        return SCOPES
    if scope not in SCOPES:
        raise InputError(f"unknown scope {scope!r}; choose project, global or all")
    return (scope,)


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive flock on `folder/.lock` (other deepmem writers wait)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class MemoryFile(msgspec.Struct):
    """A parsed memory file with its content hash and lookup tables."""

    path: Path
    scope: str
    digest: str
    entries: list[Entry]
    problems: list[Problem]
    stat: tuple[int, int, int] = (0, 0, 0)
    by_id: dict[str, Entry] = {}
    by_text: dict[str, str] = {}

    text: str = ""

    def __post_init__(self) -> None:
        if len(self.by_id) != len(self.entries):
            self.by_id = {entry.id: entry for entry in self.entries}
            self.by_text = {normalise(entry.text): entry.id for entry in self.entries}


_cache: dict[Path, MemoryFile] = {}


def _stat_key(path: Path) -> tuple[int, int, int]:
    try:
        info = path.stat()
    except FileNotFoundError:
        return (0, 0, 0)
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def read_memory_file(path: Path, scope: str, verify: bool = False) -> MemoryFile:
    """The parsed file, re-parsed only when it changed; unreadable lines are logged once.

    A change is seen from (mtime, size, inode); `verify` (used by writers, under the lock)
    also compares the content hash, since coarse timestamps can hide a quick rewrite.
    """
    stat = _stat_key(path)
    cached = _cache.get(path)
    if cached is not None and cached.stat == stat and stat != (0, 0, 0) and not verify:
        return cached
    try:
        data = path.read_bytes() if stat != (0, 0, 0) else b""
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    digest = xxhash.xxh3_128_hexdigest(data)
    if cached is not None and cached.digest == digest:
        cached.stat = stat
        return cached
    text = data.decode("utf-8", errors="replace")
    parsed = parse_markdown(text, scope)
    for problem in parsed.problems:
        log.warning("%s:%d: %s, skipped: %s", path, problem.line, problem.reason, problem.text.strip()[:80])
    state = MemoryFile(path, scope, digest, parsed.entries, parsed.problems, stat, text=text)
    _cache[path] = state
    return state


def _appended_text(state: MemoryFile, entry: Entry) -> str | None:
    """The file text with one entry added at the end of its section (same bytes as a full render)."""
    heading = f"\n## {HEADINGS[entry.type]}\n\n"
    start = state.text.find(heading)
    if start < 0 or state.problems or not state.text.endswith("\n"):
        return None
    end = state.text.find("\n\n## ", start + len(heading))
    end = len(state.text) - 1 if end < 0 else end
    return state.text[:end] + "\n" + render_entry(entry) + state.text[end:]


def write_memory_file(state: MemoryFile, entries: list[Entry], appended: Entry | None = None) -> MemoryFile:
    """Atomically replace the file with the entries grouped by type; unreadable lines are kept.

    With `appended` (a new entry, also last in `entries`), its line is inserted in place.
    """
    title = NOTES_TITLE if state.path.name == "notes.md" else TITLE
    text = _appended_text(state, appended) if appended is not None else None
    by_id, by_text = {}, {}
    if text is not None:
        rank = TYPES.index(appended.type)
        position = sum(1 for entry in state.entries if TYPES.index(entry.type) <= rank)
        entries = [*state.entries[:position], appended, *state.entries[position:]]
        by_id = {**state.by_id, appended.id: appended}
        by_text = {**state.by_text, normalise(appended.text): appended.id}
    else:
        entries = sorted(entries, key=lambda entry: TYPES.index(entry.type))
        text = render_markdown(entries, state.problems, title)
    data = text.encode("utf-8")
    try:
        mode = state.path.stat().st_mode & 0o777 if state.path.exists() else 0o644
        atomic_write(state.path, data)
        state.path.chmod(mode)
    except OSError as exc:
        raise InputError(f"{state.path}: cannot write: {exc.strerror or exc}") from None
    digest = xxhash.xxh3_128_hexdigest(data)
    fresh = MemoryFile(state.path, state.scope, digest, entries, state.problems, _stat_key(state.path),
                       by_id, by_text, text)
    _cache[state.path] = fresh
    return fresh
