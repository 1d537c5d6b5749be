"""What an entry's form says: a leading name, and whether it asks rather than tells.

An entry that starts with a name and a colon ("Caroline: …", "Alice Smith: …") is said by,
or about, that name; a query naming it prefers those entries.

A conversation stored turn by turn, or notes kept per person or per component, start each
entry with such a label; questions name the person first ("What did Caroline research?").
The label is matched only where the query writes it with its capitals, so a lowercase
word in a query ("note") never matches a "Note:" label.
"""

from __future__ import annotations

import re

import numpy as np

from deepmem.memory.entries import Entry
from deepmem.memory.tokenize import tokenize

LEADING_NAME = re.compile(r"\s*([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30}){0,2}):\s")
"""One to three capitalised words, then a colon and a space, at the start of an entry's text."""
CAPITALISED = re.compile(r"\b[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30}){0,2}")
"""Runs of capitalised words in a query; every sub-run of them is a candidate name."""
MAX_NAME_WORDS = 3
TRAILING_ASIDE = re.compile(r"\s*\([^()]*\)\s*$")


def asks(text: str) -> bool:
    """The entry's text, a trailing parenthesis aside, ends with a question mark: it asks, it does not tell."""
    return TRAILING_ASIDE.sub("", text).rstrip().endswith(("?", "？"))


def leading_name(text: str) -> str:
    """The name an entry's text starts with (`Caroline: …` → `Caroline`), or ''."""
    found = LEADING_NAME.match(text)
    return found.group(1) if found else ""


def query_names(query: str) -> set[str]:
    """Every run of one to three capitalised words in a query, with any trailing 's dropped."""
    names: set[str] = set()
    for run in CAPITALISED.findall(query):
        words = [re.sub(r"'s$|[.'-]+$", "", word) for word in run.split(" ")]
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + MAX_NAME_WORDS) + 1):
                name = " ".join(words[start:end])
                if name:
                    names.add(name)
    return names


class Labels:
    """Per leading name, the rows of the entries that start with it; per entry, whether it asks."""

    def __init__(self, entries: list[Entry]) -> None:
        self.count = len(entries)
        rows: dict[str, list[int]] = {}
        for row, entry in enumerate(entries):
            name = leading_name(entry.text)
            if name:
                rows.setdefault(name, []).append(row)
        self.rows = {name: np.asarray(found, dtype=np.int64) for name, found in rows.items()}
        self.words = {word for name in self.rows for word in tokenize(name)}
        """The search tokens of every leading name."""
        self.asks = np.asarray([asks(entry.text) for entry in entries], dtype=np.float64)
        """Per entry, 1.0 when it is a question."""

    def named(self, query: str) -> np.ndarray:
        """Rows of the entries whose leading name the query names (sorted, maybe empty)."""
        found = [self.rows[name] for name in query_names(query) & self.rows.keys()] if self.rows else []
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def matches(self, query: str) -> np.ndarray:
        """Per entry, 1.0 when its leading name is named in the query, else 0.0."""
        matched = np.zeros(self.count, dtype=np.float64)
        matched[self.named(query)] = 1.0
        return matched
