"""One deterministic consolidation pass over memory entries: merge, supersede, cap.

Pure: entries in, a `Plan` out (what stays, what moves to history or the archive, and why).
Only the entries' own times are read, never the clock. Entries without a time are
hand-written: they are never merged away, superseded or archived.
"""

from __future__ import annotations

import re

import msgspec

from deepmem.memory.age import time_key
from deepmem.memory.entries import TYPES, Entry, normalise
from deepmem.memory.tokenize import cached_tokens

NEAR_DUPLICATE = 0.8
"""Token-set Jaccard similarity at or above which two entries say the same thing."""
SAME_SUBJECT = 0.5
"""Share of the older entry's tokens a newer one must repeat to be about the same subject."""
CHANGE = re.compile(
    r"\b(?:now|instead|no longer|anymore|switched|replaced|replaces|moved to|migrated|from now on|not any more)\b"
    r"|改用|改为|换成|不再|现在|取代|替换",
    re.I,
)
"""Words by which a newer entry says that an older one no longer holds."""
EXACT = "exact duplicate"
"""Why an entry merged whose words another already holds (nothing of it is lost, so it is not kept aside)."""
MAX_ROUNDS = 8
USEFUL = {kind: rank for rank, kind in enumerate(reversed(TYPES))}
"""Constraints are the most useful to keep under the cap, then decisions, gotchas, facts, notes."""


class Change(msgspec.Struct, frozen=True):
    """One thing consolidation did to an entry, and why."""

    action: str
    """merged, superseded or archived."""
    entry: Entry
    into: str = ""
    """The id that replaces it (merged, superseded)."""
    why: str = ""


class Plan(msgspec.Struct, frozen=True):
    """Entries that stay in MEMORY.md, and the changes that moved others out."""

    kept: list[Entry]
    changes: list[Change]


def stamp(entry: Entry) -> str:
    """The entry's own time as a sortable text, '' when it has none (hand-written)."""
    return time_key(entry.time)


def _tokens(entry: Entry) -> frozenset[str]:
    return frozenset(cached_tokens(entry.text))


def _similar(older: frozenset[str], newer: frozenset[str]) -> float:
    return len(older & newer) / len(older | newer) if older | newer else 1.0


def _numbers_only(older: frozenset[str], newer: frozenset[str]) -> bool:
    """The two share at least three tokens and differ in numbers only (a version or a value changed)."""
    differ = older ^ newer
    return len(older & newer) >= 3 and bool(differ) and all(any(char.isdigit() for char in token) for token in differ)


def supersedes(newer: Entry, older: Entry) -> bool:
    """A strictly newer entry of the same type about the same subject that changes it."""
    if newer.type != older.type or not stamp(older) or stamp(newer) <= stamp(older):
        return False
    old, new = _tokens(older), _tokens(newer)
    if not old:
        return False
    shared = len(old & new) / len(old)
    return shared >= SAME_SUBJECT and (bool(CHANGE.search(newer.text)) or _numbers_only(old, new))


def _one_round(entries: list[Entry]) -> tuple[list[Entry], list[Change]]:
    """Merge duplicates into the oldest entry and drop superseded ones, oldest first."""
    order = sorted(range(len(entries)), key=lambda i: (stamp(entries[i]), i))
    kept: dict[int, Entry] = {}
    changes: list[Change] = []
    for index in order:
        entry = entries[index]
        tokens = _tokens(entry)
        absorbed = False
        for other_index, other in list(kept.items()):
            score = _similar(_tokens(other), tokens)
            exact = normalise(other.text) == normalise(entry.text)
            if (exact or score >= NEAR_DUPLICATE) and other.type == entry.type and stamp(entry):
                grown = tokens > _tokens(other) and bool(stamp(other))
                if grown:
                    kept[other_index] = msgspec.structs.replace(other, text=entry.text, time=entry.time)
                why = EXACT if exact else f"near-duplicate ({score:.2f})" + (", adds words" if grown else "")
                changes.append(Change("merged", entry, other.id, why))
                absorbed = True
                break
            if supersedes(entry, other):
                changes.append(Change("superseded", other, entry.id, f"newer entry on the same subject ({entry.time})"))
                del kept[other_index]
        if not absorbed:
            kept[index] = entry
    return [kept[i] for i in sorted(kept)], changes


def _cap(entries: list[Entry], cap: int) -> tuple[list[Entry], list[Change]]:
    """Move the least useful timed entries out until at most `cap` remain (hand-written ones stay)."""
    extra = len(entries) - cap
    if extra <= 0:
        return entries, []
    timed = [i for i, entry in enumerate(entries) if stamp(entry)]
    timed.sort(key=lambda i: (USEFUL[entries[i].type], stamp(entries[i]), i))
    gone = set(timed[:extra])
    changes = [Change("archived", entries[i], "", f"over the cap of {cap} entries, least useful") for i in sorted(gone)]
    return [entry for i, entry in enumerate(entries) if i not in gone], changes


def consolidate(entries: list[Entry], cap: int) -> Plan:
    """Merge, supersede (until nothing changes), then cap; the same entries give the same plan."""
    changes: list[Change] = []
    for _ in range(MAX_ROUNDS):
        entries, found = _one_round(entries)
        changes += found
        if not found:
            break
    entries, archived = _cap(entries, cap)
    return Plan(entries, changes + archived)
