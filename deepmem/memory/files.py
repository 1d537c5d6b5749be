"""Where each scope's memory lives, a lock against concurrent writers, and cached reads of MEMORY.md."""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path

import msgspec
import xxhash

from deepmem.memory.entries import (
    TITLE,
    TYPES,
    Entry,
    Problem,
    normalise,
    parse_markdown,
    render_entry,
    render_markdown,
    render_with_ends,
)
from deepmem.project.config import memory_dir
from deepmem.types import InputError
from deepmem.vault.disk import PUBLIC
from deepmem.vault.redact import Redactor
from deepmem.vault.writer import BUILT_IN, insert_shared, write_shared

GLOBAL_ROOT_ENV = "DEEP_MEMORY_GLOBAL_ROOT"
SCOPES = ("project", "global")
NOTES_TITLE = "# Notes (automatic captures, waiting for /dream)"
EPISODES = "episodes.md"
EPISODES_TITLE = "# Episodes (one line per past session, found by memory_search)"
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


class MemoryFile(msgspec.Struct):
    """A parsed memory file with its bytes, content hash and lookup tables.

    `slots` holds, when the file is exactly the canonical render of its entries, where each
    type section ends: (byte offset, entry index). A new entry can then be inserted in place.
    """

    path: Path
    scope: str
    digest: str
    entries: list[Entry]
    problems: list[Problem]
    stat: tuple[int, int, int] = (0, 0, 0)
    data: bytes = b""
    by_id: dict[str, Entry] = {}
    by_text: dict[str, str] = {}
    slots: dict[str, tuple[int, int]] | None = None

    def __post_init__(self) -> None:
        self.by_id = {entry.id: entry for entry in self.entries}
        self.by_text = {normalise(entry.text): entry.id for entry in self.entries}


_cache: dict[Path, MemoryFile] = {}


def _stat_key(path: Path) -> tuple[int, int, int]:
    try:
        info = path.stat()
    except FileNotFoundError:
        return (0, 0, 0)
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _title(path: Path) -> str:
    return {"notes.md": NOTES_TITLE, EPISODES: EPISODES_TITLE}.get(path.name, TITLE)


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
    parsed = parse_markdown(data.decode("utf-8", errors="replace"), scope)
    for problem in parsed.problems:
        log.warning("%s:%d: %s, skipped: %s", path, problem.line, problem.reason, problem.text.strip()[:80])
    state = MemoryFile(path, scope, digest, parsed.entries, parsed.problems, stat, data)
    _cache[path] = state
    return state


def _slots(state: MemoryFile) -> dict[str, tuple[int, int]]:
    """Where each type section ends, or nothing when the file is not in canonical form."""
    if state.slots is None:
        state.slots = {}
        if not state.problems:
            data, ends = render_with_ends(state.entries, [], _title(state.path))
            if data == state.data:
                counts = Counter(entry.type for entry in state.entries)
                index = 0
                for kind in TYPES:
                    index += counts[kind]
                    if kind in ends:
                        state.slots[kind] = (ends[kind], index)
    return state.slots


def _mode(path: Path) -> int:
    """A file's permissions, to keep them across a rewrite (public for a new file)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return PUBLIC


def write_memory_file(state: MemoryFile, entries: list[Entry], redactor: Redactor = BUILT_IN) -> MemoryFile:
    """Atomically replace the file with the entries grouped by type, redacted whole; unreadable lines are kept."""
    entries = sorted(entries, key=lambda entry: TYPES.index(entry.type))
    text = render_markdown(entries, state.problems, _title(state.path))
    try:
        written = write_shared(state.path, text, redactor, _mode(state.path))
    except OSError as exc:
        raise InputError(f"{state.path}: cannot write: {exc.strerror or exc}") from None
    if written != text:
        _cache.pop(state.path, None)
        return read_memory_file(state.path, state.scope, verify=True)
    data = written.encode("utf-8")
    fresh = MemoryFile(state.path, state.scope, xxhash.xxh3_128_hexdigest(data), entries, state.problems,
                       _stat_key(state.path), data)
    _cache[state.path] = fresh
    return fresh


def append_entry(state: MemoryFile, entry: Entry, redactor: Redactor = BUILT_IN) -> MemoryFile:
    """Add a new entry at the end of its section: in place (same bytes as a full render), else by a rewrite.

    The in-place path copies no tables: the cached state is updated after the write succeeded.
    """
    slot = _slots(state).get(entry.type)
    line = "\n" + render_entry(entry)
    if slot is None or redactor.text(line) != line:
        return write_memory_file(state, [*state.entries, entry], redactor)
    end, index = slot
    try:
        data = insert_shared(state.path, state.data, end, line, redactor, _mode(state.path))
    except OSError as exc:
        raise InputError(f"{state.path}: cannot write: {exc.strerror or exc}") from None
    grown = len(data) - len(state.data)
    state.stat = _stat_key(state.path)
    state.data, state.digest = data, xxhash.xxh3_128_hexdigest(data)
    state.entries.insert(index, entry)
    state.by_id[entry.id] = entry
    state.by_text[normalise(entry.text)] = entry.id
    for kind in TYPES[TYPES.index(entry.type):]:
        if kind in state.slots:
            state.slots[kind] = (state.slots[kind][0] + grown, state.slots[kind][1] + 1)
    return state
