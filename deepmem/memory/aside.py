"""Entries that leave MEMORY.md go to history.md or archive.md with a pointer, never nowhere; a file
that is not UTF-8 is never rewritten."""

from __future__ import annotations

from pathlib import Path

import msgspec

from deepmem.memory.consolidate import EXACT, Change
from deepmem.memory.entries import Entry, normalise
from deepmem.memory.files import read_memory_file, write_memory_file
from deepmem.types import InputError

HISTORY, ARCHIVE = "history.md", "archive.md"
DESTINATION = {"merged": HISTORY, "superseded": HISTORY}
"""Where each kind of change goes; anything else (archived, stale, never retrieved) goes to the archive."""


POINTER = "\n→ "


def with_pointer(change: Change) -> Entry:
    """The entry as kept aside, with a line saying where it went and why."""
    into = f" into [{change.into}]" if change.into else ""
    return msgspec.structs.replace(change.entry, text=f"{change.entry.text}{POINTER}{change.action}{into}: {change.why}")


def retired_texts(folder: Path) -> set[str]:
    """Normalised texts of the entries in history.md (superseded or merged), without their pointer."""
    state = read_memory_file(folder / HISTORY, "project")
    return {normalise(entry.text.rsplit(POINTER, 1)[0]) for entry in state.entries}


def check_utf8(path: Path, data: bytes) -> None:
    """Refuse to rewrite a file that is not UTF-8: its bytes would come back changed."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 at byte {exc.start}; fix or convert it, nothing was changed") from None


def set_aside(folder: Path, changes: list[Change]) -> None:
    """Append the moved entries to history.md / archive.md (exact duplicates lose nothing: not kept)."""
    for name in (HISTORY, ARCHIVE):
        out = [with_pointer(change) for change in changes
               if DESTINATION.get(change.action, ARCHIVE) == name and change.why != EXACT]
        if out:
            state = read_memory_file(folder / name, "project", verify=True)
            write_memory_file(state, [*state.entries, *out])
