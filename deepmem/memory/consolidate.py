"""One deterministic consolidation pass over memory entries: merge, supersede, cap.

Pure: entries in, a `Plan` out (what stays, what moves to history or the archive, and why).
Only the entries' own times are read, never the clock. Entries without a time are
hand-written: they are never merged away, superseded or archived.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

import msgspec

from deepmem.memory.age import time_key
from deepmem.memory.entries import TYPES, Entry, normalise
from deepmem.memory.tokenize import cached_tokens

NEAR_DUPLICATE = 0.8
"""Token-set Jaccard similarity at or above which two entries say the same thing."""
CONTAINED = 0.9
"""Or: this share of the smaller entry's tokens (at least MIN_SHARED) is in the other. A character
added to a Chinese sentence changes two of its bigrams, which Jaccard alone counts too harshly."""
MIN_SHARED = 4
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
NAME = re.compile(r"`([^`\n]+)`|\b([A-Za-z_]\w*(?:[._]\w+)+|[a-z]+[A-Z]\w*)\b")
"""A name from the code: a span in backticks, a dotted or snake_case name, camelCase."""
ALSO = re.compile(r" \(also: [^()]*\)$")
"""What a merged insight appends: the names of the functions or files it also holds for."""
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
    """Entries that stay in MEMORY.md, the changes that moved others out, and contradictions left for the user."""

    kept: list[Entry]
    changes: list[Change]
    conflicts: list[tuple[Entry, Entry]] = []
    """Pairs that change the same subject at the same time: both stay, since neither is newer."""


def stamp(entry: Entry) -> str:
    """The entry's own time as a sortable text, '' when it has none (hand-written)."""
    return time_key(entry.time)


def _tokens(entry: Entry) -> frozenset[str]:
    return _token_set(entry.text)


@lru_cache(maxsize=1 << 16)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(cached_tokens(text))


def _names(text: str) -> list[str]:
    """Code names of a text, in order, each once."""
    return list(dict.fromkeys(match.group(1) or match.group(2) for match in NAME.finditer(text)))


@lru_cache(maxsize=1 << 14)
def _prose(text: str) -> frozenset[str]:
    """Tokens of a text without its code names: what it says, whatever it says it about."""
    return frozenset(cached_tokens(NAME.sub(" ", ALSO.sub("", text))))


def same_insight(older: Entry, newer: Entry) -> bool:
    """The same statement about other code: the words agree once code names are set aside, the names differ."""
    old, new = _prose(older.text), _prose(newer.text)
    return (len(old & new) >= MIN_SHARED and _similar(old, new) >= NEAR_DUPLICATE
            and not set(_names(newer.text)) <= set(_names(older.text)))


def naming(kept: str, absorbed: str) -> str:
    """The kept text, also naming the code names of an absorbed statement of the same insight."""
    known = set(_names(kept))
    extra = [name for name in _names(absorbed) if name not in known]
    if not extra:
        return kept
    listed = ALSO.search(kept)
    names = [*(_names(listed.group(0)) if listed else []), *extra]
    return ALSO.sub("", kept) + " (also: " + ", ".join(f"`{name}`" for name in names) + ")"


def _contained(older: frozenset[str], newer: frozenset[str]) -> bool:
    """Nearly all of the smaller token set is in the larger one."""
    shared = len(older & newer)
    return shared >= MIN_SHARED and shared >= CONTAINED * min(len(older), len(newer))


def _similar(older: frozenset[str], newer: frozenset[str]) -> float:
    return len(older & newer) / len(older | newer) if older | newer else 1.0


def _value_changed(older: frozenset[str], newer: frozenset[str]) -> bool:
    """Two or more words shared, and only a value differs: one word each side, or numbers only."""
    gone, added = older - newer, newer - older
    if len(older & newer) < 2 or not (gone or added):
        return False
    return (len(gone) == 1 and len(added) == 1) or all(any(char.isdigit() for char in token) for token in gone | added)


def changes_subject(newer: Entry, older: Entry) -> bool:
    """Same type, same subject, and the newer text changes it (a change word, or a value swapped)."""
    old, new = _tokens(older), _tokens(newer)
    if newer.type != older.type or not old or len(old & new) < SAME_SUBJECT * len(old):
        return False
    return bool(CHANGE.search(newer.text)) or _value_changed(old, new)


def supersedes(newer: Entry, older: Entry) -> bool:
    """A strictly newer entry of the same type about the same subject that changes it."""
    return bool(stamp(older)) and stamp(newer) > stamp(older) and changes_subject(newer, older)


def _one_round(entries: list[Entry], conflicts: list[tuple[Entry, Entry]]) -> tuple[list[Entry], list[Change]]:
    """Merge duplicates into the oldest entry and drop superseded ones, oldest first.

    A kept entry is filed under its rarest tokens, enough of them that any entry repeating
    SAME_SUBJECT of its tokens (so any duplicate) holds one: a large store is not compared
    pair by pair.
    """
    order = sorted(range(len(entries)), key=lambda i: (stamp(entries[i]), i))
    position = {index: rank for rank, index in enumerate(order)}
    frequency = Counter(token for entry in entries for token in _tokens(entry))
    kept: dict[int, Entry] = {}
    holders: dict[str, list[int]] = {}
    texts: dict[str, int] = {}
    changes: list[Change] = []
    for index in order:
        entry = entries[index]
        tokens = _tokens(entry)
        nearby = {i for token in tokens for i in holders.get(token, ())}
        nearby.add(texts.get(normalise(entry.text), -1))
        absorbed = False
        for other_index in sorted(nearby & kept.keys(), key=position.__getitem__):
            other = kept[other_index]
            known = _tokens(other)
            if other.type != entry.type or len(known & tokens) < SAME_SUBJECT * len(known):
                continue
            score = _similar(known, tokens)
            exact = normalise(other.text) == normalise(entry.text)
            if not exact and supersedes(entry, other):
                changes.append(Change("superseded", other, entry.id, f"newer entry on the same subject ({entry.time})"))
                del kept[other_index]
            elif (exact or score >= NEAR_DUPLICATE or _contained(known, tokens) or same_insight(other, entry)) \
                    and stamp(entry):
                if tokens > known and stamp(other):
                    # The older entry takes the newer wording: its own text is what leaves MEMORY.md.
                    kept[other_index] = msgspec.structs.replace(other, text=entry.text, time=entry.time)
                    _hold(holders, texts, kept[other_index], other_index, frequency)
                    why = f"near-duplicate ({score:.2f}); its text replaced by the newer [{entry.id}], which adds words"
                    changes.append(Change("merged", other, other.id, why))
                elif same_insight(other, entry):
                    kept[other_index] = msgspec.structs.replace(other, text=naming(other.text, entry.text))
                    _hold(holders, texts, kept[other_index], other_index, frequency)
                    changes.append(Change("merged", entry, other.id, "the same insight about other code"))
                else:
                    changes.append(Change("merged", entry, other.id, EXACT if exact else f"near-duplicate ({score:.2f})"))
                absorbed = True
                break
            elif stamp(entry) and stamp(entry) == stamp(other) and changes_subject(entry, other):
                conflicts.append((other, entry))
        if not absorbed:
            kept[index] = entry
            _hold(holders, texts, entry, index, frequency)
    return [kept[i] for i in sorted(kept)], changes


def _hold(holders: dict[str, list[int]], texts: dict[str, int], entry: Entry, index: int,
          frequency: Counter[str]) -> None:
    """File a kept entry under its rarest tokens and its normalised text."""
    tokens = _tokens(entry)
    rarest = sorted(tokens, key=lambda token: (frequency[token], token))
    for token in rarest[: len(tokens) - math.ceil(SAME_SUBJECT * len(tokens)) + 1]:
        holders.setdefault(token, []).append(index)
    texts[normalise(entry.text)] = index


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
        conflicts: list[tuple[Entry, Entry]] = []
        entries, found = _one_round(entries, conflicts)
        changes += found
        if not found:
            break
    entries, archived = _cap(entries, cap)
    return Plan(entries, changes + archived, conflicts)
