"""`/dream`: fold notes.md into MEMORY.md and consolidate it in one deterministic pass.

Notes (checkpoint candidates, automatic captures) join the stored entries; duplicates
merge into the older entry, a newer entry on the same subject supersedes the older one,
and above the entry cap the least useful entries move out. Whatever leaves MEMORY.md goes
to `history.md` (merged, superseded: with a pointer to the entry that replaced it) or
`archive.md` (over the cap), never nowhere. Folded notes leave notes.md (invalid ones stay
there). A second run changes nothing.
"""

from __future__ import annotations

import os
from typing import Any

from deepmem.memory.aside import ARCHIVE, HISTORY, check_utf8, retired_texts, set_aside
from deepmem.memory.consolidate import Plan, consolidate
from deepmem.memory.entries import Entry, clean_text, new_id, normalise
from deepmem.memory.files import read_memory_file, write_memory_file
from deepmem.memory.staleness import remember_hashes
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.types import DeepmemError
from deepmem.vault.disk import locked

NOTES, MEMORY = "notes.md", "MEMORY.md"
SHOWN_CHANGES = 20


def entry_cap(root: Project) -> int:
    """`[memory] max_entries` of the settings (checked when they load), default 200."""
    return root.config.memory.max_entries


def note_entry(note: Entry, taken: dict[str, Any]) -> Entry | None:
    """A note as a memory entry: its own time without the source label, a fresh id; None when invalid."""
    try:
        text = clean_text(note.text)
    except DeepmemError:
        return None
    return Entry(new_id(text, taken), note.type, text, note.time.split(" · ", 1)[0].strip(), "project")


def dream(root: str | os.PathLike[str]) -> dict[str, Any]:
    """Fold notes and consolidate MEMORY.md; return counts and one line per change."""
    folder = memory_dir(root)
    cap = entry_cap(root)
    with locked(folder):
        memory = read_memory_file(folder / MEMORY, "project", verify=True)
        check_utf8(memory.path, memory.data)
        notes = read_memory_file(folder / NOTES, "project", verify=True)
        retired = retired_texts(folder)
        taken: dict[str, Any] = dict(memory.by_id)
        fresh, invalid = [], []
        for note in notes.entries:
            entry = note_entry(note, taken)
            if entry is None:
                invalid.append(note)
                continue
            if normalise(entry.text) in retired:
                continue
            taken[entry.id] = entry
            fresh.append(entry)
        plan = consolidate([*memory.entries, *fresh], cap)
        if plan.kept == memory.entries and len(notes.entries) == len(invalid):
            return summary(0, plan, len(invalid))
        set_aside(folder, plan.changes)
        write_memory_file(memory, plan.kept)
        if len(notes.entries) > len(invalid):
            write_memory_file(notes, invalid)
    remember_hashes(root, plan.kept)
    kept_ids = {entry.id for entry in plan.kept}
    return summary(sum(entry.id in kept_ids for entry in fresh), plan, len(invalid))


def summary(stored: int, plan: Plan, invalid: int) -> dict[str, Any]:
    """Counts per kind of change, the changes as lines, and the contradictions left to the user."""
    lines = [f"{c.action} [{c.entry.id}]{f' into [{c.into}]' if c.into else ''}: {c.why} — {c.entry.text[:60]}"
             for c in plan.changes]
    counts = {action: sum(c.action == action for c in plan.changes) for action in ("merged", "superseded", "archived")}
    conflicts = [f"conflict: [{a.id}] and [{b.id}] change the same subject at the same time ({a.time}); both kept, "
                 "edit MEMORY.md to keep one" for a, b in plan.conflicts]
    return {"stored": stored, **counts, "invalid": invalid, "changes": lines, "conflicts": conflicts}


def describe_dream(summary: dict[str, Any]) -> str:
    """A line of counts, then what changed and why."""
    head = (f"dream: {summary['stored']} new memories in MEMORY.md, {summary['merged']} merged, "
            f"{summary['superseded']} superseded (kept in {HISTORY}), {summary['archived']} archived "
            f"(in {ARCHIVE}), {summary['invalid']} invalid notes (left in {NOTES})")
    shown = summary["conflicts"] + summary["changes"]
    lines = [f"- {line}" for line in shown[:SHOWN_CHANGES]]
    more = len(shown) - SHOWN_CHANGES
    return "\n".join([head, *lines, *([f"- … {more} more"] if more > 0 else [])])
