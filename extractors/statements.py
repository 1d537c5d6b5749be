"""Sentences of the conversation that match a pattern (shared by decisions and constraints)."""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec

from deepmem.extractors.calls import Timeline
from deepmem.extractors.requests import WRAPPERS

FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\u3400-\u9fff])|(?<=[。！？；])|\n+")
LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
MAX_SENTENCE = 300
MIN_SENTENCE = 12


class Statement(msgspec.Struct, frozen=True):
    """A sentence someone said, with who said it and when."""

    text: str
    role: str
    step: int


@lru_cache(maxsize=4096)
def sentences(text: str) -> tuple[str, ...]:
    """Prose sentences of a text: code fences dropped, list marks and extra spaces removed."""
    pieces = (" ".join(LIST_MARK.sub("", piece).split()) for piece in SENTENCE_END.split(FENCE.sub("\n", text)))
    return tuple(s for s in pieces if MIN_SENTENCE <= len(s) <= MAX_SENTENCE and _mostly_prose(s))


def _mostly_prose(sentence: str) -> bool:
    symbols = sum(1 for char in sentence if char in "{}[]();=<>$|\\")
    return symbols * 8 < len(sentence)


def find_statements(timeline: Timeline, pattern: re.Pattern[str], roles: frozenset[str]) -> list[Statement]:
    """Distinct sentences by the given roles that match the (lowercase) pattern once lowercased (of a user's text,
    not what the agent wrote into it); a repeat keeps its newest position. Lowercase matching is about twice as fast
    as `(?i)`."""
    found: dict[str, Statement] = {}
    for prose in timeline.prose:
        if prose.role not in roles or not pattern.search(prose.text.lower()):
            continue
        text = WRAPPERS.sub("", prose.text) if prose.role == "user" else prose.text
        for sentence in sentences(text):
            if pattern.search(sentence.lower()):
                key = sentence.casefold().rstrip(".!。")
                found.pop(key, None)
                found[key] = Statement(sentence, prose.role, prose.step)
    return list(found.values())

