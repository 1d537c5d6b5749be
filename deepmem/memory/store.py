"""Writing memories: store with dedup, import, forget, and automatic notes."""

from __future__ import annotations

import math
import os
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from deepmem.memory.entries import Entry, check_id, check_time, check_type, clean_text, new_id, normalise
from deepmem.memory.files import (
    MemoryFile,
    append_entry,
    read_memory_file,
    scope_dir,
    write_memory_file,
)
from deepmem.memory.staleness import remember_hashes
from deepmem.memory.tokenize import cached_tokens
from deepmem.project.folder import Project
from deepmem.types import InputError
from deepmem.vault.disk import locked

NEAR_DUPLICATE = 0.8
"""Token-set Jaccard similarity at or above which two entries count as near-duplicates."""


class Outcome(msgspec.Struct, frozen=True):
    """What a store did: `stored`, `merged` (into an existing entry) or `refused`."""

    status: str
    entry: Entry
    message: str


def now_text() -> str:
    """The current UTC time, to the minute, as stored in MEMORY.md."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%MZ")


def memory_path(root: str | os.PathLike[str], scope: str) -> Path:
    """MEMORY.md of a scope."""
    return scope_dir(root, scope) / "MEMORY.md"


class DedupIndex:
    """Token sets of a file's entries and which entries hold each token, for near-duplicate lookups."""

    def __init__(self, state: MemoryFile) -> None:
        self.digest = state.digest
        self.sets: dict[str, frozenset[str]] = {}
        self.texts: dict[str, str] = {}
        self.holders: dict[str, set[str]] = {}
        self.sync(state)

    def sync(self, state: MemoryFile) -> None:
        """Catch up with the file as it is now (another process may have written it): only what changed."""
        for entry_id in [entry_id for entry_id in self.texts if entry_id not in state.by_id]:
            self.remove(entry_id)
        for entry in state.entries:
            if self.texts.get(entry.id) != entry.text:
                self.remove(entry.id)
                self.add(entry)
        self.digest = state.digest

    def add(self, entry: Entry) -> None:
        """Index one entry's tokens."""
        tokens = frozenset(cached_tokens(entry.text))
        self.sets[entry.id] = tokens
        self.texts[entry.id] = entry.text
        for token in tokens:
            self.holders.setdefault(token, set()).add(entry.id)

    def remove(self, entry_id: str) -> None:
        """Forget one entry's tokens."""
        self.texts.pop(entry_id, None)
        for token in self.sets.pop(entry_id, ()):
            self.holders[token].discard(entry_id)

    def nearest(self, tokens: frozenset[str]) -> tuple[str, float] | None:
        """The most similar entry at or above NEAR_DUPLICATE (prefix filter on the rarest tokens)."""
        if not tokens:
            return None
        rarest = sorted(tokens, key=lambda token: (len(self.holders.get(token, ())), token))
        prefix = rarest[: len(tokens) - math.ceil(NEAR_DUPLICATE * len(tokens)) + 1]
        candidates = sorted({entry_id for token in prefix for entry_id in self.holders.get(token, ())})
        best: tuple[str, float] | None = None
        for entry_id in candidates:
            other = self.sets[entry_id]
            score = len(tokens & other) / len(tokens | other)
            if score >= NEAR_DUPLICATE and (best is None or score > best[1]):
                best = (entry_id, score)
        return best


_dedup: dict[Path, DedupIndex] = {}


def _dedup_index(state: MemoryFile) -> DedupIndex:
    index = _dedup.get(state.path)
    if index is None:
        index = _dedup[state.path] = DedupIndex(state)
    elif index.digest != state.digest:
        index.sync(state)
    return index


def _brief(entry: Entry) -> str:
    text = entry.text.split("\n", 1)[0]
    return f"[{entry.id}] {text[:80]}{'…' if len(text) > 80 else ''}"


def store(root: Project, text: str, kind: str = "note", scope: str = "project",
          time: str | None = None) -> Outcome:
    """Store one memory; exact duplicates are refused, near-duplicates merged or refused."""
    text, kind = root.redactor.text(clean_text(text)), check_type(kind)
    if kind == "episode":
        raise InputError("episodes are written by checkpoints, one per session; store a decision, constraint, "
                         "gotcha, fact or note")
    path = memory_path(root, scope)
    with locked(path.parent):
        state = read_memory_file(path, scope, verify=True)
        same = state.by_text.get(normalise(text))
        if same is not None:
            existing = state.by_id[same]
            return Outcome("refused", existing, f"already stored as {_brief(existing)}")
        dedup = _dedup_index(state)
        tokens = frozenset(cached_tokens(text))
        near = dedup.nearest(tokens)
        stamp = check_time(time) if time is not None else now_text()
        if near is not None:
            existing = state.by_id[near[0]]
            if not tokens > dedup.sets[existing.id]:
                return Outcome("refused", existing, f"near-duplicate ({near[1]:.2f}) of {_brief(existing)}")
            entry = Entry(existing.id, kind, text, stamp, scope)
            state = write_memory_file(state, [entry if old.id == existing.id else old for old in state.entries],
                                      root.redactor)
            dedup.remove(existing.id)
            status, message = "merged", f"merged into {_brief(existing)} (the new text adds to it)"
        else:
            entry = Entry(new_id(text, state.by_id), kind, text, stamp, scope)
            state = append_entry(state, entry, root.redactor)
            status, message = "stored", f"stored as [{entry.id}]"
        dedup.add(entry)
        dedup.digest = state.digest
    if scope == "project":
        remember_hashes(root, [entry])
    return Outcome(status, entry, message)


def import_entries(root: Project, items: list[Entry], scope: str = "project",
                   dedup: bool = False) -> dict[str, int]:
    """Add many entries in one write; each keeps its id (replacing an entry with that id)."""
    path = memory_path(root, scope)
    counts = {"imported": 0, "replaced": 0, "skipped": 0}
    redactor = root.redactor
    with locked(path.parent):
        state = read_memory_file(path, scope, verify=True)
        entries = list(state.entries)
        positions = {entry.id: index for index, entry in enumerate(entries)}
        texts = dict(state.by_text) if dedup else {}
        for item in items:
            try:
                entry = msgspec.structs.replace(item, id=check_id(item.id), type=check_type(item.type),
                                                text=redactor.text(clean_text(item.text)), time=check_time(item.time), scope=scope)
            except InputError as exc:
                raise InputError(f"entry {item.id!r}: {exc}") from None
            if dedup and normalise(entry.text) in texts:
                counts["skipped"] += 1
                continue
            texts[normalise(entry.text)] = entry.id
            if entry.id in positions:
                entries[positions[entry.id]] = entry
                counts["replaced"] += 1
            else:
                positions[entry.id] = len(entries)
                entries.append(entry)
                counts["imported"] += 1
        write_memory_file(state, entries, redactor)
    return counts


def forget_ids(root: str | os.PathLike[str], ids: list[str], scope: str = "project") -> list[Entry]:
    """Remove entries by id; returns the removed entries (unknown ids are ignored)."""
    path = memory_path(root, scope)
    with locked(path.parent):
        state = read_memory_file(path, scope, verify=True)
        gone = [state.by_id[entry_id] for entry_id in dict.fromkeys(ids) if entry_id in state.by_id]
        if gone:
            dropped = {entry.id for entry in gone}
            write_memory_file(state, [entry for entry in state.entries if entry.id not in dropped])
    return gone


def add_notes(root: Project, items: list[tuple[str, str]], source: str,
              time: str | None = None) -> list[Entry]:
    """Append automatic captures, (type, text) each, to notes.md in one write; exact repeats are skipped."""
    path = scope_dir(root, "project") / "notes.md"
    label = check_time(" ".join(source.split())[:40] or "auto")
    stamp = f"{check_time(time) if time is not None else now_text()} · {label}"
    with locked(path.parent):
        state = read_memory_file(path, "project", verify=True)
        taken, known, added = dict(state.by_id), set(state.by_text), []
        redact = root.redactor
        for kind, text in items:
            text, kind = redact.text(clean_text(text)), check_type(kind)
            if normalise(text) in known:
                continue
            note = Entry(new_id(text, taken), kind, text, stamp, "project")
            taken[note.id] = note
            known.add(normalise(text))
            added.append(note)
        if added:
            write_memory_file(state, [*state.entries, *added], redact)
    return added
