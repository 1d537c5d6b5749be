"""Copied lines: the lines of a tool input (a script, an edit) copied from an earlier tool output.

An agent's scratch scripts and tests copy project code it read before (a function's body
from a `grep -n -A`, a class from a `cat`), and its next scripts copy the same lines again.
When a long input is shortened, these lines stay: they are what the agent quotes next,
while the lines it wrote itself it can write again. Which lines of a message are copied
depends only on that message and the outputs before it, so it never changes later.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from deepmem.types import Message

COPIED_CHARS = 16
"""Shorter lines (`}`, `return x`) are everywhere and say nothing about where they came from."""
BLANK = r"[ \t\r\f\v]*"
TEXT = rf"(\S[^\n]{{{COPIED_CHARS - 2},}})(?<=\S){BLANK}$"
LONG_LINE = re.compile(rf"^{BLANK}{TEXT}", re.MULTILINE)
"""A line of at least `COPIED_CHARS` characters once stripped (the group: stripped)."""
LOCATED_LINE = re.compile(rf"^{BLANK}(?:[^\s:]*?[:-])?\d+[:\t-]{BLANK}{TEXT}", re.MULTILINE)
"""The same after the location a search or numbered listing puts before a line of a file:
`a.py:12:`, `a.py-13-`, `12:`, `12\\t` (the group: the file's line, stripped)."""
DIFF_SIGN = ("-", "+")
"""A line of a patch written in a heredoc starts with one of these before the file's own text."""


def long_lines(text: str) -> list[str]:
    """The stripped lines of a text long enough to be told apart (one regex pass: this runs on every output)."""
    return LONG_LINE.findall(text)


def output_lines(text: str) -> list[str]:
    """The long lines of an output, and each again without the location a search or listing puts before it."""
    return [*LONG_LINE.findall(text), *LOCATED_LINE.findall(text)]


def input_strings(inputs: Any) -> Iterator[str]:
    """The string values of a tool input, and those of the dicts in its lists (multiedit's `edits`)."""
    if not isinstance(inputs, dict):
        return
    for value in inputs.values():
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            yield from (text for item in value if isinstance(item, dict) for text in item.values() if isinstance(text, str))


def is_copied(line: str, seen: set[str]) -> bool:
    """True when a stripped input line, or the text after its patch sign, is a line seen in an output."""
    return line in seen or (line[:1] in DIFF_SIGN and line[1:].strip() in seen)


class CopiedLines:
    """The copied lines of each message of one history, folded in order and extended as it grows."""

    def __init__(self) -> None:
        self.digests: list[bytes | None] = []
        self.copied: list[frozenset[str]] = []
        self.seen: set[str] = set()
        """The long lines of every tool output folded so far."""
        self.batches: dict[tuple[int, int], tuple[frozenset[str], ...]] = {}
        """`kept` by message range."""

    def matches(self, digests: list[bytes | None]) -> bool:
        """True when this history and the folded messages agree as far as both go (a message
        without a digest never agrees): each message's copied lines depend only on those before it."""
        count = min(len(self.digests), len(digests))
        folded = self.digests[:count]
        return None not in folded and folded == digests[:count]

    def fold(self, message: Message, digest: bytes | None) -> None:
        """Add one message: its inputs are checked against the outputs before it, then its outputs join them."""
        tools = [part.get("state") or {} for part in message["parts"] if part.get("type") == "tool"]
        copied = {
            line
            for state in tools
            for text in input_strings(state.get("input"))
            for line in long_lines(text)
            if is_copied(line, self.seen)
        }
        for state in tools:
            for field in ("output", "error"):
                if isinstance(state.get(field), str):
                    self.seen.update(output_lines(state[field]))
        self.digests.append(digest)
        self.copied.append(frozenset(copied))

    def kept(self, start: int, end: int) -> tuple[frozenset[str], ...]:
        """For the messages start…end−1 (one batch), the lines each copied that no later one of
        them copies again: a line pasted into script after script stays in the newest only."""
        known = self.batches.get((start, end))
        if known is None:
            later: set[str] = set()
            kept: list[frozenset[str]] = []
            for lines in reversed(self.copied[start:end]):
                kept.append(lines - later if not later.isdisjoint(lines) else lines)
                later |= lines
            known = self.batches[start, end] = tuple(reversed(kept))
        return known


def copied_lines(messages: list[Message], digests: list[bytes | None], known: CopiedLines | None) -> CopiedLines:
    """The copied lines of every message (the first `len(messages)` of the answer's `copied`):
    `known` extended when it agrees with this history, else folded anew."""
    folded = known if known is not None and known.matches(digests) else CopiedLines()
    for index in range(len(folded.digests), len(messages)):
        folded.fold(messages[index], digests[index])
    return folded
