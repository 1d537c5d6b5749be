"""`/dream`: fold notes.md and the session checkpoints into MEMORY.md, oldest first, so newer wins.

The memory store dedups exact and near-duplicate texts (merging them into the existing
entry), so running it again adds nothing new.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any

from deepmem.checkpoints.render import checkpoint_sections
from deepmem.checkpoints.store import session_checkpoints
from deepmem.memory import api as memory
from deepmem.types import DeepmemError

SUFFIX = re.compile(r" \((?:step \d+|user|assistant)\)$")
FOLDED_SECTIONS = {"Key decisions": "decision", "Constraints": "constraint"}


def dream_items(root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(type, text) to fold: decisions and constraints of each checkpoint (oldest first), then notes."""
    items: list[tuple[str, str]] = []
    for markdown in session_checkpoints(root):
        sections = checkpoint_sections(markdown)
        for title, kind in FOLDED_SECTIONS.items():
            items += [(kind, SUFFIX.sub("", text)) for text in sections.get(title, []) if not text.startswith("… ")]
    items += [(note["type"], note["text"]) for note in memory.notes(root)]
    return items


def dream(root: str | os.PathLike[str]) -> dict[str, Any]:
    """Store every item through the memory API; count stored, merged, refused (known) and invalid."""
    outcomes: Counter[str] = Counter()
    for kind, text in dream_items(root):
        try:
            outcomes[memory.store(root, text, kind, "project")["status"]] += 1
        except DeepmemError:
            outcomes["invalid"] += 1
    return {name: outcomes[name] for name in ("stored", "merged", "refused", "invalid")}


def describe_dream(summary: dict[str, Any]) -> str:
    """One line for the model."""
    return (
        f"dream: {summary['stored']} new memories in MEMORY.md, {summary['merged']} merged into existing ones, "
        f"{summary['refused']} already known, {summary['invalid']} invalid"
    )
